package stats_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// closedLoop is a synthetic sustained cell: n slots sending back to back, each request's TTFT
// and decode time given by shape at its start time (s), with ±5% seeded jitter. The first
// request of every slot is warm-up; the window runs from the last warm-up's end to until.
type closedLoop struct {
	n      int
	until  float64
	output int
	shape  func(start float64) (ttft, decode float64)
	fail   func(i int) bool // measured request i fails (nil: none)
}

func (g closedLoop) records() ([]servebench.Record, stats.Window) {
	rng := rand.New(rand.NewPCG(1, 2))
	jit := func() float64 { return 1 + 0.1*(rng.Float64()-0.5) }
	var recs []servebench.Record
	w := stats.Window{End: g.until}
	measured := 0
	for s := 0; s < g.n; s++ {
		t := 0.001 * float64(s)
		for i := 0; t < g.until; i++ {
			ttft, dec := g.shape(t)
			ttft, dec = ttft*jit(), dec*jit()
			r := servebench.Record{
				StartOffsetSeconds: t, TTFTSeconds: ttft, DecodeSeconds: dec,
				E2ELatencySeconds: ttft + dec, EndOffsetSeconds: t + ttft + dec,
				InputTokens: 1024, OutputTokens: g.output, Warmup: i == 0,
				GenerationSpeedTPS: float64(g.output-1) / dec,
			}
			if r.Warmup {
				w.Start = max(w.Start, r.EndOffsetSeconds)
			} else {
				if g.fail != nil && g.fail(measured) {
					r.ErrorClass, r.OutputTokens, r.TTFTSeconds, r.DecodeSeconds = servebench.ErrorClass("http_5xx"), 0, 0, 0
				}
				measured++
			}
			recs = append(recs, r)
			t = r.EndOffsetSeconds
		}
	}
	return recs, w
}

func assess(t *testing.T, g closedLoop, w *stats.Window, precision float64, edit func(*servebench.CellResult)) servebench.CellResult {
	t.Helper()
	recs, win := g.records()
	if w != nil {
		win = *w
	}
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: g.output, Concurrency: g.n}
	c := stats.Cell(key, recs, win)
	if edit != nil {
		edit(&c)
	}
	stats.Assess(&c, recs, win, precision)
	return c
}

func steady(float64) (float64, float64) { return 0.1, 1 }

// TestAssess checks each verdict rule of stats.Assess on synthetic cells built to trip exactly
// one of them (and a steady cell that trips none).
func TestAssess(t *testing.T) {
	base := closedLoop{n: 4, until: 120, output: 100, shape: steady}
	short := stats.Window{Start: 2, End: 3.5} // 1.5 s < 2 × 1.1 s mean end-to-end latency
	tests := []struct {
		name      string
		g         closedLoop
		w         *stats.Window
		precision float64
		edit      func(*servebench.CellResult)
		verdict   servebench.Verdict
		reason    servebench.Reason // "" for a valid cell
		note      string            // substring of the reason's note
	}{
		{name: "steady, long window: valid", g: base, precision: 0.05, verdict: servebench.VerdictValid},
		{name: "throughput halves in the second half of the window: unstable",
			g: closedLoop{n: 4, until: 120, output: 100, shape: func(s float64) (float64, float64) {
				if s > 61 {
					return 0.1, 2.2
				}
				return 0.1, 1
			}},
			precision: 0.5, verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonUnstable, note: "output throughput"},
		{name: "TTFT triples in the second half, throughput kept: unstable",
			g: closedLoop{n: 4, until: 120, output: 100, shape: func(s float64) (float64, float64) {
				if s > 61 {
					return 0.4, 0.7
				}
				return 0.1, 1
			}},
			precision: 0.5, verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonUnstable, note: "mean TTFT"},
		{name: "a 10% drift stays within the tolerated shift", g: closedLoop{n: 4, until: 120, output: 100, shape: func(s float64) (float64, float64) {
			return 0.1, 1 + 0.1*s/120
		}}, precision: 0.5, verdict: servebench.VerdictValid},
		{name: "window shorter than 2 × mean end-to-end latency: invalid", g: base, w: &short, precision: 0.5,
			verdict: servebench.VerdictInvalid, reason: servebench.ReasonWindowTooShort, note: "window 1.5 s"},
		{name: "3% failed: low-confidence", g: closedLoop{n: 4, until: 120, output: 100, shape: steady, fail: func(i int) bool { return i%33 == 0 }},
			precision: 0.5, verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonFailures, note: "measured requests failed"},
		{name: "most failed: invalid", g: closedLoop{n: 4, until: 120, output: 100, shape: steady, fail: func(i int) bool { return i%3 != 0 }},
			precision: 0.5, verdict: servebench.VerdictInvalid, reason: servebench.ReasonFailures},
		{name: "one success: invalid, no interval", g: closedLoop{n: 1, until: 2, output: 100, shape: steady}, precision: 0.5,
			verdict: servebench.VerdictInvalid, reason: servebench.ReasonTooFewSamples, note: "at least 2"},
		// 2 to 9 successes: the intervals exist but are not shown, so the cell lacks them,
		// however narrow they came out (a steady server's ±5% jitter reads about ±2% here)
		{name: "3 successes: low-confidence, n<10", g: closedLoop{n: 1, until: 1.1*3 + 0.55, output: 100, shape: steady}, precision: 0.5,
			verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonTooFewSamples, note: "3 successful measured requests, fewer than the 10"},
		{name: "9 successes: low-confidence, n<10", g: closedLoop{n: 1, until: 1.1*9 + 0.55, output: 100, shape: steady}, precision: 0.5,
			verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonTooFewSamples, note: "9 successful measured requests, fewer than the 10 a 95% interval is shown from (n<10)"},
		{name: "10 successes: valid", g: closedLoop{n: 1, until: 1.1*10 + 0.55, output: 100, shape: steady}, precision: 0.5,
			verdict: servebench.VerdictValid},
		{name: "intervals wider than the precision aimed for: low-confidence", g: base, precision: 0.001,
			verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonTooFewSamples, note: "target ±0.1%"},
		{name: "prefix-cache hits on uncached prompts", g: base, precision: 0.05,
			edit:    func(c *servebench.CellResult) { n := 4096; c.CacheHitTokens, c.CacheContaminated = &n, true },
			verdict: servebench.VerdictLowConfidence, reason: servebench.ReasonCacheContaminated, note: "4096 input tokens"},
		{name: "skipped: not measured", g: base, precision: 0.05,
			edit:    func(c *servebench.CellResult) { c.Skipped, c.Note = true, "skipped: 1024 context exceeds the maximum" },
			verdict: servebench.VerdictInvalid, reason: servebench.ReasonNotMeasured, note: "exceeds the maximum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := assess(t, tt.g, tt.w, tt.precision, tt.edit)
			v := c.Validity
			if v.Verdict != tt.verdict {
				t.Fatalf("verdict %q %v %v, want %q", v.Verdict, v.Reasons, v.Notes, tt.verdict)
			}
			if tt.reason == "" {
				if len(v.Reasons) != 0 {
					t.Fatalf("reasons %v (%v), want none", v.Reasons, v.Notes)
				}
				return
			}
			if !slices.Contains(v.Reasons, tt.reason) {
				t.Fatalf("reasons %v (%v), want %q", v.Reasons, v.Notes, tt.reason)
			}
			if !strings.Contains(v.Notes[tt.reason], tt.note) {
				t.Errorf("note %q, want it to mention %q", v.Notes[tt.reason], tt.note)
			}
		})
	}
}
