package runner_test

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
)

// The live view's events, on virtual time against the controlled server (whose latencies do not
// depend on context): a header per phase saying what it measures (sweep, each scenario, each
// capacity search), the statistical progress of sustained cells, and time estimates that come
// from the cells measured so far. The last sweep cell (128 tokens, 2 concurrent) is estimated
// from the cell at its context and the concurrency ratio seen at 64 tokens, so its estimate is
// within 25% of the time it really takes.
func TestEventsCarryHeadersProgressAndEstimates(t *testing.T) {
	srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
	url := "http://127.0.0.1:8000/v1"
	p, err := plan.Resolve(nil, plan.Overrides{"url": url, "contexts": "64,128", "concurrency": "1,2", "output-tokens": "16", "use-cases": "none"})
	if err != nil {
		t.Fatal(err)
	}
	p.Scenarios = []servebench.Scenario{{Name: "chat", Title: "Chat", ContextTokens: 32, OutputTokens: 8, Concurrency: []int{1, 2}}}
	p.UseCases = []servebench.UseCase{{Name: "fast", Title: "Fast", ContextTokens: 96, OutputTokens: 16, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(0.3)}}}
	p.Capacity.MaxConcurrency = 8

	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var evs []runner.Event
		runControlledEvents(t, srv, p, url, 16, "events", func(e runner.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
		})
		var titles []string
		starts := map[[2]int]runner.Event{} // sweep grid cells by (context, concurrency)
		var withProgress int
		for _, e := range evs {
			switch e.Kind {
			case "phase":
				titles = append(titles, e.Title)
			case "cell-start":
				if e.Cell.Scenario == servebench.SweepScenario {
					starts[[2]int{e.Cell.ContextTokens, e.Cell.Concurrency}] = e
				}
			case "request":
				if pr := e.Progress; pr != nil && e.Cell.LoadMode == servebench.ModeSustained {
					withProgress++
					if pr.WindowSeconds <= 0 || pr.Target != 0.05 || pr.TTFTMean <= 0 {
						t.Fatalf("progress %+v: want a window, the 5%% target and a TTFT estimate", *pr)
					}
				}
			case "cell-done":
				if e.Cell.Scenario == "sweep" && e.Cell.ContextTokens == 128 && e.Cell.Concurrency == 2 {
					st := starts[[2]int{128, 2}]
					took := e.Elapsed - st.Elapsed
					if st.CellEstimate <= 0 || float64(absDur(st.CellEstimate-took)) > 0.25*float64(took) {
						t.Errorf("last sweep cell estimated at %v, took %v", st.CellEstimate, took)
					}
				}
			}
		}
		want := []string{"sweep: 4 cells (contexts 64, 128 × concurrency 1, 2, 16 output tokens, sustained), then 2 cells in 1 dedicated scenario",
			"scenario Chat: bursts of 1, 2 requests released together, 32 in / 8 out tokens",
			"capacity Fast: 96 in / 16 out tokens, mean end-to-end latency ≤ 300ms, searching up to 8 concurrent requests"}
		if strings.Join(titles, "\n") != strings.Join(want, "\n") {
			t.Errorf("phase headers:\n%s\nwant:\n%s", strings.Join(titles, "\n"), strings.Join(want, "\n"))
		}
		if withProgress == 0 {
			t.Error("no request event of a sustained cell carried its progress")
		}
		first, second := starts[[2]int{64, 1}], starts[[2]int{64, 2}]
		if len(starts) != 4 {
			t.Fatalf("%d sweep cells started, want 4", len(starts))
		}
		if first.Left != 0 || first.CellEstimate != 0 {
			t.Errorf("first cell: estimate %v, left %v; nothing measured can tell yet", first.CellEstimate, first.Left)
		}
		if second.Left <= second.CellEstimate || second.CellEstimate <= 0 {
			t.Errorf("second cell: estimate %v, sweep left %v; want both, the sweep's longer", second.CellEstimate, second.Left)
		}
	})
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
