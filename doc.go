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
//
// # Glossary
//
// One name per quantity; identifiers, JSON keys and the report follow it.
//
//   - Context tokens (ContextTokens, context_tokens): the prompt length a cell or use case asks
//     for, the "1K/8K/32K" of the sweep (Request.ContextTokens is the same length, as the prompt
//     builder achieved it; a record keeps it as input_tokens_requested). Input tokens
//     (InputTokens, input_tokens): what the server counted for a sent prompt (its
//     usage.prompt_tokens); they match the context tokens when prompts are sized right
//     (InputTokensMaxDeviation says by how much they differ). "Prompt tokens" is otherwise the
//     server's wire name only (ServerTimings.PromptTokens copies a server's timing object).
//   - Output tokens: tokens the server generated (usage.completion_tokens), reasoning included.
//   - TTFT (ttft_seconds): request start → first event carrying content, reasoning or a tool call.
//     Time to first answer (first_content_seconds): → first answer token, after any reasoning.
//   - ITL, inter-token latency (itl_seconds): decode time / (output tokens − 1), seconds per
//     token, vLLM's TPOT; always per token. Generation speed (generation_speed_tps) is its
//     inverse view, (output tokens − 1) / decode time, per user.
//   - Chunk gap (Record.ChunkGapsSeconds, CellResult.ChunkGapSeconds): the raw time between two
//     stream events that carried tokens; one event may carry several tokens (tokens_per_chunk),
//     so a chunk gap is not an ITL and is never called one.
//   - End-to-end latency (e2e_latency_seconds): request start → last byte.
//   - Cell: one measured setting (CellKey: its kind — sweep, rate, dataset, trace, scenario,
//     session or capacity — scenario, load mode, context, output, concurrency); its measured
//     window excludes warm-up. System output throughput: output tokens produced in the window /
//     window length, all users together.
//   - Capacity limit: the largest concurrency at which every threshold of a use case holds
//     (package capacity decides it and words it).
//   - Run folder: run.json (the plan, the server), requests.jsonl (one Record per request),
//     cells.jsonl (one CellLog per thing that happened to a cell: what results.json is
//     recomputed from beside the records), telemetry.jsonl (Samples), results.json (Results).
package servebench
