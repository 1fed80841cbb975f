package runner

import (
	"context"
	"encoding/json"
	"errors"
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

// closes says which proposed levels can bracket a search's limit (the interleaved searches
// measure those first, at up to twice the cost of one that only raises a lower bound): one
// predicted to fail, or any once a level failed. The rows are GLM-4.7-Flash / H200's (TTFT ≤ 12 s
// at 96K and 64K).
func TestClosesPredictsABracket(t *testing.T) {
	uc := servebench.UseCase{Name: "agent", ContextTokens: 98304, OutputTokens: 1024, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(12)}}
	cell := levelCell
	for _, tc := range []struct {
		name  string
		cells []servebench.CellResult
		n     int
		want  bool
	}{
		{"one level, 64K's TTFT grew 1.38 × from 1 to 2: 9.6 s → 13.2 s, past 12 s", []servebench.CellResult{
			cell("agent", 98304, 1, 9.6), cell("long", 65536, 1, 4.85), cell("long", 65536, 2, 6.7)}, 2, true},
		{"one level, 64K's TTFT grew 1.1 ×: 10.6 s holds", []servebench.CellResult{
			cell("agent", 98304, 1, 9.6), cell("long", 65536, 1, 4.85), cell("long", 65536, 2, 5.3)}, 2, false},
		{"the nearest context decides: 64K's 1.38 × over 8K's 1.05 ×", []servebench.CellResult{
			cell("agent", 98304, 1, 9.6), cell("sweep", 8192, 1, 0.3), cell("sweep", 8192, 2, 0.315), cell("long", 65536, 1, 4.85), cell("long", 65536, 2, 6.7)}, 2, true},
		{"one level, no context measured at both 1 and 2: nothing to predict from", []servebench.CellResult{
			cell("agent", 98304, 1, 9.6), cell("long", 65536, 1, 4.85)}, 2, false},
		{"two passing levels, TTFT 2 s and 4 s: the line crosses 12 s at 5, so 8 fails", []servebench.CellResult{
			cell("agent", 98304, 1, 2), cell("agent", 98304, 2, 4)}, 8, true},
		{"the same line: 4 holds (10 s)", []servebench.CellResult{
			cell("agent", 98304, 1, 2), cell("agent", 98304, 2, 4)}, 4, false},
		{"a level failed: every level proposed narrows the bracket", []servebench.CellResult{
			cell("agent", 98304, 1, 2), cell("agent", 98304, 8, 20)}, 4, true},
		{"no level yet", []servebench.CellResult{cell("long", 65536, 1, 4.85), cell("long", 65536, 2, 6.7)}, 1, false},
	} {
		done := byKey(tc.cells)
		if got := closes(uc, tc.n, done); got != tc.want {
			t.Errorf("%s: closes(%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

// A level the budget refuses ends only its own search: the others go on with their levels
// (each refused in turn only when it does not fit). Here the cheap search's level 8 is refused
// (as a level too long for the time left would be) and the expensive search still measures its
// level 2; before, the first refusal ended every search still running, on the premise that the
// cheapest level had been refused, which a value order (and a closing level counted at half its
// cost) no longer guarantees.
func TestRefusedLevelEndsOnlyItsSearch(t *testing.T) {
	cheap := servebench.UseCase{Name: "cheap", Title: "Cheap", ContextTokens: 1024, OutputTokens: 128, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(2)}}
	dear := servebench.UseCase{Name: "dear", Title: "Dear", ContextTokens: 65536, OutputTokens: 1024, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(12)}}
	plan := servebench.Plan{UseCases: []servebench.UseCase{dear, cheap}}
	plan.Sweep.MaxTime = servebench.Duration(10 * time.Minute)
	plan.Capacity.MaxConcurrency = 64
	flat := func(v float64) servebench.Summary {
		return servebench.Summary{Count: 10, Mean: v, CI95: &servebench.Interval{Low: v, High: v}}
	}
	var res results.Builder
	d := &decider{plan: plan, res: &res}
	var order []string
	done := map[servebench.CellKey]servebench.CellResult{}
	if err := d.searchCapacity(context.Background(), done, func(_ context.Context, _ servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
		if key.Scenario == cheap.Name && key.Concurrency >= 8 {
			return servebench.CellResult{}, 0, errBudget
		}
		order = append(order, fmt.Sprintf("%s@%d", key.Scenario, key.Concurrency))
		n := float64(key.Concurrency)
		e2e, ttft := 1+0.1*n, 0.1*n
		if key.Scenario == dear.Name {
			e2e, ttft = 20+5*n, 2*n
		}
		return servebench.CellResult{CellKey: key, RequestsTotal: 10, RequestsSucceeded: 10, SuccessRate: 1,
			E2ELatencySeconds: flat(e2e), TTFTSeconds: flat(ttft)}, 30, nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("levels in order: %v", order)
	if !slices.Contains(order, "dear@2") {
		t.Errorf("levels %v: the expensive search stopped when the cheap one's level was refused", order)
	}
	caps := res.Results(results.Run{Plan: plan}).Capacity
	for _, c := range caps {
		if c.UseCase == cheap.Name && (c.LimitKind != servebench.LimitLowerBound || !strings.Contains(c.Note, "next level, 8 in flight, did not fit")) {
			t.Errorf("cheap: %s %v %q, want a lower bound whose note names level 8", c.LimitKind, deref(c.Limit), c.Note)
		}
	}
}

// A level that only raises a lower bound counts at openingWeight × its least cost, and at that
// once more for every passing level its search has beyond its first: a lower bound raised again
// is worth less than one raised the first time. A level that can bracket the limit (closes)
// counts at its cost, however many levels passed. On GLM-4.7-Flash / H200 with --max-time 10m,
// without the diminishing weight Short-form Chatbot's 32 (after 1, 2 and 8 passed) went before
// General Chatbot's 8 (after 1 and 2), which then did not fit (TestBudgetKeepsMaxTime).
func TestValueWeightDiminishes(t *testing.T) {
	uc := servebench.UseCase{Name: "chat", ContextTokens: 8192, OutputTokens: 1024, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(10)}}
	cell := func(n int, ttft float64) servebench.CellResult { return levelCell("chat", 8192, n, ttft) }
	for _, tc := range []struct {
		name  string
		cells []servebench.CellResult
		n     int
		want  float64
	}{
		{"one passing level: a first raise, openingWeight", []servebench.CellResult{cell(1, 0.3)}, 2, 2},
		{"two passing levels, flat TTFT (8 holds on the line): still openingWeight", []servebench.CellResult{cell(1, 0.3), cell(2, 0.4)}, 8, 2},
		{"three passing levels: a raise again, twice openingWeight", []servebench.CellResult{cell(1, 0.3), cell(2, 0.4), cell(8, 1.3)}, 32, 4},
		{"four passing levels: three times openingWeight", []servebench.CellResult{cell(1, 0.3), cell(2, 0.4), cell(8, 1.3), cell(32, 1.4)}, 128, 6},
		{"the line through 8 and 32 crosses 10 s below 128: it closes, counted at its cost", []servebench.CellResult{cell(1, 0.3), cell(2, 0.4), cell(8, 1.3), cell(32, 4)}, 128, 1},
		{"a failing level: any level proposed closes", []servebench.CellResult{cell(1, 0.3), cell(2, 0.4), cell(8, 1.3), cell(32, 12)}, 16, 1},
	} {
		done := byKey(tc.cells)
		if got := valueWeight(uc, tc.n, done); got != tc.want {
			t.Errorf("%s: valueWeight(%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

// A capacity level more than twice the highest concurrency measured at its context and output
// length is counted at jumpFactor × its expected cost when the budget tests whether it fits: its
// latency is extrapolated. On a real 10-minute GLM-4.7-Flash run Short-form Chatbot's 32, after
// 8 (12.6 s end-to-end), was counted at ~64 s, started with 71 s left and took 90 s: the run
// ended 7.8 s past its budget. Here, with 71 s left before the budget's tail and a summed
// overrun of 1.15, 32 after 8 is refused (58 s × 1.5), 16 after 8 is not (58 s); nor is 32
// with more time left, or after 16.
func TestBudgetJumpMargin(t *testing.T) {
	key := func(n int) servebench.CellKey {
		return servebench.CellKey{Kind: servebench.KindCapacity, Scenario: "chat", LoadMode: servebench.ModeSustained, ContextTokens: 8192, OutputTokens: 1024, Concurrency: n}
	}
	for _, tc := range []struct {
		name     string
		measured []int         // levels measured at 8K / 1024 out (12.6 s end-to-end each)
		elapsed  time.Duration // of the 10-minute budget (tail 12 s)
		n        int
		refused  bool
	}{
		{"32 after 8, 71 s left: 58 s × 1.5 = 87 s does not fit", []int{8}, 517 * time.Second, 32, true},
		{"16 after 8 (twice): 58 s fits", []int{8}, 517 * time.Second, 16, false},
		{"32 after 8, 100 s left: 87 s fits", []int{8}, 488 * time.Second, 32, false},
		{"32 after 16 (twice): 58 s fits", []int{8, 16}, 517 * time.Second, 32, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			r := &Runner{}
			r.bud = newBudget(10*time.Minute, time.Now())
			r.bud.tookSum, r.bud.estSum = 1.15, 1
			for _, n := range tc.measured {
				r.costs = append(r.costs, cellCost{key: key(n), wall: 50, planned: 3 * n, ttft: 1.3, e2e: 12.6})
			}
			time.Sleep(tc.elapsed)
			err := r.budgetLevel(key(tc.n), true, 1)
			if got := errors.Is(err, errBudget); got != tc.refused {
				t.Errorf("%s: refused %v (%v), want %v", tc.name, got, err, tc.refused)
			}
		})
	}
}

// byKey is the measured cells as a search reads them: by key.
func byKey(cells []servebench.CellResult) map[servebench.CellKey]servebench.CellResult {
	done := map[servebench.CellKey]servebench.CellResult{}
	for _, c := range cells {
		done[c.CellKey] = c
	}
	return done
}

// levelCell is a measured capacity level of scenario at ctx tokens (1,024 out) and n in flight:
// 10 requests, all succeeded, mean TTFT ttft and end-to-end latency ttft + 7 s.
func levelCell(scenario string, ctx, n int, ttft float64) servebench.CellResult {
	return servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindCapacity, Scenario: scenario, LoadMode: servebench.ModeSustained,
		ContextTokens: ctx, OutputTokens: 1024, Concurrency: n}, RequestsTotal: 10, RequestsSucceeded: 10, SuccessRate: 1,
		TTFTSeconds: servebench.Summary{Count: 10, Mean: ttft}, E2ELatencySeconds: servebench.Summary{Count: 10, Mean: ttft + 7}}
}
