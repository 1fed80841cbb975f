package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/workload/tokenizer"
)

var testLengths = []int{1, 7, 512, 1000, 1024, 8192, 65536, 262144}

type modeCase struct {
	name       string
	shape      string // fake /tokenize shape
	tok        fakeTok
	api        servebench.API
	withProbe  bool
	bos        int
	wantMethod string
	wantStrict bool
}

var modeCases = []modeCase{
	// vLLM: /tokenize applies the chat template itself; no probe needed
	{"vllm chat", "vllm", fakeTok{}, servebench.APIChat, false, 1, "tokenize-endpoint", false},
	// vLLM completions without BOS, so even a 1-token prompt is possible
	{"vllm completions", "vllm", fakeTok{}, servebench.APICompletions, false, 0, "tokenize-endpoint", false},
	// SGLang-like: /tokenize refuses messages; text counted raw, template measured by one probe
	{"prompt-only tokenize chat", "vllm-prompt-only", fakeTok{}, servebench.APIChat, true, 1, "tokenize-endpoint", false},
	// llama.cpp shape {content} -> {tokens}, template overhead from one probe
	{"llamacpp chat", "llamacpp", fakeTok{}, servebench.APIChat, true, 1, "tokenize-endpoint", false},
	// llama.cpp completions: the probe finds the BOS token /tokenize leaves out
	{"llamacpp completions", "llamacpp", fakeTok{}, servebench.APICompletions, true, 1, "tokenize-endpoint", false},
	// no /tokenize (Ollama's OpenAI layer): calibration on usage.prompt_tokens
	{"calibration chat", "none", fakeTok{}, servebench.APIChat, true, 1, "calibration", false},
	// Ollama's native API: chat template applies, calibration
	{"calibration ollama", "none", fakeTok{}, servebench.APIOllama, true, 1, "calibration", false},
	// character-level vocabulary: words are several tokens, pads finish the count
	{"calibration char-level", "none", fakeTok{charLevel: true}, servebench.APIChat, true, 1, "calibration", false},
	// a vocabulary with a two-word token breaks the linear model: corrected, then strict
	{"vllm multi-word token", "vllm", fakeTok{mergeThe: true}, servebench.APIChat, false, 1, "tokenize-endpoint", true},
}

func newModeBuilder(t testing.TB, f *fakeServer, mc modeCase, runID string, shared int) *Builder {
	t.Helper()
	cfg := Config{RunID: runID, API: mc.api, BaseURL: f.URL + "/v1", Model: "m", SharedPrefixTokens: shared}
	if mc.withProbe {
		cfg.Probe = probe(f.URL+"/v1", mc.api != servebench.APICompletions)
	}
	b, err := NewBuilder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func serverCalls(f *fakeServer) int64 { return f.tokenizeCalls.Load() + f.probeCalls.Load() }

func TestExactLengthEveryMode(t *testing.T) {
	ctx := context.Background()
	for _, mc := range modeCases {
		t.Run(mc.name, func(t *testing.T) {
			f := newFake(t, mc.shape, mc.tok)
			f.bos = mc.bos
			chat := mc.api != servebench.APICompletions
			b := newModeBuilder(t, f, mc, "run-1", 0)
			if b.Method() != mc.wantMethod {
				t.Fatalf("Method() = %q, want %q", b.Method(), mc.wantMethod)
			}
			before, beforeCounts := serverCalls(f), b.CountCalls()
			lengths := 0
			for _, n := range testLengths {
				for seq := int64(0); seq < 3; seq++ {
					p, err := b.Prompt(ctx, seq*7919, n)
					if n < b.MinTokens() {
						if err == nil || !strings.Contains(err.Error(), "at least") {
							t.Fatalf("length %d below minimum %d: err = %v, want a clear error", n, b.MinTokens(), err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("length %d seq %d: %v", n, seq, err)
					}
					if got := f.truth(p, chat); got != n {
						t.Fatalf("length %d seq %d: server counts %d tokens", n, seq, got)
					}
					if seq == 0 {
						lengths++
					}
				}
			}
			if lengths < 6 {
				t.Fatalf("only %d lengths were possible (minimum %d)", lengths, b.MinTokens())
			}
			if b.Strict() != mc.wantStrict {
				t.Fatalf("Strict() = %v, want %v", b.Strict(), mc.wantStrict)
			}
			calls := serverCalls(f) - before
			if calls != b.CountCalls()-beforeCounts {
				t.Fatalf("server saw %d calls, builder counted %d", calls, b.CountCalls()-beforeCounts)
			}
			if !mc.wantStrict && calls != int64(lengths) {
				t.Fatalf("%d server calls for %d lengths × 3 prompts; want exactly one per length", calls, lengths)
			}
		})
	}
}

// Start-up cost: a handful of counts with an ordinary vocabulary, one per pool word otherwise.
func TestStartupCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		mc   modeCase
		max  int64
	}{
		// vLLM chat: detection + lead + pool + per-word (the fake splits words over 5 letters)
		{"vllm", modeCases[0], 4 + int64(len(allPoolWords()))},
		// char-level calibration: per-word counts plus the pad search
		{"char-level", modeCases[7], 4 + int64(len(allPoolWords())) + 2*int64(len(padCandidates))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.mc.shape, tc.mc.tok)
			newModeBuilder(t, f, tc.mc, "r", 0)
			if got := serverCalls(f); got > tc.max || got < 3 {
				t.Fatalf("start-up made %d server calls, want 3..%d", got, tc.max)
			}
		})
	}
	// With a vocabulary where every pool word is one token, start-up costs 3 counts.
	b, err := NewBuilderWithCounter(context.Background(), Config{RunID: "r"}, simCounter(0), "test")
	if err != nil {
		t.Fatal(err)
	}
	if b.CountCalls() != 3 {
		t.Fatalf("start-up counted %d times, want 3 (lead word, word pool, prose sample)", b.CountCalls())
	}
}

