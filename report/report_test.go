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
