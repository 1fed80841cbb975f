package runner

import (
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func TestEstimateCell(t *testing.T) {
	key := func(ctx, n int) servebench.CellKey {
		return servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: ctx, OutputTokens: 100, Concurrency: n}
	}
	// cost: a cell that took exactly its planned rounds (pace 1) unless wall says otherwise
	cost := func(ctx, n, planned int, ttft, e2e, wall float64) cellCost {
		return cellCost{key: key(ctx, n), planned: planned, ttft: ttft, e2e: e2e, wall: wall}
	}
	cases := []struct {
		name    string
		k       servebench.CellKey
		planned int
		done    []cellCost
		want    time.Duration
		ok      bool
	}{
		// nothing measured yet: no estimate
		{"nothing", key(1024, 1), 11, nil, 0, false},
		// same context, same pace: 11 requests at 1 in flight × 2 s
		{"same context", key(1024, 1), 11, []cellCost{cost(1024, 2, 12, 0.1, 2, 12)}, 22 * time.Second, true},
		// concurrency 4 at 8K from 8K at 1, scaled by 1K's 4-vs-1 ratio (3 s / 2 s): 16/4 × 4 × 1.5
		{"concurrency ratio", key(8192, 4), 16, []cellCost{cost(1024, 1, 11, 0.1, 2, 22), cost(1024, 4, 16, 0.4, 3, 12), cost(8192, 1, 11, 0.8, 4, 44)}, 24 * time.Second, true},
		// 32K from 8K: e2e 4 + ttft 0.8 × (4 − 1) = 6.4 s; 11 requests at 1 in flight
		{"longer context", key(32768, 1), 11, []cellCost{cost(1024, 1, 11, 0.1, 2, 22), cost(8192, 1, 11, 0.8, 4, 44)}, time.Duration(11 * 6.4 * float64(time.Second)), true},
		// no other context: the line through 1 (2 s) and 2 (3 s) at 8K gives 7 s at 6; 18/6 rounds
		{"concurrency line", key(8192, 6), 18, []cellCost{cost(8192, 1, 11, 0.1, 2, 22), cost(8192, 2, 12, 0.2, 3, 18)}, 21 * time.Second, true},
		// cells that took twice their planned rounds (measured until sure): pace 2
		{"pace", key(1024, 2), 12, []cellCost{cost(1024, 1, 11, 0.1, 2, 44)}, 24 * time.Second, true},
		// an open-loop cell: 20 requests at 4/s + one end-to-end latency
		{"rate", servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeRate, ContextTokens: 1024, OutputTokens: 100, RatePerSecond: 4}, 20,
			[]cellCost{{key: servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeRate, ContextTokens: 1024, OutputTokens: 100, RatePerSecond: 2}, planned: 20, ttft: 0.1, e2e: 2, wall: 12}},
			7 * time.Second, true},
	}
	for _, c := range cases {
		got, ok := estimateCell(c.k, c.planned, c.done)
		if ok != c.ok || (got-c.want).Abs() > time.Millisecond {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
