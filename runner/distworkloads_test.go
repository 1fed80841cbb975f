package runner_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// testTrace is a trace of entries every gap apart, each of its own lengths.
type testTrace struct {
	gap      time.Duration
	ctx, out []int
}

func (tr testTrace) Schedule() []time.Duration {
	out := make([]time.Duration, len(tr.ctx))
	for i := range out {
		out[i] = time.Duration(i) * tr.gap
	}
	return out
}

func (tr testTrace) Fill(i int, seq int64, req *servebench.Request) error {
	text, _ := wordPrompts{}.Prompt(context.Background(), seq, tr.ctx[i])
	req.Prompt, req.ContextTokens, req.MaxOutputTokens = text, tr.ctx[i], tr.out[i]
	idx := i
	req.DatasetIndex = &idx
	return nil
}

// compareRuns checks that a distributed run measured the cells a local run did, each mean TTFT
// within the two runs' 95% intervals of each other, and that every record names a worker; it
// returns the distributed run's records by worker.
func compareRuns(t *testing.T, local, got *memRecorder) map[string]int {
	t.Helper()
	loc := map[string]servebench.CellResult{}
	for _, c := range local.res.Cells {
		loc[c.ID()] = c
	}
	if len(got.res.Cells) != len(local.res.Cells) || len(got.res.Cells) == 0 {
		t.Errorf("%d cells distributed, %d local", len(got.res.Cells), len(local.res.Cells))
	}
	for _, d := range got.res.Cells {
		l, ok := loc[d.ID()]
		if !ok {
			t.Errorf("distributed cell %s: no local cell of that key", d.ID())
			continue
		}
		hw := func(c servebench.CellResult) float64 {
			if r := c.TTFTSeconds.CI95RelHalfWidth(); !math.IsInf(r, 0) && !math.IsNaN(r) {
				return r * c.TTFTSeconds.Mean
			}
			return 0
		}
		diff := math.Abs(d.TTFTSeconds.Mean - l.TTFTSeconds.Mean)
		t.Logf("%s: TTFT mean %.4f s distributed (%d requests), %.4f s local (%d), |Δ| %.4f within ±%.4f", d.ID(), d.TTFTSeconds.Mean, d.RequestsTotal, l.TTFTSeconds.Mean, l.RequestsTotal, diff, hw(d)+hw(l))
		if d.SuccessRate != 1 || diff > hw(d)+hw(l)+1e-6 {
			t.Errorf("%s: TTFT mean %.6f distributed, %.6f local (intervals ±%.6f, ±%.6f), success %.3f", d.ID(), d.TTFTSeconds.Mean, l.TTFTSeconds.Mean, hw(d), hw(l), d.SuccessRate)
		}
	}
	byWorker := map[string]int{}
	for _, r := range got.recs {
		if r.Worker == "" {
			t.Fatalf("record %d of %s names no worker", r.Seq, r.ID())
		}
		byWorker[r.Worker]++
	}
	t.Logf("records by worker: %v", byWorker)
	return byWorker
}

// A dataset's prompts, replayed by 3 workers, give the cells one process gives (on virtual time,
// against a server whose latency depends only on the requests in flight): the same keys and
// mean TTFTs, every entry of the dataset sent, every record naming its worker.
func TestDistributedDataset(t *testing.T) {
	p := controlledPlan(t, 256, 16, "1,3,7", 8)
	var entries []workload.Entry
	for i := range 10 {
		entries = append(entries, workload.Entry{Index: i, Messages: []servebench.Message{{Role: "user", Content: "q" + strings.Repeat(" a", 20*i)}}, OutputTokens: 4 + i%3*4})
	}
	synctest.Test(t, func(t *testing.T) {
		ds := func() workloads {
			return workloads{dataset: workload.NewReplay(&workload.Dataset{Format: "jsonl", Entries: entries})}
		}
		local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, ds())
		got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, ds())
		if err != nil {
			t.Fatal(err)
		}
		if by := compareRuns(t, local, got); len(by) != 3 {
			t.Errorf("records by worker %v, want all 3", by)
		}
		seen := map[int]bool{}
		for _, r := range got.recs {
			if r.DatasetIndex == nil || r.Kind != servebench.KindDataset || r.OutputTokensRequested != entries[*r.DatasetIndex].OutputTokens {
				t.Fatalf("record %+v: want a dataset entry's request with its output length", r)
			}
			seen[*r.DatasetIndex] = true
		}
		if len(seen) != len(entries) {
			t.Errorf("entries sent: %d of %d", len(seen), len(entries))
		}
	})
}

