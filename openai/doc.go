// Package openai is servebench's measuring client: it sends one streaming request and turns
// what comes back into one servebench.Record, timing every event on the socket. It is written
// on the standard library alone (no SDK) and speaks three flavours:
//
//	servebench.APIChat         POST {base}/chat/completions  (SSE, one user message)
//	servebench.APICompletions  POST {base}/completions       (SSE, raw prompt)
//	servebench.APIOllama       POST {root}/api/chat          (Ollama native, NDJSON; root = base without /v1)
//
// # Using it
//
//	cfg := openai.Config{BaseURL: "http://127.0.0.1:8000/v1", API: servebench.APIChat,
//		Origin: runOrigin, MaxConnections: 64}
//	info, quirks, err := openai.Discover(ctx, cfg) // models, max context, engine, quirks
//	cfg.Model, cfg.Quirks = info.Models[0], quirks
//	c, err := openai.New(cfg)
//	rec := c.Do(ctx, &servebench.Request{Prompt: p, ContextTokens: 8192, MaxOutputTokens: 1024})
//
// # What a record means
//
// One clock: time.Now (monotonic), offsets from Config.Origin. Request start is the instant
// before the request's first byte is written. Every read of the response that returned bytes
// is stamped: with the kernel's receive stamp where the system gives one (SO_TIMESTAMPNS,
// mapped onto the monotonic clock), else with the time the read returned; an event (an SSE
// event ended by its blank line, or an NDJSON line) gets the stamp of the read that delivered
// its last byte, taken before any JSON parsing.
//
// An http:// target is spoken to by the package's own HTTP/1.1 code (h1.go): the request's
// goroutine writes the request in one system call; where the kernel stamps reads, the response
// is read and parsed by one reactor for every stream (rxreactor_linux.go), first token included,
// on a socket the runtime's poller no longer watches: a token costs one recvmsg and a share of
// a thread wake-up, no goroutine scheduling, so that every socket is read before its stream's
// next token arrives (a kernel stamp is exact only then); between reads the reactor naps for up
// to 2/5 of the streams' shortest recent gap between tokens (at most 2 ms), so that the sockets
// that become readable meanwhile are read in one wake-up. Every
// server is read this way, the built-in simulator as a real one. (First tokens used to go to a
// read that slept in the kernel, SO_RCVLOWAT set to the last head's length, while the reactor
// was judged late: it cost a fifth of the client's CPU per event, a second read path, and a
// stamp taken only once the low-water mark was met, and whole demo runs measured no better
// with it.) The record splits what came before the server could read the request:
// connect_seconds (outside TTFT) and write_seconds (inside it). An https:// target goes through net/http.
//
// A token event carries a non-empty content, reasoning_content, reasoning or tool-call delta
// (chat), a non-empty text (completions), or a non-empty message.content / thinking /
// tool_calls (Ollama). Role-only chunks, "content": null, ":" keep-alive comments and empty
// deltas are not token events. TTFT is start → first token event, FirstContent start → first
// content, Chunks the number of token events, ChunkGapsSeconds the gaps between them. Output
// tokens are usage.completion_tokens ("usage"), else the number of token events
// ("client-count"); input tokens usage.prompt_tokens, else the prompt builder's count; reasoning
// tokens usage.completion_tokens_details.reasoning_tokens, else the number of events carrying a
// reasoning delta ("client-count"). ITL,
// decode time and generation speed come from servebench.Derive, so several tokens per chunk
// (speculative decoding) are counted right.
//
// A stream must end with its end signal ("data: [DONE]", or {"done": true} for Ollama);
// anything else is servebench.ErrStreamTruncated, whatever tokens came before. The end signal
// ends the request at once, whatever the connection does: the rest of the body (normally the
// chunked terminator) is read in the background for up to 2 s so that the connection can be
// kept. Every Do returns exactly one Record, failures included, with an error class and a
// message naming the cause and the fix.
//
// # Every request ends
//
// Three bounds apply: the first-token timeout from the request start; the idle timeout, which
// is time without a token (keep-alive comments, role-only chunks and "choices": [] events do
// not reset it); and a total bound on the request's whole life, Config.RequestTimeout or, when
// unset, first-token timeout + 1 s per output token asked + idle timeout (TotalTimeout;
// servebench.ErrTimeoutTotal). A line or an event over 16 MiB is a malformed event whose
// message names the limit.
//
// # The server is checked against the wire
//
// servebench.CheckWire holds what the server claims to what the client saw: usage.completion_tokens
// to the max_tokens sent, to the token events (at least one token each) and to the bytes of
// text they carried (a token prints at least one byte, bar 16 that print nothing: several
// tokens per event, as speculative decoding sends, are believed as far as the text shows
// them); usage.prompt_tokens to the prompt's size; per-request server timings to the request's
// span. The stream adds what only it shows: a usage object that contradicts an earlier one
// (repeats must be identical, or a running count that grows only with token events; an
// all-zero usage is a placeholder and claims nothing), and a model named in the chunks other
// than the one asked. Each violation is flagged on the record (Record.Violations, with a note)
// and the impossible value replaced by the client's own count, or dropped.
//
// A response whose token events arrived together (a buffering proxy delivered it in one write)
// is Record.NotStreamed: its ITL and generation speed are unknown, never zero.
//
// # Redirects
//
// The measuring requests follow no redirect (a 3xx is an HTTP-status failure). Every other
// client pointed at the target (Discover, and NewHTTPClient for /tokenize, probes and metrics)
// follows a redirect only within the origin and refuses one to another origin (CheckRedirect),
// so that neither the API key, nor the configured headers, nor a request body go elsewhere.
//
// Server timings (Record.Server) are taken from llama.cpp's "timings", vLLM's per-request
// "metrics" (RequestMetrics: queue = time_in_queue, prefill = first_token_time −
// first_scheduled_time) and Ollama's native durations.
package openai
