package exchange

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

var importNow = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

func importFixture(t *testing.T, f Format, name string, opt ImportOptions) (servebench.Manifest, servebench.Results) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	opt.File, opt.Now = filepath.Join("testdata", "import", name), importNow
	m, res, err := Import(f, b, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m, res
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Each published sample imports to the cells its figures describe, every value in
// servebench's unit and under its field, the tool named in run.json.
func TestImportFixtures(t *testing.T) {
	type want struct {
		cells                      int
		key                        servebench.CellKey // of the first cell
		total, ok, failed          int
		windowS, outTPS, reqRPS    float64
		ttftMean, itlMean, e2eMean float64 // seconds; NaN: absent (empty summary)
		ttftP50                    float64 // NaN: withheld or absent
		model, target, toolVer     string
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		f    Format
		file string
		w    want
	}{
		// vllm's documented sample: summary figures only, 10 prompts sent at once (no
		// --max-concurrency: concurrency = prompts), TPOT → itl_seconds; 10 requests are too
		// few for a p50 of… no: p50 needs 2, kept; p99 needs 100, withheld
		{"vllm docs sample", FormatVLLM, "vllm_docs_sharegpt.json", want{cells: 1,
			key:   servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeFixed, ContextTokens: 137, OutputTokens: 221, Concurrency: 10},
			total: 10, ok: 10, windowS: 5.78, outTPS: 382.89, reqRPS: 1.73,
			ttftMean: 0.07154, itlMean: 0.00791, e2eMean: nan, ttftP50: 0.07388,
			model: "NousResearch/Hermes-3-Llama-3.1-8B"}},
		// GuideLLM v2 report: two constant-rate stages, ms → s, request_latency already in s
		{"guidellm report v2", FormatGuideLLM, "guidellm_report_v2.json", want{cells: 2,
			key:   servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeRate, ContextTokens: 72, OutputTokens: 8, RatePerSecond: 2},
			total: 2, ok: 2, windowS: 5.01964807510376, outTPS: 3.1950675815128577, reqRPS: 0.39843430656414264,
			ttftMean: 0.011481165885925293, itlMean: 0.0011508464813232422, e2eMean: 0.01978909969329834, ttftP50: 0.011276006698608398,
			model: "e2e-mock-model", target: "http://127.0.0.1:8765", toolVer: "0.8.0.dev18"}},
		// AIPerf 0.8.0, not streamed: no TTFT or ITL at all, latency in ms, phases as a list
		{"aiperf 0.8.0 non-streaming", FormatAIPerf, "aiperf_0.8.0_chat_nonstreaming.json", want{cells: 1,
			key:   servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeFixed, ContextTokens: 550, OutputTokens: 551, Concurrency: 4},
			total: 64, ok: 64, windowS: 0.034502655, outTPS: 1022443.0554692096, reqRPS: 1854.929714829192,
			ttftMean: nan, itlMean: nan, e2eMean: 0.001516322453125, ttftP50: nan,
			model: "mock-model", target: "http://aiperf-mock-server.default.svc.cluster.local:8000/v1", toolVer: "0.8.0"}},
		// AIPerf streaming (schema 1.1 with count): failures from error_request_count
		{"aiperf streaming", FormatAIPerf, "aiperf_streaming_schema_1.1.json", want{cells: 1,
			key:   servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeFixed, ContextTokens: 512, OutputTokens: 128, Concurrency: 32},
			total: 202, ok: 200, failed: 2, windowS: 16.13, outTPS: 1587.2, reqRPS: 12.4,
			ttftMean: 0.19584, itlMean: 0.0352, e2eMean: 2.62071, ttftP50: 0.17505,
			model: "qwen3-0.6b", target: "http://127.0.0.1:8000/v1", toolVer: "0.8.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, res := importFixture(t, tc.f, tc.file, ImportOptions{})
			w := tc.w
			if m.Imported == nil || m.Imported.Tool != tc.f.Tool() || m.Imported.File != tc.file || len(m.Imported.SHA256) != 64 {
				t.Fatalf("run.json does not name the source: %+v", m.Imported)
			}
			if m.Status != "completed" || m.Simulated || m.Plan.Metadata.Label != tc.f.Tool()+" import" || !strings.Contains(m.TargetName(), "imported from "+tc.f.Tool()) {
				t.Errorf("manifest: status %q simulated %v label %q target %q", m.Status, m.Simulated, m.Plan.Metadata.Label, m.TargetName())
			}
			if m.Plan.Target.Model != w.model || m.Imported.Target != w.target || m.Imported.ToolVersion != w.toolVer {
				t.Errorf("model %q target %q version %q, want %q %q %q", m.Plan.Target.Model, m.Imported.Target, m.Imported.ToolVersion, w.model, w.target, w.toolVer)
			}
			if len(res.Cells) != w.cells {
				t.Fatalf("%d cells, want %d", len(res.Cells), w.cells)
			}
			c := res.Cells[0]
			if c.CellKey != w.key {
				t.Errorf("key %+v, want %+v", c.CellKey, w.key)
			}
			if c.RequestsTotal != w.total || c.RequestsSucceeded != w.ok || c.RequestsFailed != w.failed {
				t.Errorf("requests %d/%d/%d, want %d/%d/%d", c.RequestsTotal, c.RequestsSucceeded, c.RequestsFailed, w.total, w.ok, w.failed)
			}
			if !near(c.WindowSeconds, w.windowS) || !near(c.SystemOutputThroughputTPS, w.outTPS) || !near(c.RequestThroughputRPS, w.reqRPS) {
				t.Errorf("window %v out %v req %v", c.WindowSeconds, c.SystemOutputThroughputTPS, c.RequestThroughputRPS)
			}
			for _, s := range []struct {
				name string
				sum  servebench.Summary
				want float64
			}{{"ttft", c.TTFTSeconds, w.ttftMean}, {"itl", c.ITLSeconds, w.itlMean}, {"e2e", c.E2ELatencySeconds, w.e2eMean}} {
				if math.IsNaN(s.want) {
					if s.sum.Count != 0 {
						t.Errorf("%s: %+v, want absent (the file has none)", s.name, s.sum)
					}
					continue
				}
				if !near(s.sum.Mean, s.want) {
					t.Errorf("%s mean %v, want %v", s.name, s.sum.Mean, s.want)
				}
			}
			if got := deref(c.TTFTSeconds.P50); !(math.IsNaN(got) && math.IsNaN(w.ttftP50)) && !near(got, w.ttftP50) {
				t.Errorf("ttft p50 %v, want %v", got, w.ttftP50)
			}
			if c.Unavailable["system_output_throughput_tps_ci95"] == "" {
				t.Error("the missing throughput interval is not explained")
			}
			// results.json round-trips through JSON (no NaN, no Inf)
			if _, err := json.Marshal(res); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Percentiles a tool reports from fewer values than servebench's floor are withheld with the
// tool's figure in the reason; min and max a tool does not report are said to be missing.
func TestImportWithholdsThinPercentiles(t *testing.T) {
	_, res := importFixture(t, FormatVLLM, "vllm_docs_sharegpt.json", ImportOptions{})
	c := res.Cells[0]
	if c.TTFTSeconds.P99 != nil {
		t.Errorf("p99 of 10 requests kept: %v", *c.TTFTSeconds.P99)
	}
	if why := c.Unavailable["ttft_seconds.p99"]; !strings.Contains(why, "0.07949") || !strings.Contains(why, "from 10 values") {
		t.Errorf("p99 reason %q", why)
	}
	if why := c.Unavailable["ttft_seconds.min"]; why == "" {
		t.Error("min/max not reported by vllm but not said")
	}
	if why := c.Unavailable["ttft_seconds.ci95"]; why == "" {
		t.Error("no std in the file, yet no reason for the missing interval")
	}
	if c.GenerationSpeedTPS.Count != 0 || c.Unavailable["generation_speed_tps"] == "" {
		t.Errorf("generation speed of a summary-only file: %+v %q", c.GenerationSpeedTPS, c.Unavailable["generation_speed_tps"])
	}
	if c.E2ELatencySeconds.Count != 0 || !strings.Contains(c.Unavailable["e2e_latency_seconds"], "mean_e2el_ms") {
		t.Errorf("e2e of a file without e2el: %+v %q", c.E2ELatencySeconds, c.Unavailable["e2e_latency_seconds"])
	}
	// the GuideLLM stage of two requests: p90 withheld, p50 kept
	_, res = importFixture(t, FormatGuideLLM, "guidellm_report_v2.json", ImportOptions{})
	if c := res.Cells[1]; c.TTFTSeconds.P50 == nil || c.TTFTSeconds.P90 != nil || c.TTFTSeconds.Min == nil {
		t.Errorf("guidellm stage 2 ttft %+v", c.TTFTSeconds)
	}
}

// Options relabel and rekey the cells, and mark a file that measured the simulator.
func TestImportOptions(t *testing.T) {
	m, res := importFixture(t, FormatVLLM, "vllm_docs_sharegpt.json", ImportOptions{Label: "vllm 0.11", Mode: servebench.ModeSustained,
		ContextTokens: 128, OutputTokens: 256, SimProfile: "fast", ToolVersion: "9.9", Command: []string{"servebench", "import"}})
	c := res.Cells[0]
	if c.LoadMode != servebench.ModeSustained || c.ContextTokens != 128 || c.OutputTokens != 256 {
		t.Errorf("key %+v", c.CellKey)
	}
	if m.Plan.Metadata.Label != "vllm 0.11" || !m.Simulated || !res.Run.Simulated || m.Plan.Target.SimProfile != "fast" || m.ToolVersion != "9.9" {
		t.Errorf("manifest %+v", m)
	}
	// the same bytes give the same id: a second import replaces the first in the index
	m2, _ := importFixture(t, FormatVLLM, "vllm_docs_sharegpt.json", ImportOptions{})
	if m2.ID != m.ID || !strings.Contains(m.ID, "-vllm-") {
		t.Errorf("ids %q and %q", m.ID, m2.ID)
	}
}

// vllm --append-result writes one object per line: each is a cell; --save-detailed's arrays
// give exact summaries computed as servebench computes its own.
func TestImportVLLMAppendedAndDetailed(t *testing.T) {
	line := func(conc int, detailed bool) string {
		o := map[string]any{"date": "20260826-064255", "backend": "openai-chat", "model_id": "m", "request_rate": "inf", "max_concurrency": conc,
			"duration": 2.0, "completed": 3, "failed": 1, "total_input_tokens": 300, "total_output_tokens": 30,
			"request_throughput": 1.5, "output_throughput": 15.0, "total_token_throughput": 165.0, "mean_ttft_ms": 100.0}
		if detailed {
			o["ttfts"] = []float64{0.1, 0.2, 0.3, 0}
			o["itls"] = [][]float64{{0.01, 0.02}, {0.01}, {0.03, 0.03, 0.03}, {}}
			o["latencies"] = []float64{0.5, 0.6, 0.9, 0}
			o["output_lens"] = []int{11, 11, 8, 0}
			o["input_lens"] = []int{100, 100, 100, 100}
			o["errors"] = []string{"", "", "", "Bad Gateway"}
		}
		b, _ := json.Marshal(o)
		return string(b)
	}
	data := line(1, false) + "\n" + line(4, true) + "\n"
	_, res, err := Import(FormatVLLM, []byte(data), ImportOptions{File: "a.json", Now: importNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 2 || res.Cells[0].Concurrency != 1 || res.Cells[1].Concurrency != 4 {
		t.Fatalf("cells %+v", res.Cells)
	}
	if res.Run.StartedAt != time.Date(2026, 8, 26, 6, 42, 55, 0, time.UTC) {
		t.Errorf("start %v", res.Run.StartedAt)
	}
	c := res.Cells[1]
	if c.TTFTSeconds.Count != 3 || !near(c.TTFTSeconds.Mean, 0.2) || c.TTFTSeconds.Min == nil || *c.TTFTSeconds.Min != 0.1 || c.TTFTSeconds.Max == nil || *c.TTFTSeconds.Max != 0.3 || c.TTFTSeconds.CI95 == nil {
		t.Errorf("ttft %+v", c.TTFTSeconds)
	}
	// tpot per request: (0.5−0.1)/10, (0.6−0.2)/10, (0.9−0.3)/7
	if !near(c.ITLSeconds.Mean, (0.04+0.04+0.6/7)/3) || !near(c.E2ELatencySeconds.Mean, 2.0/3) {
		t.Errorf("itl %+v e2e %+v", c.ITLSeconds, c.E2ELatencySeconds)
	}
	if c.ChunkGapSeconds.Count != 6 || c.GenerationSpeedTPS.Count != 3 || !near(c.TokensPerChunk, 30.0/9) {
		t.Errorf("gaps %+v speed %+v tokens/chunk %v", c.ChunkGapSeconds, c.GenerationSpeedTPS, c.TokensPerChunk)
	}
	if c.RequestsFailed != 1 || !near(c.SuccessRate, 0.75) {
		t.Errorf("failures %d rate %v", c.RequestsFailed, c.SuccessRate)
	}
}

// Hostile and broken files are refused with every problem named, field by field, and the
// writer that makes a good file; nothing is imported from them.
func TestImportHostile(t *testing.T) {
	good := `{"duration": 5.78, "completed": 10, "failed": 0, "total_input_tokens": 1369, "total_output_tokens": 2212,
		"request_throughput": 1.73, "output_throughput": 382.89, "total_token_throughput": 619.85, "mean_ttft_ms": 71.54}`
	repl := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	for _, tc := range []struct {
		name string
		f    Format
		data string
		want []string
	}{
		{"empty", FormatVLLM, "", []string{"is not JSON", "it is empty", "--save-result"}},
		{"not JSON", FormatVLLM, "duration: 5", []string{"is not JSON"}},
		{"truncated", FormatVLLM, good[:40], []string{"is not JSON", "unexpected EOF"}},
		{"an array", FormatVLLM, "[1, 2]", []string{"the result: is an array, want an object"}},
		{"NaN mean", FormatVLLM, repl(`"mean_ttft_ms": 71.54`, `"mean_ttft_ms": NaN`), []string{"mean_ttft_ms: is NaN", "non-finite"}},
		{"Infinity duration", FormatVLLM, repl(`"duration": 5.78`, `"duration": Infinity`), []string{"duration: is Infinity"}},
		{"negative tokens", FormatVLLM, repl(`"total_output_tokens": 2212`, `"total_output_tokens": -5`), []string{"total_output_tokens: is negative (-5)"}},
		{"huge number", FormatVLLM, repl(`"duration": 5.78`, `"duration": 1e999`), []string{"duration: 1e999 is out of range"}},
		{"fractional count", FormatVLLM, repl(`"completed": 10`, `"completed": 2.5`), []string{"completed: is 2.5, want a whole number"}},
		{"string number", FormatVLLM, repl(`"completed": 10`, `"completed": "10"`), []string{"completed: is a string, want a number"}},
		{"missing fields, all named", FormatVLLM, `{"completed": 1}`, []string{"duration: missing", "total_input_tokens: missing", "output_throughput: missing"}},
		{"zero duration", FormatVLLM, repl(`"duration": 5.78`, `"duration": 0`), []string{"duration: is 0"}},
		{"bad rate", FormatVLLM, repl(`"completed": 10`, `"completed": 10, "request_rate": "fast"`), []string{`request_rate: "fast" is neither a rate nor "inf"`}},
		{"detailed arrays of the wrong length", FormatVLLM, repl(`"completed": 10`, `"completed": 10, "ttfts": [0.1], "itls": [[]], "latencies": [0.2], "output_lens": [3]`),
			[]string{"ttfts: has 1 entries, want one per request sent"}},
		{"ttft after the end", FormatVLLM, repl(`"completed": 10, "failed": 0`, `"completed": 1, "failed": 0, "ttfts": [0.9], "itls": [[]], "latencies": [0.2], "output_lens": [3]`),
			[]string{"ttfts[0]: 0.9 s is after the request's end"}},
		{"a GuideLLM file given as vllm", FormatVLLM, `{"benchmarks": []}`, []string{"duration: missing", "looks like a GuideLLM file: import it with --from guidellm"}},
		{"guidellm without benchmarks", FormatGuideLLM, `{"metadata": {}}`, []string{"benchmarks: missing"}},
		{"guidellm unknown strategy", FormatGuideLLM, `{"benchmarks": [{"duration": 1, "config": {"strategy": {"type_": "warp"}}, "metrics": {}}]}`,
			[]string{`"warp" is not a GuideLLM strategy`, "metrics.request_totals: missing"}},
		{"aiperf bad unit", FormatAIPerf, `{"request_count": {"avg": 2}, "request_latency": {"unit": "fortnights", "avg": 3}, "input_sequence_length": {"avg": 1}, "output_sequence_length": {"avg": 1}, "output_token_throughput": {"avg": 1}, "request_throughput": {"avg": 1}}`,
			[]string{`request_latency.unit: "fortnights" is not a time unit`}},
		{"aiperf two objects", FormatAIPerf, `{} {}`, []string{"holds 2 JSON values"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Import(tc.f, []byte(tc.data), ImportOptions{File: "x.json", Now: importNow})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
	// a file above the size limit is refused before it is parsed
	big := make([]byte, MaxImportBytes+1)
	if _, _, err := Import(FormatVLLM, big, ImportOptions{File: "big.json"}); err == nil || !strings.Contains(err.Error(), "above the 256 MiB") {
		t.Errorf("oversized file: %v", err)
	}
	// NaN inside a string is text, not a number
	if _, _, err := Import(FormatVLLM, []byte(repl(`"completed": 10`, `"completed": 10, "model_id": "NaN-Infinity-model"`)), ImportOptions{Now: importNow}); err != nil {
		t.Errorf("a model named NaN: %v", err)
	}
	// no request completed: nothing to import, said so
	if _, _, err := Import(FormatVLLM, []byte(repl(`"completed": 10`, `"completed": 0`)), ImportOptions{Now: importNow}); err == nil || !strings.Contains(err.Error(), "holds no vllm bench serve result with a request") {
		t.Errorf("no completed request: %v", err)
	}
}

// A GuideLLM stage without streaming (GuideLLM writes zeros for an empty distribution, count 0)
// has no TTFT or ITL: they are left out, not read as 0 ms; the strategy of a report before 0.6
// is read from benchmarks[i].args.strategy.
func TestImportGuideLLMEmptyDistributions(t *testing.T) {
	zero := `{"successful": {"mean": 0, "median": 0, "std_dev": 0, "min": 0, "max": 0, "count": 0, "percentiles": {"p50": 0, "p99": 0}}}`
	some := func(mean float64) string {
		return fmt.Sprintf(`{"successful": {"mean": %g, "std_dev": 0.1, "min": %g, "max": %g, "count": 20, "percentiles": {"p50": %g, "p90": %g}}}`, mean, mean, mean, mean, mean)
	}
	doc := `{"args": {"target": "http://h:8000", "model": "m"}, "benchmarks": [{"duration": 10, "start_time": 1786678148.25, "end_time": 1786678158.25,
		"args": {"strategy": {"type_": "concurrent", "streams": 8}},
		"metrics": {"request_totals": {"successful": 20, "errored": 0, "incomplete": 3, "total": 23},
		"time_to_first_token_ms": ` + zero + `, "inter_token_latency_ms": ` + zero + `, "request_latency": ` + some(0.5) + `,
		"prompt_token_count": ` + some(256) + `, "output_token_count": ` + some(64) + `,
		"output_tokens_per_second": ` + some(128) + `, "requests_per_second": ` + some(2) + `}}]}`
	m, res, err := Import(FormatGuideLLM, []byte(doc), ImportOptions{File: "b.json", Now: importNow})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cells[0]
	if c.LoadMode != servebench.ModeSustained || c.Concurrency != 8 || c.ContextTokens != 256 || c.OutputTokens != 64 {
		t.Errorf("key %+v", c.CellKey)
	}
	if c.TTFTSeconds.Count != 0 || c.ITLSeconds.Count != 0 || c.Unavailable["ttft_seconds"] == "" || c.Unavailable["itl_seconds"] == "" {
		t.Errorf("empty distributions imported as values: ttft %+v itl %+v", c.TTFTSeconds, c.ITLSeconds)
	}
	if c.E2ELatencySeconds.Count != 20 || c.E2ELatencySeconds.P90 == nil || c.E2ELatencySeconds.CI95 == nil {
		t.Errorf("e2e %+v", c.E2ELatencySeconds)
	}
	if m.Imported.Target != "http://h:8000" || !strings.Contains(strings.Join(res.Notes, " "), "3 requests were still running") {
		t.Errorf("target %q notes %q", m.Imported.Target, res.Notes)
	}
}

// FuzzImport: no input makes an importer panic or produce a results.json that cannot be
// written (NaN, Inf).
func FuzzImport(f *testing.F) {
	for _, name := range []string{"vllm_docs_sharegpt.json", "aiperf_streaming_schema_1.1.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "import", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"benchmarks": [{"duration": 1, "metrics": {"request_totals": {"successful": 1, "errored": 0}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fm := range Formats {
			_, res, err := Import(fm, b, ImportOptions{Now: importNow})
			if err != nil {
				continue
			}
			if _, err := json.Marshal(res); err != nil {
				t.Fatalf("%s: results do not encode: %v", fm, err)
			}
		}
	})
}
