package capacity

import (
	"fmt"
	"math"

	"github.com/servebench/servebench"
)

// RatePasses reports whether an open-loop cell sustained its rate within the objectives: its
// goodput (the share of measured requests that succeeded and met every SLO, package stats) is
// at least target, and the server kept pace (the cell is not past saturation). A cell without
// goodput (no SLO) does not pass.
func RatePasses(c servebench.CellResult, target float64) bool {
	return c.Goodput != nil && *c.Goodput >= target && !c.Saturated && c.RequestsTotal > 0
}

// Rate search bounds: it stops when the highest passing and the lowest failing rate are within
// RateResolution of each other (hi/lo), or after MaxRateCells cells.
const (
	RateResolution = 1.2
	MaxRateCells   = 12
)

// NextRate picks the next rate of a search from the rates measured so far (rate → passed):
// the start rate first; then, while every rate passed, twice the highest (up to ceiling); once
// a rate failed, the geometric mean of the highest passing rate and the lowest failing rate
// above it, rounded to two significant figures; below a failing start, half the lowest failing
// rate (down to start/64). done is true when the interval is within RateResolution, the ceiling
// passed, nothing passed down to start/64, or MaxRateCells were measured.
func NextRate(points map[float64]bool, start, ceiling float64) (next float64, done bool) {
	if len(points) == 0 {
		return min(start, ceiling), false
	}
	if len(points) >= MaxRateCells {
		return 0, true
	}
	lo, hi := bracket(points)
	switch {
	case hi == 0 && lo >= ceiling:
		return 0, true
	case hi == 0:
		return min(2*lo, ceiling), false
	case lo == 0:
		if hi/2 < start/64 {
			return 0, true
		}
		return round2(hi / 2), false
	case hi/lo <= RateResolution:
		return 0, true
	}
	next = round2(math.Sqrt(lo * hi))
	if next <= lo || next >= hi || points[next] {
		return 0, true // rounding leaves nothing new between them
	}
	return next, false
}

// bracket returns the highest passing rate and the lowest failing rate above it (0 when none).
func bracket(points map[float64]bool) (lo, hi float64) {
	for r, ok := range points {
		if ok && r > lo {
			lo = r
		}
	}
	for r, ok := range points {
		if !ok && r > lo && (hi == 0 || r < hi) {
			hi = r
		}
	}
	return lo, hi
}

func round2(x float64) float64 {
	if x <= 0 {
		return x
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	return math.Round(x/p) * p
}

// DecideRate words a finished rate search: the highest passing rate, the failing one above it.
func DecideRate(points map[float64]bool, order []float64, target, ceiling float64, ctx, out int) servebench.RateSearchResult {
	lo, hi := bracket(points)
	res := servebench.RateSearchResult{ContextTokens: ctx, OutputTokens: out, GoodputTarget: target, RatePerSecond: lo, FailingRatePerSecond: hi, Rates: order}
	switch {
	case lo == 0:
		low := order[0]
		for _, r := range order {
			low = min(low, r)
		}
		res.Note = fmt.Sprintf("no measured rate kept goodput at %g%% or above, down to %g requests/s", 100*target, low)
	case hi == 0:
		res.Note = fmt.Sprintf("every measured rate passed, up to the ceiling of %g requests/s (sweep.max_rate)", ceiling)
	}
	return res
}
