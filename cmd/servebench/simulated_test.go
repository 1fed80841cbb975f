package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// A run by URL against `servebench sim`, whose plan declares real hardware and engine, is
// SIMULATED in run.json, the terminal, report.md and report.html: the simulator says what it is
// on the wire, and that wins over the plan.
func TestRunAgainstSimByURLIsSimulatedWhateverThePlanDeclares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{})
		tmp := t.TempDir()
		planPath := filepath.Join(tmp, "plan.yaml")
		plan := "metadata: {gpu: 1x H100 SXM, engine: vLLM}\n"
		if err := os.WriteFile(planPath, []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, "run")
		code, stdout, stderr := runCLI(t, "run", "--config", planPath, "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1",
			"--output-tokens", "16", "--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none",
			"--out", dir, "--quiet", "--index", "none", "--gpu", "none")
		if code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
		}
		var man servebench.Manifest
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if !man.Simulated || man.Server.Engine != "sim" {
			t.Errorf("run.json: simulated %v, engine %q; want true, sim", man.Simulated, man.Server.Engine)
		}
		if !strings.Contains(stderr, "SIMULATED") {
			t.Errorf("the terminal does not say SIMULATED:\n%s", stderr)
		}
		if !strings.Contains(stdout, "[SIMULATED]") {
			t.Errorf("the summary does not say SIMULATED:\n%s", stdout)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
		first := strings.SplitN(string(md), "\n", 4)
		if !strings.Contains(first[0], "SIMULATED") || !strings.Contains(first[2], "SIMULATED") {
			t.Errorf("report.md title and subtitle must say SIMULATED:\n%s", strings.Join(first[:3], "\n"))
		}
		if strings.Contains(first[2], "Performance analysis on 1x H100 SXM, served by vLLM") {
			t.Errorf("report.md headlines the declared hardware as measured:\n%s", first[2])
		}
		html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
		if !strings.Contains(string(html), `class="banner"`) || !strings.Contains(string(html), "SIMULATED on servebench") {
			t.Error("report.html has no SIMULATED banner and subtitle")
		}

		// the flat exports of the same run: one row per cell and one per record
		code, _, stderr = runCLI(t, "report", dir, "--format", "csv")
		if code != 0 {
			t.Fatalf("report --format csv: exit %d\n%s", code, stderr)
		}
		recs := readRecords(t, filepath.Join(dir, "requests.jsonl"))
		var res servebench.Results
		b, _ = os.ReadFile(filepath.Join(dir, "results.json"))
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]int{"cells.csv": len(res.Cells), "requests.csv": len(recs)} {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil || len(rows)-1 != want || want == 0 {
				t.Errorf("%s: %d data rows (%v), want %d", name, len(rows)-1, err, want)
			}
		}
	})
}

// Two runs named with --label A and --label B (and their GPU and price from flags) are A and B in
// compare, marked SIMULATED; --metadata sets plan metadata keys and refuses unknown ones; the
// GPU count of --metadata gpu sizes the replicas and --gpu-price prices them.
func TestLabelsMetadataAndGPUPriceFromFlags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{})
		tmp := t.TempDir()
		common := []string{"run", "--url", base + "/v1", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "16",
			"--min-requests", "2", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "code_completion", "--capacity-max", "2", "--scenarios", "none",
			"--quiet", "--index", "none", "--gpu", "none", "--format", "md"}
		for _, l := range []string{"A", "B"} {
			args := append(append([]string(nil), common...), "--label", l, "--metadata", "gpu=2x H100 SXM", "--metadata", "engine=vLLM",
				"--gpu-price", "2.5", "--out", filepath.Join(tmp, l))
			if code, _, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("run %s: exit %d\n%s", l, code, stderr)
			}
		}
		var man servebench.Manifest
		b, _ := os.ReadFile(filepath.Join(tmp, "A", "run.json"))
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if md := man.Plan.Metadata; md.Label != "A" || md.GPU != "2x H100 SXM" || md.Engine != "vLLM" || man.Plan.Sizing.GPUUSDPerHour != 2.5 {
			t.Errorf("plan from flags: metadata %+v, sizing %+v", md, man.Plan.Sizing)
		}
		var res servebench.Results
		b, _ = os.ReadFile(filepath.Join(tmp, "A", "results.json"))
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if res.Sizing == nil || res.Sizing.GPUsPerReplica != 2 || res.Sizing.GPUUSDPerHour != 2.5 {
			t.Errorf("sizing %+v, want 2 GPUs per replica from the declared GPU at $2.5", res.Sizing)
		}
		code, stdout, stderr := runCLI(t, "compare", filepath.Join(tmp, "A"), filepath.Join(tmp, "B"), "--out", filepath.Join(tmp, "cmp.html"))
		if code != 0 {
			t.Fatalf("compare: exit %d\n%s", code, stderr)
		}
		md, _ := os.ReadFile(filepath.Join(tmp, "cmp.md"))
		for _, want := range []string{"| A |", "| B |", "SIMULATED"} {
			if !strings.Contains(string(md)+stdout, want) {
				t.Errorf("compare lacks %q:\n%s", want, md)
			}
		}
		if strings.Contains(string(md), "(2)") {
			t.Errorf("labelled runs must not be numbered apart:\n%s", md)
		}
		code, _, stderr = runCLI(t, "run", "--metadata", "colour=blue", "--out", filepath.Join(tmp, "bad"), "--index", "none")
		if code != exitUsage || !strings.Contains(stderr, `"colour" is not a metadata key`) {
			t.Errorf("unknown metadata key: exit %d\n%s", code, stderr)
		}
	})
}
