package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
)

// controlled is an OpenAI-compatible chat server whose behaviour is a known function of the
// number n of requests it holds: 1 ms after a request arrives it counts n, then waits
// prefillPerUser·n before the first token and tokenPerUser·n between tokens. So, exactly:
//
//	TTFT(n)             = 1 ms + prefillPerUser·n
//	generation speed(n) = 1 / (tokenPerUser·n)
//	E2E(n)              = TTFT(n) + (K − 1)·tokenPerUser·n      (K output tokens)
//
// A request leaves the count before its last event is written, so in a closed loop, where every
// slot sends its next request the moment the previous one ends, a new request always counts
// exactly the cell's concurrency. The test runs in a synctest bubble over in-memory
// connections, so every duration is exact and nothing depends on the machine's speed.
type controlled struct {
	prefillPerUser, tokenPerUser time.Duration
	inflight                     atomic.Int64
	requests                     atomic.Int64
}

func (s *controlled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 || body.MaxTokens < 1 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.requests.Add(1)
	s.inflight.Add(1)
	left := sync.OnceFunc(func() { s.inflight.Add(-1) })
	defer left()
	// One token per word.
	prompt := len(strings.Fields(body.Messages[0].Content))

	time.Sleep(time.Millisecond) // scheduling: everyone released together has arrived
	n := time.Duration(s.inflight.Load())
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(v string) {
		fmt.Fprintf(w, "data: %s\n\n", v)
		fl.Flush()
	}
	send(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`)
	time.Sleep(s.prefillPerUser * n)
	for i := range body.MaxTokens {
		if i > 0 {
			time.Sleep(s.tokenPerUser * n)
		}
		send(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}`)
	}
	left()
	send(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`)
	send(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, body.MaxTokens, prompt+body.MaxTokens))
	send("[DONE]")
}

// newPipeListener hands out in-memory connections (net.Pipe): durably blocking inside a bubble.
func newPipeListener() *simtest.PipeListener { return simtest.NewPipeListener() }

// wordPrompts builds prompts of exactly n words (the controlled server's tokens), each with a
// unique first word.
type wordPrompts struct{}

func (wordPrompts) Prompt(_ context.Context, seq int64, tokens int) (string, error) {
	return fmt.Sprintf("req%d", seq) + strings.Repeat(" a", tokens-1), nil
}

// The capacity search, driven through the real client over HTTP against a server with known
// behaviour, finds the known limit of a speed-bound, a TTFT-bound and an end-to-end-bound use
// case, reuses the sweep's cells, and spends fewer requests than a dense grid to the same level.
func TestCapacitySearchFindsKnownLimits(t *testing.T) {
	const (
		ctxTokens = 256
		out       = 16
		ceiling   = 32
	)
	srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
	// Known limits from the formulas on controlled:
	//   speed 200/n tok/s ≥ 15       ⇔ n ≤ 13.3 → 13
	//   TTFT 0.001 + 0.020n s ≤ 0.5  ⇔ n ≤ 24.95 → 24
	//   E2E 0.001 + 0.095n s ≤ 1.0   ⇔ n ≤ 10.5 → 10
	cases := []struct {
		uc       servebench.UseCase
		limit    int
		limiting string
	}{
		{servebench.UseCase{Name: "speed_bound", Title: "Speed-bound", Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}},
			13, "generation_speed_tps"},
		{servebench.UseCase{Name: "ttft_bound", Title: "TTFT-bound", Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.5)}},
			24, "ttft_seconds"},
		{servebench.UseCase{Name: "e2e_bound", Title: "End-to-end-bound", Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(1.0)}},
			10, "e2e_latency_seconds"},
	}

	p := controlledPlan(t, ctxTokens, out, "1,2", ceiling)
	for _, c := range cases {
		uc := c.uc
		uc.ContextTokens, uc.OutputTokens, uc.Statistic = ctxTokens, out, servebench.StatMean
		p.UseCases = append(p.UseCases, uc)
	}

	synctest.Test(t, func(t *testing.T) {
		rec := runControlled(t, srv, p, p.Target.URL, ceiling, "controlled")

		res := rec.res
		if got := int64(len(rec.recs)); got != srv.requests.Load() {
			t.Errorf("%d records for %d requests the server received", got, srv.requests.Load())
		}
		for _, rc := range rec.recs {
			if !rc.OK() || rc.InputTokens != ctxTokens || rc.OutputTokens != out {
				t.Fatalf("record %+v: want a success with %d prompt and %d output tokens", rc, ctxTokens, out)
			}
		}
		// The controlled server's formulas hold in the measured cells (so the limits below are
		// the known ones, not luck).
		checkControlled(t, res.Cells)

		if len(res.Capacity) != len(cases) {
			t.Fatalf("%d capacity results, want %d", len(res.Capacity), len(cases))
		}
		measured := map[int]bool{1: true, 2: true}
		for i, c := range cases {
			got := res.Capacity[i]
			t.Logf("%s: limit %v (%s, %s), points %v, spent %d requests, dense grid %d", got.UseCase, deref(got.Limit),
				got.LimitKind, got.LimitingMetric, levels(got.Points), got.RequestsSpent, got.DenseGridRequests)
			if got.UseCase != c.uc.Name {
				t.Fatalf("capacity[%d] is %s, want %s", i, got.UseCase, c.uc.Name)
			}
			if got.Limit == nil || *got.Limit != c.limit {
				t.Errorf("%s: limit %v, want %d", c.uc.Name, deref(got.Limit), c.limit)
			}
			if got.LimitKind != servebench.LimitMeasured && got.LimitKind != servebench.LimitInterpolated {
				t.Errorf("%s: limit kind %s, want measured or interpolated", c.uc.Name, got.LimitKind)
			}
			if got.LimitingMetric != c.limiting {
				t.Errorf("%s: limiting metric %q, want %q", c.uc.Name, got.LimitingMetric, c.limiting)
			}
			if got.RequestsSpent <= 0 || got.RequestsSpent >= got.DenseGridRequests {
				t.Errorf("%s: spent %d requests, dense grid %d: the search must be cheaper", c.uc.Name, got.RequestsSpent, got.DenseGridRequests)
			}
			// Levels 1 and 2 come from the sweep, and levels an earlier search measured at the
			// same context and output length are reused too: free, never re-run.
			for _, pt := range got.Points {
				if measured[pt.Concurrency] != pt.Reused {
					t.Errorf("%s: level %d reused=%v", c.uc.Name, pt.Concurrency, pt.Reused)
				}
				measured[pt.Concurrency] = true
			}
		}
	})
}

// controlledPlan is a sweep of the given concurrency levels at one context and output length,
// with no floors beyond one measured request, for the controlled server; no use case yet.
func controlledPlan(t *testing.T, ctxTokens, out int, levels string, ceiling int) servebench.Plan {
	t.Helper()
	p, err := plan.Resolve(nil, plan.Overrides{"url": "http://127.0.0.1:8000/v1", "contexts": fmt.Sprint(ctxTokens), "concurrency": levels,
		"output-tokens": fmt.Sprint(out), "use-cases": "none", "min-requests": "1", "rounds": "1"})
	if err != nil {
		t.Fatal(err)
	}
	p.Sweep.MinDuration = 0
	p.Capacity.MaxConcurrency = ceiling
	p.Scenarios = nil
	return p
}

// checkControlled checks the controlled server's formulas in measured cells: at n concurrent
// requests TTFT is 0.001 + 0.020n s (mean and max) and per-user speed 200/n tok/s.
func checkControlled(t *testing.T, cells []servebench.CellResult) {
	t.Helper()
	for _, c := range cells {
		n := float64(c.Concurrency)
		if want := 0.001 + 0.020*n; !near(c.TTFTSeconds.Mean, want, 1e-6) || c.TTFTSeconds.Max == nil || !near(*c.TTFTSeconds.Max, want, 1e-6) {
			t.Errorf("%s: TTFT mean %.6f max %.6f, want %.6f", c.ID(), c.TTFTSeconds.Mean, *c.TTFTSeconds.Max, want)
		}
		if want := 200 / n; !near(c.GenerationSpeedTPS.Mean, want, 1e-6) {
			t.Errorf("%s: speed %.6f, want %.6f", c.ID(), c.GenerationSpeedTPS.Mean, want)
		}
	}
}

func near(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func levels(pts []servebench.CapacityPoint) []int {
	var l []int
	for _, p := range pts {
		l = append(l, p.Concurrency)
	}
	return l
}

// runControlled runs plan p through the real client and runner against srv over in-memory
// connections (call it inside a synctest bubble, so every timing is exact) and returns what the
// run recorded.
func runControlled(t *testing.T, srv http.Handler, p servebench.Plan, url string, maxConns int, id string) *memRecorder {
	t.Helper()
	return runControlledEvents(t, srv, p, url, maxConns, id, nil)
}

// runControlledEvents is runControlled with the runner's events passed to events.
func runControlledEvents(t *testing.T, srv http.Handler, p servebench.Plan, url string, maxConns int, id string, events func(runner.Event)) *memRecorder {
	t.Helper()
	return runControlledWith(t, srv, p, url, maxConns, id, events, workloads{})
}

// runControlledWith is runControlledEvents with the plan's files.
func runControlledWith(t *testing.T, srv http.Handler, p servebench.Plan, url string, maxConns int, id string, events func(runner.Event), wl workloads) *memRecorder {
	t.Helper()
	ln := newPipeListener()
	stop := simtest.Serve(t, ln, srv)
	origin := time.Now()
	client, err := openai.New(openai.Config{BaseURL: url, API: servebench.APIChat, Model: "controlled",
		Origin: origin, MaxConnections: maxConns, DialContext: ln.DialContext})
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	r := &runner.Runner{Plan: p, Server: servebench.ServerInfo{Models: []string{"controlled"}}, Client: client,
		Prompts: wordPrompts{}, Recorder: rec, Origin: origin, RunInfo: servebench.RunInfo{ID: id}, Events: events}
	wl.attach(r)
	runErr := r.Run(t.Context())
	rec.res = r.Results()
	client.Close()
	stop()
	if runErr != nil {
		t.Fatal(runErr)
	}
	return rec
}

// capacity.resolution reaches the capacity searches and is recorded on their results (for the
// page's what-if); on the controlled server (speed 200/n tok/s, ≥ 15 tok/s holds up to 13) the
// model through 2 and 8 predicts 13.3, so a resolution of a quarter ends exactly where the exact
// search does: 13 passes, 14 fails (the rule's own cases are capacity's TestSearchEndsAtCrossing
// and TestSearchResolution).
func TestCapacityResolutionFromPlan(t *testing.T) {
	const ctxTokens, out, ceiling = 256, 16, 32
	uc := servebench.UseCase{Name: "speed_bound", Title: "Speed-bound", ContextTokens: ctxTokens, OutputTokens: out, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}
	for _, r := range []float64{0, 0.25} {
		p := controlledPlan(t, ctxTokens, out, "1,2", ceiling)
		p.UseCases = []servebench.UseCase{uc}
		p.Capacity.Resolution = r
		synctest.Test(t, func(t *testing.T) {
			srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
			got := runControlled(t, srv, p, p.Target.URL, ceiling, "controlled").res.Capacity[0]
			if got.Resolution != r || got.Limit == nil || *got.Limit != 13 || got.FirstFailing == nil || *got.FirstFailing != 14 {
				t.Errorf("resolution %g: limit %v, first failing %v, recorded resolution %g; want 13, 14, %g", r, deref(got.Limit), got.FirstFailing, got.Resolution, r)
			}
		})
	}
}
