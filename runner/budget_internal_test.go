package runner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
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
// from the levels below it) makes the budget count every later level at that overrun: the
// first level of 8 s expected took 12 s (1.5 ×), so a level of 5 s expected latency is counted
// at 30 s, not 20 s; a level that took less changes nothing.
func TestBudgetLevelCostLearnsOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(10*time.Minute, time.Now())
		if got := b.levelCost(5); got != 20*time.Second {
			t.Fatalf("before any level: %s, want minLevelCost 20s", got)
		}
		b.levelEst, b.levelStart = minLevelCost(2), time.Now()
		time.Sleep(12 * time.Second)
		b.cellStopped(servebench.CellResult{})
		if got := b.levelCost(5); got != 30*time.Second {
			t.Errorf("after a level 1.5 × over: %s, want 30s", got)
		}
		b.levelEst, b.levelStart = minLevelCost(10), time.Now()
		time.Sleep(5 * time.Second)
		b.cellStopped(servebench.CellResult{})
		if got := b.levelCost(5); got != 30*time.Second {
			t.Errorf("after a level under its estimate: %s, want 30s still", got)
		}
		b.cellStopped(servebench.CellResult{}) // a sweep cell: no level in progress
		if got := b.levelCost(5); got != 30*time.Second {
			t.Errorf("after a sweep cell: %s, want 30s still", got)
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
		r.bud.overrun = 1.5
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