// A trace replayed by 3 workers (its schedule dealt round robin, each entry built where it is
// sent) gives the cell one process gives, its mean TTFT within the intervals; each entry sent
// once, at its lengths.
func TestDistributedTrace(t *testing.T) {
	p := controlledPlan(t, 256, 16, "1", 8)
	tr := testTrace{gap: 40 * time.Millisecond}
	for i := range 30 {
		tr.ctx, tr.out = append(tr.ctx, 16+8*(i%5)), append(tr.out, 4+i%4)
	}
	synctest.Test(t, func(t *testing.T) {
		local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, workloads{trace: tr})
		got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, workloads{trace: tr})
		if err != nil {
			t.Fatal(err)
		}
		if by := compareRuns(t, local, got); len(by) != 3 {
			t.Errorf("records by worker %v, want all 3", by)
		}
		if c := got.res.Cells; len(c) != 1 || c[0].Kind != servebench.KindTrace || c[0].RequestsTotal != 30 {
			t.Fatalf("cells %+v: want the trace's one cell of 30 requests", c)
		}
		seen := map[int]bool{}
		for _, r := range got.recs {
			i := *r.DatasetIndex
			if seen[i] || r.InputTokensRequested != tr.ctx[i] || r.OutputTokensRequested != tr.out[i] {
				t.Fatalf("record %+v: entry %d sent twice or not at its lengths", r, i)
			}
			seen[i] = true
		}
	})
}

// Multi-turn sessions run by 3 workers, synthetic and from a dataset's conversations: the same
// cells as one process (every turn, every fresh-prompt cell), each session's turns all sent by
// one worker, each turn carrying the whole conversation so far.
func TestDistributedSessions(t *testing.T) {
	for _, scripted := range []bool{false, true} {
		t.Run(fmt.Sprintf("scripted=%v", scripted), func(t *testing.T) {
			p := controlledPlan(t, 256, 16, "1", 8)
			p.Sessions = &servebench.SessionPlan{Turns: 3, FirstTurnTokens: 64, TurnTokens: 16, OutputTokens: 8, Concurrency: []int{1, 3}}
			var wl workloads
			if scripted {
				p.Sessions.Turns, p.Sessions.FirstTurnTokens, p.Sessions.TurnTokens = 0, 0, 0
				for i, n := range []int{3, 1, 2, 3, 2, 3, 1} {
					s := runner.ScriptedSession{Index: i}
					for k := range n {
						s.Turns = append(s.Turns, fmt.Sprintf("conversation %d turn %d", i, k+1)+strings.Repeat(" a", 10*(k+1)))
					}
					wl.script = append(wl.script, s)
				}
			}
			synctest.Test(t, func(t *testing.T) {
				local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, wl)
				got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, wl)
				if err != nil {
					t.Fatal(err)
				}
				if by := compareRuns(t, local, got); len(by) < 2 {
					t.Errorf("records by worker %v, want the sessions spread", by)
				}
				// session k of a turn's cell is its k-th sequence number; it keeps its worker
				type session struct{ level, k int }
				worker := map[session]string{}
				cellsOf := map[string][]servebench.Record{}
				for _, r := range got.recs {
					if r.Scenario == stats.SessionScenario {
						cellsOf[r.ID()] = append(cellsOf[r.ID()], r)
					}
				}
				for id, rs := range cellsOf {
					sort.Slice(rs, func(i, j int) bool { return rs[i].Seq < rs[j].Seq })
					for _, r := range rs {
						k := int(r.Seq - rs[0].Seq)
						if scripted {
							k = *r.DatasetIndex
						}
						s := session{r.Concurrency, k}
						if w, ok := worker[s]; ok && w != r.Worker {
							t.Fatalf("%s: session %d sent by %s, its earlier turns by %s", id, k, r.Worker, w)
						}
						worker[s] = r.Worker
						if r.Turn > 1 && r.InputTokens <= 0 {
							t.Errorf("%s: session %d turn %d sent no conversation", id, k, r.Turn)
						}
					}
				}
				if len(worker) == 0 {
					t.Fatal("no session records")
				}
			})
		})
	}
}

// A population of users run by 3 workers: each user lives on one worker (every request of a
// user names the same worker), the populations' cells are the local run's, and the users'
// limit is the local run's ±1.
func TestDistributedPopulation(t *testing.T) {
	for _, search := range []bool{false, true} {
		t.Run(fmt.Sprintf("search=%v", search), func(t *testing.T) { testDistributedPopulation(t, search) })
	}
}

