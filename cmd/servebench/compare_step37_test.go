package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/frontier"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/sim/validation"
)

// step37Plan is the example plan of the vLLM post's hardware comparison.
const step37Plan = "../../examples/hardware-comparison-step37.yaml"

// step37Machines are the post's three machines: the compare label, the simulator profile and
// the reference configuration of sim/validation/reference.csv.
var step37Machines = []struct{ label, profile, config string }{
	{"B200", "4xb200-step37-flash-mtp", "step37-flash-bf16-mtp-4xb200"},
	{"H100", "8xh100-step37-flash-mtp", "step37-flash-bf16-mtp-8xh100"},
	{"A100", "8xa100-step37-flash-mtp", "step37-flash-bf16-mtp-8xa100"},
}

// runStep37 runs the example plan against the built-in simulator's profile on virtual time,
// with more flags after it, into dir, and returns the run's manifest and results.
func runStep37(t *testing.T, profile, label, dir string, more ...string) (servebench.Manifest, servebench.Results) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		args := append([]string{"run", "--config", step37Plan, "--sim-profile", profile, "--label", label,
			"--use-cases", "none", "--scenarios", "none", "--quiet", "--index", "none", "--gpu", "none", "--format", "md", "--out", dir}, more...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", label, code, stderr)
		}
	})
	var man servebench.Manifest
	var res servebench.Results
	for name, v := range map[string]any{"run.json": &man, "results.json": &res} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	return man, res
}

// step37Runs is one run of the example plan per machine of the post.
type step37Runs struct {
	dirs []string
	man  []servebench.Manifest
	res  []servebench.Results
}

