package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
)

// Two small simulated runs, then every verb a user runs afterwards: runs, report, compare.
func TestReportCompareAndRunsVerbs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tmp := t.TempDir()
		index := filepath.Join(tmp, "runs.db")
		var dirs []string
		for i, profile := range []string{"fast", "fast"} {
			dir := filepath.Join(tmp, "run"+string(rune('a'+i)))
			code, _, stderr := runCLI(t, "run", "--sim-profile", profile, "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "32",
				"--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--out", dir, "--quiet", "--index", index, "--no-report",
				"--label", []string{"H200 tp1", ""}[i])
			if code != 0 {
				t.Fatalf("run %d: exit %d\n%s", i, code, stderr)
			}
			dirs = append(dirs, dir)
		}
		code, stdout, stderr := runCLI(t, "runs", "--index", index)
		if code != 0 || strings.Count(stdout, "completed") != 2 || strings.Count(stdout, "SIMULATED") != 2 || strings.Contains(stdout, "MISSING") {
			t.Fatalf("runs: exit %d\n%s\n%s", code, stdout, stderr)
		}
		// the label the run was given names it in the list, beside its id (— for the run without one)
		if !regexp.MustCompile(`^ID +LABEL `).MatchString(stdout) || !regexp.MustCompile(runID(t, dirs[0])+` +H200 tp1 `).MatchString(stdout) || !regexp.MustCompile(runID(t, dirs[1])+` +— `).MatchString(stdout) {
			t.Errorf("runs does not show the runs' labels:\n%s", stdout)
		}
		code, _, stderr = runCLI(t, "report", dirs[0], "--format", "md,json,html")
		if code != 0 {
			t.Fatalf("report: exit %d\n%s", code, stderr)
		}
		for _, f := range []string{"report.md", "report.json", "report.html"} {
			b, err := os.ReadFile(filepath.Join(dirs[0], f))
			if err != nil || len(b) == 0 {
				t.Fatalf("%s not written: %v", f, err)
			}
			if f == "report.md" && !strings.Contains(string(b), "SIMULATED") {
				t.Errorf("report.md of a simulated run must say SIMULATED")
			}
		}
		out := filepath.Join(tmp, "cmp", "compare.html")
		code, stdout, stderr = runCLI(t, "compare", dirs[0], dirs[1], "--out", out)
		if code != 0 {
			t.Fatalf("compare: exit %d\n%s", code, stderr)
		}
		for _, f := range []string{out, strings.TrimSuffix(out, ".html") + ".md"} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Fatalf("compare did not write %s", f)
			}
		}
		if !strings.Contains(stdout, "|") {
			t.Errorf("compare prints its Markdown table:\n%s", stdout)
		}
		code, _, stderr = runCLI(t, "report", filepath.Join(tmp, "nope"))
		if code != exitUsage || !strings.Contains(stderr, "not a readable run folder") {
			t.Errorf("report of a missing folder: exit %d %q", code, stderr)
		}
		code, _, stderr = runCLI(t, "report", dirs[0], "--format", "docx")
		if code != exitUsage || !strings.Contains(stderr, "docx") {
			t.Errorf("unknown format: exit %d %q", code, stderr)
		}
		// a run folder moved away: runs still lists it, marked MISSING, and says what that means
		if err := os.Rename(dirs[1], dirs[1]+"-moved"); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr = runCLI(t, "runs", "--index", index)
		if code != 0 || strings.Count(stdout, "MISSING "+dirs[1]) != 1 || !strings.Contains(stdout, "1 of 2 runs are MISSING or REPLACED") || strings.Contains(stdout, "MISSING "+dirs[0]) {
			t.Errorf("runs after moving a folder: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
}