// simCounter counts like the built-in simulator: every maximal run of letters/digits is a
// token, every other non-space character is one, plus a fixed template overhead.
func simCounter(overhead int) CounterFunc {
	return func(_ context.Context, text string) (int, error) {
		n, inWord := overhead, false
		for _, r := range text {
			switch {
			case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
				if !inWord {
					n++
				}
				inWord = true
			case r == ' ' || r == '\n':
				inWord = false
			default:
				n++
				inWord = false
			}
		}
		return n, nil
	}
}

// firstTokens is the first k tokens of a prompt as the fake tokenizes it, joined.
func firstTokens(tok fakeTok, text string, k int) string {
	ts := tok.tokens(text)
	return strings.Join(ts[:min(k, len(ts))], "\x00")
}

func TestUniquePrefixesWithinAndAcrossRuns(t *testing.T) {
	ctx := context.Background()
	for _, mc := range []modeCase{modeCases[0], modeCases[7]} {
		t.Run(mc.name, func(t *testing.T) {
			f := newFake(t, mc.shape, mc.tok)
			seen := map[string]string{}
			for _, run := range []string{"run-a", "run-b"} {
				b := newModeBuilder(t, f, mc, run, 0)
				for seq := int64(0); seq < 1000; seq++ {
					p, err := b.Prompt(ctx, seq, 512)
					if err != nil {
						t.Fatal(err)
					}
					if !strings.HasPrefix(p, leadWord+" "+b.Marker(seq)) {
						t.Fatalf("prompt %d does not start with its marker %q: %.80q", seq, b.Marker(seq), p)
					}
					key := firstTokens(mc.tok, p, 32)
					id := fmt.Sprintf("%s/%d", run, seq)
					if other, dup := seen[key]; dup {
						t.Fatalf("%s and %s share their first 32 tokens: %q", id, other, key)
					}
					seen[key] = id
				}
			}
		})
	}
}

// Calibration counts by sending: no text it sends may share its first 32 tokens with a prompt
// that will be sent for real, or the real request would be served from the prefix cache.
func TestCalibrationNeverPrimesTheCache(t *testing.T) {
	ctx := context.Background()
	mc := modeCases[5] // calibration chat
	f := newFake(t, mc.shape, mc.tok)
	b := newModeBuilder(t, f, mc, "run-c", 0)
	var prompts []string
	for _, n := range []int{512, 1000, 8192} {
		for seq := int64(0); seq < 20; seq++ {
			p, err := b.Prompt(ctx, seq, n)
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, firstTokens(mc.tok, p, 32))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.probed) < 3+3 {
		t.Fatalf("only %d probes recorded", len(f.probed))
	}
	for _, sent := range f.probed {
		key := firstTokens(mc.tok, sent, 32)
		for _, p := range prompts {
			if key == p {
				t.Fatalf("a calibration probe shares its first 32 tokens with a real prompt: %q", key)
			}
		}
	}
}

