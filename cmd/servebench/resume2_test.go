package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// promptLog is the simulator behind a proxy that remembers every prompt it was sent.
type promptLog struct {
	mu   sync.Mutex
	seen map[[32]byte]int
}

func (l *promptLog) dups() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.seen {
		n += c - 1
	}
	return n
}

func promptLoggingServer(t *testing.T) (*simtest.Server, *promptLog) {
	t.Helper()
	log := &promptLog{seen: map[[32]byte]int{}}
	srv := simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var req struct {
					Stream   bool `json:"stream"`
					Messages []struct {
						Content string `json:"content"`
					} `json:"messages"`
				}
				// only benchmark requests (streamed); calibration probes repeat by design
				if json.Unmarshal(body, &req) == nil && req.Stream && len(req.Messages) > 0 {
					log.mu.Lock()
					log.seen[sha256.Sum256([]byte(req.Messages[len(req.Messages)-1].Content))]++
					log.mu.Unlock()
				}
			}
			h.ServeHTTP(w, r)
		}
	})
	return srv, log
}

// Resume after a kill that left requests unrecorded (here: the record with the highest seq,
// and one in the middle, as if they were in flight): numbering continues after the highest seq
// ever written, no prompt reaches the server twice, earlier records stay byte for byte, and
// run.json keeps both attempts.
func TestResumeNeverReusesSeqOrPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, log := promptLoggingServer(t)
		dir := filepath.Join(t.TempDir(), "run")
		common := []string{"--quiet", "--index", "none", "--no-report"}
		code, _, stderr := runCLI(t, append([]string{"run", "--url", srv.URL + "/v1", "--contexts", "1k", "--concurrency", "1,2",
			"--output-tokens", "16", "--min-requests", "4", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--out", dir}, common...)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		// as if killed during the second cell: its result and two of its records never written
		resPath, recPath := filepath.Join(dir, "results.json"), filepath.Join(dir, "requests.jsonl")
		var res servebench.Results
		json.Unmarshal(mustRead(t, resPath), &res)
		res.Cells = res.Cells[:1]
		b, _ := json.Marshal(res)
		os.WriteFile(resPath, b, 0o644)
		lines := strings.SplitAfter(strings.TrimSuffix(string(mustRead(t, recPath)), "\n"), "\n")
		maxAt := 0
		for i, l := range lines {
			var r servebench.Record
			json.Unmarshal([]byte(l), &r)
			var m servebench.Record
			json.Unmarshal([]byte(lines[maxAt]), &m)
			if r.Seq > m.Seq {
				maxAt = i
			}
		}
		kept := append(append([]string(nil), lines[:maxAt]...), lines[maxAt+1:]...)
		kept = append(kept[:len(kept)/2], kept[len(kept)/2+1:]...)
		before := strings.Join(kept, "")
		if !strings.HasSuffix(before, "\n") {
			before += "\n"
		}
		os.WriteFile(recPath, []byte(before), 0o644)
		var first servebench.Manifest
		json.Unmarshal(mustRead(t, filepath.Join(dir, "run.json")), &first)

		code, _, stderr = runCLI(t, append([]string{"run", "--resume", dir}, common...)...)
		if code != 0 {
			t.Fatalf("resume: exit %d\n%s", code, stderr)
		}
		after := string(mustRead(t, recPath))
		if !strings.HasPrefix(after, before) {
			t.Errorf("the records written before the resume changed")
		}
		seqs := map[int64]bool{}
		for _, r := range readRecords(t, recPath) {
			if seqs[r.Seq] {
				t.Errorf("seq %d twice", r.Seq)
			}
			seqs[r.Seq] = true
		}
		if n := log.dups(); n > 0 {
			t.Errorf("the server saw %d prompt(s) a second time", n)
		}
		var m servebench.Manifest
		json.Unmarshal(mustRead(t, filepath.Join(dir, "run.json")), &m)
		if len(m.Attempts) != 2 || !m.StartedAt.Equal(first.StartedAt) || m.Attempts[0].ID == m.Attempts[1].ID ||
			!m.Attempts[0].StartedAt.Equal(first.StartedAt) || m.Attempts[1].Status != "completed" || m.Attempts[1].Server.Model == "" {
			t.Errorf("attempts %+v, started %v (first %v)", m.Attempts, m.StartedAt, first.StartedAt)
		}
		if strings.Join(m.Command, " ") != strings.Join(first.Command, " ") || !strings.Contains(strings.Join(m.Attempts[1].Command, " "), "--resume") {
			t.Errorf("commands: run %q, attempts %q / %q", m.Command, m.Attempts[0].Command, m.Attempts[1].Command)
		}
		json.Unmarshal(mustRead(t, resPath), &res)
		if len(res.Cells) != 2 {
			t.Errorf("%d cells after the resume, want 2", len(res.Cells))
		}
	})
}

