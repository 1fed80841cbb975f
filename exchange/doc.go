// Package exchange converts servebench runs to and from the result formats other benchmark
// tools read and write, so a servebench run can be handed to them and their results set
// beside servebench's own.
//
// Export: the llm-d Benchmark Report v0.2.1 (BenchmarkReports), one report per measured cell,
// as llm-d-benchmark and inference-perf write one per load stage. docs/exchange.md maps every
// field and lists what the format cannot carry.
package exchange
