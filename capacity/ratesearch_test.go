package capacity

import (
	"fmt"
	"testing"

	"github.com/servebench/servebench"
)

// The search against a server whose goodput holds up to a true limit: it doubles from the
// start until a rate fails, then narrows the bracket to within RateResolution, and the
// decision names the bracket.
func TestRateSearchBracketsTheLimit(t *testing.T) {
	for _, tt := range []struct {
		limit, start, ceiling float64
		wantLo, wantHi        float64
		note                  bool
	}{
		{limit: 10, start: 1, ceiling: 256},
		{limit: 1000, start: 1, ceiling: 64, wantLo: 64, note: true},
		{limit: 0.01, start: 1, ceiling: 64, note: true},
		{limit: 3, start: 8, ceiling: 64},
	} {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			points := map[float64]bool{}
			var order []float64
			for {
				r, done := NextRate(points, tt.start, tt.ceiling)
				if done {
					break
				}
				if _, seen := points[r]; seen {
					t.Fatalf("rate %g measured twice (%v)", r, order)
				}
				points[r] = r <= tt.limit
				order = append(order, r)
				if len(order) > MaxRateCells {
					t.Fatalf("more than %d cells: %v", MaxRateCells, order)
				}
			}
			res := DecideRate(points, order, 0.99, tt.ceiling, 1024, 64)
			if len(res.Rates) != len(order) || res.GoodputTarget != 0.99 || res.ContextTokens != 1024 {
				t.Errorf("result %+v", res)
			}
			switch {
			case tt.note:
				if res.Note == "" {
					t.Errorf("%+v: want a note", res)
				}
				if tt.wantLo > 0 && res.RatePerSecond != tt.wantLo {
					t.Errorf("rate %g, want the ceiling %g", res.RatePerSecond, tt.wantLo)
				}
				if tt.wantLo == 0 && res.RatePerSecond != 0 {
					t.Errorf("rate %g passed below the limit %g?", res.RatePerSecond, tt.limit)
				}
			default:
				lo, hi := res.RatePerSecond, res.FailingRatePerSecond
				if !(lo <= tt.limit && hi > tt.limit && hi/lo <= RateResolution+0.01) {
					t.Errorf("bracket [%g, %g] around %g (measured %v)", lo, hi, tt.limit, order)
				}
			}
		})
	}
}

func TestRatePasses(t *testing.T) {
	g := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		c    servebench.CellResult
		want bool
	}{
		{servebench.CellResult{RequestsTotal: 10, Goodput: g(1)}, true},
		{servebench.CellResult{RequestsTotal: 10, Goodput: g(0.99)}, true},
		{servebench.CellResult{RequestsTotal: 10, Goodput: g(0.98)}, false},
		{servebench.CellResult{RequestsTotal: 10, Goodput: g(1), Saturated: true}, false},
		{servebench.CellResult{RequestsTotal: 10}, false},
		{servebench.CellResult{Goodput: g(1)}, false},
	} {
		if got := RatePasses(tt.c, 0.99); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.c, got, tt.want)
		}
	}
}
