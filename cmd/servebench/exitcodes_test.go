package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// A run that completes but whose measured requests fail above --max-failure-rate exits 4 and
// still writes its folder: every request here times out before its first token.
func TestExitCode4FailureRateAboveLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 1})
		dir := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1", "--output-tokens", "8",
			"--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--ttft-timeout", "1ns",
			"--out", dir, "--quiet", "--index", "none", "--no-report", "--gpu", "none")
		if code != exitFailures {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailures, stderr)
		}
		if !strings.Contains(stderr, "100.0% of measured requests failed") || !strings.Contains(stderr, "--max-failure-rate") {
			t.Errorf("stderr does not state the failure rate and the flag:\n%s", stderr)
		}
		var man servebench.Manifest
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil || json.Unmarshal(b, &man) != nil || man.Status != "completed" {
			t.Errorf("run.json status %q (%v): a run above the failure limit still completed", man.Status, err)
		}
	})
}

// Ctrl-C (a canceled context) during the measurement exits 130, marks the run interrupted and
// says how to resume. The context is canceled by the target itself when the first measured
// request arrives, so the test does not depend on timing.
func TestExitCode130Interrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var once sync.Once
		srv := simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") {
					once.Do(cancel)
				}
				h.ServeHTTP(w, r)
			}
		})
		dir := filepath.Join(t.TempDir(), "run")
		args := []string{"run", "--url", srv.URL + "/v1", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "8",
			"--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none",
			"--out", dir, "--quiet", "--index", "none", "--no-report", "--gpu", "none"}
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, args: append([]string{"servebench"}, args...), dial: simtest.Dial, listen: listenInMemory, eventCapacity: fixedEventCapacity}
		code := execute(ctx, e, args)
		if code != exitInterrupted {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, errb.String())
		}
		if !strings.Contains(errb.String(), "servebench run --resume "+dir) {
			t.Errorf("stderr does not say how to resume:\n%s", errb.String())
		}
		if !strings.Contains(errb.String(), "stopped by Ctrl-C or SIGTERM") || strings.Contains(errb.String(), "context canceled") {
			t.Errorf("stderr does not name the interrupt as the cause (or leaks the context error):\n%s", errb.String())
		}
		var man servebench.Manifest
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil || json.Unmarshal(b, &man) != nil || man.Status != "interrupted" {
			t.Errorf("run.json status %q (%v), want interrupted", man.Status, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
			t.Errorf("an interrupted run keeps its results.json: %v", err)
		}
	})
}

// The first Ctrl-C promises to write what was measured only where it does: run (a worker's
// records are written by its coordinator).
func TestInterruptNote(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		measure bool
	}{
		{[]string{"run", "--out", "x"}, true},
		{[]string{"worker", "--coordinator", "x"}, false},
		{[]string{"sim", "--listen", "127.0.0.1:0"}, false},
		{[]string{"serve"}, false},
		{nil, false},
	} {
		got := strings.Contains(interruptNote(tc.args), "writing what was measured")
		if got != tc.measure {
			t.Errorf("%v: %q", tc.args, interruptNote(tc.args))
		}
	}
}
