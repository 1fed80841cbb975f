package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// users: fills its defaults and names every bad setting with its fix.
func TestUsersPlan(t *testing.T) {
	f, err := ParseFile([]byte("users:\n  populations: [8, 4, 8]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	u := p.Users
	if len(u.UseCases) != len(p.UseCases) || u.MaxUsers != 256 || u.ThinkScale != 1 || len(u.Populations) != 2 || u.Populations[0] != 4 {
		t.Errorf("defaults: %+v", u)
	}
	bad := "users:\n  use_cases: [nope]\n  profiles: {nope: robot}\n  populations: [0]\n  think_scale: -1\n"
	f, err = ParseFile([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
	for _, want := range []string{`"nope", which is not one of the plan's use cases`, `unknown user profile "robot": use chat or agent`, "a population has at least 1 user", "think_scale -1 must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// users.profiles may name files users replay: a dataset's conversations or an agent trace; a
// malformed file is refused before the run with its line, cause and fix; block_tokens gets its
// default and is judged.
func TestUsersProfilesFromFiles(t *testing.T) {
	dir := t.TempDir()
	conv := filepath.Join(dir, "conv.json")
	trace := filepath.Join(dir, "agent.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	for p, body := range map[string]string{
		conv:  `[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}]`,
		trace: `{"session_id": "s", "input_length": 600, "output_length": 20}` + "\n",
		bad:   `{"session_id": "s", "input_length": 600, "output_length": 20}` + "\n" + `{"session_id": "s", "input_length": 700}` + "\n",
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(profiles, extra string) (*servebench.UsersPlan, error) {
		f, err := ParseFile([]byte("use_cases:\n  - {name: chat, context: 8k, thresholds: {ttft_seconds_max: 5}}\n  - {name: coding, context: 64k, thresholds: {ttft_seconds_max: 12}}\nusers:\n  profiles: " + profiles + "\n" + extra))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
		return p.Users, err
	}
	u, err := plan(fmt.Sprintf("{chat: %q, coding: %q}", "dataset:"+conv, "trace:"+trace), "")
	if err != nil {
		t.Fatal(err)
	}
	if u.BlockTokens != 512 {
		t.Errorf("block_tokens %d, want the Mooncake default 512", u.BlockTokens)
	}
	_, err = plan(fmt.Sprintf("{coding: %q}", "trace:"+bad), "  block_tokens: 0\n")
	for _, want := range []string{"users.profiles.coding: trace " + bad + ": line 2 has no output_length: give the turn's output in tokens", "users.block_tokens 0 must be a positive number of tokens; leave it out for 512"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	_, err = plan(fmt.Sprintf("{chat: %q}", "dataset:"+filepath.Join(dir, "missing.json")), "")
	if err == nil || !strings.Contains(err.Error(), "users.profiles.chat: dataset: stat") || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// users.tiers: floors sorted, and every bad setting named with its fix.
func TestUsersTiersPlan(t *testing.T) {
	f, err := ParseFile([]byte("users:\n  tiers:\n    ttft_seconds_max: 15\n    speeds_tps_min: [300, 30, 100]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := p.Users.Tiers; tr.TTFTSecondsMax != 15 || len(tr.SpeedsTPSMin) != 3 || tr.SpeedsTPSMin[0] != 30 || tr.SpeedsTPSMin[2] != 300 {
		t.Errorf("tiers %+v", tr)
	}
	for bad, want := range map[string]string{
		"users:\n  tiers:\n    speeds_tps_min: [30]\n":                                               "users.tiers.ttft_seconds_max is 0: set the TTFT ceiling",
		"users:\n  tiers:\n    ttft_seconds_max: 15\n":                                               "users.tiers.speeds_tps_min is empty: list the tiers' speed floors",
		"users:\n  tiers:\n    ttft_seconds_max: 15\n    speeds_tps_min: [30, -1]\n":                 "speeds_tps_min has -1: a speed floor is a positive number",
		"users:\n  tiers:\n    ttft_seconds_max: 15\n    speeds_tps_min: [30, 30]\n":                 "lists 30 twice: one tier per speed floor",
		"users:\n  tiers:\n    ttft_seconds_max: 15\n    speeds_tps_min: [30]\n    statistic: p42\n": `users.tiers.statistic "p42" is unknown`,
		"users:\n  tiers:\n    ttft_seconds_max: 15\n    speed: [30]\n":                              "speed",
	} {
		f, err := ParseFile([]byte(bad))
		if err == nil {
			_, err = Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v does not say %q", bad, err, want)
		}
	}
}

// users.max_users and users.think_scale get their defaults (cells.DefaultMaxUsers,
// DefaultThinkScale) only when left out; an explicit 0 or negative is refused naming the key,
// why and the fix, never silently replaced by the default.
func TestUsersDefaultsOnlyWhenLeftOut(t *testing.T) {
	for _, tt := range []struct {
		name  string
		yaml  string // the users section's settings
		want  string // a problem the error must state ("": resolves)
		users int
		scale float64
	}{
		// both left out: 256 users at most, think times as profiled
		{name: "left out", yaml: "  populations: [4]\n", users: 256, scale: 1},
		// written: kept as written
		{name: "written", yaml: "  max_users: 32\n  think_scale: 0.1\n", users: 32, scale: 0.1},
		// an explicit 0 is a mistake, not a request for the default
		{name: "max_users 0", yaml: "  max_users: 0\n", want: "users.max_users 0 must be at least 1: it is the largest population the users' search measures; give one, or leave it out for 256"},
		{name: "max_users negative", yaml: "  max_users: -3\n", want: "users.max_users -3 must be at least 1"},
		{name: "think_scale 0", yaml: "  think_scale: 0\n", want: "users.think_scale 0 must be positive: it multiplies the profiles' think and tool times, and users who never think are not users; give a factor (0.1 for a quick demo), or leave it out for 1 (as profiled)"},
		{name: "think_scale negative", yaml: "  think_scale: -0.5\n", want: "users.think_scale -0.5 must be positive"},
		// an explicit empty list searches nothing: a mistake, not "all of them"
		{name: "use_cases empty", yaml: "  use_cases: []\n", want: "users.use_cases is empty: it names the use cases searched in users; name some of "},
	} {
		f, err := ParseFile([]byte("users:\n" + tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		p, err := Resolve(f, Overrides{"url": "http://127.0.0.1:1/v1"})
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if u := p.Users; u.MaxUsers != tt.users || u.ThinkScale != tt.scale {
			t.Errorf("%s: max_users %d, think_scale %g; want %d, %g", tt.name, u.MaxUsers, u.ThinkScale, tt.users, tt.scale)
		}
		if u, all := p.Users.UseCases, len(p.UseCases); len(u) != all || all == 0 {
			t.Errorf("%s: users.use_cases %v left out, want all %d of the plan's use cases", tt.name, u, all)
		}
	}
}
