package servebench

import (
	"fmt"
	"slices"
	"strings"
)

// Violation names one way a server's response contradicted what was on the wire or what was
// asked: the server claimed something that cannot be true. A record carries the violations of
// its response (Record.Violations) and a note with the numbers (Record.ViolationNote); the
// value that could not be true is replaced (see CheckWire) so that it never enters a statistic.
type Violation string

const (
	// ViolationUsageNegative: a usage count (completion_tokens, prompt_tokens) below zero.
	ViolationUsageNegative Violation = "usage-negative"
	// ViolationUsageOverMax: usage.completion_tokens above the max_tokens the request sent.
	ViolationUsageOverMax Violation = "usage-over-max-tokens"
	// ViolationUsageOverText: usage.completion_tokens more than the streamed text can hold (see
	// MaxPlausibleOutputTokens): several tokens per event claimed where the events do not show
	// them.
	ViolationUsageOverText Violation = "usage-over-text"
	// ViolationUsageUnderEvents: usage.completion_tokens fewer than the token events received
	// (each token event carries at least one token).
	ViolationUsageUnderEvents Violation = "usage-under-events"
	// ViolationUsageChanged: a later usage object contradicted an earlier one of the same
	// response (a different prompt count, a smaller completion count, or a larger one with no
	// token event in between).
	ViolationUsageChanged Violation = "usage-changed"
	// ViolationUsageParts: a part of a usage count larger than the count or below zero
	// (cached_tokens above prompt_tokens, reasoning_tokens above completion_tokens).
	ViolationUsageParts Violation = "usage-parts-exceed-total"
	// ViolationPromptTokens: usage.prompt_tokens more than the prompt sent can hold (see
	// MaxPlausiblePromptTokens).
	ViolationPromptTokens Violation = "prompt-tokens-implausible"
	// ViolationServerTiming: a per-request server timing (vLLM metrics, llama.cpp timings,
	// Ollama durations) below zero or longer than the request as the client saw it: the server
	// cannot have spent longer on a request than the time between its first byte going out and
	// its last byte coming back.
	ViolationServerTiming Violation = "server-timing-out-of-span"
	// ViolationModel: the response named another model than the one asked for.
	ViolationModel Violation = "model-mismatch"
)

// The allowances of the wire checks.
const (
	// HiddenTokenAllowance is how many tokens a response may count beyond the bytes of text it
	// streamed: tokens a detokenizer prints as nothing (reasoning markers such as <think>, an
	// end-of-turn token): 16 tokens.
	HiddenTokenAllowance = 16
	// PromptTemplateAllowance is how many tokens a chat template may add around the prompt's
	// text (role markers, a default system prompt): 4096 tokens.
	PromptTemplateAllowance = 4096
	// ServerTimingSlackSeconds and ServerTimingSlackShare bound the rounding between the
	// server's clock and the client's: a server timing may exceed the client's end-to-end
	// latency by 1 ms + 1% before it is out of the request's span.
	ServerTimingSlackSeconds = 0.001
	ServerTimingSlackShare   = 0.01
)

// MaxPlausibleOutputTokens is the most output tokens a streamed response can have carried (tokens):
//
//	max_plausible_output_tokens = output_text_bytes + HiddenTokenAllowance
//
// Every token of a byte-level or byte-fallback vocabulary prints at least one byte, so a
// response whose token events carried B bytes of text (Record.OutputTextBytes: the raw JSON of
// the content, reasoning, text and tool-call values, quotes excluded, escapes counted as sent,
// an upper bound of the text's bytes) holds at most B tokens, plus the few that print nothing.
// Several tokens per event (speculative decoding, a stream interval) are plausible exactly as
// far as the events' text shows them. -1 when the text was not measured (records written before
// servebench measured it).
func MaxPlausibleOutputTokens(r *Record) int {
	if r.OutputTextBytes <= 0 {
		return -1
	}
	return r.OutputTextBytes + HiddenTokenAllowance
}

