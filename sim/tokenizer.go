package sim

import (
	"unicode"
	"unicode/utf8"
)

// vocabSize bounds the token ids /tokenize returns (ids are a hash of the token's text).
const vocabSize = 151936

// FNV-1a 64-bit constants.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// tokenScanner is the simulator's tokenizer (see doc.go): every maximal run of letters and
// digits is one token, every other non-space character is one token, whitespace is free. It is
// fed text piece by piece (a chat template is rendered as pieces, never concatenated) and runs in
// linear time. Pieces must end at a non-letter, non-digit character or at a piece boundary that
// the caller knows cannot join two runs (the chat template guarantees it).
//
// Alongside the count it keeps the chained hash of every full block of blockSize tokens (for the
// prefix cache) and, when ids is non-nil, the token ids.
type tokenScanner struct {
	count     int
	blockSize int
	blockHash uint64 // hash of the block being filled, chained from the previous block
	blocks    []uint64
	inBlock   int
	ids       *[]int
	all       uint64 // hash of the whole token stream (seeds the natural output length)
}

func newTokenScanner(blockSize int, wantIDs bool) *tokenScanner {
	t := &tokenScanner{blockSize: blockSize, blockHash: fnvOffset, all: fnvOffset}
	if wantIDs {
		ids := make([]int, 0, 64)
		t.ids = &ids
	}
	return t
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isSpaceRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\v' || r == '\f'
	}
	return unicode.IsSpace(r)
}

// emit records one token whose text hashes to h.
func (t *tokenScanner) emit(h uint64) {
	t.count++
	t.all = (t.all ^ h) * fnvPrime
	if t.ids != nil {
		*t.ids = append(*t.ids, int(h%vocabSize))
	}
	if t.blockSize > 0 {
		t.blockHash = (t.blockHash ^ h) * fnvPrime
		t.inBlock++
		if t.inBlock == t.blockSize {
			t.blocks = append(t.blocks, t.blockHash)
			t.inBlock = 0
			// The next block's hash starts from this one: equal block hashes imply equal prefixes.
			t.blockHash = (t.blockHash ^ 0x9e3779b97f4a7c15) * fnvPrime
		}
	}
}

// feed tokenizes s.
func (t *tokenScanner) feed(s string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case isWordRune(rune(c)):
				h := uint64(fnvOffset)
				for i < len(s) {
					r, n := rune(s[i]), 1
					if r >= utf8.RuneSelf {
						r, n = utf8.DecodeRuneInString(s[i:])
					}
					if !isWordRune(r) {
						break
					}
					for k := 0; k < n; k++ {
						h = (h ^ uint64(s[i+k])) * fnvPrime
					}
					i += n
				}
				t.emit(h)
			case isSpaceRune(rune(c)):
				i++
			default:
				t.emit((fnvOffset ^ uint64(c)) * fnvPrime)
				i++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r):
			// Re-enter the ASCII path's run loop through a one-rune lookahead: runs may mix scripts.
			h := uint64(fnvOffset)
			for i < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[i:])
				if !isWordRune(r2) {
					break
				}
				for k := 0; k < n2; k++ {
					h = (h ^ uint64(s[i+k])) * fnvPrime
				}
				i += n2
			}
			t.emit(h)
		case isSpaceRune(r):
			i += n
		default:
			h := uint64(fnvOffset)
			for k := 0; k < n; k++ {
				h = (h ^ uint64(s[i+k])) * fnvPrime
			}
			t.emit(h)
			i += n
		}
	}
}

// CountTokens returns the number of tokens in text by the simulator's tokenizer.
func CountTokens(text string) int {
	t := newTokenScanner(0, false)
	t.feed(text)
	return t.count
}

// ChatMessage is one chat message as the template sees it.
type ChatMessage struct {
	Role, Content string
}

// Chat template pieces. Each message renders as
//
//	<|im_start|>{role}\n{content}<|im_end|>\n
//
// and the generation prompt as "<|im_start|>assistant\n". By the tokenizer's rule
// "<|im_start|>" is 7 tokens (<, |, im, _, start, |, >) and "<|im_end|>" is 7, so each message
// costs ChatMessageOverheadTokens + its content's tokens (the role is one token) and the
// generation prompt costs ChatGenerationPromptTokens.
const (
	imStart = "<|im_start|>"
	imEnd   = "<|im_end|>"
	// ChatMessageOverheadTokens is the template cost of one message with a one-token role.
	ChatMessageOverheadTokens = 15
	// ChatGenerationPromptTokens is the cost of the assistant generation prompt.
	ChatGenerationPromptTokens = 8
)

// feedChat tokenizes messages rendered by the chat template.
func (t *tokenScanner) feedChat(msgs []ChatMessage, addGenerationPrompt bool) {
	for _, m := range msgs {
		t.feed(imStart)
		t.feed(m.Role)
		t.feed("\n")
		t.feed(m.Content)
		t.feed(imEnd)
		t.feed("\n")
	}
	if addGenerationPrompt {
		t.feed(imStart)
		t.feed("assistant\n")
	}
}

// CountChatTokens returns the prompt tokens of messages with the chat template and the
// generation prompt applied.
func CountChatTokens(msgs []ChatMessage) int {
	t := newTokenScanner(0, false)
	t.feedChat(msgs, true)
	return t.count
}
