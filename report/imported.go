package report

import (
	"fmt"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// An imported run (servebench import) holds another tool's figures, read from its result file:
// servebench did not send its prompts, so none of servebench's own statements about how a run
// is measured (unique prompt markers, forced output lengths, warm-up, the steady-state window,
// the per-request records, the validity rules) holds for it. Its report states what the import
// knows instead: the tool, the file, and the tool's definitions as docs/exchange.md maps them.

// imported is the source of an imported run; nil for a run servebench measured.
func (b *builder) imported() *servebench.ImportSource { return b.man.Imported }

// importedTool names the tool of an imported run with its version where the file gives it.
func importedTool(im *servebench.ImportSource) string {
	if im.ToolVersion != "" {
		return im.Tool + " " + im.ToolVersion
	}
	return im.Tool
}

// importedSubtitle is an imported run's subtitle: what the result file declares (the tool and
// its version, the model, the hardware and engine where the run's metadata has them) and,
// plainly, what it does not, in place of a measured run's "undeclared hardware (set
// metadata.gpu in the plan)", which would send the reader to a plan the import never had.
func (b *builder) importedSubtitle(im *servebench.ImportSource) string {
	s := "Imported from " + importedTool(im) + "'s result file"
	if im.ToolVersion == "" {
		s += " (tool version not in the file)"
	}
	var unknown []string
	if b.md.ModelName == "" && b.man.Plan.Target.Model == "" && b.res.Run.Model == "" {
		unknown = append(unknown, "model")
	}
	if b.md.GPU != "" {
		s += ", on " + b.md.GPU
	} else {
		unknown = append(unknown, "hardware")
	}
	if e := b.engineName(); e != "" {
		s += ", served by " + e
	} else {
		unknown = append(unknown, "serving engine")
	}
	if im.Target == "" {
		unknown = append(unknown, "server address")
	}
	if len(unknown) > 0 {
		s += "; " + joinAnd(unknown) + " not declared in the file"
	}
	return s
}

// importedIntro is the executive summary's statement of where an imported run's figures come
// from.
func (b *builder) importedIntro() Block {
	im := b.imported()
	target := "a server the file does not name"
	if im.Target != "" {
		target = im.Target
	}
	return note(fmt.Sprintf("Imported, not measured by servebench: every figure in this report is %s's own, read from its result file %s (SHA-256 %s…) by servebench import, under %s's definitions (see Methodology and Definitions). %s measured %s. servebench did not send these requests, so it does not judge the cells' validity, and its own claims about how a run is measured (fresh prompts, forced output lengths, warm-up and a steady-state window) do not apply.",
		im.Tool, im.File, short(im.SHA256, 12), im.Tool, importedTool(im), target))
}

// importedParameters is the test parameters of an imported run: what the file says, nothing
// servebench would have chosen.
func (b *builder) importedParameters() string {
	im := b.imported()
	var parts []string
	if g := b.sweep; !g.empty() {
		if len(g.ctxs) == 1 {
			parts = append(parts, fmt.Sprintf("One context length: %s tokens (the mean prompt tokens per request %s reported, rounded).", ctxLabel(g.ctxs[0]), im.Tool))
		} else {
			parts = append(parts, fmt.Sprintf("Context lengths from %s to %s tokens (the mean prompt tokens per request %s reported for each load point, rounded).", ctxLabel(g.ctxs[0]), ctxLabel(g.ctxs[len(g.ctxs)-1]), im.Tool))
		}
		if len(g.concs) == 1 {
			parts = append(parts, fmt.Sprintf("One concurrency level: %s.", capacity.Requests(g.concs[0])))
		} else if len(g.concs) > 1 {
			parts = append(parts, fmt.Sprintf("Concurrency levels: %s.", joinInts(g.concs)))
		}
		parts = append(parts, fmt.Sprintf("%s per request on average, as %s counted them; whether the tool forced that length is not in the file.", counted(fmt.Sprint(g.ordered()[0].OutputTokens), "output token"), im.Tool))
	}
	parts = append(parts, fmt.Sprintf("Prompt caching: not known (%s's file does not say whether prompts shared a prefix or hit the server's prefix cache).", im.Tool))
	cells, requests := 0, 0
	for _, c := range b.res.Cells {
		cells++
		requests += c.RequestsTotal
	}
	parts = append(parts, fmt.Sprintf("Load: as %s ran it, recorded as load mode %s; %s over %s, as the file counts them.", im.Tool, orDefault(string(b.man.Plan.Sweep.Mode), "unknown"), plural(requests, "request"), plural(cells, "load point")))
	return strings.Join(parts, " ")
}

// importedCaching is the TTFT section's statement about prompt caching for an imported run.
func (b *builder) importedCaching() string {
	return fmt.Sprintf("About caching: %s's result file does not say whether its prompts shared a prefix or whether the server served them from its prefix cache, so these TTFTs may include cached prefill; servebench's fresh-prompt guarantee does not apply to an imported run.", b.imported().Tool)
}

// importedMethodology is the methodology section of an imported run: the source, and the
// tool's definitions of the fields it filled, as docs/exchange.md maps them.
func (b *builder) importedMethodology() []Block {
	im := b.imported()
	tool := orDefault(b.man.ToolVersion, "unknown version")
	blocks := []Block{
		para("Measured by %s against %s; imported by servebench %s from %s (format %s, SHA-256 %s). The tool's per-request data are not kept (requests.jsonl is empty), so the figures here are the file's and cannot be recomputed from the run folder. A value the file does not report is left out and the cell's unavailable says why (see Notes); it is never shown as zero.",
			importedTool(im), orDefault(im.Target, "a server the file does not name"), tool, im.File, im.Format, im.SHA256),
		para("servebench's own definitions (a role-only chunk does not stop TTFT; throughput over a steady-state window; percentiles withheld below their minimum count) are the reference the table compares against; docs/exchange.md maps every field and says where each definition differs."),
	}
	rows, ok := importDefinitions[im.Format]
	if !ok {
		return append(blocks, missing(fmt.Sprintf("servebench has no definitions for the format %q: docs/exchange.md lists the formats it reads.", im.Format)))
	}
	t := &Table{Caption: im.Tool + "'s definitions of the fields this run holds", Header: []string{"SERVEBENCH FIELD", im.Tool + "'S DEFINITION"}}
	t.Header[1] = strings.ToUpper(t.Header[1])
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Label, r.Value})
	}
	t.Rows = append(t.Rows,
		[]string{"Validity", "Not judged: servebench judges only a window it measured itself (its sample counts, stability and failures rules need its own records)."},
		[]string{"Percentiles", "The tool's own; servebench withholds one the tool computed from fewer values than it shows one from (p50: 2, p90: 10, p95: 20, p99: 100), its value kept in the reason."})
	return append(blocks, tableB(t))
}

