// Package exchange converts servebench runs to and from the result formats other benchmark
// tools read and write, so a servebench run can be handed to them and their results set
// beside servebench's own.
//
// Export: the llm-d Benchmark Report v0.2.1 (BenchmarkReports), one report per measured cell,
// as llm-d-benchmark and inference-perf write one per load stage. docs/exchange.md maps every
// field and lists what the format cannot carry.
//
// Import: the result files of `vllm bench serve --save-result`, GuideLLM's benchmarks.json and
// AIPerf's profile_export_aiperf.json, each as a run (Import): run.json naming the tool and the
// file, results.json with one cell per load point keyed like servebench's, every value under
// the tool's own definition. docs/exchange.md maps every field and says where the tools'
// definitions differ from servebench's (TTFT on a role-only chunk, ITL vs TPOT, output tokens
// counted as events, percentiles, throughput denominators).
package exchange