// MaxPlausiblePromptTokens is the most prompt tokens the prompt sent can have held (tokens):
//
//	max_plausible_prompt_tokens = prompt_bytes + PromptTemplateAllowance
//
// (each token of the prompt's text is at least one byte of it; the template adds at most the
// allowance). -1 when the prompt's size was not recorded.
func MaxPlausiblePromptTokens(r *Record) int {
	if r.PromptBytes <= 0 {
		return -1
	}
	return r.PromptBytes + PromptTemplateAllowance
}

// CheckWire checks what the server claimed in r against what the client saw, flags each
// violation (Record.Violations, Record.ViolationNote) and replaces every value that cannot be
// true, so that it never enters a statistic. Only claims whose source is the server are
// judged; CheckWire is idempotent (a replaced value is the client's own). The rules:
//
//	output tokens (usage): < 0; > OutputTokensCap (the max_tokens sent, when known; on a
//	                       record from before the client recorded it, OutputTokensRequested);
//	                       < Chunks (token events); > MaxPlausibleOutputTokens
//	                       → replaced by Chunks, source client-count
//	reasoning tokens (usage): < 0 or > the output tokens claimed → dropped
//	input tokens (usage):  < 0 or > MaxPlausiblePromptTokens
//	                       → replaced by InputTokensRequested, source client-count
//	cached tokens:         < 0 or > the input tokens claimed → dropped
//	server timings:        each of queue, prefill, decode, load < 0 or > e2e + slack, or
//	                       queue + prefill + decode > e2e + slack → that timing dropped
//	                       (e2e: E2ELatencySeconds, else end − start offsets; slack
//	                       ServerTimingSlackSeconds + ServerTimingSlackShare × e2e)
//
// The client adds the violations only the stream shows (ViolationUsageChanged,
// ViolationModel) with Flag before calling CheckWire.
func CheckWire(r *Record) {
	if r.OutputTokensSource == SourceUsage {
		u := r.OutputTokens
		var v Violation
		var why string
		limit := r.OutputTokensCap
		if limit == 0 && r.OutputTextBytes == 0 && r.PromptBytes == 0 {
			// a record written before the client recorded what it sent: it sent the length asked
			limit = r.OutputTokensRequested
		}
		switch ceil := MaxPlausibleOutputTokens(r); {
		case u < 0:
			v, why = ViolationUsageNegative, fmt.Sprintf("usage.completion_tokens %d is negative", u)
		case limit > 0 && u > limit:
			v, why = ViolationUsageOverMax, fmt.Sprintf("usage.completion_tokens %d exceeds the max_tokens of %d sent", u, limit)
		case u < r.Chunks:
			v, why = ViolationUsageUnderEvents, fmt.Sprintf("usage.completion_tokens %d is fewer than the %d token events received", u, r.Chunks)
		case ceil >= 0 && u > ceil:
			v, why = ViolationUsageOverText, fmt.Sprintf("usage.completion_tokens %d is more than %d token events carrying %d bytes of text can hold (at most %d)", u, r.Chunks, r.OutputTextBytes, ceil)
		}
		if v != "" {
			r.Flag(v, why+"; counted the token events instead")
			r.OutputTokens, r.OutputTokensSource = r.Chunks, SourceClientCount
			if r.ReasoningTokensSource == SourceUsage {
				r.ReasoningTokens, r.ReasoningTokensSource = 0, ""
			}
			r.LengthMismatch = r.OutputTokensRequested > 0 && r.OutputTokens != r.OutputTokensRequested
			r.rederive()
		}
	}
	if r.ReasoningTokensSource == SourceUsage && (r.ReasoningTokens < 0 || r.ReasoningTokens > r.OutputTokens) {
		r.Flag(ViolationUsageParts, fmt.Sprintf("usage reasoning_tokens %d outside 0..completion_tokens %d; dropped", r.ReasoningTokens, r.OutputTokens))
		r.ReasoningTokens, r.ReasoningTokensSource = 0, ""
	}
	if r.InputTokensSource == SourceUsage {
		p := r.InputTokens
		var v Violation
		var why string
		switch ceil := MaxPlausiblePromptTokens(r); {
		case p < 0:
			v, why = ViolationUsageNegative, fmt.Sprintf("usage.prompt_tokens %d is negative", p)
		case ceil >= 0 && p > ceil:
			v, why = ViolationPromptTokens, fmt.Sprintf("usage.prompt_tokens %d is more than a prompt of %d bytes can hold (at most %d with the chat template)", p, r.PromptBytes, ceil)
		}
		if v != "" {
			r.Flag(v, why+"; counted the tokens asked for instead")
			r.InputTokens, r.InputTokensSource = r.InputTokensRequested, SourceClientCount
		}
	}
	if c := r.CachedTokens; c != nil && (*c < 0 || (r.InputTokensSource == SourceUsage && *c > r.InputTokens)) {
		r.Flag(ViolationUsageParts, fmt.Sprintf("cached_tokens %d outside 0..prompt_tokens %d; dropped", *c, r.InputTokens))
		r.CachedTokens = nil
	}
	if s := r.Server; s != nil {
		checkServerTimings(r, s)
	}
}