func TestMarkerFixedLength(t *testing.T) {
	b, err := NewBuilderWithCounter(context.Background(), Config{RunID: "x"}, simCounter(3), "test")
	if err != nil {
		t.Fatal(err)
	}
	want := len(strings.Fields(b.Marker(0)))
	for _, seq := range []int64{1, 63, 64, 4095, 1 << 20, 1<<32 - 1, 1 << 40} {
		if got := len(strings.Fields(b.Marker(seq))); got != want {
			t.Fatalf("marker of seq %d has %d words, seq 0 has %d", seq, got, want)
		}
	}
	if b.MarkerTokens() != want || want > 24 {
		t.Fatalf("MarkerTokens() = %d, marker words %d; want equal and at most 24", b.MarkerTokens(), want)
	}
}

func TestSharedPrefix(t *testing.T) {
	ctx := context.Background()
	const shared = 100
	mc := modeCases[0]
	f := newFake(t, mc.shape, mc.tok)
	prefixes := map[string]bool{}
	for _, run := range []string{"run-a", "run-b"} {
		b := newModeBuilder(t, f, mc, run, shared)
		var first string
		nextTokens := map[string]bool{}
		for seq := int64(0); seq < 50; seq++ {
			p, err := b.Prompt(ctx, seq, 2048)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.truth(p, true); got != 2048 {
				t.Fatalf("seq %d: %d tokens, want 2048", seq, got)
			}
			toks := f.tok.tokens(p)
			// The lead word plus the shared tokens are identical in every prompt of the run...
			pre := strings.Join(toks[:1+shared], "")
			if first == "" {
				first = pre
			} else if pre != first {
				t.Fatalf("seq %d does not share the %d-token prefix", seq, shared)
			}
			// ...and the marker follows right after them.
			if !strings.HasPrefix(p, pre+" "+b.Marker(seq)) {
				t.Fatalf("seq %d: marker is not right after the shared prefix", seq)
			}
			nextTokens[strings.Join(toks[1+shared:1+shared+4], "")] = true
		}
		if len(nextTokens) != 50 {
			t.Fatalf("only %d distinct markers after the shared prefix in 50 prompts", len(nextTokens))
		}
		prefixes[first] = true
	}
	if len(prefixes) != 2 {
		t.Fatal("two runs got the same shared prefix; a previous run would warm the cache")
	}
}

