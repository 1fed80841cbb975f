package exchange

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// Every importer builds a load point's cell the same way (importedCell): keyed like a sweep
// cell by its mean lengths rounded, its counts and rates as the tool gave them, and what no
// import has (throughput intervals, answer tokens told apart from reasoning) said, not zero.
func TestImportedCell(t *testing.T) {
	for _, tc := range []struct {
		name      string
		p         loadPoint
		key       servebench.CellKey
		success   float64
		total     float64
		noTotal   bool // Unavailable says why there is no total throughput
		requestsN int
	}{
		// a fixed-concurrency point with every rate: keyed by its rounded mean lengths
		{"concurrency", loadPoint{mode: servebench.ModeFixed, concurrency: 8, succeeded: 99, failed: 1, inputTokensMean: 1023.6, outputTokensMean: 127.4,
			windowSeconds: 30, outputTPS: 420, totalTPS: 3800, requestRPS: 3.3, hasTotal: true, noInterval: "one rate"},
			servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeFixed, ContextTokens: 1024, OutputTokens: 127, Concurrency: 8},
			0.99, 3800, false, 100},
		// an open-loop point without a total throughput: none is written, the reason is
		{"rate, no total", loadPoint{mode: servebench.ModeRate, ratePerSecond: 2.5, succeeded: 10, inputTokensMean: 200, outputTokensMean: 50,
			windowSeconds: 4, outputTPS: 125, requestRPS: 2.5, totalTPS: 999, noTotal: "not in the file", noInterval: "one rate"},
			servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeRate, ContextTokens: 200, OutputTokens: 50, RatePerSecond: 2.5},
			1, 0, true, 10},
	} {
		unav := map[string]string{"ttft_seconds.p99": "kept"}
		c := importedCell("Tool", tc.p, unav)
		if c.CellKey != tc.key {
			t.Errorf("%s: key %+v, want %+v", tc.name, c.CellKey, tc.key)
		}
		if c.RequestsTotal != tc.requestsN || c.RequestsSucceeded != tc.p.succeeded || c.RequestsFailed != tc.p.failed || c.SuccessRate != tc.success {
			t.Errorf("%s: requests %d (%d ok, %d failed), success %v", tc.name, c.RequestsTotal, c.RequestsSucceeded, c.RequestsFailed, c.SuccessRate)
		}
		if c.TotalThroughputTPS != tc.total || c.SystemOutputThroughputTPS != tc.p.outputTPS || c.RequestThroughputRPS != tc.p.requestRPS || c.WindowSeconds != tc.p.windowSeconds {
			t.Errorf("%s: rates %v / %v / %v over %v s", tc.name, c.SystemOutputThroughputTPS, c.TotalThroughputTPS, c.RequestThroughputRPS, c.WindowSeconds)
		}
		if _, said := c.Unavailable["total_throughput_tps"]; said != tc.noTotal {
			t.Errorf("%s: total throughput reason %q", tc.name, c.Unavailable["total_throughput_tps"])
		}
		for _, k := range []string{"system_output_throughput_tps_ci95", "total_throughput_tps_ci95", "first_content_seconds", "ttft_seconds.p99"} {
			if c.Unavailable[k] == "" {
				t.Errorf("%s: Unavailable[%q] is empty: %v", tc.name, k, c.Unavailable)
			}
		}
	}
}

// An AIPerf file that collected GPU telemetry names the hardware (telemetry_data, gpu_telemetry
// in older files); the run's metadata.gpu carries it, counted per name. A file without
// telemetry, or with a shape servebench does not know, names none and still imports.
func TestImportAIPerfNamesItsGPUs(t *testing.T) {
	base, err := os.ReadFile("testdata/import/aiperf_streaming_schema_1.1.json")
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(name string) map[string]any {
		return map[string]any{"gpu_index": 0, "gpu_name": name, "metrics": map[string]any{}}
	}
	for _, tc := range []struct {
		name string
		key  string
		tel  any
		want string
	}{
		{"none", "", nil, ""},
		{"two H100 on one endpoint", "telemetry_data", map[string]any{"endpoints": map[string]any{"localhost:9400": map[string]any{
			"gpus": map[string]any{"gpu_0": gpu("NVIDIA H100 80GB HBM3"), "gpu_1": gpu("NVIDIA H100 80GB HBM3")}}}}, "2× NVIDIA H100 80GB HBM3"},
		{"older key, two endpoints, two kinds", "gpu_telemetry", map[string]any{"endpoints": map[string]any{
			"a:9400": map[string]any{"gpus": map[string]any{"gpu_0": gpu("NVIDIA H200")}},
			"b:9400": map[string]any{"gpus": map[string]any{"gpu_0": gpu("NVIDIA B200")}}}}, "NVIDIA B200 + NVIDIA H200"},
		{"unknown shape", "telemetry_data", []any{"x"}, ""},
	} {
		var top map[string]any
		if err := json.Unmarshal(base, &top); err != nil {
			t.Fatal(err)
		}
		if tc.key != "" {
			top[tc.key] = tc.tel
		}
		data, _ := json.Marshal(top)
		m, _, err := Import(FormatAIPerf, data, ImportOptions{File: "p.json", Now: time.Unix(0, 0)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.Plan.Metadata.GPU != tc.want {
			t.Errorf("%s: gpu %q, want %q", tc.name, m.Plan.Metadata.GPU, tc.want)
		}
	}
}
