package capacity

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/servebench/servebench"
)

// Measure measures the use case at one concurrency level and returns the cell, the number of
// requests it sent (warm-up included; 0 when it served the cell from elsewhere) and an error
// that stops the search (a canceled context, a broken target).
type Measure func(ctx context.Context, concurrency int) (cell servebench.CellResult, requestsSpent int, err error)

// SearchConfig configures Search.
type SearchConfig struct {
	// Ceiling is the highest concurrency the search may measure (capacity.max_concurrency).
	Ceiling int
	// Known holds cells the sweep already measured for this use case (same load mode, context
	// and output length), by concurrency. They are evaluated first, reused as points
	// (Reused = true, not counted in RequestsSpent) and never measured again. Skipped or empty
	// cells and levels above Ceiling are ignored.
	Known map[int]servebench.CellResult
	// RequestsAt is what measuring one level costs in requests, used only to estimate
	// DenseGridRequests; for a sustained cell it is the warm-up N plus max(min_requests,
	// rounds × N) measured. Nil means DefaultRequestsAt.
	RequestsAt func(concurrency int) int
}

// DefaultRequestsAt is the cost of a sustained level with the SPEC's default sizing: a warm-up
// of n plus max(10, 3 × n) measured requests.
func DefaultRequestsAt(n int) int { return n + max(10, 3*n) }

// Search finds the capacity limit of uc: the largest concurrency at which Evaluate passes.
//
// The rule, which spends as few requests as possible while assuming quality only degrades as
// concurrency grows:
//
//  1. Known cells (up to Ceiling) are evaluated first, for free.
//  2. Let hi be the lowest failing level seen and lo the highest passing level below hi (0 if
//     none); with no failure yet, lo is the highest passing level.
//  3. With no failure: lo = Ceiling ends the search (lower bound, "Ceiling+"); otherwise measure
//     the next level of the growing grid 1, 2, 4, 8, … above lo, capped at Ceiling (so the
//     ceiling itself is measured last when it is not a power of two).
//  4. With a failure: hi = 1 ends it (not viable). When hi − lo ≤ max(1, ⌊lo/8⌋) it ends: with
//     hi = lo + 1 the limit lo is measured; otherwise (levels 16 and up, gaps within 12.5 %) the
//     limit is interpolated. Otherwise measure the midpoint lo + ⌊(hi − lo)/2⌋ and repeat.
//
// No level is measured twice. The interpolated limit linearly interpolates the limiting metric
// between its values at lo and hi to the threshold, x = lo + (T − v_lo)/(v_hi − v_lo)·(hi − lo),
// and takes ⌊x⌋ clamped to [lo, hi − 1] (lo when the metric has no value at either level).
//
// LimitingMetric is the failing metric at FirstFailing with the largest relative violation
// ((v − max)/max, (min − v)/min, or for the success rate (0.99 − v)/0.01, the failures over
// the allowance); RequestsSpent sums what measure reported;
// DenseGridRequests is Σ RequestsAt(n) for n = 1 … hi (Ceiling for a lower bound), less the
// levels reused from Known, which a dense grid would have reused too.
//
// On an error from measure or a canceled ctx, Search returns the points gathered so far (no
// verdict) with the error.
func Search(ctx context.Context, uc servebench.UseCase, cfg SearchConfig, measure Measure) (servebench.CapacityResult, error) {
	res := servebench.CapacityResult{
		UseCase: uc.Name, Title: uc.Title, ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens),
		Statistic: uc.Statistic, Thresholds: uc.Thresholds, Ceiling: cfg.Ceiling,
	}
	if res.Statistic == "" {
		res.Statistic = servebench.StatMean
	}
	if cfg.Ceiling < 1 {
		return res, fmt.Errorf("capacity search for %q: ceiling is %d; set capacity.max_concurrency to at least 1", uc.Name, cfg.Ceiling)
	}
	if len(Checks(uc.Thresholds)) == 0 {
		return res, fmt.Errorf("capacity search for %q: the use case has no thresholds; set at least one of ttft_seconds_max, generation_speed_tps_min, e2e_latency_seconds_max, itl_seconds_max", uc.Name)
	}
	points := make(map[int]servebench.CapacityPoint)
	for n, c := range cfg.Known {
		if n < 1 || n > cfg.Ceiling || c.Skipped || c.RequestsTotal == 0 {
			continue
		}
		p := Evaluate(uc, c)
		p.Concurrency, p.Reused = n, true
		points[n] = p
	}
	for {
		lo, hi := bounds(points)
		var next int
		switch {
		case hi == 0 && lo >= cfg.Ceiling:
			return finish(uc, cfg, res, points, lo, 0), nil
		case hi == 0:
			next = nextGrid(lo, cfg.Ceiling)
		case hi == 1 || hi-lo <= max(1, lo/8):
			return finish(uc, cfg, res, points, lo, hi), nil
		default:
			next = lo + (hi-lo)/2
		}
		if _, seen := points[next]; seen {
			// Impossible by construction (see bounds); guard against looping forever.
			return collect(res, points), fmt.Errorf("capacity search for %q: level %d proposed twice (internal error)", uc.Name, next)
		}
		if err := ctx.Err(); err != nil {
			return collect(res, points), err
		}
		if measure == nil {
			return collect(res, points), fmt.Errorf("capacity search for %q: level %d must be measured but no measure function was given", uc.Name, next)
		}
		cell, spent, err := measure(ctx, next)
		res.RequestsSpent += spent
		if err != nil {
			return collect(res, points), err
		}
		p := Evaluate(uc, cell)
		p.Concurrency = next
		points[next] = p
	}
}

