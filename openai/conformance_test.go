package openai

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// The client conformance suite: ONE set of checks (conformance) run against every server
// shape — recorded transcripts of vLLM, SGLang, llama.cpp, TGI and Ollama replayed on
// loopback, the built-in simulator, and a live Ollama when SERVEBENCH_OLLAMA_URL is set.

// expect is what a shape must report.
type expect struct {
	// OutputTokens is the output length asked for (and forced).
	OutputTokens int
	// ResponseID is the id the server sent ("" when it sends none); anyID accepts any
	// non-empty id.
	ResponseID string
	// ReasoningTokens is how many output tokens reasoned, from ReasoningSource: "usage"
	// (completion_tokens_details.reasoning_tokens) or "client-count" (reasoning delta events);
	// 0 when the response carries no reasoning.
	ReasoningTokens int
	ReasoningSource string
}

const anyID = "\x00any"

// conformance returns every way rec breaks the client contract; none means conformant.
func conformance(rec servebench.Record, want expect) []string {
	var v []string
	bad := func(format string, a ...any) { v = append(v, fmt.Sprintf(format, a...)) }
	if !rec.OK() {
		bad("request failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if rec.TTFTSeconds <= 0 || rec.TTFTSeconds > rec.E2ELatencySeconds {
		bad("ttft_seconds %v not in (0, e2e %v]", rec.TTFTSeconds, rec.E2ELatencySeconds)
	}
	if rec.FirstContentSeconds != 0 && rec.FirstContentSeconds < rec.TTFTSeconds {
		bad("first_content_seconds %v before ttft %v", rec.FirstContentSeconds, rec.TTFTSeconds)
	}
	if rec.OutputTokensSource != servebench.SourceUsage {
		bad("output_tokens_source %q, want %q", rec.OutputTokensSource, servebench.SourceUsage)
	}
	if rec.OutputTokens != want.OutputTokens || rec.LengthMismatch {
		bad("output_tokens %d (mismatch %v), want %d", rec.OutputTokens, rec.LengthMismatch, want.OutputTokens)
	}
	if rec.InputTokens <= 0 || rec.InputTokensSource != servebench.SourceUsage {
		bad("input_tokens %d from %q: the server's prompt_tokens were not read", rec.InputTokens, rec.InputTokensSource)
	}
	if rec.ReasoningTokens != want.ReasoningTokens || rec.ReasoningTokensSource != want.ReasoningSource {
		bad("reasoning_tokens %d from %q, want %d from %q", rec.ReasoningTokens, rec.ReasoningTokensSource, want.ReasoningTokens, want.ReasoningSource)
	}
	// Reasoning and answer deltas that reached the socket before the client read them share
	// one stamp (the kernel stamps coalesced arrivals with the newest one), so equal is allowed;
	// TestReasoningFirst checks the strict order with paced events.
	if want.ReasoningTokens > 0 && rec.OK() && (rec.FirstContentSeconds <= 0 || rec.FirstContentSeconds < rec.TTFTSeconds) {
		bad("reasoning came first, yet first_content_seconds %v is before ttft %v", rec.FirstContentSeconds, rec.TTFTSeconds)
	}
	if (want.ResponseID == anyID && rec.ResponseID == "") || (want.ResponseID != anyID && rec.ResponseID != want.ResponseID) {
		bad("response_id %q, want %q", rec.ResponseID, strings.ReplaceAll(want.ResponseID, anyID, "any non-empty id"))
	}
	if rec.Chunks <= 0 || len(rec.ChunkGapsSeconds) != rec.Chunks-1 {
		bad("chunks %d with %d gaps, want > 0 and chunks−1 gaps", rec.Chunks, len(rec.ChunkGapsSeconds))
	}
	// ITL and speed are Derive's, from usage tokens: recompute them from the record's times.
	d := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	again := rec
	servebench.Derive(&again, servebench.Timing{FirstToken: d(rec.TTFTSeconds), FirstContent: d(rec.FirstContentSeconds),
		LastToken: d(rec.TTFTSeconds + rec.DecodeSeconds), End: d(rec.E2ELatencySeconds)})
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
	if !near(again.ITLSeconds, rec.ITLSeconds) || !near(again.GenerationSpeedTPS, rec.GenerationSpeedTPS) {
		bad("itl %v / speed %v differ from Derive's %v / %v", rec.ITLSeconds, rec.GenerationSpeedTPS, again.ITLSeconds, again.GenerationSpeedTPS)
	}
	if rec.DecodeSeconds > 0 && rec.OutputTokens > 1 && !near(rec.ITLSeconds*float64(rec.OutputTokens-1), rec.DecodeSeconds) {
		bad("itl %v × (output_tokens−1) != decode %v: ITL not from usage tokens", rec.ITLSeconds, rec.DecodeSeconds)
	}
	if rec.DecodeSeconds > rec.E2ELatencySeconds-rec.TTFTSeconds+1e-9 {
		bad("decode %v longer than e2e − ttft %v", rec.DecodeSeconds, rec.E2ELatencySeconds-rec.TTFTSeconds)
	}
	sum := 0.0
	for _, g := range rec.ChunkGapsSeconds {
		if g < 0 {
			bad("negative chunk gap %v", g)
		}
		sum += g
	}
	if !near(sum, rec.DecodeSeconds) {
		bad("chunk gaps sum to %v, decode is %v", sum, rec.DecodeSeconds)
	}
	return v
}

// transcriptAPI is the flavour in a transcript's name: <engine>-<flavour>[-what].<ext>.
func transcriptAPI(path string) servebench.API {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), "-")
	if len(parts) > 1 {
		switch parts[1] {
		case "completions":
			return servebench.APICompletions
		case "native":
			return servebench.APIOllama
		}
	}
	return servebench.APIChat
}