// checkServerTimings drops every server timing outside the request's span (see CheckWire).
func checkServerTimings(r *Record, s *ServerTimings) {
	e2e := r.E2ELatencySeconds
	if e2e <= 0 {
		e2e = r.EndOffsetSeconds - r.StartOffsetSeconds
	}
	if e2e <= 0 {
		return // no span to judge against
	}
	limit := e2e + ServerTimingSlackSeconds + ServerTimingSlackShare*e2e
	var bad []string
	check := func(name string, p **float64) {
		if *p == nil {
			return
		}
		if v := **p; v < 0 || v > limit {
			bad = append(bad, fmt.Sprintf("%s %.6g s", name, v))
			*p = nil
		}
	}
	check("queue", &s.QueueSeconds)
	check("prefill", &s.PrefillSeconds)
	check("decode", &s.DecodeSeconds)
	check("load", &s.LoadSeconds)
	var sum float64
	var parts []string
	for _, p := range []struct {
		name string
		v    *float64
	}{{"queue", s.QueueSeconds}, {"prefill", s.PrefillSeconds}, {"decode", s.DecodeSeconds}} {
		if p.v != nil {
			sum += *p.v
			parts = append(parts, p.name)
		}
	}
	if len(parts) > 1 && sum > limit {
		bad = append(bad, fmt.Sprintf("%s adding up to %.6g s", strings.Join(parts, " + "), sum))
		s.QueueSeconds, s.PrefillSeconds, s.DecodeSeconds = nil, nil, nil
	}
	if len(bad) > 0 {
		r.Flag(ViolationServerTiming, fmt.Sprintf("server timing %s (source %s) outside the request's %.6g s; dropped", strings.Join(bad, ", "), s.Source, e2e))
	}
}

// Flag adds violation v with its note to r (a violation already flagged keeps its first note).
func (r *Record) Flag(v Violation, note string) {
	if slices.Contains(r.Violations, v) {
		return
	}
	r.Violations = append(r.Violations, v)
	if note != "" {
		if r.ViolationNote != "" {
			r.ViolationNote += "; "
		}
		r.ViolationNote += note
	}
}

// rederive recomputes the values that depend on OutputTokens after it was replaced (the
// formulas of Derive).
func (r *Record) rederive() {
	r.ITLSeconds, r.GenerationSpeedTPS, r.TokensPerChunk = 0, 0, 0
	r.NotStreamed = NotStreamed(r)
	if r.OutputTokens > 1 && r.DecodeSeconds > 0 && !r.NotStreamed {
		n := float64(r.OutputTokens - 1)
		r.ITLSeconds = r.DecodeSeconds / n
		r.GenerationSpeedTPS = n / r.DecodeSeconds
	}
	if r.Chunks > 0 {
		r.TokensPerChunk = float64(r.OutputTokens) / float64(r.Chunks)
	}
}
