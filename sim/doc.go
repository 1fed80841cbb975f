// Package sim is servebench's built-in simulated inference engine: an OpenAI-compatible
// streaming HTTP server that models one GPU (or a tensor-parallel group) running continuous
// batching the way vLLM does, in real time. It writes the wire format itself and shares no code
// with the client (package openai), so a client bug cannot hide behind a matching simulator bug.
//
// # Using it
//
//	p, err := sim.LookupProfile("fast")       // or "h100-llama8b", "h200-qwen30b-moe", …
//	s := sim.New(p, sim.Options{RequestMetrics: true, Seed: 1})
//	s.Start(ctx)                              // the step loop
//	defer s.Close()
//	http.ListenAndServe("127.0.0.1:8000", s.Handler())
//
// Simulate runs the same engine on virtual time (no HTTP, no sleeping) for what-if questions and
// tests: sim.Simulate(p, sim.Workload{ContextTokens: 32768, OutputTokens: 1024, Concurrency: 8}).
// `go test ./sim -run TestProfileTable -v -args -sim.table=NAME` prints a profile's table.
//
// # Endpoints
//
//   - POST /v1/chat/completions, POST /v1/completions: streaming SSE shaped like vLLM (chat: a
//     role-only first chunk {"role":"assistant","content":""}; content chunks, the last one
//     carrying finish_reason "length" or "stop" and stop_reason null; with
//     stream_options.include_usage a chunk with "choices": [] and usage; then "data: [DONE]"),
//     or one JSON object when stream is false. Honoured: max_tokens, max_completion_tokens (wins
//     over max_tokens, as in vLLM), min_tokens, ignore_eos. Without ignore_eos (and min_tokens
//     below the limit) a request stops at a deterministic pseudo-random length, uniform in
//     [max(1, min_tokens), max_tokens], per Seed and prompt — so length mismatches can be tested.
//     With Options.RequestMetrics the last chunk (the usage chunk, else the finish chunk) carries
//     vLLM's RequestMetrics: "metrics": {arrival_time, last_token_time, first_scheduled_time,
//     first_token_time, time_in_queue, finished_time} (unix seconds).
//     usage carries prompt_tokens_details.cached_tokens (the request's prefix-cache hits).
//     A reasoning model (Options.ReasoningTokens, `servebench sim --reasoning-tokens N`) streams
//     its first N tokens as reasoning deltas (reasoning_content, or reasoning with
//     Options.ReasoningField), then the answer as content, never in the same flush (the answer
//     starts at least 5 ms or one stream interval later); usage adds
//     completion_tokens_details.reasoning_tokens.
//   - Errors use vLLM's shape {"error": {"message", "type", "param", "code"}}: 400 for bad JSON,
//     prompt + max_tokens above MaxModelLen ("This model's maximum context length is N tokens.
//     However, you requested …"), min_tokens above max_tokens, n != 1; 404 for an unknown model.
//   - GET /v1/models: {"object":"list","data":[{"id", "object":"model", "owned_by":"servebench-sim",
//     "max_model_len", …}]}.
//   - POST /tokenize: {model, prompt} or {model, messages[, add_generation_prompt]} →
//     {count, max_model_len, tokens, token_strs}; messages include the chat template, so count
//     equals usage.prompt_tokens of the same prompt.
//   - GET /version {"version": "servebench-sim 1.0 (profile NAME)"}, GET /health (200).
//   - GET /metrics: Prometheus text with vLLM v1 names and labels model_name, engine="0":
//     histograms vllm:request_queue_time_seconds, vllm:request_prefill_time_seconds,
//     vllm:request_decode_time_seconds, vllm:request_inference_time_seconds,
//     vllm:time_to_first_token_seconds, vllm:time_per_output_token_seconds,
//     vllm:e2e_request_latency_seconds, vllm:request_prompt_tokens,
//     vllm:request_generation_tokens; counters vllm:request_success_total{finished_reason},
//     vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:num_preemptions_total,
//     vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total (tokens); gauges
//     vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc and its
//     deprecated alias vllm:gpu_cache_usage_perc. Histogram _sum values are the exact sums of the
//     Truth fields (same float values, same order), over finished requests (aborts excluded).
//   - GET /dcgm/metrics: dcgm-exporter shape, one series per GPU with labels gpu, UUID,
//     pci_bus_id, device, modelName, Hostname: DCGM_FI_DEV_POWER_USAGE (W),
//     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ, counter), DCGM_FI_DEV_GPU_UTIL (%),
//     DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE (MiB), DCGM_FI_DEV_GPU_TEMP (°C).
//
// # Tokenizer
//
// Deterministic, cheap and linear in the input: every maximal run of letters and digits
// (Unicode) is one token, every other non-space character is one token, whitespace is free.
// "don't stop" is 4 tokens (don ' t stop). The chat template renders each message as
// "<|im_start|>{role}\n{content}<|im_end|>\n" and appends "<|im_start|>assistant\n", which by the
// rule above costs ChatMessageOverheadTokens (15) per message with a one-token role plus
// ChatGenerationPromptTokens (8). Generated text is " word" per token, so re-tokenizing a
// response gives exactly usage.completion_tokens.
//
// # Engine model
//
// One goroutine runs steps. Each step's end = previous end + computed duration; the loop sleeps
// until that deadline, never when behind (no drift accumulates), then releases the step's tokens
// to the streams. A step schedules (vLLM v1 order) the running sequences first — decodes 1 token
// each, unfinished prefills a chunk — then waiting requests FIFO while the token budget
// (MaxNumBatchedTokens), MaxNumSeqs and free KV blocks allow (chunked prefill). The step that
// computes a prompt's last token samples its first output token.
//
//	FLOP     = 2·ActiveParams·T + Σ 4·Layers·Hidden·c·(p + c/2)     (chunk of c tokens at position p)
//	bytes    = weights + Σ (p + c)·KVBytesPerToken
//	weights  = BytesPerParam·TotalParams·(1 − (1 − Active/Total)^T)  (MoE: more experts as T grows)
//	duration = max(FLOP/(PeakFLOPS·ComputeEfficiency), bytes/(MemBandwidth·BandwidthEfficiency))
//	           + StepOverhead + PrefillOverhead (when the step carries a prefill chunk)
//
// KV capacity = (MemoryBytes·GPUMemoryUtilization − weights) / KVBytesPerToken, in blocks of
// BlockSize tokens allocated as sequences grow. When a running sequence needs a block and none is
// free, the newest running sequence is preempted (recompute: back to the front of the queue,
// vllm:num_preemptions_total + 1). Full prompt blocks are published in a prefix cache keyed by
// the chained hash of their tokens; a new request reuses the longest cached run (queries and hits
// counted in tokens), skipping that prefill compute. A preempted request re-reads the blocks it
// published itself without recompute, but those are not hits: only blocks another request
// published count (so unique prompts never show cache hits, however much preemption there is).
// Unused cached blocks are evicted LRU.
//
// Power per GPU = IdleWatts + (MaxWatts − IdleWatts)·util with util = min(1, (compute +
// MemoryPowerWeight·memory)/duration) during a step and IdleWatts between steps; energy is
// integrated on the engine clock. Per request (engine clock): queue = first_scheduled − arrival,
// prefill = first_token − first_scheduled, decode = finished − first_token.
//
// The reference profiles (sim/reference.go) extend this with tensor parallelism (all-reduces over
// NVLink or PCIe), FP8/NVFP4 weights, MoE experts, MTP speculative decoding (several tokens per
// step and chunk), GQA/MLA KV sizes, sliding-window and linear-attention layers, and per-sequence,
// per-layer and per-request overheads; core.cost has the full formula. Their engine overheads are
// fitted on published measurements and validated on held-out ones (package sim/validation,
// `servebench sim validate`, docs/simulator.md).
//
// # The fast profile
//
// An imaginary small GPU (360 TFLOP/s, 9 TB/s, 2.2 GB, 40–300 W) serving a 0.5B dense model
// (24 layers, hidden 1024, 24 KiB of KV per token), budget 8192 tokens, 64 sequences, stream
// interval 15 ms, step overhead 150 µs, attention at 3.7% of peak, MaxModelLen 34816 (64K and
// 96K requests are rejected), KV capacity 35,568 tokens. It is shaped so that the README demo
// finishes in under two minutes and still shows every effect (a measured limit, a lower bound
// and "not viable"; queueing and preemption past the KV capacity): decoding is quick, so a
// 1024-token answer takes about a third of a second and cells settle fast; attention is slow, so
// a 32K prompt takes about 4 s; and the KV cache holds one 32K request but not the first prefill
// chunk of a second, so 32K requests run strictly one at a time (two General Chatbot users
// already wait longer than its 8 s time to first token) and four 8K requests already queue and
// preempt. All its numbers are in the FastProfile literal. Sustained load, 1024 output tokens,
// from Simulate (mean per request):
//
//	context  users  TTFT s  queue s  prefill tok/s  gen tok/s/user  system tok/s  power W  preemptions
//	1K           1   0.029        0         35,605           3,400         3,106      130            0
//	1K           4   0.055        0         18,758           3,227        11,023      179            0
//	4K           1   0.101        0         40,545           3,283         2,482      176            0
//	8K           1   0.306        0         26,796           3,139         1,621      229            0
//	8K           4   0.659    0.179         18,487             869         2,319      276            5
//	8K           8   2.585    2.154         20,481             849         2,280      278           11
//	16K          1   1.107        0         14,804           2,885           701      275            0
//	16K          4   3.799    2.671         14,535             811           825      288            0
//	32K          1   4.195        0          7,812           2,485           222      295            0
//	32K          2   8.801    4.606          7,812           2,485           222      295            0
//
// Prefill speed peaks at a middle context (4K: below it the fixed step costs dominate, above it
// the quadratic attention), TTFT rises with context, per-user speed falls with concurrency as
// prefill chunks stall the decodes, and queueing with preemptions appears past the KV capacity.
package sim