// replay serves a transcript's bytes exactly as recorded, flushing event by event (after each
// blank line of an SSE stream, each line of NDJSON), with a 1 ms pause for realism (nothing
// relies on it). It answers only the flavour's endpoint.
func replay(t testing.TB, path string, api servebench.API) string {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sep, ctype := "\n\n", "text/event-stream; charset=utf-8"
	switch filepath.Ext(path) {
	case ".ndjson":
		sep, ctype = "\n", "application/x-ndjson"
	case ".html":
		sep, ctype = "", "text/html; charset=utf-8"
	}
	want := map[servebench.API]string{servebench.APIChat: "/v1/chat/completions", servebench.APICompletions: "/v1/completions", servebench.APIOllama: "/api/chat"}[api]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		rest := string(body)
		for rest != "" {
			n := len(rest)
			if sep != "" {
				if i := strings.Index(rest, sep); i >= 0 {
					n = i + len(sep)
				}
			}
			_, _ = w.Write([]byte(rest[:n]))
			w.(http.Flusher).Flush()
			rest = rest[n:]
			time.Sleep(time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

var (
	reCompletionTokens = regexp.MustCompile(`"(?:completion_tokens|eval_count)"\s*:\s*(\d+)`)
	reResponseID       = regexp.MustCompile(`"id"\s*:\s*"([^"]*)"`)
	reReasoningTokens  = regexp.MustCompile(`"reasoning_tokens"\s*:\s*(\d+)`)
	reReasoningDelta   = regexp.MustCompile(`"(?:reasoning|reasoning_content|thinking)"\s*:\s*"[^"]`)
)

// transcriptExpect reads what a transcript says independently of the client: the last
// completion_tokens / eval_count, the first id, and the reasoning: the last reasoning_tokens,
// else the number of events with a non-empty reasoning delta.
func transcriptExpect(t *testing.T, path string) expect {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e expect
	m := reCompletionTokens.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		t.Fatalf("%s holds no completion_tokens/eval_count: every good transcript must carry usage", path)
	}
	fmt.Sscan(string(m[len(m)-1][1]), &e.OutputTokens)
	if id := reResponseID.FindSubmatch(b); id != nil {
		e.ResponseID = string(id[1])
	}
	if m := reReasoningTokens.FindAllSubmatch(b, -1); len(m) > 0 {
		fmt.Sscan(string(m[len(m)-1][1]), &e.ReasoningTokens)
		e.ReasoningSource = servebench.SourceUsage
	} else {
		for _, line := range strings.Split(string(b), "\n") {
			if reReasoningDelta.MatchString(line) {
				e.ReasoningTokens++
			}
		}
		if e.ReasoningTokens > 0 {
			e.ReasoningSource = servebench.SourceClientCount
		}
	}
	return e
}

func TestConformanceTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.sse")
	nd, _ := filepath.Glob("testdata/transcripts/*.ndjson")
	files = append(files, nd...)
	seen := map[string]bool{}
	for _, f := range files {
		seen[filepath.Base(f)] = true
	}
	// Every engine shape must stay covered.
	for _, need := range []string{"vllm-chat.sse", "vllm-completions.sse", "deepseek-chat.sse", "sglang-chat.sse", "sglang-completions.sse",
		"llamacpp-chat.sse", "llamacpp-completions.sse", "tgi-chat.sse", "tgi-completions.sse",
		"ollama-chat.sse", "ollama-completions.sse", "ollama-native.ndjson"} {
		if !seen[need] {
			t.Errorf("transcript %s missing", need)
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			api := transcriptAPI(f)
			want := transcriptExpect(t, f)
			c := newClient(t, replay(t, f, api), func(c *Config) { c.API = api })
			rec := c.Do(context.Background(), &servebench.Request{Prompt: "p", MaxOutputTokens: want.OutputTokens})
			for _, v := range conformance(rec, want) {
				t.Error(v)
			}
		})
	}
}

