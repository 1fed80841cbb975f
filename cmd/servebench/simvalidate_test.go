package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/sim/validation"
)

// `sim validate` covers every reference configuration and prints the summary, the limits and
// the agreement targets, and exits 1 exactly when a target is missed, naming each;
// `sim --list` shows each profile's validated error.
func TestSimValidate(t *testing.T) {
	code, out, errOut := runCLI(t, "sim", "validate", "--summary")
	for _, want := range []string{"glm47-flash-bf16-1xh200", "qwen36-35b-a3b-fp8-mtp-1xrtxpro6000",
		"step37-flash-nvfp4-2xrtxpro6000", "step37-flash-bf16-mtp-4xb200", "step37-flash-bf16-mtp-8xh100",
		"step37-flash-bf16-mtp-8xa100", "MEDIAN |ERROR|", "CAPACITY LIMIT", "FIRST FAILING", "not viable", "125+", "TARGETS:"} {
		if !strings.Contains(out, want) {
			t.Errorf("sim validate --summary lacks %q", want)
		}
	}
	pts, err := validation.Points()
	if err != nil {
		t.Fatal(err)
	}
	r, err := validation.NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := r.Run(pts)
	if err != nil {
		t.Fatal(err)
	}
	missed := tab.Violations()
	wantCode := exitOK
	if len(missed) > 0 {
		wantCode = exitError
		if !strings.Contains(errOut, fmt.Sprintf("misses %d of its agreement targets", len(missed))) {
			t.Errorf("stderr does not count the %d missed targets: %s", len(missed), errOut)
		}
	} else if !strings.Contains(out, "All targets met.") {
		t.Error("no target missed, but the output does not say so")
	}
	if code != wantCode {
		t.Errorf("exit %d with %d missed targets, want %d (stderr %s)", code, len(missed), wantCode, errOut)
	}
	for _, m := range missed {
		if !strings.Contains(out, "MISSED: "+m) {
			t.Errorf("output does not name the missed target %q", m)
		}
	}
	code, out, _ = runCLI(t, "sim", "--list")
	out = strings.Join(strings.Fields(out), " ") // the list wraps its lines at 100 columns
	if code != 0 || !strings.Contains(out, "error = held-out published points") || !strings.Contains(out, "not validated") ||
		!strings.Contains(out, "over 26 points of glm47-flash-bf16-1xh200") || !strings.Contains(out, "capacity limits 4 of 5 agree, missed code completion (~35 published, 17 simulated)") {
		t.Errorf("sim --list (exit %d) does not show the validated errors:\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "sim", "validate", "--bogus"); code == 0 {
		t.Error("sim validate --bogus exited 0")
	}
}

func TestSimValidationNote(t *testing.T) {
	for _, c := range []struct{ profile, want string }{
		{"fast", "was not validated"},
		{"h200-glm47-flash", "within a median 8% (worst 48%)"},
		{"h200-glm47-flash", "5 of its 5 published capacity limits came out within ±25%"},
		// a profile that missed a limit says which, so its capacity there is not taken on trust
		{"rtxpro6000-qwen36-35b-a3b-fp8-mtp", "it missed code completion (~35 published, 17 simulated): do not rely on its capacity"},
	} {
		p, err := lookupProfileForTest(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		if n := simValidationNote(p); !strings.Contains(n, c.want) {
			t.Errorf("%s: note %q lacks %q", c.profile, n, c.want)
		}
	}
}

func lookupProfileForTest(name string) (sim.Profile, error) { return sim.LookupProfile(name) }
