package main

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/sim"
)

// `sim validate` covers every reference configuration and prints the summary and the limits;
// `sim --list` shows each profile's validated error.
func TestSimValidate(t *testing.T) {
	code, out, errOut := runCLI(t, "sim", "validate", "--summary")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"glm47-flash-bf16-1xh200", "qwen36-35b-a3b-fp8-mtp-1xrtxpro6000",
		"step37-flash-nvfp4-2xrtxpro6000", "step37-flash-bf16-mtp-4xb200", "step37-flash-bf16-mtp-8xh100",
		"step37-flash-bf16-mtp-8xa100", "MEDIAN |ERROR|", "CAPACITY LIMIT", "not viable", "125+"} {
		if !strings.Contains(out, want) {
			t.Errorf("sim validate --summary lacks %q", want)
		}
	}
	code, out, _ = runCLI(t, "sim", "--list")
	if code != 0 || !strings.Contains(out, "VALIDATED ERROR") || !strings.Contains(out, "not validated") ||
		!strings.Contains(out, "over 26 points of glm47-flash-bf16-1xh200") {
		t.Errorf("sim --list (exit %d) does not show the validated errors:\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "sim", "validate", "--bogus"); code == 0 {
		t.Error("sim validate --bogus exited 0")
	}
}

func TestSimValidationNote(t *testing.T) {
	for _, c := range []struct{ profile, want string }{
		{"fast", "was not validated"},
		{"h200-glm47-flash", "within a median 16% (worst 40%)"},
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