// snapshot returns every file of dir with its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		out[e.Name()] = string(mustRead(t, filepath.Join(dir, e.Name())))
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Resuming against a server with another identity is refused without writing anything, unless
// --resume-anyway; --resume of a folder that is not a run and --out into a folder of other files
// are refused without writing anything.
func TestResumeAndOutFolderChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, _ := promptLoggingServer(t)
		dir := filepath.Join(t.TempDir(), "run")
		common := []string{"--quiet", "--index", "none", "--no-report"}
		if code, _, stderr := runCLI(t, append([]string{"run", "--url", srv.URL + "/v1", "--contexts", "1k", "--concurrency", "1",
			"--output-tokens", "16", "--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--out", dir}, common...)...); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		// the run was measured against a server with a shorter maximum length
		var m map[string]any
		json.Unmarshal(mustRead(t, filepath.Join(dir, "run.json")), &m)
		m["attempts"].([]any)[0].(map[string]any)["server"].(map[string]any)["max_model_len"] = 4096
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
		os.Remove(filepath.Join(dir, "results.json"))
		was := snapshot(t, dir)
		code, _, stderr := runCLI(t, append([]string{"run", "--resume", dir}, common...)...)
		if code != exitUsage || !strings.Contains(stderr, "maximum model length 4096") || !strings.Contains(stderr, "--resume-anyway") {
			t.Errorf("resume against another server: exit %d\n%s", code, stderr)
		}
		if !sameFiles(was, snapshot(t, dir)) {
			t.Errorf("the refused resume wrote into the folder")
		}
		if code, _, stderr := runCLI(t, append([]string{"run", "--resume", dir, "--resume-anyway"}, common...)...); code != 0 {
			t.Errorf("--resume-anyway: exit %d\n%s", code, stderr)
		}

		// a folder whose run.json is some other JSON
		other := t.TempDir()
		os.WriteFile(filepath.Join(other, "run.json"), []byte(`{"name": "my app", "version": 3}`), 0o644)
		was = snapshot(t, other)
		code, _, stderr = runCLI(t, append([]string{"run", "--resume", other}, common...)...)
		if code != exitUsage || !strings.Contains(stderr, "not a servebench run folder") {
			t.Errorf("resume of another folder: exit %d\n%s", code, stderr)
		}
		if !sameFiles(was, snapshot(t, other)) {
			t.Errorf("the refused resume wrote into the folder")
		}

		// --out into the user's own folder
		mine := t.TempDir()
		os.WriteFile(filepath.Join(mine, "report.html"), []byte("<p>my report</p>"), 0o644)
		os.WriteFile(filepath.Join(mine, "requests.jsonl"), []byte("mine\n"), 0o644)
		was = snapshot(t, mine)
		code, _, stderr = runCLI(t, append([]string{"run", "--url", srv.URL + "/v1", "--contexts", "1k", "--concurrency", "1",
			"--output-tokens", "16", "--min-requests", "2", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--out", mine}, common...)...)
		if code != exitUsage || !strings.Contains(stderr, "not empty") {
			t.Errorf("--out into a folder of other files: exit %d\n%s", code, stderr)
		}
		if !sameFiles(was, snapshot(t, mine)) {
			t.Errorf("--out wrote into the user's folder")
		}
	})
}
