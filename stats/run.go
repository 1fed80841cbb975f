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

// Peak is the run's peak system output throughput: the measured cell (not skipped, at least
// one success) with the highest system_output_throughput_tps (tokens/s), whatever its kind
// (sweep, scenario or capacity cell: each is a measurement of the same system); the earlier
// cell wins a tie. nil when no cell qualifies.
func Peak(cells []servebench.CellResult) *servebench.CellResult {
	var best *servebench.CellResult
	for i := range cells {
		c := &cells[i]
		if c.Skipped || c.RequestsSucceeded == 0 {
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
