package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/internal/pgtest"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/page"
)

// TestMain lets a test start this test binary as the servebench command (a second process,
// standing for a second machine): with SERVEBENCH_TEST_AS_CLI=1 it runs the command line.
func TestMain(m *testing.M) {
	if os.Getenv("SERVEBENCH_TEST_AS_CLI") == "1" {
		e := &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, args: os.Args}
		os.Exit(execute(context.Background(), e, os.Args[1:]))
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// cliProcess starts servebench args in a process of its own, with env added to this one's.
func cliProcess(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), "SERVEBENCH_TEST_AS_CLI=1"), env...)
	return cmd
}

// Two runs written at the same time by two processes (two machines) into one PostgreSQL store
// are both listed by servebench runs and served by serve's API; the one whose folder is not on
// this machine is shown from the documents the store keeps of it.
func TestSharedPostgresStore(t *testing.T) {
	url := pgtest.Shared(t).CreateDB(t, "cmd")
	base := simtest.Start(t, simtest.Config{}).URL // over loopback: the runs are processes of their own
	tmp := t.TempDir()
	common := []string{"run", "--url", base + "/v1", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "16",
		"--min-requests", "2", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "none",
		"--scenarios", "none", "--quiet", "--gpu", "none", "--format", "md"}
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i, machine := range []string{"A", "B"} {
		args := append(append([]string(nil), common...), "--label", machine, "--out", filepath.Join(tmp, machine))
		var env []string
		if i == 0 {
			args = append(args, "--index", url) // one names the store on the command line
		} else {
			env = []string{"SERVEBENCH_INDEX=" + url} // the other through the environment
		}
		cmd := cliProcess(t, env, args...)
		wg.Go(func() { outs[i], errs[i] = cmd.CombinedOutput() })
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil || strings.Contains(string(outs[i]), "runs index") {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	ids := []string{runID(t, filepath.Join(tmp, "A")), runID(t, filepath.Join(tmp, "B"))}

	code, stdout, stderr := runCLI(t, "runs", "--index", url)
	if code != 0 {
		t.Fatalf("runs: exit %d\n%s", code, stderr)
	}
	for _, id := range ids {
		if !strings.Contains(stdout, id) {
			t.Errorf("servebench runs does not list %s:\n%s", id, stdout)
		}
	}
	if strings.Contains(stdout, "MISSING") {
		t.Errorf("both folders are here:\n%s", stdout)
	}

	// machine B's folder is not on this one: serve shows B's run from the store
	if err := os.RemoveAll(filepath.Join(tmp, "B")); err != nil {
		t.Fatal(err)
	}
	f := pagesFlags{e: &env{stdout: os.Stdout, stderr: os.Stderr, getenv: func(string) string { return "" }}, index: url}
	p, closeIndex, err := f.pages(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeIndex()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	_, _, body := get(t, srv.URL+"/api/v1/runs")
	var list page.RunList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	byID := map[string]page.RunSummary{}
	for _, r := range list.Runs {
		byID[r.ID] = r
	}
	for _, id := range ids {
		r, ok := byID[id]
		if !ok || r.Status != "completed" || r.Cells != 2 || r.Problem != "" {
			t.Errorf("serve's list has run %s as %+v (listed: %v)", id, r, ok)
		}
	}
	if doc := pageDoc(t, srv.URL+"/api/v1/runs/"+ids[1]); doc.Run.ID != ids[1] || len(doc.Results.Cells) != 2 {
		t.Errorf("the run recorded elsewhere: %+v", doc.Run)
	}
	if code, _, body := get(t, srv.URL+"/runs/"+ids[1]+"/report.html"); code != 200 || !strings.Contains(body, ids[1]) {
		t.Errorf("the report of the run recorded elsewhere: %d", code)
	}
}

// An --index that is neither a path nor a known URL is refused as a usage error and creates
// nothing; a password on the command line is refused without being printed.
func TestIndexLocationRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	for _, tc := range []struct{ index, want string }{
		{"mysql://bob@db/runs", `"mysql" is not a kind of runs index`},
		{"postgres://bob:hunter2@db/runs", "a password on the command line"},
	} {
		for _, verb := range [][]string{{"runs"}, {"serve", "--listen", "127.0.0.1:0"}, {"run", "--out", "x"}} {
			code, _, stderr := runCLI(t, append(verb, "--index", tc.index)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "hunter2") {
				t.Errorf("%s --index %s: exit %d, stderr %q; want %d saying %q and no password", verb[0], tc.index, code, stderr, exitUsage, tc.want)
			}
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("a refused --index left %v behind", entries)
	}
}