// importDefinitions are the tools' definitions of the fields an import fills, by import format,
// as docs/exchange.md states them (its "vllm bench serve", "GuideLLM" and "AIPerf" tables).
var importDefinitions = map[string][]Field{
	"vllm": {
		{"ttft_seconds", "vllm's TTFT: request start → first SSE message with non-empty choices; a chat role-only chunk counts, so it can end before prefill."},
		{"itl_seconds", "vllm's TPOT: (latency − TTFT) / (output tokens − 1), per request."},
		{"chunk_gap_seconds", "vllm's ITL: gaps between successive messages with choices, pooled; the first is role chunk → first content."},
		{"e2e_latency_seconds", "vllm's E2EL (only with --percentile-metrics …,e2el, or per request with --save-detailed): start → last message with choices."},
		{"generation_speed_tps", "With --save-detailed only: (output tokens − 1) / (latency − TTFT), per request."},
		{"output tokens", "usage.completion_tokens, else a tokenizer count of the text."},
		{"throughput", "Successful requests' tokens (requests) / duration, before the first send → after the last request ended: one rate over the whole benchmark, no interval."},
		{"standard deviation", "Population (numpy's np.std), converted to the sample form for the 95% interval."},
	},
	"guidellm": {
		{"ttft_seconds", "GuideLLM's time_to_first_token_ms: request start → first iteration (first streamed chunk)."},
		{"itl_seconds", "GuideLLM's inter_token_latency_ms: (last token − first token) / (output tokens − 1), weighted by tokens."},
		{"e2e_latency_seconds", "GuideLLM's request_latency: request start → end."},
		{"output tokens", "Usage counts (output_token_count)."},
		{"throughput", "GuideLLM's output_tokens_per_second, tokens_per_second, requests_per_second: its rate over the stage's duration, no interval."},
		{"requests", "Successful and errored; incomplete (still running when the stage ended) counts as neither."},
		{"chunk_gap_seconds, generation_speed_tps", "Not reported by GuideLLM."},
	},
	"aiperf": {
		{"ttft_seconds", "AIPerf's time_to_first_token: start → first response chunk with content; absent without streaming."},
		{"itl_seconds", "AIPerf's inter_token_latency: (request latency − TTFT) / (output tokens − 1), vllm's TPOT measured to the last response."},
		{"generation_speed_tps", "AIPerf's output_token_throughput_per_user: 1 / ITL per request."},
		{"e2e_latency_seconds", "AIPerf's request_latency: start → last response."},
		{"output tokens", "Re-tokenized generated text with the client's tokenizer (unless --use-server-token-count)."},
		{"throughput", "Total tokens (requests) / benchmark_duration, first request → last response; no interval."},
		{"chunk_gap_seconds", "Not in the summary file (per request in profile_export.jsonl)."},
	},
}

// short returns s cut to n characters.
func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
