package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func TestParseConcurrency(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  bool
	}{
		{"1,2,4", []int{1, 2, 4}, false},      // a list
		{"1-5", []int{1, 2, 3, 4, 5}, false},  // a range
		{"8,1-3,2", []int{1, 2, 3, 8}, false}, // mixed, sorted, deduplicated
		{"0", nil, true},                      // zero is not a level
		{"5-1", nil, true},                    // reversed range
		{"a", nil, true},                      // not a number
		{"", nil, true},                       // nothing
	}
	for _, c := range cases {
		got, err := ParseConcurrency(c.in)
		if (err != nil) != c.err {
			t.Fatalf("%q: err = %v, want error %v", c.in, err, c.err)
		}
		if !c.err && !equal(got, c.want) {
			t.Fatalf("%q: got %v, want %v", c.in, got, c.want)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseContexts(t *testing.T) {
	got, err := ParseContexts("1k, 8K,2000")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 1024 || got[1] != 8192 || got[2] != 2000 {
		t.Fatalf("got %v", got)
	}
	if _, err := ParseContexts("1k,zz,-4"); err == nil || !strings.Contains(err.Error(), `"zz"`) || !strings.Contains(err.Error(), `"-4"`) {
		t.Fatalf("want both bad values named, got %v", err)
	}
}

func TestStrictFileRejectsUnknownKeys(t *testing.T) {
	_, err := ParseFile([]byte("sweep:\n  contexts: [1k]\n  concurrency_levels: [1]\n"))
	if err == nil || !strings.Contains(err.Error(), "concurrency_levels") {
		t.Fatalf("unknown key must be named, got %v", err)
	}
	_, err = ParseFile([]byte("sweep:\n  concurrency: [one]\n"))
	if err == nil {
		t.Fatal("wrong type must be an error")
	}
}

func TestResolvePrecedenceAndUseCases(t *testing.T) {
	f, err := ParseFile([]byte(`
target:
  url: http://127.0.0.1:8000/v1
  api: openai-completions
sweep:
  contexts: [1k, 32k]
  concurrency: [1, 2]
  output_tokens: 256
use_cases:
  - name: my_chat
    context: 16k
    thresholds:
      ttft_seconds_max: 3
metadata:
  gpu: 1x H100
  electricity_usd_per_kwh: 0.2
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{"concurrency": "1-3", "ttft-timeout": (30 * time.Second).String()})
	if err != nil {
		t.Fatal(err)
	}
	if p.Target.API != servebench.APICompletions { // from the file
		t.Errorf("api = %s", p.Target.API)
	}
	if !equal(p.Sweep.Concurrency, []int{1, 2, 3}) { // the flag beats the file
		t.Errorf("concurrency = %v", p.Sweep.Concurrency)
	}
	if p.Sweep.OutputTokens != 256 || len(p.Sweep.Contexts) != 2 {
		t.Errorf("sweep = %+v", p.Sweep)
	}
	if time.Duration(p.Sweep.TTFTTimeout) != 30*time.Second || p.Sweep.MinRequests != 10 { // flag, default
		t.Errorf("timeouts/defaults = %+v", p.Sweep)
	}
	if len(p.UseCases) != 1 || p.UseCases[0].ContextTokens != 16384 || p.UseCases[0].OutputTokens != 256 || p.UseCases[0].Statistic != servebench.StatMean ||
		p.UseCases[0].Title != "my_chat" {
		t.Errorf("use cases = %+v", p.UseCases)
	}
	if p.Metadata.GPU != "1x H100" || p.Metadata.ElectricityUSDPerKWh != 0.2 {
		t.Errorf("metadata = %+v", p.Metadata)
	}
}

func TestResolveDefaultsAndNone(t *testing.T) {
	p, err := Resolve(nil, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Target.URL != "" || p.Target.SimProfile != DemoProfile || len(p.UseCases) != 3 || p.Sweep.Precision != 0.15 {
		t.Fatalf("demo defaults: %+v", p)
	}
	// a named simulator profile is measured as a real server would be: its sampling, precision
	// and use cases, whether the profile comes from a flag or the plan file
	real := Defaults(false)
	for _, file := range []string{"", "target:\n  sim_profile: h100-llama8b\n"} {
		var f *File
		ov := Overrides{"sim-profile": "h100-llama8b"}
		if file != "" {
			f, _ = ParseFile([]byte(file))
			ov = Overrides{}
		}
		p, err = Resolve(f, ov)
		if err != nil {
			t.Fatal(err)
		}
		if p.Target.SimProfile != "h100-llama8b" || p.Target.GPU != "sim" || len(p.UseCases) != 5 || p.Sweep.Precision != real.Sweep.Precision ||
			p.Sweep.MinRequests != real.Sweep.MinRequests || p.Sweep.Rounds != real.Sweep.Rounds || p.Sweep.MaxDuration != real.Sweep.MaxDuration ||
			len(p.Scenarios) != 0 || p.Capacity.MaxConcurrency != real.Capacity.MaxConcurrency {
			t.Errorf("--sim-profile (file %q): want a real server's defaults, got %+v", file, p.Sweep)
		}
	}
	f, _ := ParseFile([]byte("target:\n  url: http://127.0.0.1:1/v1\nuse_cases: []\n"))
	p, err = Resolve(f, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.UseCases) != 0 || len(p.Sweep.Contexts) != len(DefaultContexts) {
		t.Fatalf("use_cases: [] means none; real target gets the default grid: %+v", p)
	}
	p, err = Resolve(nil, Overrides{"use-cases": "code_completion,general_chatbot"})
	if err != nil || len(p.UseCases) != 2 {
		t.Fatalf("selection: %v %v", p.UseCases, err)
	}
}

func TestResolveReportsEveryProblemAtOnce(t *testing.T) {
	_, err := Resolve(nil, Overrides{
		"url": "localhost:8000", "api": "grpc", "mode": "burst", "concurrency": "0",
		"output-tokens": "0", "use-cases": "nope", "gpu": "amd",
	})
	if err == nil {
		t.Fatal("want problems")
	}
	for _, want := range []string{"target.url", "target.api", "sweep.mode", "--concurrency", "output_tokens", "--use-cases", "target.gpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problem %q not reported in:\n%v", want, err)
		}
	}
}

func TestDefaultUseCases(t *testing.T) {
	f := servebench.Float
	want := []struct {
		name     string
		ctx, out int
		th       servebench.Thresholds
	}{
		{"code_completion", 1024, 128, servebench.Thresholds{E2ELatencySecondsMax: f(2)}},
		{"short_form_chatbot", 8192, 1024, servebench.Thresholds{TTFTSecondsMax: f(10), GenerationSpeedTPSMin: f(10)}},
		{"general_chatbot", 32768, 1024, servebench.Thresholds{TTFTSecondsMax: f(8), GenerationSpeedTPSMin: f(15)}},
		{"long_document_processing", 65536, 1024, servebench.Thresholds{TTFTSecondsMax: f(12), GenerationSpeedTPSMin: f(15)}},
		{"automated_coding_assistant", 98304, 1024, servebench.Thresholds{TTFTSecondsMax: f(12), GenerationSpeedTPSMin: f(20)}},
	}
	got := DefaultUseCases()
	if len(got) != len(want) {
		t.Fatalf("%d use cases, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		gj, _ := json.Marshal(g.Thresholds)
		wj, _ := json.Marshal(w.th)
		if g.Name != w.name || int(g.ContextTokens) != w.ctx || int(g.OutputTokens) != w.out || string(gj) != string(wj) ||
			g.Statistic != servebench.StatMean || g.Title == "" || len(g.Description) < 80 {
			t.Errorf("use case %d = %+v (thresholds %s), want %s ctx %d out %d thresholds %s", i, g, gj, w.name, w.ctx, w.out, wj)
		}
	}
}

// An explicit zero or negative value in the file is judged exactly like the same flag: refused
// with the key and the flag named, never replaced by the default.
func TestExplicitZeroIsValidatedLikeTheFlag(t *testing.T) {
	cases := []struct {
		yaml, flag, value, want string
	}{
		{"sweep:\n  min_requests: 0\n", "min-requests", "0", "sweep.min_requests (--min-requests) must be at least 1 (got 0)"},
		{"sweep:\n  rounds: -2\n", "rounds", "-2", "sweep.rounds (--rounds) must be at least 1 (got -2)"},
		{"sweep:\n  output_tokens: 0\n", "output-tokens", "0", "sweep.output_tokens (--output-tokens) must be at least 1 (got 0)"},
		{"capacity:\n  max_concurrency: 0\n", "capacity-max", "0", "capacity.max_concurrency (--capacity-max) must be at least 1 (got 0)"},
		{"capacity:\n  resolution: 0.7\n", "capacity-resolution", "0.7", "capacity.resolution (--capacity-resolution) must be from 0 (exact limits) to 0.5, a share of the limit, e.g. 0.0625 for a sixteenth (got 0.7)"},
		{"capacity:\n  resolution: -0.1\n", "capacity-resolution", "-0.1", "capacity.resolution (--capacity-resolution) must be from 0"},
		{"sweep:\n  ttft_timeout: 0s\n", "ttft-timeout", "0s", "sweep.ttft_timeout (--ttft-timeout) must be a positive duration"},
		{"sweep:\n  rate: -1\n", "rate", "-1", "sweep.rate (--rate) must not be negative"},
	}
	for _, c := range cases {
		f, err := ParseFile([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		_, fromFile := Resolve(f, nil)
		_, fromFlag := Resolve(nil, Overrides{c.flag: c.value})
		for how, err := range map[string]error{"file": fromFile, "flag": fromFlag} {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %q: want %q, got %v", how, c.yaml, c.want, err)
			}
		}
	}
	f, _ := ParseFile([]byte("metadata:\n  electricity_usd_per_kwh: 0\n"))
	if p, err := Resolve(f, nil); err != nil || p.Metadata.ElectricityUSDPerKWh != 0 {
		t.Errorf("an explicit price of 0 is kept: %v %v", p.Metadata.ElectricityUSDPerKWh, err)
	}
	f, _ = ParseFile([]byte("scenarios:\n  - {name: a, context: 1k, output_tokens: 8, concurrency: []}\n  - {name: b, context: 1k, output_tokens: 8}\n"))
	if _, err := Resolve(f, nil); err == nil || !strings.Contains(err.Error(), "scenarios[0] (a): concurrency is empty") || strings.Contains(err.Error(), "scenarios[1]") {
		t.Errorf("an explicit empty scenario concurrency is refused, a missing one defaults: %v", err)
	}
}

// The file decodes into the plan over the defaults: a key left out keeps its default, a key
// given replaces it, for every section.
func TestFileDecodesOverDefaults(t *testing.T) {
	f, err := ParseFile([]byte("target:\n  url: http://127.0.0.1:9/v1\nsweep:\n  rounds: 5\nmetadata:\n  gpu: 8x B200\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults(false)
	if p.Sweep.Rounds != 5 || p.Sweep.MinRequests != d.Sweep.MinRequests || p.Metadata.GPU != "8x B200" ||
		p.Metadata.ElectricityUSDPerKWh != d.Metadata.ElectricityUSDPerKWh || len(p.UseCases) != len(d.UseCases) || p.Target.APIKeyEnv != d.Target.APIKeyEnv {
		t.Errorf("plan = %+v", p)
	}
}

func TestOverridesNames(t *testing.T) {
	ov := Overrides{"rounds": "2", "url": "http://x/v1", "use-cases": "none"}
	if got := strings.Join(ov.Names(), " "); got != "--url --rounds --use-cases" {
		t.Errorf("names = %q", got)
	}
	if _, err := Resolve(nil, Overrides{"no-such": "1"}); err == nil || !strings.Contains(err.Error(), "--no-such is not a plan setting") {
		t.Errorf("unknown override: %v", err)
	}
}

func TestMetricsURL(t *testing.T) {
	for _, c := range []struct {
		t    servebench.Target
		want string
	}{
		{servebench.Target{URL: "http://h:8000/v1", API: servebench.APIChat}, "http://h:8000/metrics"},
		{servebench.Target{URL: "http://h:8000/v1/", API: servebench.APIChat}, "http://h:8000/metrics"},
		{servebench.Target{URL: "http://h:8000/v1", MetricsURL: "http://m:9/x"}, "http://m:9/x"},
		{servebench.Target{URL: "http://h:11434/v1", API: servebench.APIOllama}, ""},
	} {
		if got := MetricsURL(c.t); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

func TestProblemsCountTheirNoun(t *testing.T) {
	if got := (Problems{"a"}).Error(); !strings.HasPrefix(got, "the plan has 1 problem:\n  - a") {
		t.Errorf("one problem: %q", got)
	}
	if got := (Problems{"a", "b"}).Error(); !strings.HasPrefix(got, "the plan has 2 problems:\n  - a\n  - b") {
		t.Errorf("two problems: %q", got)
	}
}
