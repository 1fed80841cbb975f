package plan

import (
	"slices"
	"time"

	"github.com/servebench/servebench"
)

// DefaultUseCases returns the five default use cases, thresholds on the cell mean.
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

// DefaultContexts is the sweep against a real target: 1K, 8K, 32K, 64K, 96K, 128K, 256K (capped
// at the target's maximum model length at run time).
var DefaultContexts = []servebench.Tokens{1024, 8192, 32768, 65536, 98304, 131072, 262144}

// DefaultScenarioConcurrency is a scenario's burst sizes when it names none.
var DefaultScenarioConcurrency = []int{1, 2, 4}

// Defaults is the plan before any file or flag. With no target URL the run is against the
// built-in simulator's fast profile, sized as the README demo (under two minutes): a short grid
// and a light capacity search that still shows every kind of verdict. The grid stops at 8K:
// the fast profile runs 32K requests one at a time, so a 32K sweep column at 4 users would
// cost more than the whole rest of the demo; General Chatbot's capacity search measures 32K at
// the two levels that decide its limit instead. Every default of the plan is here.
func Defaults(simulated bool) servebench.Plan {
	p := servebench.Plan{
		Target: servebench.Target{API: servebench.APIChat, GPU: "auto", APIKeyEnv: "OPENAI_API_KEY"},
		Sweep: servebench.Sweep{
			Contexts:     slices.Clone(DefaultContexts),
			Concurrency:  []int{1, 2, 3, 4, 5},
			OutputTokens: 1024,
			Mode:         servebench.ModeSustained,
			MinRequests:  10,
			Rounds:       3,
			Precision:    0.05,
			MaxRequests:  1000,
			MaxDuration:  servebench.Duration(10 * time.Minute),
			Arrivals:     "poisson",
			TTFTTimeout:  servebench.Duration(10 * time.Minute),
			IdleTimeout:  servebench.Duration(60 * time.Second),
			// how long a run waits, paused, for a server that stopped answering
			OutageTimeout: servebench.Duration(5 * time.Minute),
		},
		UseCases: DefaultUseCases(),
		Capacity: servebench.CapacityPlan{MaxConcurrency: 128, Headline: "general_chatbot"},
		Metadata: servebench.Metadata{ElectricityUSDPerKWh: 0.10},
	}
	if simulated {
		p.Target.SimProfile = "fast"
		p.Target.GPU = "sim"
		p.Sweep.Contexts = []servebench.Tokens{1024, 4096, 8192}
		p.Sweep.Concurrency = []int{1, 2, 4}
		p.Sweep.MinRequests = 2
		p.Sweep.Rounds = 1
		p.Sweep.MaxDuration = servebench.Duration(2 * time.Second)
		p.Sweep.Bursts = 3
		p.Capacity.MaxConcurrency = 8
		p.Scenarios = DemoScenarios()
	}
	return p
}

// DemoScenarios are the dedicated-capacity scenarios of the simulated demo: short outputs at
// three context lengths, each released in bursts of 1, 2 and 4 requests. Against a real target
// scenarios come only from the plan file (they cost GPU time).
func DemoScenarios() []servebench.Scenario {
	return []servebench.Scenario{
		{Name: "chatbot", Title: "Chatbot", ContextTokens: 1024, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
		{Name: "rag", Title: "Retrieval-Augmented Q&A", ContextTokens: 4096, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
		{Name: "tool_calling_agentic", Title: "Tool Calling Agentic", ContextTokens: 8192, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
	}
}