// TestConformanceCatchesBrokenTranscripts proves the suite can fail: each broken transcript
// breaks the checks, with the right error class.
func TestConformanceCatchesBrokenTranscripts(t *testing.T) {
	tests := []struct {
		file      string
		class     servebench.ErrorClass
		violation string // a substring of one violation
	}{
		// no usage chunk: the request succeeds but tokens are a client count
		{"vllm-chat-no-usage.sse", servebench.ErrNone, "output_tokens_source"},
		// the connection ends inside an event
		{"vllm-chat-cut.sse", servebench.ErrStreamTruncated, "request failed"},
		// Ollama ends silently after 31 repeated tokens: no finish_reason, usage or [DONE]
		{"ollama-chat-silent-end.sse", servebench.ErrStreamTruncated, "request failed"},
		// an event that is not JSON
		{"vllm-chat-malformed.sse", servebench.ErrMalformedEvent, "request failed"},
		// a web UI's page where the API should be (status 200)
		{"html-error.html", servebench.ErrMalformedEvent, "request failed"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata/transcripts/broken", tt.file)
			api := transcriptAPI(path)
			c := newClient(t, replay(t, path, api), func(c *Config) { c.API = api })
			rec := c.Do(context.Background(), &servebench.Request{Prompt: "p", MaxOutputTokens: 4})
			if rec.ErrorClass != tt.class {
				t.Errorf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tt.class)
			}
			v := conformance(rec, expect{OutputTokens: 4, ResponseID: anyID})
			if !strings.Contains(strings.Join(v, "\n"), tt.violation) {
				t.Errorf("violations %q lack %q", v, tt.violation)
			}
		})
	}
}

func TestConformanceSimulator(t *testing.T) {
	p, err := sim.LookupProfile("fast")
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, sim.Options{RequestMetrics: true, Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, api := range []servebench.API{servebench.APIChat, servebench.APICompletions} {
		t.Run(string(api), func(t *testing.T) {
			cfg := Config{BaseURL: srv.URL + "/v1", API: api}
			info, q, err := Discover(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if info.Engine != "sim" || info.MaxModelLen <= 0 || !info.ForcesOutputLength {
				t.Errorf("discovered %+v", info)
			}
			cfg.Model, cfg.Quirks = info.Models[0], q
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rec := c.Do(ctx, &servebench.Request{Prompt: "Explain continuous batching in one paragraph.", MaxOutputTokens: 16})
			for _, v := range conformance(rec, expect{OutputTokens: 16, ResponseID: anyID}) {
				t.Error(v)
			}
			if rec.Server == nil || rec.Server.Source != "vllm-request-metrics" || rec.Server.PrefillSeconds == nil || rec.Server.QueueSeconds == nil {
				t.Errorf("server timings %+v, want the simulator's vLLM RequestMetrics", rec.Server)
			}
		})
	}
}

// The simulator as a reasoning model, in both field names: reasoning first (counted by usage),
// then the answer.
func TestConformanceSimulatorReasoning(t *testing.T) {
	for _, field := range []string{sim.ReasoningFieldContent, sim.ReasoningFieldShort} {
		t.Run(field, func(t *testing.T) {
			s := sim.New(sim.FastProfile, sim.Options{Seed: 1, ReasoningTokens: 12, ReasoningField: field})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s.Start(ctx)
			defer s.Close()
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			c := newClient(t, srv.URL+"/v1", func(c *Config) { c.Model = s.ModelName() })
			rec := c.Do(ctx, &servebench.Request{Prompt: "Think, then answer.", MaxOutputTokens: 40})
			want := expect{OutputTokens: 40, ResponseID: anyID, ReasoningTokens: 12, ReasoningSource: servebench.SourceUsage}
			for _, v := range conformance(rec, want) {
				t.Error(v)
			}
		})
	}
}

// TestConformanceLiveOllama runs the suite against a real Ollama:
//
//	SERVEBENCH_OLLAMA_URL=http://127.0.0.1:11434/v1 SERVEBENCH_OLLAMA_MODEL=tiny go test ./openai -run Live
func TestConformanceLiveOllama(t *testing.T) {
	base := os.Getenv("SERVEBENCH_OLLAMA_URL")
	if base == "" {
		t.Skip("SERVEBENCH_OLLAMA_URL not set")
	}
	model := os.Getenv("SERVEBENCH_OLLAMA_MODEL")
	if model == "" {
		model = "tiny"
	}
	ctx := context.Background()
	for _, api := range []servebench.API{servebench.APIChat, servebench.APICompletions, servebench.APIOllama} {
		t.Run(string(api), func(t *testing.T) {
			cfg := Config{BaseURL: base, API: api, Model: model}
			info, q, err := Discover(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if info.Engine != "ollama" {
				t.Errorf("engine %q, want ollama", info.Engine)
			}
			cfg.Quirks = q
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rec := c.Do(ctx, &servebench.Request{Prompt: "Tell me a long story about a lighthouse keeper and the sea.", MaxOutputTokens: 8})
			want := expect{OutputTokens: 8, ResponseID: anyID}
			if api == servebench.APIOllama {
				want.ResponseID = "" // the native API has no id
			}
			for _, v := range conformance(rec, want) {
				t.Error(v)
			}
		})
	}
}