// bounds returns hi, the lowest failing level (0 if none), and lo, the highest passing level
// below hi (any passing level when hi = 0; 0 if none).
func bounds(points map[int]servebench.CapacityPoint) (lo, hi int) {
	for n, p := range points {
		if !p.Pass && (hi == 0 || n < hi) {
			hi = n
		}
	}
	for n, p := range points {
		if p.Pass && n > lo && (hi == 0 || n < hi) {
			lo = n
		}
	}
	return lo, hi
}

// nextGrid is the smallest power of two above lo, capped at ceiling.
func nextGrid(lo, ceiling int) int {
	g := 1
	for g <= lo {
		g *= 2
	}
	return min(g, ceiling)
}

// collect copies the points into res sorted by concurrency.
func collect(res servebench.CapacityResult, points map[int]servebench.CapacityPoint) servebench.CapacityResult {
	res.Points = make([]servebench.CapacityPoint, 0, len(points))
	for _, p := range points {
		res.Points = append(res.Points, p)
	}
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].Concurrency < res.Points[j].Concurrency })
	return res
}

// finish writes the verdict for lo (highest passing) and hi (lowest failing, 0 for none).
func finish(uc servebench.UseCase, cfg SearchConfig, res servebench.CapacityResult, points map[int]servebench.CapacityPoint, lo, hi int) servebench.CapacityResult {
	res = collect(res, points)
	top := hi
	switch {
	case hi == 0:
		res.LimitKind = servebench.LimitLowerBound
		res.Limit = servebench.Int(lo)
		top = cfg.Ceiling
	case hi == 1:
		res.LimitKind = servebench.LimitNotViable
		res.FirstFailing = servebench.Int(1)
		res.LimitingMetric = limitingMetric(uc, points[1])
	default:
		res.FirstFailing = servebench.Int(hi)
		res.LimitingMetric = limitingMetric(uc, points[hi])
		if hi == lo+1 {
			res.LimitKind = servebench.LimitMeasured
			res.Limit = servebench.Int(lo)
		} else {
			res.LimitKind = servebench.LimitInterpolated
			res.Limit = servebench.Int(interpolate(uc, points[lo], points[hi], res.LimitingMetric))
		}
	}
	cost := cfg.RequestsAt
	if cost == nil {
		cost = DefaultRequestsAt
	}
	for n := 1; n <= top; n++ {
		if p, ok := points[n]; ok && p.Reused {
			continue
		}
		res.DenseGridRequests += cost(n)
	}
	return res
}

// interpolate estimates the largest level in [lo, hi−1] at which metric m still meets its
// threshold, by linear interpolation between the measured points lo and hi.
func interpolate(uc servebench.UseCase, lo, hi servebench.CapacityPoint, m string) int {
	a, b := lo.Concurrency, hi.Concurrency
	k, ok := checkFor(uc, m)
	vlo, okLo := lo.Values[m]
	vhi, okHi := hi.Values[m]
	if !ok || !okLo || !okHi || vhi == vlo {
		return a
	}
	x := float64(a) + (k.Limit-vlo)/(vhi-vlo)*float64(b-a)
	if math.IsNaN(x) {
		return a
	}
	return min(max(int(math.Floor(x)), a), b-1)
}
