package workload

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/servebench/servebench"
)

// Config says whom prompts are for and how their tokens may be counted.
type Config struct {
	// RunID is unique per run (random); it goes into every marker so that no two runs share a
	// cacheable prefix.
	RunID string
	// API is the flavour requests are sent with; the chat template applies for chat and Ollama.
	API servebench.API
	// BaseURL is the API base ending in /v1; /tokenize lives at the server root (without /v1).
	BaseURL string
	// Model is sent in /tokenize requests.
	Model      string
	HTTPClient *http.Client
	APIKey     string
	// Headers are sent with every /tokenize request, as with every generation request (a
	// gateway may need them); they win over the API key's Authorization.
	Headers http.Header
	// Probe sends a real one-output-token request and returns usage.prompt_tokens; it may be
	// nil (then calibration is impossible and llama.cpp's /tokenize cannot learn the template).
	Probe ProbeFunc
	// Tokenizer is the offline fallback: a built-in encoding (cl100k_base, o200k_base) or the
	// path of a Hugging Face tokenizer.json (not supported yet: refused with an explanation).
	Tokenizer string
	// SharedPrefixTokens > 0 makes every prompt of the run share, on purpose, this many tokens
	// of text right after the lead word (the cached scenario); the marker goes after them. The
	// chat template's head and the lead word are shared as well, as in every prompt.
	SharedPrefixTokens int
}

// Builder makes prompts of an exact token count, as the server counts them.
//
// A prompt is the text
//
//	lead + shared + marker(seq) + filler(seq) + pads
//
// where lead is a fixed word, shared the optional run-wide prefix, marker a fixed number of
// words coding (run, seq), and filler prose-like words drawn deterministically from (run, seq).
// Every word is taken from a pool measured at start-up to count exactly L tokens (L = 1 with any
// ordinary vocabulary), and pads (only when L > 1) are one token each. So for a target of C
// tokens the model is linear, tokens = b + L·words + pads, with b = count(lead) (the chat
// template included), and no counting is needed per request: each distinct length is verified
// once with a single count of the full prompt; if the server disagrees (a vocabulary that merges
// across words), the difference is fed back as a per-length correction, re-verified, and from
// then on every prompt is counted (strict mode) instead of trusted.
//
// Builder is safe for concurrent use.
type Builder struct {
	cfg      Config
	counter  Counter
	method   string
	calls    atomic.Int64
	runHash  uint64
	v        *vocab
	base     int    // tokens of the lead word as sent (chat template included)
	shared   string // shared text after the lead ("" when SharedPrefixTokens is 0)
	seqWidth int    // marker digits (base P) for seq
	runWidth int    // marker digits for the run id
	strict   atomic.Bool
	// sendsToCount: counting sends the text as a real request (calibration), so prompts that
	// will be sent are never counted themselves (see fit).
	sendsToCount bool

	mu      sync.Mutex
	lengths map[int]*lengthPlan
}

// lengthPlan is what is known about one target length.
type lengthPlan struct {
	mu       sync.Mutex
	verified bool
	delta    int   // tokens the server counts beyond the linear model (usually 0)
	err      error // permanent failure
}

// NewBuilder picks the counting method and measures the word pool:
//
//  1. POST {root}/tokenize in vLLM/SGLang shape ({model, messages|prompt} → {count, tokens}),
//     or in llama.cpp shape ({content} → {tokens}) plus the template overhead measured with one
//     probe: method "tokenize-endpoint";
//  2. otherwise calibration against cfg.Probe (usage.prompt_tokens): "calibration";
//  3. otherwise cfg.Tokenizer offline: "offline-tokenizer:<name>" (text only: a chat template's
//     tokens are not counted).
//
// The error says what to pass when none works.
func NewBuilder(ctx context.Context, cfg Config) (*Builder, error) {
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	c, method, err := detectCounter(ctx, cfg, leadWord+" the new house")
	if err != nil {
		return nil, err
	}
	return NewBuilderWithCounter(ctx, cfg, c, method)
}

