// Package capacity decides, per use case, how many concurrent requests a target serves before a
// quality threshold breaks (SPEC section 5). It is pure: Evaluate judges one measured cell,
// Search walks concurrency levels through a Measure function the caller supplies (the runner
// measures a real cell; tests use a model), and Verdict/LimitLabel put the outcome into words
// generated from the data.
//
//	res, err := capacity.Search(ctx, uc, capacity.SearchConfig{Ceiling: 128, RequestsAt: cost}, measure)
//	fmt.Println(capacity.LimitLabel(res), "—", capacity.Verdict(res))
package capacity

import "github.com/servebench/servebench"

// Metric names used in CapacityPoint.Values, CapacityPoint.Failing and
// CapacityResult.LimitingMetric: the JSON names of the CellResult fields they come from.
const (
	MetricTTFT            = "ttft_seconds"
	MetricGenerationSpeed = "generation_speed_tps"
	MetricE2ELatency      = "e2e_latency_seconds"
	MetricITL             = "itl_seconds"
	// MetricFirstContent is the time to the first answer token, after any reasoning.
	MetricFirstContent     = "first_content_seconds"
	MetricSuccessRate      = "success_rate"
	MetricSystemThroughput = "system_output_throughput_tps"
)

// DefaultUseCases returns the five use cases of SPEC section 5, thresholds on the cell mean.
// Context lengths are in K = 1024 tokens.
func DefaultUseCases() []servebench.UseCase {
	f := servebench.Float
	return []servebench.UseCase{
		{
			Name:  "code_completion",
			Title: "Code Completion",
			Description: "Inline suggestions while a developer types, as in an IDE autocomplete. " +
				"The whole suggestion must arrive before the developer moves on, so the measure is " +
				"end-to-end latency rather than time to first token, and requests are short: 1K tokens " +
				"of surrounding code in, 128 tokens out.",
			ContextTokens: 1024, OutputTokens: 128, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{E2ELatencySecondsMax: f(2)},
		},
		{
			Name:  "short_form_chatbot",
			Title: "Short-form Chatbot",
			Description: "Quick conversational exchanges such as customer-support questions and simple " +
				"Q&A. 8K tokens hold a system prompt and a few turns. Users forgive a short wait, and " +
				"10 tokens per second is already comfortable to read as the answer streams in.",
			ContextTokens: 8192, OutputTokens: 1024, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: f(10), GenerationSpeedTPSMin: f(10)},
		},
		{
			Name:  "general_chatbot",
			Title: "General Chatbot",
			Description: "A ChatGPT-style assistant holding a long multi-turn conversation in 32K " +
				"tokens of context. The answer must start within a few seconds and stream faster " +
				"than people read for the conversation to feel fluid.",
			ContextTokens: 32768, OutputTokens: 1024, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: f(8), GenerationSpeedTPSMin: f(15)},
		},
		{
			Name:  "long_document_processing",
			Title: "Long Document Processing",
			Description: "Summarising reports, extracting data from contracts, analysing long " +
				"documents: 64K tokens is on the order of a hundred-odd pages. Users accept a longer " +
				"wait for a large input, but the output must still stream at least at reading speed.",
			ContextTokens: 65536, OutputTokens: 1024, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: f(12), GenerationSpeedTPSMin: f(15)},
		},
		{
			Name:  "automated_coding_assistant",
			Title: "Automated Coding Assistant",
			Description: "Agentic coding: an assistant that reads a large part of a repository (96K " +
				"tokens, several thousand lines of code) to answer questions, refactor or implement " +
				"features, chaining many calls. Each step must start promptly and generate quickly, " +
				"or the chain stalls. Measured without prompt caching, so this is the worst case.",
			ContextTokens: 98304, OutputTokens: 1024, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: f(12), GenerationSpeedTPSMin: f(20)},
		},
	}
}
