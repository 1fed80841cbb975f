// Package stats turns the Records of one cell into a servebench.CellResult. It is pure: no I/O,
// no clocks, no globals; every function returns the same value for the same input, so a run can
// be recomputed from its folder at any time (runner.Recompute, servebench report --recompute).
//
// Every per-cell formula of servebench lives here, each in exactly one doc comment with its
// unit (per-request formulas live in the root package's metrics.go):
//
//   - Percentile: NumPy's default "linear" method.
//   - Summarize: count, mean, min, max, p50, p90, p95, p99 of one per-request value.
//   - Cell: counts, success rate, token means, latency summaries, throughput over the window.
//   - ScalingEfficiency: throughput(N) / (N × throughput(1)).
//   - RunSuccess, Peak, ThroughputScaling: a run's success rate, peak cell and throughput growth.
//   - Power, CostUSDPerHour: GPU power, energy and electricity cost over a measured window.
//   - ServerMean: a server-side mean from a Prometheus histogram's change over a cell.
//
// A typical use, from the records of each cell (which records belong to a cell, and its
// measured window, are what the run folder's cells.jsonl keeps):
//
//	for _, c := range measured {
//		cells = append(cells, stats.Cell(c.key, c.records, stats.Window{Start: c.start, End: c.end}))
//	}
//	stats.ScalingEfficiency(cells)
package stats
