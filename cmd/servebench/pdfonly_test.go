package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/sim"
)

// report --format pdf writes report.pdf and nothing else: the run folder's other files, the
// HTML report included, keep their bytes and times (it used to write report.html first and print
// that). Needs headless Chromium; skipped without it.
func TestReportPDFTouchesNothingElse(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("no chromium on PATH")
	}
	dir := filepath.Join(t.TempDir(), "run")
	synctest.Test(t, func(t *testing.T) { // the run on virtual time; the browser outside
		base := startSimWith(t, sim.Options{Seed: 1})
		if code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1", "--output-tokens", "8",
			"--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none",
			"--out", dir, "--quiet", "--index", "none", "--gpu", "none"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	type stamp struct {
		size int64
		mod  time.Time
	}
	snapshot := func() map[string]stamp {
		out := map[string]stamp{}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = stamp{fi.Size(), fi.ModTime()}
		}
		return out
	}
	before := snapshot()
	if _, ok := before["report.html"]; !ok {
		t.Fatal("the run wrote no report.html")
	}
	time.Sleep(10 * time.Millisecond) // a rewrite would get a later modification time
	if code, _, stderr := runCLI(t, "report", dir, "--format", "pdf"); code != 0 {
		t.Fatalf("report --format pdf: exit %d\n%s", code, stderr)
	}
	after := snapshot()
	if _, ok := after["report.pdf"]; !ok {
		t.Fatal("no report.pdf")
	}
	delete(after, "report.pdf")
	for name, s := range after {
		if b, ok := before[name]; !ok || b != s {
			t.Errorf("%s was written by report --format pdf (before %+v, after %+v)", name, b, s)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok && name != "report.pdf" {
			t.Errorf("%s disappeared", name)
		}
	}
}
