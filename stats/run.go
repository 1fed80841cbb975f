package stats

import "github.com/servebench/servebench"

// RunSuccess sums the measured requests (warm-up excluded) over a run's cells; skipped cells
// have none:
//
//	success_rate = Σ requests_succeeded / Σ requests_total          (dimensionless, 0…1)
//
// rate is 0 when no request was measured (total = 0); the failure rate is 1 − rate then only
// when total > 0.
func RunSuccess(cells []servebench.CellResult) (succeeded, total int, rate float64) {
	for _, c := range cells {
		succeeded += c.RequestsSucceeded
		total += c.RequestsTotal
	}
	if total > 0 {
		rate = float64(succeeded) / float64(total)
	}
	return succeeded, total, rate
}

// FailureRate is the share of a run's measured requests that failed, 1 − success_rate
// (dimensionless, 0…1); 0 when no request was measured.
func FailureRate(cells []servebench.CellResult) float64 {
	_, total, rate := RunSuccess(cells)
	if total == 0 {
		return 0
	}
	return 1 - rate
}

// Peak is the run's peak system output throughput, the one cell every "peak throughput" of
// every output (report highlights and sections, terminal, pages, compare, runs list) names:
//
//	peak = the measured cell (not skipped, at least one success) with the highest
//	       system_output_throughput_tps (tokens/s) among the sweep grid's cells
//	       (CellKey.OnSweepGrid); among every measured cell when the run has no measured
//	       sweep-grid cell (a request-rate sweep, a dataset or trace replay, sessions only)
//
// The earlier cell wins a tie; nil when no cell qualifies. The sweep grid is where a run's
// cells share one output length and one load shape, so its peak compares like with like from
// run to run. A capacity search's levels are not: they run at each use case's own output
// length (128 tokens for a chatbot answer) and at levels the search chose from that run's own
// results, so a peak taken over them would move with the thresholds, and two runs would be
// compared at different cells. HigherOffGrid names such a cell when it outran the peak.
func Peak(cells []servebench.CellResult) *servebench.CellResult {
	if c := highest(cells, func(c *servebench.CellResult) bool { return c.OnSweepGrid() }); c != nil {
		return c
	}
	return highest(cells, func(*servebench.CellResult) bool { return true })
}

// HigherOffGrid is the measured cell off the sweep grid (a capacity level, a scenario, a
// request rate) with the highest system output throughput, when that is above the peak's
// (Peak): what the report says beside the peak so that a faster cell measured at another shape
// is not hidden. nil when there is none or Peak did not come from the grid.
func HigherOffGrid(cells []servebench.CellResult) *servebench.CellResult {
	pk := Peak(cells)
	if pk == nil || !pk.OnSweepGrid() {
		return nil
	}
	c := highest(cells, func(c *servebench.CellResult) bool { return !c.OnSweepGrid() })
	if c == nil || c.SystemOutputThroughputTPS <= pk.SystemOutputThroughputTPS {
		return nil
	}
	return c
}

// highest is the measured cell keep accepts with the highest system output throughput (the
// earlier of equals); nil when none.
func highest(cells []servebench.CellResult, keep func(*servebench.CellResult) bool) *servebench.CellResult {
	var best *servebench.CellResult
	for i := range cells {
		c := &cells[i]
		if c.Skipped || c.RequestsSucceeded == 0 || !keep(c) {
			continue
		}
		if best == nil || c.SystemOutputThroughputTPS > best.SystemOutputThroughputTPS {
			best = c
		}
	}
	return best
}

// ThroughputScaling is how much the system output throughput grows across the concurrency
// levels measured at one context, given those cells in concurrency order:
//
//	scaling = system_output_throughput_tps(highest N) / system_output_throughput_tps(lowest N)   (×, dimensionless)
//
// lo and hi are the two cells; ok is false with fewer than two cells or no throughput at the
// lowest level.
func ThroughputScaling(byConcurrency []*servebench.CellResult) (scaling float64, lo, hi *servebench.CellResult, ok bool) {
	if len(byConcurrency) < 2 {
		return 0, nil, nil, false
	}
	lo, hi = byConcurrency[0], byConcurrency[len(byConcurrency)-1]
	if lo.SystemOutputThroughputTPS <= 0 {
		return 0, nil, nil, false
	}
	return hi.SystemOutputThroughputTPS / lo.SystemOutputThroughputTPS, lo, hi, true
}
