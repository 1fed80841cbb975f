package exchange

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/jsonschema"
	"github.com/servebench/servebench/store"
)

// Every measured cell of the report package's sample runs (a sweep with capacity searches, a
// rate sweep, a simulated run, a run whose requests all failed …) exports as a Benchmark
// Report that validates against the v0.2.1 schema, and carries the cell's numbers.
func TestBenchmarkReportsValidate(t *testing.T) {
	schema, err := jsonschema.Load("testdata/br_v0_2_1_json_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("../report/testdata/odd/*")
	dirs = append(dirs, "../report/testdata/run")
	checked := 0
	for _, dir := range dirs {
		m, res, err := store.ReadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		brs := BenchmarkReports(m, res)
		measured := 0
		for _, c := range res.Cells {
			if !c.Skipped && c.RequestsTotal > 0 {
				measured++
			}
		}
		if len(brs) != measured || measured == 0 {
			t.Fatalf("%s: %d reports for %d measured cells", dir, len(brs), measured)
		}
		for _, br := range brs {
			b, err := json.Marshal(br)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := jsonschema.Decode(b, &v); err != nil {
				t.Fatal(err)
			}
			if errs := schema.Validate(v); len(errs) != 0 {
				t.Fatalf("%s %s does not validate:\n%s\n%s", dir, br.Run.UID, strings.Join(errs, "\n"), b)
			}
			checked++
		}
		// the numbers are the cell's own
		i := brs[0].Scenario.Load.Standardized.Stage
		c := res.Cells[i]
		agg := brs[0].Results.RequestPerformance.Aggregate
		if agg.Requests.Total != c.RequestsTotal || agg.Requests.Failures != c.RequestsFailed {
			t.Errorf("%s: requests %+v, cell %d/%d", dir, agg.Requests, c.RequestsTotal, c.RequestsFailed)
		}
		if c.TTFTSeconds.Count > 0 && (agg.Latency.TimeToFirstToken == nil || agg.Latency.TimeToFirstToken.Mean != c.TTFTSeconds.Mean || agg.Latency.TimeToFirstToken.Units != "s") {
			t.Errorf("%s: TTFT %+v, cell mean %v s", dir, agg.Latency.TimeToFirstToken, c.TTFTSeconds.Mean)
		}
		if c.WindowSeconds > 0 && math.Abs(agg.Throughput.OutputTokenRate.Mean-c.SystemOutputThroughputTPS) > 0 {
			t.Errorf("%s: output rate %v, cell %v", dir, agg.Throughput.OutputTokenRate.Mean, c.SystemOutputThroughputTPS)
		}
		if brs[0].Run.EID != m.ID || !strings.HasPrefix(brs[0].Run.UID, m.ID) {
			t.Errorf("%s: run ids %+v", dir, brs[0].Run)
		}
	}
	t.Logf("%d reports from %d runs validated", checked, len(dirs))
}

// A field the schema does not know (here a misspelt one) fails validation: the export test
// would catch a mapping that strays from the schema.
func TestBenchmarkReportStrayFieldFails(t *testing.T) {
	schema, err := jsonschema.Load("testdata/br_v0_2_1_json_schema.json")
	if err != nil {
		t.Fatal(err)
	}
	m := servebench.Manifest{ID: "r1"}
	c := servebench.CellResult{RequestsTotal: 2, RequestsSucceeded: 2, WindowSeconds: 1}
	b, _ := json.Marshal(BenchmarkReports(m, servebench.Results{Cells: []servebench.CellResult{c}})[0])
	b = []byte(strings.Replace(string(b), `"time_to_first_token"`, `"time_to_first_tokens"`, 1))
	b = []byte(strings.Replace(string(b), `"output_token_rate"`, `"output_tokens_rate"`, 1))
	var v any
	if err := jsonschema.Decode(b, &v); err != nil {
		t.Fatal(err)
	}
	if errs := strings.Join(schema.Validate(v), "\n"); !strings.Contains(errs, `"output_tokens_rate" is not allowed`) {
		t.Fatalf("a stray field passed: %q", errs)
	}
}

func TestGPUCount(t *testing.T) {
	for in, want := range map[string]struct {
		n    int
		name string
	}{
		"1x H200 SXM": {1, "H200 SXM"},
		"8x H100":     {8, "H100"},
		"2 × B200":    {2, "B200"},
		"H100 PCIe":   {1, "H100 PCIe"},
		"0x H100":     {1, "0x H100"},
	} {
		if n, name := gpuCount(in); n != want.n || name != want.name {
			t.Errorf("gpuCount(%q) = %d %q, want %d %q", in, n, name, want.n, want.name)
		}
	}
}
