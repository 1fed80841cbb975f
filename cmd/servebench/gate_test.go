package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// startSimProfile serves the simulator with profile p in memory for the test.
func startSimProfile(t *testing.T, p sim.Profile) string {
	t.Helper()
	return simtest.StartInMemory(t, simtest.Config{Profile: p}).URL
}

// The gate passes a repeat of the baseline against the same server and fails (exit 5, the
// table showing which metrics and by how much) a run against a slowed-down server; the
// baseline is found by its label in the runs index.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := sim.FastProfile
		slow.Name = "fast-slowed"
		slow.Engine.BandwidthEfficiency /= 4 // decode steps 4× longer
		slow.Engine.ComputeEfficiency /= 4   // prefill 4× longer
		slow.Engine.PrefillOverhead *= 4
		fast := startSimProfile(t, sim.FastProfile)
		slowed := startSimProfile(t, slow)
		tmp := t.TempDir()
		index := filepath.Join(tmp, "runs.db")
		run := func(name, url, label string, more ...string) string {
			dir := filepath.Join(tmp, name)
			minReq, maxReq := "10", "48"
			if len(more) == 2 {
				minReq, maxReq = more[0], more[1]
			}
			args := []string{"run", "--url", url + "/v1", "--contexts", "1k", "--concurrency", "1,4", "--output-tokens", "128",
				"--min-requests", minReq, "--rounds", "1", "--max-requests", maxReq, "--max-duration", "2s", "--use-cases", "none",
				"--scenarios", "none", "--quiet", "--gpu", "none", "--format", "md", "--index", index, "--out", dir}
			if label != "" {
				args = append(args, "--label", label)
			}
			if code, _, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("run %s: exit %d\n%s", name, code, stderr)
			}
			return dir
		}
		run("base", fast, "nightly")
		repeat := run("repeat", fast, "")
		slower := run("slower", slowed, "")
		few := run("few", fast, "", "3", "3") // 3 requests at c=1, under 10 at c=4 (the window rule's 2 × 4 and more)

		// Wide thresholds: this machine's load moves a simulated run's timings by tens of percent,
		// the slowed server by 75%.
		th := []string{"--throughput", "40%", "--ttft", "100%", "--speed", "40%", "--index", index}
		code, stdout, stderr := runCLI(t, append([]string{"gate", "nightly", repeat}, th...)...)
		if code != 0 || !strings.Contains(stdout, "gate passed") || !strings.Contains(stdout, `the latest run labelled "nightly"`) {
			t.Fatalf("a repeat of the baseline: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr = runCLI(t, append([]string{"gate", "nightly", slower}, th...)...)
		if code != exitRegression || !strings.Contains(stderr, "gate failed") {
			t.Fatalf("against the slowed server: exit %d, want %d\n%s\n%s", code, exitRegression, stdout, stderr)
		}
		for _, want := range []string{"throughput  sweep: 1K in / 128 out, c=4", "speed", "WORSE"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the table does not show %q:\n%s", want, stdout)
			}
		}
		t.Logf("gate against the slowed server:\n%s", stdout)

		// a candidate of fewer requests than an interval needs is neither passed nor failed:
		// exit 6, every gated row "too few samples" with both counts, and what to do
		code, stdout, stderr = runCLI(t, append([]string{"gate", "nightly", few}, th...)...)
		if code != exitUndecided || !strings.Contains(stderr, "gate undecided") || !strings.Contains(stderr, "--min-requests 10") {
			t.Fatalf("against a run of 3 and 8 requests: exit %d, want %d\n%s\n%s", code, exitUndecided, stdout, stderr)
		}
		for _, want := range []string{"too few samples to judge (10 and 3 requests; an interval needs 10)", "n<10"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the table does not show %q:\n%s", want, stdout)
			}
		}
		// Every c=1 row (3 requests) is too few; the c=4 cell holds however many its window
		// rule took (at least 2 × 4, more on a slow machine), so its rows are too few below 10
		// requests and judged from 10: never a verdict it cannot have.
		few1 := 0
		for _, line := range strings.Split(stdout, "\n") {
			switch {
			case strings.Contains(line, "c=1") && strings.Contains(line, "too few samples to judge"):
				few1++
			case strings.Contains(line, "c=1"):
				t.Errorf("a c=1 row of 3 requests is judged: %q", line)
			case strings.Contains(line, "c=4") && !strings.Contains(line, "too few samples to judge") && !strings.HasSuffix(strings.TrimSpace(line), " ok"):
				t.Errorf("a c=4 row of a repeat of the baseline's server is neither too few nor ok: %q", line)
			}
		}
		if few1 != 3 || strings.Contains(stdout, "gate passed") {
			t.Errorf("%d of the 3 c=1 rows read too few samples:\n%s", few1, stdout)
		}
		t.Logf("gate against a run of too few requests:\n%s", stdout)

		// bad thresholds and names are usage errors, each named
		code, _, stderr = runCLI(t, "gate", "nightly", slower, "--ttft", "fast", "--speed", "-3%", "--index", index)
		if code != exitUsage || !strings.Contains(stderr, `--ttft "fast"`) || !strings.Contains(stderr, `--speed "-3%"`) {
			t.Errorf("bad thresholds: exit %d %q", code, stderr)
		}
		code, _, stderr = runCLI(t, "gate", "no-such-label", slower, "--index", index)
		if code != exitUsage || !strings.Contains(stderr, "nor a run id or label") {
			t.Errorf("unknown baseline: exit %d %q", code, stderr)
		}
	})
}
