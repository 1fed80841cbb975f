package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// A server that goes away and does not come back within --outage-timeout: the run stops with
// exit 3, status interrupted and a resume hint, keeping the cells it finished; once the server
// is back, --resume completes the run with every cell clean and the outage still listed.
func TestServerGoneExitsThreeAndResumeCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served, down atomic.Int64
		srv := simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/chat/completions") && served.Add(1) == 15 {
					down.Store(1) // the server dies in the middle of the run
				}
				if down.Load() == 1 {
					if r.URL.Path == "/health" {
						http.Error(w, "down", http.StatusServiceUnavailable)
						return
					}
					c, _, _ := w.(http.Hijacker).Hijack() // the connection drops, nothing answered
					c.Close()
					return
				}
				h.ServeHTTP(w, r)
			}
		})
		dir := filepath.Join(t.TempDir(), "run")
		common := []string{"--quiet", "--index", "none", "--no-report"}
		code, _, stderr := runCLI(t, append([]string{"run", "--url", srv.URL + "/v1", "--contexts", "1k", "--concurrency", "1,2,3",
			"--output-tokens", "16", "--min-requests", "6", "--max-requests", "6", "--rounds", "1", "--use-cases", "none", "--scenarios", "none",
			"--outage-timeout", "1s", "--out", dir}, common...)...)
		if code != exitUnreachable || !strings.Contains(stderr, "--resume "+dir) || !strings.Contains(stderr, "stopped answering") {
			t.Fatalf("exit %d, want %d with a resume hint\n%s", code, exitUnreachable, stderr)
		}
		var m servebench.Manifest
		json.Unmarshal(mustRead(t, filepath.Join(dir, "run.json")), &m)
		if m.Status != "interrupted" || m.Error == "" {
			t.Errorf("run.json status %q, error %q", m.Status, m.Error)
		}
		var res servebench.Results
		json.Unmarshal(mustRead(t, filepath.Join(dir, "results.json")), &res)
		if len(res.Cells) == 0 || len(res.Cells) == 3 || len(res.Outages) != 1 || res.Outages[0].Recovered {
			t.Fatalf("after the stop: %d cells, outages %+v", len(res.Cells), res.Outages)
		}

		down.Store(0)
		if code, _, stderr := runCLI(t, append([]string{"run", "--resume", dir}, common...)...); code != 0 {
			t.Fatalf("resume: exit %d\n%s", code, stderr)
		}
		res = servebench.Results{}
		json.Unmarshal(mustRead(t, filepath.Join(dir, "results.json")), &res)
		if len(res.Cells) != 3 || len(res.Outages) != 1 {
			t.Fatalf("after the resume: %d cells, %d outages", len(res.Cells), len(res.Outages))
		}
		for _, c := range res.Cells {
			if c.SuccessRate != 1 {
				t.Errorf("cell %s: success %.3f", c.ID(), c.SuccessRate)
			}
		}
	})
}