// runStep37All runs the example plan, with more flags, once per machine of the post (each
// labelled with its machine and suffix) into folders under tmp, the three at once.
func runStep37All(t *testing.T, tmp, suffix string, more ...string) step37Runs {
	t.Helper()
	n := len(step37Machines)
	r := step37Runs{dirs: make([]string, n), man: make([]servebench.Manifest, n), res: make([]servebench.Results, n)}
	t.Run("runs", func(t *testing.T) {
		for i, m := range step37Machines {
			t.Run(m.label, func(t *testing.T) {
				t.Parallel()
				r.dirs[i] = filepath.Join(tmp, m.label)
				r.man[i], r.res[i] = runStep37(t, m.profile, m.label+suffix, r.dirs[i], more...)
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return r
}

// step37Figure reads the published metric m of the post from a cell measured the post's way,
// and from the simulator's own estimate of that workload. vLLM's names and servebench's differ:
// vLLM's TPOT is servebench's ITL (decode time ÷ (output tokens − 1)), and vLLM's ITL is the
// gap between stream events, each carrying several tokens with MTP (servebench's chunk gap).
func step37Figure(m string, c servebench.CellResult, e sim.Estimate) (run, simulated float64, ok bool) {
	switch m {
	case "system_tps":
		return c.SystemOutputThroughputTPS, e.SystemOutputTPS, true
	case "total_tps":
		return c.TotalThroughputTPS, e.SystemOutputTPS * float64(c.ContextTokens+c.OutputTokens) / float64(c.OutputTokens), true
	case "gen_tps":
		return c.GenerationSpeedTPS.Mean, e.GenerationSpeedTPS, true
	case "ttft_s":
		return c.TTFTSeconds.Mean, e.TTFTSeconds, true
	case "tpot_s":
		return c.ITLSeconds.Mean, e.ITLSeconds, true
	case "itl_s":
		return c.ChunkGapSeconds.Mean, e.ChunkGapSeconds, true
	}
	return 0, 0, false // a P99: the simulator is deterministic and models means
}

// The vLLM post's figures (Step-3.7-Flash with MTP, 8192 in / 2048 out, 512 prompts at 32
// concurrent on 4× B200, 8× H100 and 8× A100), measured as the post measured them by the
// example plan with --mode fixed --requests 512 --concurrency 32 against each machine's
// simulator profile on virtual time, stay within the profile's stated validation error (its
// worst held-out error, as sim --list and every simulated report state it), and the run through
// the client, runner and stats reads what the simulator itself estimates (within 1 %).
func TestStep37PostFiguresWithinValidation(t *testing.T) {
	pts, err := validation.Points()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	runs := runStep37All(t, tmp, " post", "--mode", "fixed", "--requests", "512", "--concurrency", "32")
	for i, m := range step37Machines {
		prof, err := sim.LookupProfile(m.profile)
		if err != nil {
			t.Fatal(err)
		}
		// the stated error is a whole percent (sim.Validation.Summary writes %.0f)
		limit := prof.Validation.WorstErrorPct + 0.5
		if prof.Validation.Reference != m.config || prof.Validation.Points == 0 {
			t.Fatalf("%s: validated against %q (%d points), want %s", m.profile, prof.Validation.Reference, prof.Validation.Points, m.config)
		}
		res := runs.res[i]
		if len(res.Cells) != 1 {
			t.Fatalf("%s: %d cells, want the post's one", m.label, len(res.Cells))
		}
		c := res.Cells[0]
		if c.ContextTokens != 8192 || c.OutputTokens != 2048 || c.Concurrency != 32 || c.RequestsSucceeded != 512 {
			t.Fatalf("%s: cell %s with %d successes, want 8192 / 2048 at 32 with 512", m.label, c.ID(), c.RequestsSucceeded)
		}
		est, err := sim.Simulate(prof, validation.Workload(mustConfig(t, m.config), 8192, 2048, 32))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, p := range pts {
			if p.Config != m.config || p.Context != 8192 || p.Output != 2048 || p.Concurrency != 32 {
				continue
			}
			got, want, ok := step37Figure(p.Metric, c, est)
			if !ok {
				continue
			}
			checked++
			errPct := 100 * (got - p.Value) / p.Value
			t.Logf("%s %-10s published %9.4g  run %9.4g (%+5.1f %%)  simulator %9.4g", m.label, p.Metric, p.Value, got, errPct, want)
			if math.Abs(errPct) > limit {
				t.Errorf("%s %s: run %.4g against the post's %.4g: %+.1f %%, outside the profile's stated %.0f %% (%s)",
					m.label, p.Metric, got, p.Value, errPct, prof.Validation.WorstErrorPct, prof.Validation.Summary())
			}
			if d := 100 * math.Abs(got-want) / want; d > 1 {
				t.Errorf("%s %s: the run reads %.4g where the simulator estimates %.4g (%.1f %% apart): the measuring path distorts it", m.label, p.Metric, got, want, d)
			}
		}
		if checked != 6 { // output, total and per-user throughput; TTFT, TPOT, ITL means
			t.Errorf("%s: %d of the post's figures checked, want 6", m.label, checked)
		}
	}
	code, stdout, stderr := runCLI(t, append(append([]string{"compare"}, runs.dirs...), "--gpu-price", "A100 post=1.49", "--out", filepath.Join(tmp, "post.html"))...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	// compare sets the post's figures beside the runs', each within the stated error
	if !strings.Contains(stdout, "## <a id=\"published\"></a>The Published Figures These Simulations Reproduce") {
		t.Fatalf("compare of the post-method runs has no section of the published figures:\n%s", stdout)
	}
	for _, m := range step37Machines {
		prof, _ := sim.LookupProfile(m.profile)
		yes := 0
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(line, "| "+m.label+" post | 8K in / 2K out, 32 in flight |") {
				if !strings.Contains(line, fmt.Sprintf("| yes (±%.0f %%) | sweep/fixed/ctx=8192/out=2048/c=32, 512 requests |", prof.Validation.WorstErrorPct)) {
					t.Errorf("not within the stated error, or not the post's method:\n%s", line)
				}
				yes++
			}
		}
		if yes != 6 {
			t.Errorf("%s: %d rows of the post's figures in compare, want 6", m.label, yes)
		}
	}
}

func mustConfig(t *testing.T, id string) validation.Config {
	t.Helper()
	c, ok := validation.ConfigByID(id)
	if !ok {
		t.Fatalf("no reference configuration %q", id)
	}
	return c
}

// compare of the example plan's three runs (the frontier: 8192 in / 2048 out at 1 to 32 in
// flight, steady state) overlays the three frontiers and states, at a target speed per user,
// which machine gives the most output tokens per dollar and how many GPUs 2,000 users need on
// each. The expected figures are recomputed here from each run's results by the frontier's
// formulas (tokens per $ = tok/s per GPU × 3,600 ÷ $/GPU·h; GPUs = ⌈users ÷ (level × 4 users
// per request in flight)⌉ × GPUs per replica), and the winner is the B200 whatever the
// calibration does within its error: from the post's own figures, 1,597 tok/s on 4 GPUs at
// $3.70/GPU·h is 388K tokens per $, 1,245 on 8 at $2.00 is 280K, 474 on 8 at $1.49 is 143K.
func TestStep37CompareStatement(t *testing.T) {
	const target, users, a100Price = 50.0, 2000, 1.49
	tmp := t.TempDir()
	// the statement is under test, not the cells' precision: 3-minute cells take half the CPU
	// of the plan's 10 (the fixed runs of the test above are the costly ones)
	runs := runStep37All(t, tmp, "", "--max-duration", "3m")
	type expect struct {
		label        string
		tokensPerUSD float64
		gpus         int
		interpolated bool
	}
	var want []expect
	for i, m := range step37Machines {
		man, res := runs.man[i], runs.res[i]
		sz := man.Plan.Sizing
		if m.label == "A100" {
			sz.GPUUSDPerHour = a100Price // compare --gpu-price A100=1.49: no public default
		}
		a := frontier.Analyze(frontier.Input{Cells: res.Cells, Plan: sz, DeclaredGPU: man.Plan.Metadata.GPU})
		if len(a.Curves) != 1 || len(a.Curves[0].Points) != 6 {
			t.Fatalf("%s: want one curve of the 6 levels, got %+v", m.label, a.Curves)
		}
		gpus := map[string]int{"B200": 4, "H100": 8, "A100": 8}[m.label]
		if a.Hardware.GPUs != gpus {
			t.Fatalf("%s: %d GPUs per replica, want the post's %d", m.label, a.Hardware.GPUs, gpus)
		}
		r := a.Curves[0].At(target, a.Hardware)
		if r.Kind == frontier.ReadOutOfRange {
			t.Fatalf("%s: %v tok/s per user out of range: %s", m.label, target, r.Note)
		}
		p, ok := a.Hardware.Primary()
		if !ok {
			t.Fatalf("%s: no price", m.label)
		}
		replicas := int(math.Ceil(users / (r.Level * 4)))
		want = append(want, expect{m.label, r.OutputTPSPerGPU * 3600 / p.USDPerGPUHour, replicas * gpus, r.Kind == frontier.ReadInterpolated})
	}
	out := filepath.Join(tmp, "comparison.html")
	args := append(append([]string{"compare"}, runs.dirs...), "--target-speed", "50", "--users", "2000", "--gpu-price", "A100=1.49", "--out", out)
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	best := want[0]
	for _, w := range want {
		if w.tokensPerUSD > best.tokensPerUSD {
			best = w
		}
	}
	if best.label != "B200" {
		t.Errorf("the most tokens per $ at %v tok/s per user is %s's (%+v), want the B200's", target, best.label, want)
	}
	var sentence string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "At 50 tok/s per user, ") {
			sentence = line
		}
	}
	if !strings.Contains(sentence, "At 50 tok/s per user, "+best.label+" gives the most output tokens per dollar: "+approxInt(best.tokensPerUSD, false)) {
		t.Errorf("the statement does not name %s with %.0f tokens per $:\n%s", best.label, best.tokensPerUSD, sentence)
	}
	for _, w := range want {
		fleet := approxInt(float64(w.gpus), w.interpolated) + " GPUs on " + w.label
		if !strings.Contains(sentence, "2,000 users (") || !strings.Contains(sentence, fleet) {
			t.Errorf("the statement does not say 2,000 users need %q:\n%s", fleet, sentence)
		}
	}
	// the post's figures stand beside the steady-state cell at 32, which is not the post's
	// method, with the command that measures it the post's way
	if n := strings.Count(stdout, "| 8K in / 2K out, 32 in flight |"); n != 18 ||
		strings.Count(stdout, "| —: another method | sweep/sustained/ctx=8192/out=2048/c=32,") != 18 ||
		!strings.Contains(stdout, "run its level alone in fixed mode: --mode fixed --requests 512 --concurrency 32.") {
		t.Errorf("compare of the frontier runs: %d rows of the post's figures (want 18), or they are not said to be another method with the fix:\n%s", n, stdout)
	}
	// the three frontiers overlaid: one chart, and its data table one column per run
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	h := string(html)
	if !strings.Contains(h, `id="chart-frontier-8K-2K"`) ||
		!strings.Contains(h, "<th>B200: frontier (output tok/s per GPU)</th><th>H100: frontier (output tok/s per GPU)</th><th>A100: frontier (output tok/s per GPU)</th>") {
		t.Errorf("comparison.html does not overlay the three frontiers in one chart")
	}
	t.Log(sentence)
}

// approxInt writes n rounded with thousands separators ("402,467"), after "~" when it was read
// between two measured levels.
func approxInt(v float64, interpolated bool) string {
	s := strconv.Itoa(int(math.Round(v)))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if interpolated {
		s = "~" + s
	}
	return s
}
