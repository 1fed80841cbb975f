package runner_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
)

// Populations of chat users against the simulator over HTTP: each population's cell is a users
// cell whose requests the server partly served from its prefix cache (not flagged as
// contamination), every user's requests follow one another, conversations go deeper than their
// first turn, and the results carry the use case's users' capacity with what the server showed
// at each population.
func TestPopulationsOfUsers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, rec, p := supportChat(t, 5, 2, 6)
		res := r.Results()
		u := res.Users[0]
		if u.Profile != "chat" || len(u.Points) != 2 || u.Limit == nil || *u.Limit != 6 {
			t.Fatalf("users' result: profile %q, %d points, limit %v", u.Profile, len(u.Points), u.Limit)
		}
		for _, e := range u.Points {
			if e.CachedShare == nil || *e.CachedShare < 0.2 {
				t.Errorf("%d users: cached share %v, want the histories served from the cache", e.Users, e.CachedShare)
			}
			if e.KVCacheUsageMax == nil || *e.KVCacheUsageMax <= 0 || e.Preemptions == nil {
				t.Errorf("%d users: KV-cache usage %v, preemptions %v: want what the server's metrics showed", e.Users, e.KVCacheUsageMax, e.Preemptions)
			}
		}
		for _, c := range res.Cells {
			if c.Kind == servebench.KindUsers && c.CacheContaminated {
				t.Errorf("users cell %s flagged as cache-contaminated", c.ID())
			}
		}
		// The run folder gives the same users' result again (the server's KV-cache usage aside).
		again, err := runner.Recompute(servebench.Manifest{Plan: p, Server: r.Server}, rec.recs, rec.logs)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Users) != 1 || again.Users[0].Limit == nil || *again.Users[0].Limit != *u.Limit || len(again.Users[0].Points) != 2 {
			t.Errorf("recomputed users' results %+v, want the run's", again.Users)
		}
		byUser := map[[2]int][]servebench.Record{}
		deep := 0
		for _, x := range rec.recs {
			if x.Kind != servebench.KindUsers {
				continue
			}
			if x.User < 1 || x.User > x.Concurrency {
				t.Fatalf("record %d: user %d of %d", x.Seq, x.User, x.Concurrency)
			}
			byUser[[2]int{x.Concurrency, x.User}] = append(byUser[[2]int{x.Concurrency, x.User}], x)
			if x.Turn > 1 {
				deep++
			}
		}
		if len(byUser) != 8 || deep == 0 {
			t.Fatalf("%d users sent, %d requests past a first turn", len(byUser), deep)
		}
		for k, rs := range byUser {
			sort.Slice(rs, func(i, j int) bool { return rs[i].StartOffsetSeconds < rs[j].StartOffsetSeconds })
			for i := 1; i < len(rs); i++ {
				if rs[i].StartOffsetSeconds < rs[i-1].EndOffsetSeconds {
					t.Fatalf("population %d, user %d: requests %d and %d overlap", k[0], k[1], rs[i-1].Seq, rs[i].Seq)
				}
			}
		}
	})
}

