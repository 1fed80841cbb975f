// Package workload synthesises prompts of an exact token count, as the server under test counts
// them, and builds every cell's requests from the run's sources of prompts: Sources.Requests
// (synthetic prompts, a dataset's entries, a trace's, the turns of multi-turn Sessions) and
// NewPopulation (a population of users). A local run and every worker of a distributed run
// build requests with these, so both send the same requests for the same sequence numbers.
//
// # Usage
//
//	b, err := workload.NewBuilder(ctx, workload.Config{
//		RunID: runID, API: servebench.APIChat, BaseURL: "http://127.0.0.1:8000/v1",
//		Model: model, HTTPClient: hc, Probe: client.ProbePromptTokens,
//	})
//	prompt, err := b.Prompt(ctx, seq, 8192) // exactly 8192 prompt tokens, template included
//
// # Counting
//
// NewBuilder picks, in order: the server's POST /tokenize (vLLM/SGLang shape with the chat
// template applied by the server, or llama.cpp's shape plus the template overhead measured by
// one probe), calibration against usage.prompt_tokens of one-output-token probes, or an offline
// vocabulary (package workload/tokenizer). Method says which.
//
// # Shape of a prompt
//
//	"Note" + shared prefix (optional) + marker(run, seq) + prose filler(run, seq) [+ pads]
//
// All words come from a pool measured at start-up to count L tokens each (L = 1 for ordinary
// vocabularies), so the count of a prompt is linear, tokens = b + L·words + pads, where b is
// the count of the lead word with the chat template. A prompt therefore costs no server call;
// each distinct length is verified once (one count of the full prompt), and a tokenizer that
// does not add up word by word is detected (a 1,024-token prose sample at start-up, and every
// verification) and corrected, after which every prompt is counted (Builder.Strict).
//
// In calibration mode a count is a real request, which would leave the counted text in the
// server's prefix cache; so the text verified is a probe-only variant of the prompt (the marker
// and filler of another run id, same length), never a prompt that will be sent.
//
// # No prompt caching
//
// The marker right after the lead word codes the run id and the request sequence: one word
// mixing both, then the base-P digits of seq (low digit first, covering 2^32 requests)
// interleaved with 48 bits of the run id's hash, P ≤ 64 unit words. Every marker has the same
// token length, and with L = 1 it lies within the first 24 tokens of the text, so no two prompts
// of a run, nor of two runs, share their first 32 tokens. With Config.SharedPrefixTokens the
// shared, run-specific prefix goes first on purpose and the marker follows it.
package workload