// NewBuilderWithCounter builds prompts counted by c (whose Count must include the chat
// template when the target applies one); method is what Method reports. Method "calibration"
// declares that counting sends the text as a real request: then no prompt that will be sent is
// ever counted itself (it would sit in the server's prefix cache).
func NewBuilderWithCounter(ctx context.Context, cfg Config, c Counter, method string) (*Builder, error) {
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte(cfg.RunID))
	b := &Builder{cfg: cfg, counter: c, method: method, runHash: h.Sum64(), lengths: map[int]*lengthPlan{},
		sendsToCount: method == "calibration"}
	if err := b.measure(ctx); err != nil {
		return nil, fmt.Errorf("sizing prompts (%s): %w", method, err)
	}
	return b, nil
}

func checkConfig(cfg Config) error {
	if cfg.RunID == "" {
		return errors.New("workload: Config.RunID is empty; give a random id unique to the run")
	}
	if cfg.SharedPrefixTokens < 0 {
		return fmt.Errorf("workload: SharedPrefixTokens is %d; it must be 0 or more", cfg.SharedPrefixTokens)
	}
	return nil
}

// Method names the counting method: "tokenize-endpoint", "calibration" or
// "offline-tokenizer:<name>".
func (b *Builder) Method() string { return b.method }

// CountCalls is the number of counts asked of the counter so far (server requests for the
// endpoint and calibration methods).
func (b *Builder) CountCalls() int64 { return b.calls.Load() }

// Strict reports whether the target's tokenizer proved non-linear over the word pool, so that
// every prompt is now counted before it is returned.
func (b *Builder) Strict() bool { return b.strict.Load() }

// MinTokens is the shortest prompt this target allows: the chat template, the lead word and the
// shared prefix. Prompts shorter than MinTokens plus the marker length carry a truncated marker.
func (b *Builder) MinTokens() int { return b.base + b.sharedTokens() }

// MarkerTokens is the number of tokens of a full marker.
func (b *Builder) MarkerTokens() int { return (1 + b.seqWidth + b.runWidth) * b.v.unitTokens }

func (b *Builder) sharedTokens() int { return b.cfg.SharedPrefixTokens }

func (b *Builder) count(ctx context.Context, text string) (int, error) {
	b.calls.Add(1)
	return b.counter.Count(ctx, text)
}

// measure finds b (the lead word with the template), the unit words and their token length L,
// a pad when L > 1, and the shared prefix.
func (b *Builder) measure(ctx context.Context) error {
	base, err := b.count(ctx, leadWord)
	if err != nil {
		return fmt.Errorf("counting the lead word: %w", err)
	}
	b.base = base
	pool := allPoolWords()
	var sb strings.Builder
	sb.WriteString(leadWord)
	for _, u := range pool {
		sb.WriteString(u.text)
	}
	n, err := b.count(ctx, sb.String())
	if err != nil {
		return fmt.Errorf("counting the word pool: %w", err)
	}
	if n-base == len(pool) { // every word is at least one token, so each is exactly one
		b.v = newVocab(pool, 1, "")
	} else if err := b.measureEach(ctx, pool); err != nil {
		return err
	}
	// Linearity check: a sample of prose as long as sampleTokens must count exactly b + L·words.
	// A vocabulary with tokens spanning several words fails it; then every prompt is counted.
	var sample strings.Builder
	sample.WriteString(leadWord)
	r := rng{s: mix(b.runHash, 0x11ea4)}
	words := sampleTokens / b.v.unitTokens
	b.v.appendWords(&sample, &r, words)
	n, err = b.count(ctx, sample.String())
	if err != nil {
		return fmt.Errorf("counting a sample of prose: %w", err)
	}
	if n != base+words*b.v.unitTokens {
		b.strict.Store(true)
	}
	p := len(b.v.alphabet)
	b.seqWidth = digitsFor(p, 32)
	b.runWidth = digitsFor(p, 48)
	if s := b.cfg.SharedPrefixTokens; s > 0 {
		return b.buildShared(ctx, s)
	}
	return nil
}

// sampleTokens is the length of the prose sample counted at start-up to check that token counts
// add up word by word; small enough for any context window.
const sampleTokens = 1024