// A users' search against a server that says its KV cache's size (run.json's
// server.kv_cache_tokens, from vLLM's cache_config_info) heeds how many users' histories fit in
// it: it starts at that many users (not at the cold-prompt limit, far below), and from there
// climbs by an eighth at first, the step doubling while populations keep passing; a
// recomputation from the run folder, with the same server figures, takes the same levels to the
// same limit.
func TestUsersSearchHeedsKVCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 5})
		p := smallPlan(t, "1k", "1", 16)
		p.UseCases = []servebench.UseCase{{Name: "support_chat", Title: "Support Chat", ContextTokens: 8192, OutputTokens: 256,
			Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(2)}}}
		p.Capacity.MaxConcurrency = 1 // the cold search stops at once: its limit, 1, is far below the fit
		p.Users = &servebench.UsersPlan{UseCases: []string{"support_chat"}, ThinkScale: 0.02, MaxUsers: 64, Seed: 1}
		r, rec := newRunner(t, tg, p, nil)
		r.Server.KVCacheTokens = sim.FastProfile.KVCapacityTokens()
		fit := runner.UsersFit(r.Server, p.Users, "chat", 8192+256)
		if fit < 3 {
			t.Fatalf("%d users' histories fit in the fast profile's %d-token KV cache: too few to test the climb", fit, r.Server.KVCacheTokens)
		}
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		if len(res.Users) != 1 || res.Users[0].Limit == nil {
			t.Fatalf("users' results %+v", res.Users)
		}
		u := res.Users[0]
		pass := map[int]bool{}
		for _, e := range u.Points {
			pass[e.Users] = e.Pass
		}
		// The levels in the order measured: by their first request.
		first := map[int]int64{}
		for _, x := range rec.recs {
			if s, ok := first[x.Concurrency]; x.Kind == servebench.KindUsers && (!ok || x.Seq < s) {
				first[x.Concurrency] = x.Seq
			}
		}
		var levels []int
		for n := range first {
			levels = append(levels, n)
		}
		sort.Slice(levels, func(i, j int) bool { return first[levels[i]] < first[levels[j]] })
		t.Logf("fit %d users in %d tokens; levels %v; limit %d (%s)", fit, r.Server.KVCacheTokens, levels, *u.Limit, u.LimitKind)
		if len(levels) < 2 || levels[0] != fit {
			t.Fatalf("levels %v: want the search to start at the fit, %d users", levels, fit)
		}
		for i, n := range levels {
			lo, above, failed := 0, 0, false
			for _, m := range levels[:i] {
				if pass[m] && m > lo {
					lo = m
				}
				if pass[m] && m > fit {
					above++
				}
				failed = failed || !pass[m]
			}
			if step := max(1, (lo+7)/8) << above; !failed && lo >= fit && n > lo+step {
				t.Errorf("levels %v: %d users after %d passed (%d above the fit, %d): a step over %d", levels, n, lo, above, fit, step)
			}
		}
		again, err := runner.Recompute(servebench.Manifest{Plan: p, Server: r.Server}, rec.recs, rec.logs)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Users) != 1 || again.Users[0].Limit == nil || *again.Users[0].Limit != *u.Limit || len(again.Users[0].Points) != len(u.Points) {
			t.Errorf("recomputed users' results %+v, want the run's (limit %d, %d points)", again.Users, *u.Limit, len(u.Points))
		}
	})
}

// Fixed populations whose smallest already fails decide no limit ("below N", as the page's
// what-if says), not a limit interpolated from an unmeasured 0 users.
func TestFixedPopulationsBelowTheSmallest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, _ := supportChat(t, 1e-6, 3)
		u := r.Results().Users[0]
		if u.Limit != nil || u.LimitKind != "" || u.FirstFailing == nil || *u.FirstFailing != 3 || !strings.Contains(u.Note, "do not bracket") || u.RequestsSpent == 0 {
			t.Errorf("3 users failing: limit %v (%q), first failing %v, spent %d, note %q; want no limit below 3", u.Limit, u.LimitKind, u.FirstFailing, u.RequestsSpent, u.Note)
		}
	})
}

// supportChat runs fixed populations pops of chat users of a support-chat use case (8K context,
// 256-token answers, mean TTFT at most ttftMax seconds) against the fast simulator, its cold
// search stopping at once (ceiling 1), and returns the runner, what it recorded and its plan;
// the run must end with one users' result.
func supportChat(t *testing.T, ttftMax float64, pops ...int) (*runner.Runner, *memRecorder, servebench.Plan) {
	t.Helper()
	tg := startSim(t, sim.FastProfile, sim.Options{Seed: 5})
	p := smallPlan(t, "1k", "1", 16)
	p.UseCases = []servebench.UseCase{{Name: "support_chat", Title: "Support Chat", ContextTokens: 8192, OutputTokens: 256,
		Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(ttftMax)}}}
	p.Capacity.MaxConcurrency = 1 // the cold search stops at once
	p.Users = &servebench.UsersPlan{UseCases: []string{"support_chat"}, Populations: pops, ThinkScale: 0.02, MaxUsers: 8, Seed: 1}
	r, rec := newRunner(t, tg, p, nil)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(r.Results().Users); n != 1 {
		t.Fatalf("%d users' results, want 1", n)
	}
	return r, rec, p
}
