package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/store"
)

// A small simulated run, then: report --recompute over a requests.jsonl with unreadable lines,
// or one from another file, says so and leaves results.json as it was (exit non-zero) unless
// --force; and a run folder held by another process (its lock) is refused by --resume and by
// --recompute with a message that says why.
func TestRecomputeAndResumeGuardTheFolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 5})
		dir := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "16",
			"--use-cases", "none", "--scenarios", "none", "--min-requests", "4", "--rounds", "1", "--max-duration", "1s",
			"--out", dir, "--quiet", "--index", "none", "--no-report")
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		resultsPath, recsPath := filepath.Join(dir, store.ResultsFile), filepath.Join(dir, store.RecordsFile)
		orig, err := os.ReadFile(resultsPath)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := os.ReadFile(recsPath)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(recs, []byte("\n"))
		// every third record line made unreadable
		var torn []byte
		bad := 0
		for i, l := range lines {
			if i%3 == 1 && len(l) > 1 {
				torn = append(torn, []byte("{\"seq\": garbage\n")...)
				bad++
				continue
			}
			torn = append(torn, l...)
		}
		for _, tc := range []struct {
			name, file string
			body       []byte
			unreadable string
		}{
			{"unreadable lines", recsPath, torn, "lines hold no readable record"},
			{"an unrelated file", recsPath, []byte("{\"name\": \"x\"}\n{\"name\": \"y\"}\n"), "2 of 2 lines hold no readable record"},
		} {
			if err := os.WriteFile(tc.file, tc.body, 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(t, "report", "--recompute", dir, "--format", "md")
			if code == exitOK || !strings.Contains(stderr, tc.unreadable) || !strings.Contains(stderr, "results.json is left as it was") || !strings.Contains(stderr, "--force") {
				t.Errorf("%s: report --recompute exit %d:\n%s", tc.name, code, stderr)
			}
			if now, _ := os.ReadFile(resultsPath); !bytes.Equal(now, orig) {
				t.Errorf("%s: results.json was replaced", tc.name)
			}
		}
		// told to, it replaces them
		if err := os.WriteFile(recsPath, torn, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "report", "--recompute", "--force", dir, "--format", "md"); code != exitOK {
			t.Errorf("report --recompute --force: exit %d\n%s", code, stderr)
		}
		if now, _ := os.ReadFile(resultsPath); bytes.Equal(now, orig) {
			t.Errorf("--force did not replace results.json")
		}

		// another process writes the folder: resume and recompute refuse, saying why
		lk, err := store.Lock(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"run", "--resume", dir, "--quiet", "--index", "none", "--no-report"}, {"report", "--recompute", dir}} {
			code, _, stderr := runCLI(t, args...)
			if code == exitOK || !strings.Contains(stderr, "is being written by another servebench process") {
				t.Errorf("%s while the folder is locked: exit %d\n%s", strings.Join(args[:2], " "), code, stderr)
			}
		}
		if err := lk.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Lock(dir); err != nil {
			t.Errorf("after release: %v", err)
		}
	})
}
