package e2e

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/servebench/servebench"
)

// A users' capacity search (no fixed populations) run by a coordinator and 3 worker processes
// finds the local run's users' limit ±1, every population split over the workers as the local
// run's users: each user on exactly one worker (users k, k + n, … on the k-th of the n workers
// the population runs on), every user of the population sending, each user's conversation the
// one it has in the local run (the same turns, prompt tokens and answers asked), and each population's
// verdict taken on the merged records of all its workers (its cell's measured requests are the
// measured records of every worker). Every record names its worker, and every user's record its
// user.
//
// The simulator (e2e/internal/distsim: the fast profile, slowed) holds about 36K tokens of KV
// cache, the histories of about 11 of these chat users: the search starts at the cold-prompt
// limit (1), climbs to 11, then in small steps to where the users evict each other's histories
// and their mean TTFT passes 0.5 s (13 or 14 users, in five or six levels of a few seconds each:
// each run takes under a minute).
func TestDistributedUsersSearch(t *testing.T) {
	base := startSim(t)
	plan := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(plan, []byte(supportChatPlan("max_users: 64")), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--config", plan, "--url", base + "/v1", "--contexts", "1k", "--output-tokens", "32", "--concurrency", "2", "--max-requests", "60",
		"--quiet", "--index", "none", "--gpu", "none", "--no-report"}
	port := freePort(t)
	f := newFleet(t, port, portOf(t, base))
	local, dist, _ := f.localThenDistributed(port, common, nil)

	lres, dres := readResults(t, local), readResults(t, dist)
	if len(lres.Users) != 1 || len(dres.Users) != 1 || lres.Users[0].Limit == nil || dres.Users[0].Limit == nil {
		t.Fatalf("users' results: local %s, distributed %s: want a limit in each", js(lres.Users), js(dres.Users))
	}
	levels := func(u servebench.UsersCapacity) []string {
		var s []string
		for _, p := range u.Points {
			s = append(s, fmt.Sprintf("%d:%v", p.Users, p.Pass))
		}
		return s
	}
	lu, du := lres.Users[0], dres.Users[0]
	t.Logf("users' limit: local %d %v (why %s; levels %v), distributed %d %v (why %s; levels %v)",
		*lu.Limit, js(lu.LimitRange), lu.Why, levels(lu), *du.Limit, js(du.LimitRange), du.Why, levels(du))
	if d := *du.Limit - *lu.Limit; d < -1 || d > 1 {
		t.Errorf("users' limit %d distributed vs %d local: more than ±1 apart", *du.Limit, *lu.Limit)
	}
	if len(du.Points) < 3 {
		t.Errorf("the distributed search measured %d populations %v: want a search (a climb and a bracket), not one level", len(du.Points), levels(du))
	}

	// what each user of each population sent, in order: its turn, its prompt's tokens as the
	// server counted them (usage: a user's record asks for no prompt length, its prompt is the
	// history) and the answer's tokens it asked for
	type said struct{ turn, in, out int }
	type userKey struct{ users, user int }
	conversations := func(recs []servebench.Record) map[userKey][]said {
		slices.SortStableFunc(recs, func(a, b servebench.Record) int { return cmp.Compare(a.StartOffsetSeconds, b.StartOffsetSeconds) })
		c := map[userKey][]said{}
		for _, r := range recs {
			if r.Kind == servebench.KindUsers && r.OK() {
				k := userKey{r.Concurrency, r.User}
				c[k] = append(c[k], said{r.Turn, r.InputTokens, r.OutputTokensRequested})
			}
		}
		return c
	}
	lrecs, drecs := readRecords(t, filepath.Join(local, "requests.jsonl")), readRecords(t, filepath.Join(dist, "requests.jsonl"))
	home := map[userKey]string{}
	measured := map[int]int{}         // population → its measured records, all workers
	from := map[int]map[string]bool{} // population → the workers its measured records came from
	slot := map[int]map[int]string{}  // population → (user − 1) mod its workers → the worker
	for _, r := range drecs {
		if r.Worker == "" {
			t.Fatalf("record %d (%s, concurrency %d) names no worker", r.Seq, r.Kind, r.Concurrency)
		}
		if r.Kind != servebench.KindUsers {
			continue
		}
		n := r.Concurrency
		if r.User < 1 || r.User > n {
			t.Fatalf("record %d: user %d of a population of %d", r.Seq, r.User, n)
		}
		k := userKey{n, r.User}
		if w, ok := home[k]; ok && w != r.Worker {
			t.Errorf("population %d, user %d: requests from %s and %s: a user lives on one worker", n, r.User, w, r.Worker)
		}
		home[k] = r.Worker
		// a population of n users runs on min(n, 3) workers, users dealt round robin
		if slot[n] == nil {
			slot[n], from[n] = map[int]string{}, map[string]bool{}
		}
		s := (r.User - 1) % min(n, 3)
		if w, ok := slot[n][s]; ok && w != r.Worker {
			t.Errorf("population %d: users %d and another of slot %d on %s and %s: want users k, k + %d, … on one worker", n, r.User, s, w, r.Worker, min(n, 3))
		}
		slot[n][s] = r.Worker
		if !r.Warmup {
			measured[n]++
			from[n][r.Worker] = true
		}
	}
	for _, c := range dres.Cells {
		if c.Kind != servebench.KindUsers {
			continue
		}
		n := c.Concurrency
		for u := 1; u <= n; u++ {
			if _, ok := home[userKey{n, u}]; !ok {
				t.Errorf("population %d: user %d sent nothing", n, u)
			}
		}
		if len(slot[n]) != min(n, 3) || len(from[n]) != min(n, 3) {
			t.Errorf("population %d: users on %d workers, measured records from %v: want %d", n, len(slot[n]), from[n], min(n, 3))
		}
		if c.RequestsTotal != measured[n] {
			t.Errorf("population %d: the cell counts %d requests, the workers' measured records are %d: its verdict must rest on all of them", n, c.RequestsTotal, measured[n])
		}
	}
	// Each user says in the distributed run what it says in the local run, as far as both ran:
	// the same turns with prompts of the same tokens and the same answer lengths asked (a turn
	// re-sends the history, the simulator's answers included, so the prompts agree while every
	// answer has its asked length, as the simulator's do).
	lc, dc := conversations(lrecs), conversations(drecs)
	compared := 0
	for k, d := range dc {
		l, ok := lc[k]
		if !ok {
			continue // a population only one of the searches measured
		}
		n := min(len(l), len(d))
		if !slices.Equal(l[:n], d[:n]) {
			t.Errorf("population %d, user %d: distributed %v, local %v: want the local run's conversation", k.users, k.user, d[:n], l[:n])
		}
		compared++
	}
	if compared == 0 {
		t.Error("no user's conversation was compared: the two searches measured no population in common")
	}
	t.Logf("compared %d users' conversations; records: local %d, distributed %d", compared, len(lrecs), len(drecs))
}

// supportChatPlan is the plan of both distributed users' tests: one chat use case at 8K whose
// limit is a mean TTFT of 0.5 s (its cold-prompt search capped at 1), and its users (think
// times × 0.02, seed 3) sized by sizing: "max_users: 64" for a search, "populations: [3, 6]"
// for fixed populations.
func supportChatPlan(sizing string) string {
	return `use_cases:
  - name: support_chat
    context: 8k
    output_tokens: 64
    thresholds:
      ttft_seconds_max: 0.5
capacity:
  max_concurrency: 1
scenarios: []
users:
  use_cases: [support_chat]
  ` + sizing + `
  think_scale: 0.02
  seed: 3
`
}