// measureEach counts every pool word on its own (one count each) and keeps the largest set of
// words of equal token length L, preferring the smallest L that still gives 32 words.
func (b *Builder) measureEach(ctx context.Context, pool []unitWord) error {
	groups := map[int][]unitWord{}
	for _, u := range pool {
		n, err := b.count(ctx, leadWord+u.text)
		if err != nil {
			return fmt.Errorf("counting pool word %q: %w", u.text, err)
		}
		if l := n - b.base; l >= 1 {
			groups[l] = append(groups[l], u)
		}
	}
	lens := make([]int, 0, len(groups))
	for l := range groups {
		lens = append(lens, l)
	}
	sort.Ints(lens)
	best := 0
	for _, l := range lens {
		if len(groups[l]) >= 32 {
			best = l
			break
		}
	}
	if best == 0 {
		for _, l := range lens {
			if best == 0 || len(groups[l]) > len(groups[best]) {
				best = l
			}
		}
	}
	if best == 0 || len(groups[best]) < 16 {
		return fmt.Errorf("the target's tokenizer splits common English words too irregularly to "+
			"build exact prompts (largest set of equal-length words: %d); use the server's /tokenize", len(groups[best]))
	}
	pad := ""
	if best > 1 {
		u0 := groups[best][0].text
		for _, cand := range padCandidates {
			n1, err := b.count(ctx, leadWord+u0+cand)
			if err != nil {
				return err
			}
			nk, err := b.count(ctx, leadWord+u0+strings.Repeat(cand, best-1))
			if err != nil {
				return err
			}
			if n1-b.base-best == 1 && nk-b.base-best == best-1 {
				pad = cand
				break
			}
		}
		if pad == "" {
			return fmt.Errorf("no one-token piece found among %q to complete prompts of any length "+
				"(words are %d tokens each); use the server's /tokenize", padCandidates, best)
		}
	}
	b.v = newVocab(groups[best], best, pad)
	return nil
}

// digitsFor is the number of base-p digits needed to cover 2^bits values.
func digitsFor(p, bits int) int {
	w, cover := 0, 1.0
	for cover < float64(uint64(1)<<(bits-1))*2 {
		cover *= float64(p)
		w++
	}
	return w
}

// buildShared makes the run's shared prefix of s tokens and verifies it with one count.
func (b *Builder) buildShared(ctx context.Context, s int) error {
	delta := 0
	for try := 0; try < 5; try++ {
		text := b.sharedText(s - delta)
		n, err := b.count(ctx, leadWord+text)
		if err != nil {
			return fmt.Errorf("counting the shared prefix: %w", err)
		}
		if n-b.base == s {
			b.shared = text
			return nil
		}
		delta += n - b.base - s
	}
	return fmt.Errorf("could not make a shared prefix of exactly %d tokens", s)
}

func (b *Builder) sharedText(tokens int) string {
	var sb strings.Builder
	r := rng{s: mix(b.runHash, 0x5eed5a4ed)}
	l := b.v.unitTokens
	b.v.appendWords(&sb, &r, max(tokens, 0)/l)
	for range max(tokens, 0) % l {
		sb.WriteString(b.v.pad)
	}
	return sb.String()
}

// markerWords codes (run, seq): one word mixing both (so prompts differ from their first marker
// token on), then the base-P digits of seq (low first) interleaved with those of the run hash.
// Every word is one unit, so every marker has the same token length.
func (b *Builder) markerWords(seq int64, runHash uint64) []string {
	a := b.v.alphabet
	p := uint64(len(a))
	out := make([]string, 0, 1+b.seqWidth+b.runWidth)
	out = append(out, a[mix(runHash, uint64(seq))%p])
	s, r := uint64(seq), runHash
	for i := 0; i < max(b.seqWidth, b.runWidth); i++ {
		if i < b.seqWidth {
			out = append(out, a[s%p])
			s /= p
		}
		if i < b.runWidth {
			out = append(out, a[r%p])
			r /= p
		}
	}
	return out
}

// Marker is the text that identifies request seq of this run; it appears in the prompt right
// after the lead word (and the shared prefix, if any).
func (b *Builder) Marker(seq int64) string {
	return strings.TrimPrefix(strings.Join(b.markerWords(seq, b.runHash), ""), " ")
}

