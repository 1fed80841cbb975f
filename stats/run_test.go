package stats_test

import (
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func TestThroughputScaling(t *testing.T) {
	at := func(n int, tps float64) *servebench.CellResult {
		c := &servebench.CellResult{SystemOutputThroughputTPS: tps}
		c.Concurrency = n
		return c
	}
	tests := []struct {
		name   string
		cells  []*servebench.CellResult
		want   float64
		lo, hi int
		ok     bool
	}{
		{"highest over lowest level", []*servebench.CellResult{at(1, 100), at(2, 180), at(4, 300)}, 3, 1, 4, true},
		{"one level", []*servebench.CellResult{at(1, 100)}, 0, 0, 0, false},
		{"no throughput at the lowest", []*servebench.CellResult{at(1, 0), at(4, 300)}, 0, 0, 0, false},
	}
	for _, tt := range tests {
		x, lo, hi, ok := stats.ThroughputScaling(tt.cells)
		if ok != tt.ok || x != tt.want || (ok && (lo.Concurrency != tt.lo || hi.Concurrency != tt.hi)) {
			t.Errorf("%s: %v %v %v %v, want %v from %d to %d", tt.name, x, lo, hi, ok, tt.want, tt.lo, tt.hi)
		}
	}
}

// TestPeakIsTheSweepGrids: the peak is the sweep grid's fastest cell even where a capacity
// level of another output length ran faster; without a measured grid cell it is the fastest
// measured cell of any kind.
func TestPeakIsTheSweepGrids(t *testing.T) {
	cell := func(kind servebench.CellKind, scen string, out, n int, tps float64) servebench.CellResult {
		return servebench.CellResult{CellKey: servebench.CellKey{Kind: kind, Scenario: scen, LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: out, Concurrency: n},
			RequestsTotal: 10, RequestsSucceeded: 10, SystemOutputThroughputTPS: tps}
	}
	sweep := cell(servebench.KindSweep, servebench.SweepScenario, 1024, 8, 809.7)
	search := cell(servebench.KindCapacity, "chatbot", 128, 16, 1174.7)
	skipped := cell(servebench.KindSweep, servebench.SweepScenario, 1024, 32, 5000)
	skipped.Skipped = true
	for _, tc := range []struct {
		name      string
		cells     []servebench.CellResult
		peak, off float64 // 0: none
	}{
		// the bug report's run: the 128-token search level at 16 outran the 1024-token sweep
		{"search above the sweep", []servebench.CellResult{sweep, search, skipped}, 809.7, 1174.7},
		// nothing off the grid is faster: no second cell to name
		{"sweep on top", []servebench.CellResult{search, cell(servebench.KindSweep, servebench.SweepScenario, 1024, 16, 1300)}, 1300, 0},
		// no grid cell measured (a search-only run): the fastest measured cell
		{"no sweep", []servebench.CellResult{search, skipped}, 1174.7, 0},
		{"nothing measured", []servebench.CellResult{skipped}, 0, 0},
	} {
		pk, off := stats.Peak(tc.cells), stats.HigherOffGrid(tc.cells)
		if got := tput(pk); got != tc.peak {
			t.Errorf("%s: peak %v, want %v", tc.name, got, tc.peak)
		}
		if got := tput(off); got != tc.off {
			t.Errorf("%s: faster off-grid cell %v, want %v", tc.name, got, tc.off)
		}
	}
}

func tput(c *servebench.CellResult) float64 {
	if c == nil {
		return 0
	}
	return c.SystemOutputThroughputTPS
}
