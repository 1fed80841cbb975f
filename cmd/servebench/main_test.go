package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// runCLI runs the command with args as its own process would, with no environment variables.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv runs the command with args and the environment variables vars. Its connections go
// through simtest.Dial: to the test's in-memory simulators by address, over TCP to any other;
// the built-in simulator listens in memory. Inside a synctest bubble, a run takes virtual time.
func runCLIEnv(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }, args: append([]string{"servebench"}, args...),
		dial: simtest.Dial, listen: listenInMemory, eventCapacity: fixedEventCapacity}
	code = execute(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func listenInMemory() (net.Listener, error) { return simtest.Listen(), nil }

// fixedEventCapacity stands for selfcheck.Carry, which measures this machine over loopback TCP
// (impossible inside a synctest bubble): a figure of a typical machine.
func fixedEventCapacity(context.Context) (float64, error) { return 50000, nil }

func readRecords(t *testing.T, path string) []servebench.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []servebench.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r servebench.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// The simulator served over real HTTP, measured by the CLI in both API flavours: every request
// succeeds, the server counts exactly the requested prompt tokens, and the run folder is complete.
// On virtual time: the simulator in memory, the whole command in a synctest bubble.
func TestRunAgainstSimulatorOverHTTP(t *testing.T) {
	for _, api := range []string{"openai-chat", "openai-completions"} {
		t.Run(api, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := startSimWith(t, sim.Options{})
				dir := filepath.Join(t.TempDir(), "run")
				code, stdout, stderr := runCLI(t, "run", "--url", base+"/v1", "--api", api, "--contexts", "1k,4k", "--concurrency", "1,4",
					"--output-tokens", "64", "--min-requests", "4", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "none", "--out", dir, "--quiet",
					"--index", "none", "--metrics-url", base+"/metrics", "--gpu", "dcgm="+base+"/dcgm/metrics")
				if code != 0 {
					t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
				}
				for _, f := range []string{"run.json", "requests.jsonl", "results.json", "report.html", "report.md"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
						t.Errorf("missing %s", f)
					}
				}
				var res servebench.Results
				b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
				if err := json.Unmarshal(b, &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Cells) != 4 {
					t.Fatalf("want 2 contexts × 2 concurrency cells, got %d", len(res.Cells))
				}
				for _, c := range res.Cells {
					if c.SuccessRate != 1 || c.RequestsTotal == 0 {
						t.Errorf("cell %s: success %.2f of %d", c.ID(), c.SuccessRate, c.RequestsTotal)
					}
					if c.QueueWaitSeconds == nil || c.PrefillSeconds == nil || c.GPUPowerWatts == nil || c.EnergyJoules == nil {
						t.Errorf("cell %s: server/power fields missing: %v", c.ID(), c.Unavailable)
					}
				}
				recs := readRecords(t, filepath.Join(dir, "requests.jsonl"))
				if len(recs) == 0 {
					t.Fatal("no records")
				}
				for _, r := range recs {
					if !r.OK() {
						t.Errorf("seq %d failed: %s %s", r.Seq, r.ErrorClass, r.Error)
						continue
					}
					if r.InputTokens != r.ContextTokens || r.InputTokensSource != servebench.SourceUsage {
						t.Errorf("seq %d: server counted %d prompt tokens (%s), requested %d", r.Seq, r.InputTokens, r.InputTokensSource, r.ContextTokens)
					}
					if r.OutputTokens != 64 || r.OutputTokensSource != servebench.SourceUsage {
						t.Errorf("seq %d: %d output tokens from %s", r.Seq, r.OutputTokens, r.OutputTokensSource)
					}
				}
				if !strings.Contains(stdout, "TTFT") {
					t.Errorf("no summary table on stdout:\n%s", stdout)
				}
			})
		})
	}
}

func TestBadInputExitsWithUsageAndNamesEveryProblem(t *testing.T) {
	code, _, stderr := runCLI(t, "run", "--concurrency", "0", "--mode", "burst", "--contexts", "1q", "--index", "none")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{"--concurrency", "sweep.mode", "--contexts"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = runCLI(t, "run", "--no-such-flag")
	if code != exitUsage || !strings.Contains(stderr, "--help") {
		t.Errorf("unknown flag: exit %d, stderr %q", code, stderr)
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte("sweep:\n  contextz: [1k]\n"), 0o644)
	code, _, stderr = runCLI(t, "run", "--config", plan, "--index", "none")
	if code != exitUsage || !strings.Contains(stderr, "contextz") {
		t.Errorf("unknown plan key: exit %d, stderr %q", code, stderr)
	}
}

func TestUnreachableTarget(t *testing.T) {
	code, _, stderr := runCLI(t, "run", "--url", "http://127.0.0.1:1/v1", "--out", filepath.Join(t.TempDir(), "r"), "--index", "none", "--quiet")
	if code != exitUnreachable {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUnreachable, stderr)
	}
}
