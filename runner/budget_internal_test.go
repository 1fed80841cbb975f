package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/results"
)

// A budgeted sweep measures first its cells that are also a use case's capacity level (8K and
// 32K with 1,024-token answers here), by concurrency, then the others (1K) and the dedicated
// scenarios' cells in the plan's order.
func TestLevelsFirst(t *testing.T) {
	sweep := func(ctx, n int) cells.Cell {
		return cells.Cell{Key: servebench.CellKey{Kind: servebench.KindSweep, Scenario: SweepScenario, LoadMode: servebench.ModeSustained, ContextTokens: ctx, OutputTokens: 1024, Concurrency: n}}
	}
	var in []cells.Cell
	for _, ctx := range []int{1024, 8192, 32768} {
		for _, n := range []int{1, 2, 4} {
			in = append(in, sweep(ctx, n))
		}
	}
	burst := cells.Cell{Key: servebench.CellKey{Kind: servebench.KindScenario, Scenario: "chat", LoadMode: servebench.ModeDedicated, ContextTokens: 8192, OutputTokens: 1024, Concurrency: 1}}
	in = append(in, burst)
	ucs := []servebench.UseCase{{Name: "short", ContextTokens: 8192, OutputTokens: 1024}, {Name: "general", ContextTokens: 32768, OutputTokens: 1024}, {Name: "code", ContextTokens: 1024, OutputTokens: 128}}
	got := levelsFirst(in, ucs)
	want := []cells.Cell{sweep(8192, 1), sweep(32768, 1), sweep(8192, 2), sweep(32768, 2), sweep(8192, 4), sweep(32768, 4),
		sweep(1024, 1), sweep(1024, 2), sweep(1024, 4), burst}
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key {
			t.Errorf("cell %d: %s, want %s", i, got[i].Key.ID(), want[i].Key.ID())
		}
	}
	if in[0].Key.ContextTokens != 1024 {
		t.Error("levelsFirst reordered its argument")
	}
}

// A capacity level that took longer than its least cost (minLevelCost of the latency expected
// from the levels below it) makes the budget count every later level at the overrun of all the
// levels measured, summed: the first level of 8 s expected took 12 s (1.5 ×), so a level of 5 s
// expected latency is counted at 30 s, not 20 s; a level of 40 s expected that took 44 s
// brings it to (12 + 44) / (8 + 40) = 1.1667 × (23.3 s), where the largest single ratio would
// have kept 1.5 × (a short level's outlier counted against every long one); a level that took
// less than its estimate never takes the factor below 1; a sweep cell changes nothing.
func TestBudgetLevelCostLearnsOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(10*time.Minute, time.Now())
		if got := b.levelCost(5, 2); got != 20*time.Second {
			t.Fatalf("before any level: %s, want minLevelCost 20s", got)
		}
		level := func(e2e float64, took time.Duration) {
			b.levelEst, b.levelStart = minLevelCost(e2e, 2), time.Now()
			time.Sleep(took)
			b.cellStopped(servebench.CellResult{})
		}
		for _, step := range []struct {
			e2e  float64 // the level's expected latency (its least cost: 4 ×)
			took time.Duration
			want time.Duration // a level of 5 s expected latency counted at
		}{
			{2, 12 * time.Second, 30 * time.Second},    // 1.5 × over
			{10, 44 * time.Second, 23333333333},        // summed: 56 / 48
			{100, 200 * time.Second, 20 * time.Second}, // far under: 256 / 448, never below 1
		} {
			level(step.e2e, step.took)
			if got := b.levelCost(5, 2); got.Round(time.Millisecond) != step.want.Round(time.Millisecond) {
				t.Errorf("after a level of %.0f s expected that took %s: %s, want %s", step.e2e, step.took, got, step.want)
			}
		}
		b.cellStopped(servebench.CellResult{}) // a sweep cell: no level in progress
		if got := b.levelCost(5, 2); got != 20*time.Second {
			t.Errorf("after a sweep cell: %s, want 20s still", got)
		}
	})
}

// Under a time budget, the live view's estimate of a capacity level is at least what the budget
// counts it to cost: 4 × the expected latency (here 20 s, from the level below) × the largest
// overrun seen (1.5), 2 minutes; the cell estimate alone, from the level below's requests and
// latency, said far less.
func TestBudgetLevelEstimate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		uc := servebench.UseCase{Name: "long", ContextTokens: 65536, OutputTokens: 1024}
		key := func(n int) servebench.CellKey {
			return servebench.CellKey{Kind: servebench.KindCapacity, Scenario: uc.Name, LoadMode: servebench.ModeSustained, ContextTokens: 65536, OutputTokens: 1024, Concurrency: n}
		}
		r := &Runner{Plan: servebench.Plan{UseCases: []servebench.UseCase{uc}}}
		r.bud = newBudget(10*time.Minute, time.Now())
		r.bud.tookSum, r.bud.estSum = 1.5, 1
		r.costs = []cellCost{{key: key(1), wall: 60, planned: 3, ttft: 8, e2e: 20}}
		if err := r.budgetLevel(key(2), true, 1); err != nil {
			t.Fatal(err)
		}
		r.startLevel(key(2))
		c := r.clock.Load()
		if c == nil {
			t.Fatal("no clock")
		}
		cell, _ := estimateCell(key(2), r.planned(key(2)), r.family(key(2)))
		if want := 2 * time.Minute; c.estimate != max(want, cell) || cell >= want {
			t.Errorf("level estimate %s (the cell estimate alone %s), want %s", c.estimate, cell, want)
		}
	})
}

