package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("ttft=2s, itl=50ms,e2e=10s,first_answer=3s,speed=20")
	if err != nil {
		t.Fatal(err)
	}
	if *s.TTFTSecondsMax != 2 || *s.ITLSecondsMax != 0.05 || *s.E2ELatencySecondsMax != 10 || *s.FirstContentSecondsMax != 3 || *s.GenerationSpeedTPSMin != 20 {
		t.Errorf("parsed %+v", s)
	}
	for in, want := range map[string]string{"": "no objective", "ttft": "name=value", "ttft=fast": "positive duration",
		"ttft=-1s": "positive duration", "foo=1s": "unknown objective", "speed=0": "positive generation speed"} {
		if _, err := ParseSLO(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestParseRatesAndHeader(t *testing.T) {
	p, err := Resolve(nil, Overrides{"rate": "8, 2,4,2", "requests": "8"})
	if r := p.Sweep.Rates; err != nil || len(r) != 3 || r[0] != 2 || r[2] != 8 {
		t.Errorf("rates %v %v, want [2 4 8]", r, err)
	}
	for _, bad := range []string{"0", "-1", "x", "inf", "2,-1"} {
		if _, err := Resolve(nil, Overrides{"rate": bad, "requests": "8"}); err == nil {
			t.Errorf("rate %q accepted", bad)
		}
	}
	p, err = Resolve(nil, Overrides{"rate": "auto", "requests": "8", "slo": "ttft=1s"})
	if err != nil || !p.Sweep.AutoRate || p.Sweep.Mode != servebench.ModeRate || p.Sweep.GoodputTarget != 0.99 || p.Sweep.Rate != 1 || p.Sweep.MaxRate != 256 {
		t.Errorf("--rate auto: %+v %v", p.Sweep, err)
	}
	for _, tt := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{"rate": "auto", "requests": "8"}, "--rate auto needs objectives"},
		{Overrides{"rate": "auto", "requests": "8", "slo": "ttft=1s", "goodput-target": "1.5"}, "goodput_target (--goodput-target) 1.5 must be in (0, 1]"},
	} {
		if _, err := Resolve(nil, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.o, err, tt.want)
		}
	}
	n, v, err := ParseHeader(" X-Tenant :  acme: west ")
	if err != nil || n != "X-Tenant" || v != "acme: west" {
		t.Errorf("header %q %q %v", n, v, err)
	}
	for _, bad := range []string{"novalue", ": v", "Bad Name: v", "X: a\nb"} {
		if _, _, err := ParseHeader(bad); err == nil {
			t.Errorf("header %q accepted", bad)
		}
	}
	for name, secret := range map[string]bool{"Authorization": true, "X-Api-Key": true, "x-auth-token": true, "Cookie": true,
		"X-Client-Secret": true, "Proxy-Credentials": true, "X-Tenant": false, "Content-Type": false} {
		if SecretHeader(name) != secret {
			t.Errorf("SecretHeader(%q) = %v, want %v", name, !secret, secret)
		}
	}
}

