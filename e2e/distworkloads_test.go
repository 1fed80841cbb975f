package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// A coordinator with 3 worker processes runs every workload a single process runs: a dataset's
// prompts, a trace's schedule, multi-turn sessions and a population of users. Each gives the
// cells the local run gives, TTFT agreeing cell by cell (agree), every record naming its worker;
// each session's turns come from one worker, and each user's requests too; the population's
// users' limit is the local one ±1.
func TestDistributedWorkloads(t *testing.T) {
	base := startSim(t)
	dir := t.TempDir()
	dataset := filepath.Join(dir, "prompts.jsonl")
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf(`{"prompt": "question %d:%s", "output_tokens": %d}`, i, strings.Repeat(" word", 40+30*i), 16+8*(i%3)))
	}
	trace := filepath.Join(dir, "trace.jsonl")
	var tl []string
	for i := range 30 {
		tl = append(tl, fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d]}`, 60*i, 600+64*(i%4), 16+4*(i%3), i%3))
	}
	if err := os.WriteFile(dataset, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trace, []byte(strings.Join(tl, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := func(name, body string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"dataset", []string{"--config", plan("dataset", "use_cases: []\nscenarios: []\n"), "--dataset", dataset, "--concurrency", "3", "--max-requests", "60"}},
		{"trace", []string{"--config", plan("trace", "use_cases: []\nscenarios: []\n"), "--trace", trace, "--mode", "rate"}},
		{"sessions", []string{"--config", plan("sessions", `use_cases: []
scenarios: []
sessions:
  turns: 3
  first_turn_tokens: 1k
  turn_tokens: 128
  output_tokens: 32
  concurrency: [3]
  count: 6
`)}},
		{"users", []string{"--config", plan("users", supportChatPlan("populations: [3, 6]")), "--concurrency", "2", "--max-requests", "60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			common := append([]string{"--url", base + "/v1", "--contexts", "1k", "--output-tokens", "32", "--quiet", "--index", "none", "--gpu", "none", "--no-report"}, tc.args...)
			port := freePort(t)
			f := newFleet(t, port, portOf(t, base))
			local, distDir, _ := f.localThenDistributed(port, common, nil)
			lres, dres := readResults(t, local), readResults(t, distDir)
			lcells := map[string]servebench.CellResult{}
			for _, c := range lres.Cells {
				lcells[c.ID()] = c
			}
			// Where a cell's intervals do not overlap, a second local run measures how far two runs
			// of this machine differ (it is loaded, and the intervals of 30 requests are narrow): the
			// distributed cell must then agree within that run-to-run spread. A cell the client could
			// not keep up with in either run is only logged (below), so it asks for no second run.
			l2cells := map[string]servebench.CellResult{}
			for _, d := range dres.Cells {
				l, ok := lcells[d.ID()]
				if ok && !l.Validity.Has(servebench.ReasonClientBound) && !d.Validity.Has(servebench.ReasonClientBound) &&
					!agree(l.TTFTSeconds, servebench.Summary{}, false, d.TTFTSeconds) {
					local2 := filepath.Join(t.TempDir(), "local2")
					start := time.Now()
					f.spawn("local2", append([]string{"run", "--out", local2}, common...)...)
					if code := f.wait()["local2"]; code != 0 {
						t.Fatalf("second local run: exit %d\n%s", code, f.logs())
					}
					took(t, "the second local run (cell "+d.ID()+" disagrees)", start)
					for _, c := range readResults(t, local2).Cells {
						l2cells[c.ID()] = c
					}
					break
				}
			}
			if len(dres.Cells) != len(lres.Cells) {
				t.Errorf("%d cells distributed, %d local", len(dres.Cells), len(lres.Cells))
			}
			for _, d := range dres.Cells {
				l, ok := lcells[d.ID()]
				if !ok {
					t.Errorf("distributed cell %s: the local run has no such cell", d.ID())
					continue
				}
				t.Logf("cell %s: TTFT %.1f ms %v distributed (%d requests), %.1f ms %v local (%d)", d.ID(), 1e3*d.TTFTSeconds.Mean, d.TTFTSeconds.CI95, d.RequestsTotal,
					1e3*l.TTFTSeconds.Mean, l.TTFTSeconds.CI95, l.RequestsTotal)
				report := t.Errorf
				if l.Validity.Has(servebench.ReasonClientBound) || d.Validity.Has(servebench.ReasonClientBound) {
					report = t.Logf // the client could not keep up: the cell does not measure the server
				}
				l2, haveL2 := l2cells[d.ID()]
				if haveL2 {
					t.Logf("cell %s: TTFT %.1f ms %v in a second local run", d.ID(), 1e3*l2.TTFTSeconds.Mean, l2.TTFTSeconds.CI95)
				}
				if d.SuccessRate != 1 || !agree(l.TTFTSeconds, l2.TTFTSeconds, haveL2, d.TTFTSeconds) {
					report("cell %s: TTFT %.4f %v distributed, %.4f %v local, success %.3f: want the intervals to overlap", d.ID(), d.TTFTSeconds.Mean, d.TTFTSeconds.CI95, l.TTFTSeconds.Mean, l.TTFTSeconds.CI95, d.SuccessRate)
				}
			}
			recs := readRecords(t, filepath.Join(distDir, "requests.jsonl"))
			byWorker := map[string]int{}
			home := map[string]string{} // a session's or a user's worker
			for _, r := range recs {
				byWorker[r.Worker]++
				if r.Kind == servebench.KindUsers {
					who := fmt.Sprintf("users %d: user %d", r.Concurrency, r.User)
					if w, ok := home[who]; ok && w != r.Worker {
						t.Errorf("%s: requests from %s and %s", who, w, r.Worker)
					}
					home[who] = r.Worker
				}
			}
			t.Logf("records by worker %v", byWorker)
			if byWorker[""] != 0 || len(byWorker) < 2 {
				t.Errorf("records by worker %v: every record must name a worker, the load spread over them", byWorker)
			}
			if tc.name == "users" {
				if len(lres.Users) != 1 || len(dres.Users) != 1 || lres.Users[0].Limit == nil || dres.Users[0].Limit == nil {
					t.Fatalf("users' results: local %s, distributed %s", js(lres.Users), js(dres.Users))
				}
				ll, dl := *lres.Users[0].Limit, *dres.Users[0].Limit
				t.Logf("users' limit: local %d, distributed %d", ll, dl)
				if ll-dl > 1 || dl-ll > 1 {
					t.Errorf("users' limit %d distributed vs %d local: more than ±1 apart", dl, ll)
				}
			}
		})
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
