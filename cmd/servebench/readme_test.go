package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README reads in the order a new user needs it: what you get, install, the demo on the
// binary (never go run), measuring a real server, then --sim-profile for what-if; and its Tests
// table gives both test commands with what each needs and how long it takes.
func TestReadmeFirstHour(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	order := []string{"## What you get", "## Install", "## Quick start", "## Measuring a real server", "## What-if on the simulator", "## Tests"}
	at := -1
	for _, h := range order {
		i := strings.Index(readme, "\n"+h+"\n")
		if i < 0 {
			t.Fatalf("the README has no section %q", h)
		}
		if i < at {
			t.Errorf("the README's %q comes before the section it should follow (want %s)", h, strings.Join(order, ", "))
		}
		at = i
	}
	section := func(h string) string {
		s := readme[strings.Index(readme, "\n"+h+"\n")+len(h)+2:]
		if j := strings.Index(s, "\n## "); j >= 0 {
			s = s[:j]
		}
		return s
	}
	quick := section("## Quick start")
	if strings.Contains(quick, "go run") || !strings.Contains(quick, "./servebench run") {
		t.Errorf("the quick start does not run the demo on the binary it builds:\n%s", quick)
	}
	if !strings.Contains(section("## Install"), "go install ./cmd/servebench") {
		t.Error("the Install section does not install the servebench binary the later examples run")
	}
	if w := section("## What-if on the simulator"); !strings.Contains(w, "--sim-profile") || !strings.Contains(w, "--max-time") {
		t.Errorf("the what-if section does not show --sim-profile with --max-time:\n%s", w)
	}
	tests := section("## Tests")
	minutes := regexp.MustCompile(`\d+ minutes`)
	for _, cmd := range []string{"`go test ./...`", "`scripts/test.sh`"} {
		var row string
		for _, line := range strings.Split(tests, "\n") {
			if strings.HasPrefix(line, "| "+cmd) {
				row = line
			}
		}
		if row == "" {
			t.Errorf("the Tests table has no row for %s", cmd)
			continue
		}
		if cells := strings.Split(row, "|"); len(cells) < 5 || strings.TrimSpace(cells[2]) == "" || !minutes.MatchString(cells[3]) {
			t.Errorf("the Tests row for %s does not say what it needs and how many minutes it takes: %s", cmd, row)
		}
	}
}
