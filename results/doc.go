// Package results computes a run's results as values, from what the run keeps: Cell turns a
// cell's plan, its line of cells.jsonl and its records into a CellResult (Notes says what the
// cell makes the report state), and Builder folds cells, capacity decisions, outages and notes
// into the Results written as results.json.
//
// It is pure: no clock, no I/O. A live run (package runner) folds each cell as it is measured;
// `servebench report --recompute` (runner.Recompute) folds the same values read back from the
// run folder, by the same functions, so a recomputed results.json equals the live one.
//
//	var b results.Builder
//	c := results.Cell(plan, log, records)
//	b.AddCell(c)
//	res := b.Results(results.Run{Plan: plan, Server: server, Info: info})
package results