// gen writes the prompt for seq of the run whose hash is runHash (b.runHash, or a probe-only
// variant), aiming at tokens, delta tokens fewer than the linear model says.
func (b *Builder) gen(seq int64, tokens, delta int, runHash uint64) (string, error) {
	if tokens < b.MinTokens() {
		return "", fmt.Errorf("a prompt of %d tokens is shorter than the %d tokens every prompt to this "+
			"target needs (chat template and lead word%s); ask for at least %d", tokens, b.MinTokens(),
			map[bool]string{true: " and the shared prefix", false: ""}[b.sharedTokens() > 0], b.MinTokens())
	}
	budget := tokens - b.base - b.sharedTokens() - delta
	if budget < 0 {
		return "", fmt.Errorf("a prompt of %d tokens cannot be made: the server counts %d more tokens than "+
			"the words it is made of", tokens, delta)
	}
	l := b.v.unitTokens
	var sb strings.Builder
	sb.Grow(len(leadWord) + len(b.shared) + budget/l*8 + 64)
	sb.WriteString(leadWord)
	sb.WriteString(b.shared)
	for _, w := range b.markerWords(seq, runHash) {
		if budget < l {
			break
		}
		sb.WriteString(w)
		budget -= l
	}
	r := rng{s: mix(runHash^0xf111e5, uint64(seq))}
	n := budget / l
	b.v.appendWords(&sb, &r, n)
	for range budget - n*l {
		sb.WriteString(b.v.pad)
	}
	return sb.String(), nil
}

// Prompt returns the prompt of request seq, counting exactly tokens tokens as the server counts
// them. The first prompt of each distinct length costs one count (more only if the server
// disagrees with the linear model); later ones cost none unless the builder is in strict mode.
func (b *Builder) Prompt(ctx context.Context, seq int64, tokens int) (string, error) {
	if seq < 0 {
		return "", fmt.Errorf("workload: negative request sequence %d", seq)
	}
	b.mu.Lock()
	lp := b.lengths[tokens]
	if lp == nil {
		lp = &lengthPlan{}
		b.lengths[tokens] = lp
	}
	b.mu.Unlock()

	lp.mu.Lock()
	if lp.err != nil {
		lp.mu.Unlock()
		return "", lp.err
	}
	if !lp.verified {
		text, delta, err := b.fit(ctx, seq, tokens, lp.delta)
		if err != nil {
			if ctx.Err() == nil && !isTransient(err) {
				lp.err = err
			}
			lp.mu.Unlock()
			return "", err
		}
		lp.verified, lp.delta = true, delta
		lp.mu.Unlock()
		if delta != 0 {
			b.strict.Store(true)
		}
		return text, nil
	}
	delta := lp.delta
	lp.mu.Unlock()
	if b.strict.Load() {
		text, _, err := b.fit(ctx, seq, tokens, delta)
		return text, err
	}
	return b.gen(seq, tokens, delta, b.runHash)
}

// fit generates the prompt and counts it, correcting delta by the difference until the count is
// exact (at most 5 counts).
//
// When counting means sending the prompt (calibration), the text counted is a probe-only
// variant of the prompt, with the marker and filler of another run id (a fresh one per try), so
// that the server's prefix cache never holds a prompt that will be sent for real, and a cached
// earlier try cannot make the server under-report the next. With an additive tokenizer the
// variant and the prompt count the same; the count the server reports for the real request is
// recorded by the client either way.
func (b *Builder) fit(ctx context.Context, seq int64, tokens, delta int) (string, int, error) {
	var got []int
	for try := 0; try < 5; try++ {
		text, err := b.gen(seq, tokens, delta, b.runHash)
		if err != nil {
			return "", 0, err
		}
		counted := text
		if b.sendsToCount {
			if counted, err = b.gen(seq, tokens, delta, mix(b.runHash^0x9b0be, uint64(try)+1)); err != nil {
				return "", 0, err
			}
		}
		n, err := b.count(ctx, counted)
		if err != nil {
			return "", 0, transient{fmt.Errorf("counting a prompt of %d tokens: %w", tokens, err)}
		}
		if n == tokens {
			return text, delta, nil
		}
		got = append(got, n)
		delta += n - tokens
	}
	return "", 0, fmt.Errorf("could not make a prompt of exactly %d tokens: the server counted %v "+
		"for successive corrections (is %d beyond the server's context window? it may truncate)", tokens, got, tokens)
}

// transient marks counting failures (network, server errors) that must not be cached.
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

func isTransient(err error) bool {
	var t transient
	return errors.As(err, &t)
}
