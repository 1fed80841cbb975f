package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	servebench "github.com/servebench/servebench"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// loadFixture reads the recorded run in testdata/run (written by testdata/fixturegen).
func loadFixture(t testing.TB) Input { return loadRun(t, filepath.Join("testdata", "run")) }

// loadRun reads run.json, results.json and telemetry.jsonl of a run folder.
func loadRun(t testing.TB, dir string) Input {
	t.Helper()
	var in Input
	for name, v := range map[string]any{"run.json": &in.Manifest, "results.json": &in.Results} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	in.Results.FillKinds() // as store.ReadRun does: the recorded runs predate cells' kinds
	f, err := os.Open(filepath.Join(dir, "telemetry.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s servebench.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		in.Samples = append(in.Samples, s)
	}
	return in
}

// golden compares got with testdata/golden/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test ./report -update if the change is intended)", name, i+1, g, w)
			}
		}
	}
}

func TestGoldenMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, Build(loadFixture(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md", buf.Bytes())
}

func TestGoldenTerminal(t *testing.T) {
	var buf bytes.Buffer
	if err := Terminal(&buf, Build(loadFixture(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "terminal.txt", buf.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, Build(loadFixture(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", buf.Bytes())
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("report.json does not decode into Report: %v", err)
	}
}

// TTFT that falls as concurrency rises is called out in the TTFT section, saying whether the
// fall is more than the noise (the difference's 95% interval excludes 0) or within it.
func TestTTFTFallsCalledOut(t *testing.T) {
	cell := func(ctx, n int, mean, half float64) servebench.CellResult {
		return servebench.CellResult{CellKey: servebench.CellKey{Scenario: servebench.SweepScenario, Kind: servebench.KindSweep, LoadMode: servebench.ModeSustained, ContextTokens: ctx, OutputTokens: 1024, Concurrency: n},
			RequestsTotal: 40, RequestsSucceeded: 40, SuccessRate: 1,
			TTFTSeconds: servebench.Summary{Count: 40, Mean: mean, CI95: &servebench.Interval{Low: mean - half, High: mean + half}}}
	}
	g := gridOf([]servebench.CellResult{
		cell(8192, 8, 4.63, 0.1), cell(8192, 16, 4.17, 0.1), // falls by 0.46 s, intervals ±0.1: real
		cell(1024, 1, 0.20, 0.05), cell(1024, 2, 0.19, 0.05), // falls by 10 ms within ±50 ms: noise
		cell(32768, 1, 2, 0.1), cell(32768, 2, 3, 0.1), // rises: nothing to say
	})
	got := ttftFalls(g)
	for _, want := range []string{"460ms at 8K context (4.6s at 8, 4.2s at 16)", "more than the noise", "10ms at 1K context", "within the noise"} {
		if !strings.Contains(got, want) {
			t.Errorf("the call-out lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "32K") {
		t.Errorf("a rising TTFT is called out: %s", got)
	}
	if s := ttftFalls(gridOf([]servebench.CellResult{cell(1024, 1, 0.1, 0.01), cell(1024, 2, 0.2, 0.01)})); s != "" {
		t.Errorf("monotonic TTFT called out: %s", s)
	}
}

// gridOf indexes every cell given, as the report's sweep grid does.
func gridOf(cells []servebench.CellResult) grid {
	return newGrid(cells, func(*servebench.CellResult) bool { return true })
}
