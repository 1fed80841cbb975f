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
