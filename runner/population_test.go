package runner_test

import (
	"context"
	"sort"
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
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 5})
		p := smallPlan(t, "1k", "1", 16)
		p.UseCases = []servebench.UseCase{{Name: "support_chat", Title: "Support Chat", ContextTokens: 8192, OutputTokens: 256,
			Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(5)}}}
		p.Capacity.MaxConcurrency = 1 // the cold search stops at once
		p.Users = &servebench.UsersPlan{UseCases: []string{"support_chat"}, Populations: []int{2, 6}, ThinkScale: 0.02, MaxUsers: 8, Seed: 1}
		r, rec := newRunner(t, tg, p, nil)
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		if len(res.Users) != 1 {
			t.Fatalf("%d users' results, want 1", len(res.Users))
		}
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
