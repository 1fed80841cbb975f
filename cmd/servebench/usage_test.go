package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every usage error says what is wrong and what would be right: a mistyped flag gets the
// nearest flag of the command, a command given too few or too many arguments says how many of
// what it needs and what it got, a command taking none says its settings are flags. Each exits
// with the usage code.
func TestUsageErrorsSayWhatIsMissing(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--concurency", "1"}, "unknown flag: --concurency; did you mean --concurrency?"},
		{[]string{"run", "--max-tim", "10m"}, "did you mean --max-time?"},
		{[]string{"sim", "--lst"}, "did you mean --list?"},
		{[]string{"compare", "runs/a"}, "compare needs at least 2 runs, got 1 (runs/a)"},
		{[]string{"report"}, "report needs 1 run folder, got none: usage servebench report RUN_DIR"},
		{[]string{"report", "a", "b"}, "report needs 1 run folder, got 2 (a b)"},
		{[]string{"run", "runs/demo"}, `run takes no arguments, got "runs/demo": its settings are flags, e.g. --url`},
		{[]string{"gate", "runs/a"}, "gate needs BASELINE and CANDIDATE (a run folder, run id or label each), got 1 argument"},
		{[]string{"import"}, "import needs 1 result file, got none: usage servebench import --from"},
		{[]string{"export"}, "export needs one RUN (a run folder, run id or label), got 0"},
		{[]string{"site"}, "site needs OUT_DIR, the folder to write the pages into"},
		{[]string{"runs", "extra"}, `runs takes no arguments, got "extra"`},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
	// a flag too far from any real one gets no guess
	if _, _, stderr := runCLI(t, "run", "--zzzzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a wild guess: %q", stderr)
	}
}

// sim --list fits 100 columns, and a profile fitted on another configuration's measurements
// says so instead of presenting that configuration's error as its own.
func TestSimListFits100Columns(t *testing.T) {
	code, stdout, _ := runCLI(t, "sim", "--list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, l := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if !strings.Contains(stdout, "not measured itself; fitted as the validated glm47-flash-bf16-1xh200") {
		t.Errorf("a borrowed validation reads as the profile's own:\n%s", stdout)
	}
}
