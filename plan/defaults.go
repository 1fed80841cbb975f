package plan

import (
	"slices"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/stats"
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

// DefaultScenarioConcurrency is a scenario's burst sizes when it names none
// (cells.DefaultScenarioLevels).
var DefaultScenarioConcurrency = cells.DefaultScenarioLevels

// DemoProfile is the simulator profile of the README demo: GLM-4.7-Flash on one H200, the
// profile that reproduces a published benchmark report (servebench sim --list gives its
// validated error), so the demo's numbers are those a GPU gives.
const DemoProfile = "h200-glm47-flash"

// Defaults is the plan before any file or flag. demo is the README demo: no target URL and no
// simulator profile named. Its plan is sized to finish in about two minutes on the built-in
// simulator running DemoProfile in real time (TestDemoPlan measures it on virtual time): a
// sweep of 1K and 8K at 1, 2 and 4 users with DemoOutputTokens-token answers (0.7–2 s a
// request) aiming for ±15% instead of ±5% within 18 s a cell, one dedicated scenario (its bursts
// aiming for the same precision), and three use cases
// (DemoUseCases) of which two reuse the sweep's cells and General Chatbot searches 32K up to 4
// users. The long-context use cases (64K, 96K: a minute or more per level) are left to a full
// run. A run naming --sim-profile gets the same defaults as a real server: the same sampling,
// precision and confidence rules.
func Defaults(demo bool) servebench.Plan {
	p := servebench.Plan{
		Target: servebench.Target{API: servebench.APIChat, GPU: "auto", APIKeyEnv: "OPENAI_API_KEY"},
		Sweep: servebench.Sweep{
			Contexts:     slices.Clone(DefaultContexts),
			Concurrency:  []int{1, 2, 3, 4, 5},
			OutputTokens: 1024,
			Mode:         servebench.ModeSustained,
			MinRequests:  10,
			Rounds:       3,
			Precision:    stats.DefaultRelHalfWidth,
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
	if demo {
		p.Target.SimProfile = DemoProfile
		p.Target.GPU = "sim"
		p.Sweep.Contexts = []servebench.Tokens{1024, 8192}
		p.Sweep.Concurrency = []int{1, 2, 4}
		p.Sweep.OutputTokens = DemoOutputTokens
		p.Sweep.MinRequests = 10 // stats.MinIntervalSamples: every demo cell shows its intervals
		p.Sweep.Rounds = 3
		p.Sweep.Precision = 0.15
		p.Sweep.MaxDuration = servebench.Duration(18 * time.Second)
		p.Sweep.Bursts = 2
		p.Capacity.MaxConcurrency = 4
		p.UseCases = DemoUseCases()
		p.Scenarios = DemoScenarios()
	}
	return p
}

// SimDefaults is the plan before any file or flag of a run against the built-in simulator with
// a named profile: a real server's defaults (Defaults(false)), measured on the simulator.
func SimDefaults(profile string) servebench.Plan {
	p := Defaults(false)
	p.Target.SimProfile = profile
	p.Target.GPU = "sim"
	return p
}

// DemoOutputTokens is the answer length of the demo's sweep and chatbot use cases: 128 tokens
// (code completion's) instead of 1,024, so a 32K request at 4 users takes about 7 s instead of
// 17 s and the code completion search reuses the sweep's 1K cells.
const DemoOutputTokens = 128

// DemoUseCases are the use cases the demo searches: code completion as in DefaultUseCases,
// the short-form and general chatbots with DemoOutputTokens-token answers (the sweep's, so
// their searches reuse its cells where it measured their context). Their thresholds are the
// defaults'.
func DemoUseCases() []servebench.UseCase {
	var out []servebench.UseCase
	for _, u := range DefaultUseCases() {
		switch u.Name {
		case "code_completion":
		case "short_form_chatbot", "general_chatbot":
			u.OutputTokens = DemoOutputTokens
			u.Description += " (The demo answers with 128 tokens instead of 1,024.)"
		default:
			continue
		}
		out = append(out, u)
	}
	return out
}

// DemoScenarios are the dedicated-capacity scenarios of the simulated demo: a short chat at 1K,
// 128 tokens out, released in bursts of 1, 2 and 4 requests. Against a real target scenarios come only from the plan file (they cost GPU time).
func DemoScenarios() []servebench.Scenario {
	return []servebench.Scenario{
		{Name: "chatbot", Title: "Chatbot", ContextTokens: 1024, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
	}
}
