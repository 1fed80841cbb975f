// Package stats turns the Records of one cell into a servebench.CellResult. It is pure: no I/O,
// no clocks, no globals; every function returns the same value for the same input, so a run can
// be recomputed from requests.jsonl at any time.
//
// Every per-cell formula of servebench lives here, each in exactly one doc comment with its
// unit (per-request formulas live in the root package's metrics.go):
//
//   - Percentile: NumPy's default "linear" method.
//   - Summarize: count, mean, min, max, p50, p90, p95, p99 of one per-request value.
//   - Cell: counts, success rate, token means, latency summaries, throughput over the window.
//   - ScalingEfficiency: throughput(N) / (N × throughput(1)).
//   - Power, CostUSDPerHour: GPU power, energy and electricity cost over a measured window.
//   - ServerMean: a server-side mean from a Prometheus histogram's change over a cell.
//
// A typical use, from a finished run's records:
//
//	for key, recs := range stats.Group(records) {
//		cells = append(cells, stats.Cell(key, recs, stats.Window{}))
//	}
//	stats.ScalingEfficiency(cells)
package stats