// The workload settings resolve from the file and the flags (flags win), a rate list implies
// rate mode, and every problem is named.
func TestResolveWorkloads(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "d.jsonl")
	os.WriteFile(ds, []byte(`{"prompt": "hi"}`+"\n"), 0o644)
	f, err := ParseFile([]byte(`
sweep:
  rates: [1, 3]
  mode: rate
  duration: 30s
request:
  headers: {X-Tenant: acme}
  extra_body: {top_k: 20}
  temperature: 0.2
dataset:
  path: ` + ds + `
  sample: 5
slo:
  ttft_seconds_max: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{"temperature": "0.7", "header": "X-Other: 1"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sweep.Mode != servebench.ModeRate || len(p.Sweep.Rates) != 2 || p.Sweep.Duration != servebench.Duration(30*time.Second) {
		t.Errorf("sweep %+v", p.Sweep)
	}
	if *p.Request.Temperature != 0.7 || p.Request.Headers["X-Tenant"] != "acme" || p.Request.Headers["X-Other"] != "1" || p.Request.ExtraBody["top_k"] != uint64(20) && p.Request.ExtraBody["top_k"] != 20.0 {
		t.Errorf("request %+v", p.Request)
	}
	if p.Dataset == nil || p.Dataset.Sample != 5 || p.SLO == nil || *p.SLO.TTFTSecondsMax != 2 {
		t.Errorf("dataset %+v slo %+v", p.Dataset, p.SLO)
	}
	p, err = Resolve(nil, Overrides{"rate": "2,4", "requests": "16"})
	if err != nil || p.Sweep.Mode != servebench.ModeRate || len(p.Sweep.Rates) != 2 {
		t.Errorf("--rate 2,4: mode %s rates %v err %v", p.Sweep.Mode, p.Sweep.Rates, err)
	}
	_, err = Resolve(nil, Overrides{"extra-body": `{"stream": false}`, "dataset": filepath.Join(dir, "missing.jsonl"),
		"slo": "ttft=soon", "header": "oops"})
	for _, want := range []string{`cannot set "stream"`, "dataset.path", "--slo", "--header"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// sessions: takes its defaults (answer length from the sweep, levels 1 and 4) and refuses a
// plan that cannot make a conversation, naming the key.
func TestResolveSessions(t *testing.T) {
	f, err := ParseFile([]byte("sweep:\n  output_tokens: 64\nsessions:\n  turns: 4\n  first_turn_tokens: 2k\n  turn_tokens: 256\n  think_time: 2s\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	ss := p.Sessions
	if ss == nil || ss.Turns != 4 || ss.FirstTurnTokens != 2048 || ss.TurnTokens != 256 || ss.OutputTokens != 64 ||
		fmt.Sprint(ss.Concurrency) != "[1 4]" || ss.ThinkTime != servebench.Duration(2*time.Second) {
		t.Errorf("sessions %+v", ss)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"sessions:\n  turns: 1\n  first_turn_tokens: 1k\n  turn_tokens: 1k\n", "sessions.turns must be at least 2"},
		{"sessions:\n  turns: 3\n  turn_tokens: 1k\n", "sessions.first_turn_tokens"},
		{"sessions:\n  turns: 3\n  first_turn_tokens: 1k\n  turn_tokens: 1k\n  concurrency: [0, 2]\n", "sessions.concurrency has 0"},
		{"sessions:\n  turns: 3\n  first_turn_tokens: 1k\n  turn_tokens: 1k\n  think_time: -1s\n", "sessions.think_time"},
	} {
		f, err := ParseFile([]byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Resolve(f, Overrides{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

// trace.speed and trace.block_tokens get their defaults where the plan leaves them out, and an
// explicit 0 (in the file or a flag) is refused with the fix, never replaced by the default.
func TestTraceDefaultsOnlyWhenLeftOut(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(trace, []byte("{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(body string) *File {
		f, err := ParseFile([]byte("sweep:\n  mode: rate\ntrace:\n  path: " + trace + "\n" + body))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	p, err := Resolve(file(""), nil)
	if err != nil || p.Trace.Speed != 1 || p.Trace.BlockTokens != 512 {
		t.Fatalf("trace without speed: %+v %v, want speed 1 and 512 tokens per hash id", p.Trace, err)
	}
	p, err = Resolve(nil, Overrides{"trace": trace})
	if err != nil || p.Trace.Speed != 1 || p.Trace.BlockTokens != 512 {
		t.Fatalf("--trace alone: %+v %v, want speed 1 and 512 tokens per hash id", p.Trace, err)
	}
	for name, tc := range map[string]struct {
		f  *File
		ov Overrides
	}{
		"file speed 0":         {file("  speed: 0\n"), nil},
		"flag --trace-speed 0": {nil, Overrides{"trace": trace, "trace-speed": "0"}},
	} {
		_, err := Resolve(tc.f, tc.ov)
		if err == nil || !strings.Contains(err.Error(), "trace.speed 0") || !strings.Contains(err.Error(), "leave it out") {
			t.Errorf("%s: %v, want a refusal naming trace.speed and the fix", name, err)
		}
	}
	if _, err := Resolve(file("  block_tokens: 0\n"), nil); err == nil || !strings.Contains(err.Error(), "trace.block_tokens 0") {
		t.Errorf("block_tokens 0: %v, want a refusal", err)
	}
}

// The rate search's settings (sweep.rate as its start, sweep.goodput_target, sweep.max_rate)
// and the sessions' output_tokens and concurrency get their defaults only where the plan leaves
// them out; an explicit 0 (or an empty list), in the file or a flag, is refused naming the key,
// never replaced by the default.
func TestRateSearchAndSessionsDefaultsOnlyWhenLeftOut(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "chats.json")
	if err := os.WriteFile(ds, []byte(`[{"conversations": [{"from": "human", "value": "hi"}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	const auto = "slo:\n  ttft_seconds_max: 2\nsweep:\n  mode: rate\n  auto_rate: true\n  duration: 30s\n"
	const sessions = "sweep:\n  output_tokens: 64\nsessions:\n  turns: 3\n  first_turn_tokens: 1k\n  turn_tokens: 128\n"
	for _, tt := range []struct {
		name string
		yaml string // the plan file ("": none)
		ov   Overrides
		want string // a problem the error must state ("": resolves, and check passes)
		// check judges the resolved plan when it resolves ("": nothing wrong)
		check func(servebench.Plan) string
	}{
		// left out in the file: the search starts at 1 req/s, keeps 99%, goes up to 256 req/s
		{name: "auto rate, file leaves the settings out", yaml: auto, check: func(p servebench.Plan) string {
			if sw := p.Sweep; sw.Rate != 1 || sw.GoodputTarget != 0.99 || sw.MaxRate != 256 {
				return fmt.Sprintf("rate %g, goodput target %g, max rate %g: want the defaults 1, 0.99, 256", sw.Rate, sw.GoodputTarget, sw.MaxRate)
			}
			return ""
		}},
		// --rate auto alone: the same defaults (auto is not a start rate)
		{name: "--rate auto", ov: Overrides{"rate": "auto", "slo": "ttft=2s", "duration": "30s"}, check: func(p servebench.Plan) string {
			if sw := p.Sweep; !sw.AutoRate || sw.Rate != 1 || sw.GoodputTarget != 0.99 || sw.MaxRate != 256 {
				return fmt.Sprintf("%+v: want the search on with its defaults", sw)
			}
			return ""
		}},
		// given values are kept
		{name: "auto rate, file sets them", yaml: auto + "  rate: 4\n  goodput_target: 0.9\n  max_rate: 64\n", check: func(p servebench.Plan) string {
			if sw := p.Sweep; sw.Rate != 4 || sw.GoodputTarget != 0.9 || sw.MaxRate != 64 {
				return fmt.Sprintf("rate %g, goodput target %g, max rate %g: want 4, 0.9, 64 as written", sw.Rate, sw.GoodputTarget, sw.MaxRate)
			}
			return ""
		}},
		{name: "file goodput_target 0", yaml: auto + "  goodput_target: 0\n", want: "sweep.goodput_target (--goodput-target) 0 must be in (0, 1]"},
		{name: "flag --goodput-target 0", yaml: auto, ov: Overrides{"goodput-target": "0"}, want: "sweep.goodput_target (--goodput-target) 0 must be in (0, 1]"},
		{name: "file max_rate 0", yaml: auto + "  max_rate: 0\n", want: "sweep.max_rate 0 must be a positive number"},
		{name: "file rate 0 with auto_rate", yaml: auto + "  rate: 0\n", want: "sweep.rate (--rate) 0 must be a positive number of requests per second with sweep.auto_rate"},
		{name: "flag --rate 0, then the file's auto_rate", yaml: auto, ov: Overrides{"rate": "0"}, want: "sweep.rate (--rate) 0 must be a positive"},
		// a rate-search setting without the search is kept as written and unused: no default is filled
		{name: "no search, no defaults", yaml: "sweep:\n  concurrency: [1]\n", check: func(p servebench.Plan) string {
			if sw := p.Sweep; sw.GoodputTarget != 0 || sw.MaxRate != 0 || sw.Rate != 0 {
				return fmt.Sprintf("%+v: a plan without the rate search got its defaults", sw)
			}
			return ""
		}},
		// sessions: output_tokens from the sweep, levels 1 and 4, when left out
		{name: "sessions leave them out", yaml: sessions, check: func(p servebench.Plan) string {
			if ss := p.Sessions; ss.OutputTokens != 64 || fmt.Sprint(ss.Concurrency) != "[1 4]" {
				return fmt.Sprintf("sessions %+v: want 64 output tokens and levels [1 4]", ss)
			}
			return ""
		}},
		{name: "sessions output_tokens 0", yaml: sessions + "  output_tokens: 0\n", want: "sessions.output_tokens must be at least 1 (got 0)"},
		{name: "sessions concurrency []", yaml: sessions + "  concurrency: []\n", want: "sessions.concurrency is empty"},
		{name: "sessions concurrency [0]", yaml: sessions + "  concurrency: [0]\n", want: "sessions.concurrency has 0"},
		// a dataset's conversations as sessions with no sessions section: all defaults
		{name: "--dataset-sessions", ov: Overrides{"dataset": ds, "dataset-sessions": "true", "output-tokens": "32"}, check: func(p servebench.Plan) string {
			if ss := p.Sessions; ss == nil || ss.OutputTokens != 32 || fmt.Sprint(ss.Concurrency) != "[1 4]" {
				return fmt.Sprintf("sessions %+v: want 32 output tokens (the sweep's) and levels [1 4]", ss)
			}
			return ""
		}},
	} {
		var f *File
		if tt.yaml != "" {
			var err error
			if f, err = ParseFile([]byte(tt.yaml)); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		p, err := Resolve(f, tt.ov)
		switch {
		case tt.want != "":
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want a refusal stating %q", tt.name, err, tt.want)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		default:
			if why := tt.check(p); why != "" {
				t.Errorf("%s: %s", tt.name, why)
			}
		}
	}
}
