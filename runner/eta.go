package runner

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// cellCost is what one finished cell teaches the time estimates: how long it took and its mean
// latencies.
type cellCost struct {
	key servebench.CellKey
	// wall is the cell's wall time (s), from its first request to its last, warm-up included.
	wall float64
	// planned is the request count it was planned at (Runner.planned).
	planned int
	// ttft and e2e are its mean TTFT and end-to-end latency over successful measured requests (s).
	ttft, e2e float64
}

// estimateCell is the time estimate of a cell not yet measured, from the cells measured so far
// (the only definition of it; the live view's "left" figures are sums of it). ok is false when
// nothing measured can teach it.
//
//	e2e(k)   = the mean end-to-end latency expected at k's context c and concurrency n:
//	           from the measured cell at c with the nearest concurrency m, scaled by
//	           e2e(c', n) / e2e(c', m) at another context c' where both n and m were measured
//	           (how latency grows with concurrency), else along the straight line through the
//	           two levels measured at c nearest to n, else unscaled;
//	           with nothing measured at c, from the nearest measured context c₀ (at n, or its
//	           nearest concurrency): e2e₀ + ttft₀ × (c / c₀ − 1) (prefill grows at least linearly
//	           with context; decode is carried over);
//	wall(k)  = planned(k) / n × e2e(k) × pace, where pace is the mean over measured closed-loop
//	           cells of wall / (planned / n × e2e): how many of its minimal rounds a cell really
//	           took (cells measure until sure, so usually more than planned);
//	           an open-loop cell (rate r): planned(k) / r + e2e(k).
//
// Every measured cell must be of the same scenario and output length family as k for the
// estimate to mean much; the caller passes the sweep's or the search's own cells.
func estimateCell(k servebench.CellKey, planned int, done []cellCost) (time.Duration, bool) {
	var usable []cellCost
	for _, d := range done {
		if d.e2e > 0 && d.wall > 0 {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		return 0, false
	}
	e2e := expectedE2E(k, usable)
	if k.Concurrency <= 0 {
		if k.RatePerSecond <= 0 {
			return 0, false
		}
		return seconds(float64(planned)/k.RatePerSecond + e2e), true
	}
	pace, n := 0.0, 0
	for _, d := range usable {
		if d.key.Concurrency > 0 && d.planned > 0 {
			pace += d.wall / (float64(d.planned) / float64(d.key.Concurrency) * d.e2e)
			n++
		}
	}
	if n == 0 {
		pace, n = 1, 1
	}
	pace /= float64(n)
	return seconds(float64(planned) / float64(k.Concurrency) * e2e * pace), true
}

// nearContext is how far (as a ratio of context lengths) another context's growth of latency
// with concurrency is taken before the straight line through k's own context's levels: on
// GLM-4.7-Flash / H200 the end-to-end latency from 2 to 8 in flight grew 1.55 × at 1K and
// 2.5 × at 32K (where the others' prefills stall each decode), so 1K's ratio put General
// Chatbot's level 8 at 15.8 s (measured 25.4 s) where 32K's own line through 1 and 2 said 26 s;
// from 1 to 2 in flight 64K's ratio (1.49) put 96K's at 24.7 s (measured 26.2 s).
const nearContext = 4

// concurrencyRatio is how the mean end-to-end latency grows from m to n in flight, e2e(n) /
// e2e(m), at the context nearest to ctx (log scale, ties to the shorter) where ratios holds both
// levels; within a factor of within of ctx when within > 0. ok is false when none does.
func concurrencyRatio(ratios []cellCost, ctx, m, n int, within float64) (f float64, ok bool) {
	best := math.Inf(1)
	for i := range ratios {
		u := &ratios[i]
		if u.key.Concurrency != m || u.e2e <= 0 {
			continue
		}
		d := math.Abs(math.Log(float64(max(u.key.ContextTokens, 1)) / float64(max(ctx, 1))))
		if within > 0 && d > math.Log(within)+1e-9 {
			continue
		}
		for j := range ratios {
			o := &ratios[j]
			if o.key.ContextTokens != u.key.ContextTokens || o.key.Concurrency != n || o.e2e <= 0 {
				continue
			}
			if d < best || d == best && u.key.ContextTokens < ctx {
				best, f, ok = d, o.e2e/u.e2e, true
			}
			break
		}
	}
	return f, ok
}

// expectedE2E is e2e(k) of estimateCell; usable is not empty. How latency grows with
// concurrency is read from usable too.
func expectedE2E(k servebench.CellKey, usable []cellCost) float64 {
	return expectedE2EWith(k, usable, usable)
}

// expectedE2EWith is expectedE2E with the growth of latency with concurrency read from ratios
// (concurrencyRatio): every cell of k's load mode, when usable is only k's own family's.
func expectedE2EWith(k servebench.CellKey, usable, ratios []cellCost) float64 {
	// nearest concurrency measured at context ctx
	nearest := func(ctx, n int) *cellCost {
		var best *cellCost
		for i := range usable {
			u := &usable[i]
			if u.key.ContextTokens != ctx {
				continue
			}
			if best == nil || absInt(u.key.Concurrency-n) < absInt(best.key.Concurrency-n) {
				best = u
			}
		}
		return best
	}
	atContext := func(ctx int) (float64, float64, bool) {
		m := nearest(ctx, k.Concurrency)
		if m == nil {
			return 0, 0, false
		}
		e, t := m.e2e, m.ttft
		if m.key.Concurrency == k.Concurrency {
			return e, t, true
		}
		if f, ok := concurrencyRatio(ratios, ctx, m.key.Concurrency, k.Concurrency, nearContext); ok {
			return e * f, t * f, true
		}
		// no context near enough shows the ratio: the straight line through the two levels
		// measured at ctx nearest to k's concurrency (never below the nearest level's latency),
		// else the ratio at a context further away
		var second *cellCost
		for i := range usable {
			u := &usable[i]
			if u.key.ContextTokens != ctx || u == m {
				continue
			}
			if second == nil || absInt(u.key.Concurrency-k.Concurrency) < absInt(second.key.Concurrency-k.Concurrency) {
				second = u
			}
		}
		if second != nil && second.key.Concurrency != m.key.Concurrency {
			slope := (m.e2e - second.e2e) / float64(m.key.Concurrency-second.key.Concurrency)
			if ext := m.e2e + slope*float64(k.Concurrency-m.key.Concurrency); ext > 0 {
				f := ext / m.e2e
				if k.Concurrency > m.key.Concurrency {
					f = max(f, 1)
				}
				return e * f, t * f, true
			}
		}
		if f, ok := concurrencyRatio(ratios, ctx, m.key.Concurrency, k.Concurrency, 0); ok {
			return e * f, t * f, true
		}
		return e, t, true
	}
	if e, _, ok := atContext(k.ContextTokens); ok {
		return e
	}
	// nearest measured context, preferring the one below
	c0 := -1
	for _, u := range usable {
		c := u.key.ContextTokens
		if c0 < 0 || math.Abs(math.Log(float64(max(c, 1))/float64(max(k.ContextTokens, 1)))) < math.Abs(math.Log(float64(max(c0, 1))/float64(max(k.ContextTokens, 1)))) {
			c0 = c
		}
	}
	e, t, _ := atContext(c0)
	if c0 > 0 && k.ContextTokens > 0 {
		e += t * (float64(k.ContextTokens)/float64(c0) - 1)
	}
	return max(e, 0)
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// familyOf is Runner.family over the finished cells costs.
func familyOf(costs []cellCost, k servebench.CellKey) []cellCost {
	same, mode := families(costs, k)
	if len(same) > 0 {
		return same
	}
	return mode
}

// families is k's own family among costs (its scenario, load mode and output length) and every
// cell of its load mode with its decode time scaled to k's output length (familyOf).
func families(costs []cellCost, k servebench.CellKey) (same, mode []cellCost) {
	for _, c := range costs {
		if c.key.LoadMode != k.LoadMode {
			continue
		}
		if c.key.Scenario == k.Scenario && c.key.OutputTokens == k.OutputTokens {
			same = append(same, c)
		}
		if c.key.OutputTokens > 0 {
			c.e2e = c.ttft + (c.e2e-c.ttft)*float64(k.OutputTokens)/float64(c.key.OutputTokens)
		}
		c.key.Scenario = k.Scenario
		mode = append(mode, c)
	}
	return same, mode
}

// doneCosts are the measured cells of done as the estimates see them (their mean latencies;
// wall 1, as nothing kept in the run folder's results says what a cell took on the wall), in
// the order of their IDs: what a time-budgeted run's search order (levelOrder) is a function of.
func doneCosts(done map[servebench.CellKey]servebench.CellResult) []cellCost {
	var out []cellCost
	for k, c := range done {
		if c.Skipped || c.RequestsSucceeded == 0 || c.E2ELatencySeconds.Mean <= 0 {
			continue
		}
		out = append(out, cellCost{key: k, wall: 1, planned: c.RequestsTotal, ttft: c.TTFTSeconds.Mean, e2e: c.E2ELatencySeconds.Mean})
	}
	slices.SortFunc(out, func(a, b cellCost) int { return strings.Compare(a.key.ID(), b.key.ID()) })
	return out
}

// levelOrder is what orders a time-budgeted run's capacity levels (decider.searchInterleaved):
// the mean end-to-end latency expected at k (expectedE2E) from costs (doneCosts), 0 when
// nothing measured can tell. A level's cost under the budget is 4 × that × the calibrated
// overrun (budget.levelCost), the same factor for every level, so the cheapest level is the
// one of least expected latency.
func levelOrder(k servebench.CellKey, costs []cellCost) float64 {
	same, mode := families(costs, k)
	var usable, ratios []cellCost
	fam := same
	if len(fam) == 0 {
		fam = mode
	}
	for _, d := range fam {
		if d.e2e > 0 && d.wall > 0 {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		return 0
	}
	for _, d := range mode {
		if d.e2e > 0 && d.wall > 0 {
			ratios = append(ratios, d)
		}
	}
	return expectedE2EWith(k, usable, ratios)
}
