package sim

import (
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	rows := []struct {
		text string
		want int
	}{
		{"", 0},                  // nothing
		{"   \n\t ", 0},          // whitespace is free
		{"hello", 1},             // one run of letters
		{"hello world", 2},       // two runs
		{"abc123def", 1},         // letters and digits form one run
		{"a,b", 3},               // punctuation is one token each
		{"don't", 3},             // don ' t
		{"<|im_start|>", 7},      // < | im _ start | >
		{"héllo wörld", 2},       // non-ASCII letters join runs
		{"日本語", 1},               // CJK letters form one run
		{"x→y", 3},               // a non-ASCII symbol is one token
		{" the model answer", 3}, // generated text: one token per word
		{"3.14", 3},              // 3 . 14
	}
	for _, r := range rows {
		if got := CountTokens(r.text); got != r.want {
			t.Errorf("CountTokens(%q) = %d, want %d", r.text, got, r.want)
		}
	}
}

// The chat template costs 15 tokens per message (one-token role) plus 8 for the generation prompt.
func TestCountChatTokens(t *testing.T) {
	msgs := []ChatMessage{{"system", "be brief"}, {"user", "hello there, model"}}
	want := 2*ChatMessageOverheadTokens + 2 + 4 + ChatGenerationPromptTokens // be brief | hello there , model
	if got := CountChatTokens(msgs); got != want {
		t.Errorf("CountChatTokens = %d, want %d", got, want)
	}
}

// Prompts of 256K tokens (~1.5 MB) are counted in one linear pass; block hashes of equal
// prefixes agree and diverge after them.
func TestTokenizerLongPromptAndBlocks(t *testing.T) {
	long := strings.Repeat("lorem ipsum, ", 256*1024/3+1)
	n := CountTokens(long)
	if want := 3 * (256*1024/3 + 1); n != want {
		t.Fatalf("long prompt: %d tokens, want %d", n, want)
	}
	a := newTokenScanner(16, false)
	a.feed("marker one " + long[:4000])
	b := newTokenScanner(16, false)
	b.feed("marker one " + long[:4000] + " different tail")
	c := newTokenScanner(16, false)
	c.feed("marker two " + long[:4000])
	if len(a.blocks) == 0 || len(b.blocks) < len(a.blocks) {
		t.Fatalf("blocks: a %d, b %d", len(a.blocks), len(b.blocks))
	}
	for i := range a.blocks {
		if a.blocks[i] != b.blocks[i] {
			t.Fatalf("block %d differs for an equal prefix", i)
		}
		if a.blocks[i] == c.blocks[i] {
			t.Fatalf("block %d equal for different prefixes", i)
		}
	}
}

func FuzzCountTokens(f *testing.F) {
	f.Add("hello, world")
	f.Add("<|im_start|>user\nhi<|im_end|>")
	f.Fuzz(func(t *testing.T, s string) {
		n := CountTokens(s)
		if n < 0 || n > len(s) {
			t.Fatalf("%d tokens for %d bytes", n, len(s))
		}
		// Splitting at a space never changes the count.
		if i := strings.IndexByte(s, ' '); i >= 0 {
			if m := CountTokens(s[:i]) + CountTokens(s[i+1:]); m != n {
				t.Fatalf("count %d != %d + split", n, m)
			}
		}
	})
}
