package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func ptr[T any](v T) *T { return &v }

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
	p, err := Resolve(f, Overrides{Concurrency: ptr("1-3"), TTFTTimeout: ptr(30 * time.Second)})
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
	if len(p.UseCases) != 1 || p.UseCases[0].ContextTokens != 16384 || p.UseCases[0].OutputTokens != 256 || p.UseCases[0].Statistic != servebench.StatMean {
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
	if p.Target.URL != "" || p.Target.SimProfile == "" || len(p.UseCases) != 5 {
		t.Fatalf("simulated defaults: %+v", p)
	}
	f, _ := ParseFile([]byte("target:\n  url: http://127.0.0.1:1/v1\nuse_cases: []\n"))
	p, err = Resolve(f, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.UseCases) != 0 || len(p.Sweep.Contexts) != len(DefaultContexts) {
		t.Fatalf("use_cases: [] means none; real target gets the SPEC grid: %+v", p)
	}
	p, err = Resolve(nil, Overrides{UseCases: ptr("code_completion,general_chatbot")})
	if err != nil || len(p.UseCases) != 2 {
		t.Fatalf("selection: %v %v", p.UseCases, err)
	}
}

func TestResolveReportsEveryProblemAtOnce(t *testing.T) {
	_, err := Resolve(nil, Overrides{
		URL: ptr("localhost:8000"), API: ptr("grpc"), Mode: ptr("burst"), Concurrency: ptr("0"),
		OutputTokens: ptr(0), UseCases: ptr("nope"), GPU: ptr("amd"),
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