func testDistributedPopulation(t *testing.T, search bool) {
	p := controlledPlan(t, 256, 16, "1", 8)
	p.UseCases = []servebench.UseCase{{Name: "support_chat", ContextTokens: 2048, OutputTokens: 64, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.09)}}}
	p.Capacity.MaxConcurrency = 1
	p.Users = &servebench.UsersPlan{UseCases: []string{"support_chat"}, Populations: []int{2, 6}, ThinkScale: 0.01, MaxUsers: 8, Seed: 1}
	if search {
		p.Users.Populations = nil // the users' search: the most users whose mean TTFT stays ≤ 90 ms
	}
	synctest.Test(t, func(t *testing.T) {
		local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, workloads{})
		got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, workloads{})
		if err != nil {
			t.Fatal(err)
		}
		if by := compareRuns(t, local, got); len(by) != 3 {
			t.Errorf("records by worker %v, want all 3", by)
		}
		lu, du := local.res.Users, got.res.Users
		if len(lu) != 1 || len(du) != 1 || lu[0].Limit == nil || du[0].Limit == nil || *du[0].Limit < *lu[0].Limit-1 || *du[0].Limit > *lu[0].Limit+1 {
			t.Fatalf("users' limits: distributed %+v, local %+v: want one each, within ±1", du, lu)
		}
		t.Logf("users' limit: %d distributed, %d local", *du[0].Limit, *lu[0].Limit)
		home := map[[2]int]string{}
		deep := 0
		for _, r := range got.recs {
			if r.Kind != servebench.KindUsers {
				continue
			}
			u := [2]int{r.Concurrency, r.User}
			if r.User < 1 || r.User > r.Concurrency {
				t.Fatalf("record %d: user %d of %d", r.Seq, r.User, r.Concurrency)
			}
			if w, ok := home[u]; ok && w != r.Worker {
				t.Fatalf("population %d, user %d: requests from %s and %s", u[0], u[1], w, r.Worker)
			}
			home[u] = r.Worker
			if r.Turn > 1 {
				deep++
			}
		}
		if !search && len(home) != 2+6 || deep == 0 {
			t.Errorf("%d users sent, %d requests past a first turn: want all 8 users, conversations going deeper", len(home), deep)
		}
	})
}

// A dedicated scenario's bursts on 3 workers: the cells one process measures, with as many
// measured bursts (each burst released on every worker together).
func TestDistributedScenario(t *testing.T) {
	p := controlledPlan(t, 256, 16, "1", 8)
	p.Scenarios = []servebench.Scenario{{Name: "chat", ContextTokens: 128, OutputTokens: 8, Concurrency: []int{1, 3, 6}}}
	synctest.Test(t, func(t *testing.T) {
		local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, workloads{})
		got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, workloads{})
		if err != nil {
			t.Fatal(err)
		}
		compareRuns(t, local, got)
		lc := map[string]int{}
		for _, c := range local.res.Cells {
			lc[c.ID()] = c.RequestsTotal
		}
		for _, c := range got.res.Cells {
			if c.Kind == servebench.KindScenario && c.RequestsTotal != lc[c.ID()] {
				t.Errorf("%s: %d measured requests distributed, %d local", c.ID(), c.RequestsTotal, lc[c.ID()])
			}
		}
	})
}

// A population replaying a dataset's conversations (users.profiles dataset:PATH) on 3 workers:
// every worker reads the file, each user lives on one worker and replays there the
// conversations it replays in a local run, so the cells are the local run's.
func TestDistributedPopulationFromDataset(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 12 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"conversations": [`)
		for k := range 3 + i%4 {
			if k > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"from": "human", "value": "question %d of conversation %d, asked at some length so that it has a few tokens"}, {"from": "gpt", "value": "answer %d"}`, k, i, k)
		}
		b.WriteString("]}")
	}
	b.WriteString("]")
	path := filepath.Join(t.TempDir(), "conversations.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := controlledPlan(t, 256, 16, "1", 8)
	p.UseCases = []servebench.UseCase{{Name: "support_chat", ContextTokens: 2048, OutputTokens: 64, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.09)}}}
	p.Capacity.MaxConcurrency = 1
	p.Users = &servebench.UsersPlan{UseCases: []string{"support_chat"}, Profiles: map[string]string{"support_chat": "dataset:" + path},
		Populations: []int{2, 6}, ThinkScale: 0.01, MaxUsers: 8, Seed: 1}
	synctest.Test(t, func(t *testing.T) {
		local := runControlledWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 32, "local", nil, workloads{})
		got, _, err := runDistributedWith(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, 3, 3, 0, workloads{})
		if err != nil {
			t.Fatal(err)
		}
		compareRuns(t, local, got)
		if u := got.res.Users; len(u) != 1 || !strings.HasPrefix(u[0].Profile, "dataset:") {
			t.Fatalf("users' results %+v, want the dataset's users", u)
		}
		home := map[[2]int]string{}
		for _, r := range got.recs {
			if r.Kind != servebench.KindUsers {
				continue
			}
			u := [2]int{r.Concurrency, r.User}
			if w, ok := home[u]; ok && w != r.Worker {
				t.Fatalf("population %d, user %d: requests from %s and %s", u[0], u[1], w, r.Worker)
			}
			home[u] = r.Worker
		}
		if len(home) != 2+6 {
			t.Errorf("%d users sent, want 8", len(home))
		}
	})
}
