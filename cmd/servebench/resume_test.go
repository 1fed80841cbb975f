package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
)

// An interrupted run (here: its results lack the last cell) is resumed: only the missing cell
// is measured, the finished one is kept as it was, and earlier records stay in requests.jsonl.
func TestResumeMeasuresOnlyMissingCells(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		args := []string{"run", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "16", "--min-requests", "2", "--rounds", "1",
			"--use-cases", "none", "--scenarios", "none", "--out", dir, "--quiet", "--index", "none", "--no-report"}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		resPath := filepath.Join(dir, "results.json")
		var res servebench.Results
		b, _ := os.ReadFile(resPath)
		if err := json.Unmarshal(b, &res); err != nil || len(res.Cells) != 2 {
			t.Fatalf("results: %v, %d cells", err, len(res.Cells))
		}
		kept := res.Cells[0]
		res.Cells = res.Cells[:1] // as if the run had been stopped during its second cell
		b, _ = json.Marshal(res)
		os.WriteFile(resPath, b, 0o644)
		before := len(readRecords(t, filepath.Join(dir, "requests.jsonl")))

		code, _, stderr := runCLI(t, "run", "--resume", dir, "--quiet", "--index", "none", "--no-report")
		if code != 0 {
			t.Fatalf("resume: exit %d\n%s", code, stderr)
		}
		b, _ = os.ReadFile(resPath)
		res = servebench.Results{}
		json.Unmarshal(b, &res)
		if len(res.Cells) != 2 {
			t.Fatalf("after resume: %d cells", len(res.Cells))
		}
		if res.Cells[0].CellKey != kept.CellKey || res.Cells[0].WindowStartSeconds != kept.WindowStartSeconds {
			t.Fatalf("the finished cell was re-measured: %+v", res.Cells[0].CellKey)
		}
		recs := readRecords(t, filepath.Join(dir, "requests.jsonl"))
		added := len(recs) - before
		for _, r := range recs[before:] {
			if r.Concurrency != 2 {
				t.Fatalf("resume sent a request for %s: only the missing cell (concurrency 2) may be measured", r.ID())
			}
		}
		if added < 2+2*2 { // concurrency 2: warm-up 2 + at least 2 × 2 measured (the window rule)
			t.Fatalf("resume sent %d requests, want at least 6 for the missing cell", added)
		}
		seqs := map[int64]bool{}
		for _, r := range recs {
			if seqs[r.Seq] {
				t.Fatalf("sequence number %d used twice across the resume", r.Seq)
			}
			seqs[r.Seq] = true
		}
		if code, _, _ := runCLI(t, "run", "--resume", dir, "--out", dir); code != exitUsage {
			t.Errorf("--resume with --out: exit %d, want %d", code, exitUsage)
		}
		// Plan flags would silently be ignored: they are refused, each named.
		code, _, stderr = runCLI(t, "run", "--resume", dir, "--rounds", "3", "--contexts", "8k", "--index", "none")
		if code != exitUsage || !strings.Contains(stderr, "--contexts, --rounds") {
			t.Errorf("--resume with plan flags: exit %d, want %d naming both flags; stderr:\n%s", code, exitUsage, stderr)
		}
	})
}
