package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/sim"
)

// servebench run against the simulator over HTTP (sweep, a dedicated scenario, a capacity
// search, server metrics and simulated GPU telemetry), then results.json removed and
// servebench report --recompute: the rebuilt results.json has the run's cells, capacity,
// sizing, notes and run, and the report rendered from it (report.md, report.json and the
// summary) words each capacity limit as capacity does.
func TestReportRecomputeRebuildsResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 3})
		dir := filepath.Join(t.TempDir(), "run")
		cfg := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(cfg, []byte(`
sweep:
  contexts: [1k, 2k]
  concurrency: [1, 2]
  output_tokens: 16
  min_requests: 4
  rounds: 1
  max_requests: 24
  max_duration: 1s
scenarios:
  - name: burst
    title: Burst
    context: 1k
    output_tokens: 16
    concurrency: [2]
use_cases:
  - name: chat
    title: Chat
    context: 1k
    output_tokens: 16
    thresholds:
      ttft_seconds_max: 0.5
      generation_speed_tps_min: 5000
  - name: loose
    title: Loose
    context: 1k
    output_tokens: 16
    thresholds:
      ttft_seconds_max: 100
  - name: impossible
    title: Impossible
    context: 1k
    output_tokens: 16
    thresholds:
      ttft_seconds_max: 0.000001
capacity:
  max_concurrency: 6
`), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "run", "--config", cfg, "--url", base+"/v1", "--gpu", "dcgm="+base+"/dcgm/metrics",
			"--out", dir, "--quiet", "--index", "none", "--no-report")
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		read := func() servebench.Results {
			var res servebench.Results
			b, err := os.ReadFile(filepath.Join(dir, "results.json"))
			if err != nil || json.Unmarshal(b, &res) != nil {
				t.Fatalf("results.json: %v", err)
			}
			return res
		}
		orig := read()
		if len(orig.Capacity) != 3 || len(orig.Capacity[0].Points) == 0 || len(orig.Cells) < 5 {
			t.Fatalf("the test needs sweep, scenario and capacity cells: %d cells, capacity %+v", len(orig.Cells), orig.Capacity)
		}
		if orig.Cells[0].GPUPowerWatts == nil || orig.Cells[0].QueueWaitSeconds == nil {
			t.Fatalf("the test needs server and GPU telemetry: %v", orig.Cells[0].Unavailable)
		}
		if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, "report", dir, "--recompute", "--format", "md,json")
		if code != exitOK {
			t.Fatalf("report --recompute: exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "recomputed "+filepath.Join(dir, "results.json")) {
			t.Errorf("stderr does not say what was recomputed:\n%s", stderr)
		}
		got := read()
		for _, part := range []struct {
			name      string
			got, want any
		}{{"cells", got.Cells, orig.Cells}, {"capacity", got.Capacity, orig.Capacity}, {"sizing", got.Sizing, orig.Sizing}, {"notes", got.Notes, orig.Notes}, {"run", got.Run, orig.Run}} {
			g, _ := json.Marshal(part.got)
			w, _ := json.Marshal(part.want)
			if string(g) != string(w) {
				t.Errorf("recomputed %s differ from the run's:\n%s\nwant\n%s", part.name, g, w)
			}
		}
		md, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		// the report's verdicts are capacity's, label for label, in results.json's order
		var rep report.Report
		if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("report.json: %v", err)
		}
		kinds := map[servebench.LimitKind]bool{}
		if len(rep.Capacity) != len(got.Capacity) {
			t.Fatalf("the report has %d verdicts, results.json %d capacity results", len(rep.Capacity), len(got.Capacity))
		}
		for i, cr := range got.Capacity {
			v := rep.Capacity[i]
			kinds[cr.LimitKind] = true
			if v.UseCase != cr.UseCase || v.LimitLabel != capacity.LimitLabel(cr) || v.LimitPhrase != capacity.LimitPhrase(cr) ||
				v.LimitKind != string(cr.LimitKind) || v.Sentence != capacity.Verdict(cr) {
				t.Errorf("the report's verdict %+v is not capacity's for %s (label %q, kind %q)", v, cr.UseCase, capacity.LimitLabel(cr), cr.LimitKind)
			}
		}
		if !kinds[servebench.LimitNotViable] || !kinds[servebench.LimitLowerBound] {
			t.Errorf("limit kinds %v: the test wants a use case not viable and one bounded by the ceiling", kinds)
		}
		for _, cr := range got.Capacity {
			if h := capacity.Headline(cr); !strings.Contains(string(md), h) {
				t.Errorf("report.md lacks %q, capacity's headline for %s", h, cr.UseCase)
			}
			if l := capacity.LimitLabel(cr); !strings.Contains(stdout, l) {
				t.Errorf("the summary lacks the limit %q of %s:\n%s", l, cr.UseCase, stdout)
			}
		}

		// a folder without cells.jsonl (recorded before it was kept) is refused, naming the file
		if err := os.Remove(filepath.Join(dir, "cells.jsonl")); err != nil {
			t.Fatal(err)
		}
		code, _, stderr = runCLI(t, "report", dir, "--recompute")
		if code != exitUsage || !strings.Contains(stderr, "cells.jsonl") {
			t.Errorf("exit %d, stderr %s: want a usage error naming cells.jsonl", code, stderr)
		}
	})
}
