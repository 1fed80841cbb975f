package plan

import (
	"strings"
	"testing"
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