// Under a time budget the capacity searches are interleaved: each use case's first level (the
// one expected cheaper first, from a sweep cell), then always the proposed level of least
// expected latency. A cheap search (Code Completion-like:
// 1K in, end-to-end 1 + 0.1 n s, TTFT 0.1 n s ≤ 2 s) is measured to its limit (20) while an
// expensive one (64K: 20 + 5 n s, TTFT 2 n s ≤ 12 s) waits; when the expensive one's next level
// does not fit what is left (here 300 s of 4 × its latency, 3 × at one request), the budget
// ends it and it is decided on the levels it has (a lower bound, with the budget's note).
// Reading the same levels back (as Recompute does, errNotMeasured past the last) walks them in
// the same order to the same decisions.
func TestInterleavedSearchesCheapestFirst(t *testing.T) {
	cheap := servebench.UseCase{Name: "cheap", Title: "Cheap", ContextTokens: 1024, OutputTokens: 128, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(2)}}
	dear := servebench.UseCase{Name: "dear", Title: "Dear", ContextTokens: 65536, OutputTokens: 1024, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(12)}}
	plan := servebench.Plan{UseCases: []servebench.UseCase{dear, cheap}} // the expensive one first in the plan
	plan.Sweep.MaxTime = servebench.Duration(10 * time.Minute)
	plan.Capacity.MaxConcurrency = 64
	flat := func(v float64) servebench.Summary {
		return servebench.Summary{Count: 10, Mean: v, CI95: &servebench.Interval{Low: v, High: v}}
	}
	cell := func(key servebench.CellKey) servebench.CellResult {
		n := float64(key.Concurrency)
		e2e, ttft := 1+0.1*n, 0.1*n
		if key.Scenario == dear.Name {
			e2e, ttft = 20+5*n, 2*n
		}
		return servebench.CellResult{CellKey: key, RequestsTotal: 10, RequestsSucceeded: 10, SuccessRate: 1,
			E2ELatencySeconds: flat(e2e), TTFTSeconds: flat(ttft)}
	}
	run := func(level levelFunc) ([]string, []servebench.CapacityResult) {
		var res results.Builder
		d := &decider{plan: plan, res: &res}
		var order []string
		// a sweep cell measured before the searches (1K in, 1,024 out: no use case's shape) is
		// all the first levels' estimates have
		sweep := servebench.CellKey{Kind: servebench.KindSweep, Scenario: SweepScenario, LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 1024, Concurrency: 1}
		done := map[servebench.CellKey]servebench.CellResult{sweep: {CellKey: sweep, RequestsTotal: 2, RequestsSucceeded: 2, SuccessRate: 1,
			E2ELatencySeconds: flat(6), TTFTSeconds: flat(0.1)}}
		if err := d.searchCapacity(context.Background(), done, func(_ context.Context, _ servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
			c, sent, err := level(context.Background(), servebench.UseCase{}, key)
			if err == nil {
				order = append(order, fmt.Sprintf("%s@%d", key.Scenario, key.Concurrency))
			}
			return c, sent, err
		}); err != nil {
			t.Fatal(err)
		}
		return order, res.Results(results.Run{Plan: plan}).Capacity
	}
	spent, measured := 0.0, map[servebench.CellKey]servebench.CellResult{}
	order, caps := run(func(_ context.Context, _ servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
		c := cell(key)
		cost := minLevelCost(c.E2ELatencySeconds.Mean, key.Concurrency).Seconds()
		if spent+cost > 300 {
			return servebench.CellResult{}, 0, errBudget
		}
		spent += cost
		measured[key] = c
		return c, 30, nil
	})
	t.Logf("levels in order: %v (%.0f s)", order, spent)
	if len(order) < 3 || order[0] != "cheap@1" || order[1] != "dear@1" {
		t.Fatalf("order %v: want each search's first level first, the cheaper first", order)
	}
	last := slices.IndexFunc(order, func(s string) bool { return strings.HasPrefix(s, "dear@") && s != "dear@1" })
	for i, s := range order {
		if strings.HasPrefix(s, "cheap@") && last >= 0 && i > last {
			t.Errorf("order %v: the cheap search's %s came after the expensive one's second level", order, s)
		}
	}
	if len(caps) != 2 || caps[0].UseCase != "dear" || caps[1].UseCase != "cheap" {
		t.Fatalf("capacity results %+v: want both, in the plan's order", caps)
	}
	if c := caps[1]; c.LimitKind != servebench.LimitMeasured || c.Limit == nil || *c.Limit != 20 {
		t.Errorf("cheap: %s %v, want measured 20", c.LimitKind, deref(c.Limit))
	}
	if c := caps[0]; c.LimitKind != servebench.LimitLowerBound || c.Limit == nil || *c.Limit < 1 || !strings.Contains(c.Note, "time budget") {
		t.Errorf("dear: %s %v %q, want a lower bound the budget ended", c.LimitKind, deref(c.Limit), c.Note)
	}
	// the same levels read back: the same order, the same decisions
	again, recaps := run(func(_ context.Context, _ servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
		c, ok := measured[key]
		if !ok {
			return servebench.CellResult{}, 0, errNotMeasured
		}
		return c, 30, nil
	})
	if !slices.Equal(again, order) {
		t.Errorf("read back in the order %v, measured in %v", again, order)
	}
	g, _ := json.Marshal(recaps)
	w, _ := json.Marshal(caps)
	if string(g) != string(w) {
		t.Errorf("read back:\n%s\nmeasured:\n%s", g, w)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
