package workload

import (
	"strings"
)

// Word categories, used to give the filler the rhythm of prose (determiner, adjective, noun,
// verb, preposition, ...) instead of a stream of one repeated token.
const (
	catDet = iota
	catAdj
	catNoun
	catVerb
	catPrep
	catConj
	numCats
)

// wordPool holds common English words that modern vocabularies (GPT, Llama 3, Qwen, Mistral,
// the simulator) keep as one token when preceded by a space. Whether they really are is measured
// against the server at start-up (see measureVocab); the ones that are not are set aside.
var wordPool = [numCats][]string{
	catDet: {"the", "a", "this", "that", "every", "each", "some", "our", "their", "his", "her", "its",
		"one", "no", "any", "another"},
	catAdj: {"new", "old", "good", "great", "small", "large", "long", "little", "young", "early", "late",
		"high", "low", "big", "full", "open", "clear", "local", "public", "real", "simple", "strong",
		"free", "whole", "common", "short", "main", "same", "dark", "warm", "green", "quiet"},
	catNoun: {"time", "year", "day", "man", "world", "life", "hand", "part", "place", "case", "week",
		"house", "water", "room", "money", "story", "book", "city", "road", "river", "door", "music",
		"light", "school", "family", "group", "night", "home", "word", "name", "game", "line", "body",
		"table", "paper", "field", "garden", "window", "tree", "voice", "letter", "market", "village",
		"island", "bridge", "forest", "student", "teacher", "doctor"},
	catVerb: {"makes", "takes", "gives", "finds", "keeps", "brings", "holds", "shows", "needs", "moves",
		"turns", "opens", "leaves", "follows", "meets", "builds", "sees", "knows", "helps", "starts",
		"reads", "writes", "calls", "feels", "plays", "runs", "walks", "grows", "tells", "asks"},
	catPrep: {"in", "on", "at", "with", "from", "into", "over", "under", "near", "after", "before",
		"through", "across", "behind", "along", "about"},
	catConj: {"and", "but", "while", "because", "so", "then", "until", "when"},
}

// prosePattern is the cycle of categories the filler follows.
var prosePattern = [...]int{catDet, catAdj, catNoun, catVerb, catPrep, catDet, catNoun, catConj,
	catDet, catNoun, catVerb, catPrep, catDet, catAdj, catNoun, catConj}

// leadWord starts every prompt. It is the same for every prompt so that the word after it (the
// first marker word) is always preceded by a space, as in the measured context; its tokens are
// counted with the chat template in Builder.base.
const leadWord = "Note"

// padCandidates are tried, in order, as the one-token piece that completes a prompt when units
// are longer than one token (character-level vocabularies).
var padCandidates = []string{".", ",", ";", ":", "!", "?", "-", " a", "a"}

// unitWord is a usable word: its text with a leading space and its category.
type unitWord struct {
	text string // " word"
	cat  int
}

// vocab is what start-up measurement found: words that all count exactly unitTokens tokens
// each (after a space, in context), and, when unitTokens > 1, a one-token pad piece.
type vocab struct {
	units      []unitWord
	byCat      [numCats][]int // indexes into units; nil where a category has too few words
	unitTokens int            // L: tokens per unit word
	pad        string         // one-token piece (only needed when unitTokens > 1)
	alphabet   []string       // marker digits: the first P unit words (P <= 64)
}

// allPoolWords lists the pool with leading spaces, in a fixed order.
func allPoolWords() []unitWord {
	var out []unitWord
	for c := 0; c < numCats; c++ {
		for _, w := range wordPool[c] {
			out = append(out, unitWord{text: " " + w, cat: c})
		}
	}
	return out
}

func newVocab(units []unitWord, unitTokens int, pad string) *vocab {
	v := &vocab{units: units, unitTokens: unitTokens, pad: pad}
	var by [numCats][]int
	for i, u := range units {
		by[u.cat] = append(by[u.cat], i)
	}
	for c := range by {
		if len(by[c]) >= 3 {
			v.byCat[c] = by[c]
		}
	}
	p := min(len(units), 64)
	// Interleave categories so the alphabet is not all determiners.
	v.alphabet = make([]string, 0, p)
	for round := 0; len(v.alphabet) < p; round++ {
		for c := 0; c < numCats && len(v.alphabet) < p; c++ {
			if round < len(by[c]) {
				v.alphabet = append(v.alphabet, units[by[c][round]].text)
			}
		}
	}
	return v
}

// rng is splitmix64: tiny, fast, and the same on every platform and Go version, so a prompt is
// a pure function of (run, seq, length).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func mix(a, b uint64) uint64 {
	r := rng{s: a ^ (b * 0xd1b54a32d192ed03)}
	return r.next()
}

// appendWords appends n unit words of prose-like text drawn from r, following prosePattern.
func (v *vocab) appendWords(sb *strings.Builder, r *rng, n int) {
	for i := 0; i < n; i++ {
		x := r.next()
		idx := v.byCat[prosePattern[i%len(prosePattern)]]
		var u string
		if idx != nil {
			u = v.units[idx[(x>>8)%uint64(len(idx))]].text
		} else {
			u = v.units[(x>>8)%uint64(len(v.units))].text
		}
		sb.WriteString(u)
	}
}
