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