func TestPromptIsDeterministicVariedProse(t *testing.T) {
	ctx := context.Background()
	mk := func(run string) *Builder {
		b, err := NewBuilderWithCounter(ctx, Config{RunID: run}, simCounter(5), "test")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b1, b2 := mk("r"), mk("r")
	p1, _ := b1.Prompt(ctx, 42, 1000)
	p2, _ := b2.Prompt(ctx, 42, 1000)
	p3, _ := b1.Prompt(ctx, 43, 1000)
	if p1 != p2 {
		t.Fatal("same run, seq and length gave different prompts")
	}
	m := len(leadWord) + 1 + len(b1.Marker(42))
	if p1[m:] == p3[m:] {
		t.Fatal("two requests got the same filler")
	}
	words := strings.Fields(p1)
	distinct := map[string]bool{}
	run := 1
	for i, w := range words {
		distinct[w] = true
		if i > 0 && w == words[i-1] {
			run++
			if run > 3 {
				t.Fatalf("word %q repeated more than 3 times in a row", w)
			}
		} else {
			run = 1
		}
	}
	if len(distinct) < 80 {
		t.Fatalf("only %d distinct words in a 1000-token prompt; want varied prose", len(distinct))
	}
}

// Many goroutines asking for the same new length cost one count together.
func TestConcurrentSameLength(t *testing.T) {
	ctx := context.Background()
	b, err := NewBuilderWithCounter(ctx, Config{RunID: "c"}, simCounter(5), "test")
	if err != nil {
		t.Fatal(err)
	}
	before := b.CountCalls()
	count := simCounter(5)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for seq := int64(0); seq < 64; seq++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := b.Prompt(ctx, seq, 4096)
			if err == nil {
				if n, _ := count(ctx, p); n != 4096 {
					err = fmt.Errorf("seq %d: %d tokens", seq, n)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := b.CountCalls() - before; got != 1 {
		t.Fatalf("%d counts for one length, want 1", got)
	}
}

func TestOfflineTokenizer(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, "none", fakeTok{})
	b, err := NewBuilder(ctx, Config{RunID: "o", API: servebench.APICompletions, BaseURL: f.URL + "/v1",
		Tokenizer: "cl100k_base"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Method() != "offline-tokenizer:cl100k_base" {
		t.Fatalf("Method() = %q", b.Method())
	}
	tok, _ := tokenizer.Open("cl100k_base")
	for _, n := range []int{1, 7, 512, 1000, 1024, 8192, 65536} {
		p, err := b.Prompt(ctx, int64(n), n)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Count(p); got != n {
			t.Fatalf("length %d: cl100k counts %d", n, got)
		}
	}
}

func TestNoMethodErrorSaysWhatToPass(t *testing.T) {
	f := newFake(t, "none", fakeTok{})
	for _, tc := range []struct {
		name   string
		cfg    Config
		wantIn []string
	}{
		// nothing at all: every reason and the flag to pass
		{"nothing", Config{RunID: "x", API: servebench.APIChat, BaseURL: f.URL + "/v1"},
			[]string{"/tokenize", "no probe function", "--tokenizer", "cl100k_base"}},
		// a Hugging Face file is refused, not approximated
		{"hf file", Config{RunID: "x", API: servebench.APIChat, BaseURL: f.URL + "/v1", Tokenizer: "/nonexistent/tokenizer.json"},
			[]string{"tokenizer.json", "--tokenizer"}},
		// a run id is required: it is what keeps prompts of different runs apart
		{"no RunID", Config{API: servebench.APIChat, BaseURL: f.URL + "/v1"}, []string{"RunID"}},
		// llama.cpp chat without a probe cannot learn the template overhead
		{"llamacpp no probe", Config{RunID: "x", API: servebench.APIChat, BaseURL: newFake(t, "llamacpp", fakeTok{}).URL + "/v1"},
			[]string{"without the chat template", "no probe function", "--tokenizer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBuilder(context.Background(), tc.cfg)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// A server whose count drifts from the word-by-word sum only for long prompts passes the start-up
// sample; the per-length verification catches it, corrects the length, and turns strict.
func TestVerificationCorrectsAndTurnsStrict(t *testing.T) {
	ctx := context.Background()
	base := simCounter(5)
	drift := CounterFunc(func(ctx context.Context, text string) (int, error) {
		n, err := base(ctx, text)
		if len(text) > 20000 {
			n += 2 // e.g. a template that adds a truncation notice to long inputs
		}
		return n, err
	})
	b, err := NewBuilderWithCounter(ctx, Config{RunID: "d"}, drift, "test")
	if err != nil {
		t.Fatal(err)
	}
	if b.Strict() {
		t.Fatal("strict before any drift was seen")
	}
	for seq := int64(0); seq < 5; seq++ {
		p, err := b.Prompt(ctx, seq, 8192)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := drift(ctx, p); n != 8192 {
			t.Fatalf("seq %d: %d tokens, want 8192", seq, n)
		}
	}
	if !b.Strict() {
		t.Fatal("a corrected length must turn the builder strict")
	}
}

// A failed count (server hiccup) is not remembered: the next call for that length retries.
func TestCountFailureIsNotCached(t *testing.T) {
	ctx := context.Background()
	base := simCounter(5)
	fail := false
	c := CounterFunc(func(ctx context.Context, text string) (int, error) {
		if fail {
			return 0, fmt.Errorf("connection refused")
		}
		return base(ctx, text)
	})
	b, err := NewBuilderWithCounter(ctx, Config{RunID: "f"}, c, "test")
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := b.Prompt(ctx, 0, 600); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want the count error, got %v", err)
	}
	fail = false
	if _, err := b.Prompt(ctx, 0, 600); err != nil {
		t.Fatalf("retry after a transient failure: %v", err)
	}
}

func BenchmarkPrompt256K(b *testing.B) {
	ctx := context.Background()
	bl, err := NewBuilderWithCounter(ctx, Config{RunID: "bench"}, simCounter(5), "test")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bl.Prompt(ctx, 0, 262144); err != nil { // the one verification count
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		p, err := bl.Prompt(ctx, int64(i+1), 262144)
		if err != nil || len(p) == 0 {
			b.Fatal(err)
		}
	}
}
