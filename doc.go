// Package servebench is the vocabulary shared by every stage of the benchmark: what a request
// is (Request), what one finished request leaves behind (Record, the unit everything streams),
// what a measured cell and a capacity verdict look like in results.json (CellResult,
// CapacityResult, Results), and the few small interfaces the stages meet at (Client).
//
// Data flows one way:
//
//	plan → workload (prompts) → load (drivers) → Client (openai) → Record → requests.jsonl
//	     → stats (CellResult) → capacity (CapacityResult) → report (html, md, pdf, term, json)
//
// Every per-request formula (TTFT, ITL, generation speed, end-to-end latency) lives in
// metrics.go; every per-cell formula (percentiles, throughput, scaling efficiency) lives in
// package stats. This package imports only the standard library.
package servebench
