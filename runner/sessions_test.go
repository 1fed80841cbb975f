package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/stats"
)

// sent is one request as the client was asked to send it, with the answer it kept.
type sent struct {
	key    servebench.CellKey
	msgs   []servebench.Message
	answer *strings.Builder
	ok     bool
}

// keepSent wraps a runner's client so the test sees every request and its kept answer.
func keepSent(r interface {
	Do(context.Context, *servebench.Request) servebench.Record
}, mu *sync.Mutex, out *[]sent) servebench.Client {
	return servebench.ClientFunc(func(ctx context.Context, req *servebench.Request) servebench.Record {
		rec := r.Do(ctx, req)
		mu.Lock()
		*out = append(*out, sent{key: req.Cell, msgs: req.Messages, answer: req.Answer, ok: rec.OK()})
		mu.Unlock()
		return rec
	})
}

func sessionsPlan(t *testing.T) servebench.Plan {
	t.Helper()
	p := smallPlan(t, "1k", "1", 16)
	p.Sessions = &servebench.SessionPlan{Turns: 4, FirstTurnTokens: 4096, TurnTokens: 256, OutputTokens: 16, Concurrency: []int{1, 2}}
	return p
}

// Multi-turn sessions against the simulator over HTTP: every turn after the first resends the
// conversation with the model's own answers; turns ≥ 2 are served partly from the prefix cache
// (cached tokens reported) and reach their first token sooner than fresh prompts of the same
// length measured beside them.
func TestSessionsHitThePromptCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 3})
		p := sessionsPlan(t)
		r, _ := newRunner(t, tg, p, nil)
		var mu sync.Mutex
		var reqs []sent
		r.Client = keepSent(r.Client, &mu, &reqs)
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		type k struct {
			scen    string
			n, turn int
		}
		cells := map[k]servebench.CellResult{}
		for _, c := range res.Cells {
			if c.Scenario == "sweep" {
				t.Errorf("sweep cell %s measured: sessions replace the grid", c.ID())
			}
			cells[k{c.Scenario, c.Concurrency, c.Turn}] = c
		}
		if len(cells) != 2*(4+3) {
			t.Fatalf("%d cells, want 14 (4 session turns and 3 fresh turns at 2 levels): %v", len(cells), cells)
		}
		for _, n := range []int{1, 2} {
			for turn := 1; turn <= 4; turn++ {
				s := cells[k{stats.SessionScenario, n, turn}]
				if s.RequestsSucceeded != 4 {
					t.Errorf("c=%d turn %d: %d of %d succeeded, want 4 sessions", n, turn, s.RequestsSucceeded, s.RequestsTotal)
				}
				if turn == 1 {
					if s.CachedTokensMean == nil || *s.CachedTokensMean != 0 {
						t.Errorf("c=%d turn 1: cached mean %v, want 0 (a new prompt)", n, s.CachedTokensMean)
					}
					continue
				}
				f := cells[k{stats.FreshScenario, n, turn}]
				if s.CachedTokensMean == nil || *s.CachedTokensMean <= 0 {
					t.Errorf("c=%d turn %d: cached_tokens_mean %v, want > 0", n, turn, s.CachedTokensMean)
				}
				if f.CachedTokensMean != nil && *f.CachedTokensMean != 0 {
					t.Errorf("c=%d turn %d fresh: cached %v, want 0", n, turn, *f.CachedTokensMean)
				}
				if f.ContextTokens != int(s.InputTokensMean+0.5) {
					t.Errorf("c=%d turn %d: fresh prompts of %d tokens, want the session's %.0f", n, turn, f.ContextTokens, s.InputTokensMean)
				}
				if !(s.TTFTSeconds.Mean < f.TTFTSeconds.Mean) {
					t.Errorf("c=%d turn %d: cached TTFT %v not below fresh %v", n, turn, s.TTFTSeconds.Mean, f.TTFTSeconds.Mean)
				}
				if s.CacheContaminated || f.CacheContaminated {
					t.Errorf("c=%d turn %d: contamination flags session %v fresh %v", n, turn, s.CacheContaminated, f.CacheContaminated)
				}
			}
		}
		if rows := stats.PromptCaching(res.Cells); len(rows) != 8 || rows[1].Speedup == nil || *rows[1].Speedup <= 1 {
			t.Errorf("prompt caching rows %+v", rows)
		}

		// The conversations: a session's turn t carries its turn-1 prompt, then each earlier turn's
		// user text and the answer the client kept for it, exactly.
		answers := map[string]string{} // user text → the answer to it
		for _, s := range reqs {
			if s.key.Scenario != stats.SessionScenario {
				if s.answer != nil {
					t.Errorf("%s: a non-session request kept its answer", s.key.ID())
				}
				continue
			}
			if s.answer == nil || (s.ok && s.answer.Len() == 0) {
				t.Fatalf("%s: session request kept no answer", s.key.ID())
			}
			answers[s.msgs[len(s.msgs)-1].Content] = s.answer.String()
		}
		checked := 0
		for _, s := range reqs {
			if s.key.Scenario != stats.SessionScenario {
				continue
			}
			if len(s.msgs) != 2*s.key.Turn-1 {
				t.Errorf("%s: %d messages, want %d", s.key.ID(), len(s.msgs), 2*s.key.Turn-1)
				continue
			}
			for i := 0; i+1 < len(s.msgs); i += 2 {
				u, a := s.msgs[i], s.msgs[i+1]
				if u.Role != "user" || a.Role != "assistant" {
					t.Errorf("%s: roles %q, %q at %d", s.key.ID(), u.Role, a.Role, i)
				}
				if want, ok := answers[u.Content]; !ok || a.Content != want || want == "" {
					t.Errorf("%s: message %d is not the model's answer to the turn before it", s.key.ID(), i+1)
				}
				checked++
			}
		}
		if checked != 2*4*(1+2+3) {
			t.Errorf("checked %d earlier turns, want 48", checked)
		}
	})
}

// A resumed run whose sessions level was cut short measures that level again whole (its
// conversations were not saved) and keeps one cell per turn.
func TestSessionsResumeRemeasuresAnUnfinishedLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 4})
		p := sessionsPlan(t)
		p.Sessions.Concurrency = []int{1}
		p.Sessions.Turns = 2
		stale := servebench.CellResult{CellKey: servebench.CellKey{Scenario: stats.SessionScenario, LoadMode: servebench.ModeFixed,
			ContextTokens: 4096, OutputTokens: 16, Concurrency: 1, Turn: 1}, Note: "stale"}
		r, _ := newRunner(t, tg, p, nil)
		r.Done = []servebench.CellResult{stale}
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, c := range r.Results().Cells {
			seen[c.ID()]++
			if c.Note == "stale" {
				t.Errorf("%s: the unfinished level's old cell was kept", c.ID())
			}
		}
		if len(seen) != 3 {
			t.Errorf("cells %v, want turn 1, turn 2 and fresh turn 2", seen)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s appears %d times", id, n)
			}
		}
	})
}

// --rate auto against the simulator: open-loop cells from the start rate, no higher than the
// ceiling, one per rate the search picked; its result names a measured rate that passed (goodput
// at the target, the server keeping pace) and, above it, one that did not. (Which rates pass
// depends on the machine's load; the decision rule itself is tested in package capacity.)
func TestRateSearchAgainstTheSimulator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 7})
		p := rateSearchPlan(t, 32, 12)
		r, _ := newRunner(t, tg, p, nil)
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		if len(res.RateSearches) != 1 {
			t.Fatalf("%d searches, want 1", len(res.RateSearches))
		}
		rs := res.RateSearches[0]
		byRate := map[float64]servebench.CellResult{}
		for _, c := range res.Cells {
			byRate[c.RatePerSecond] = c
			if c.Goodput == nil || c.Concurrency != 0 || c.LoadMode != servebench.ModeRate || c.RatePerSecond > 32 {
				t.Errorf("cell %s: goodput %v", c.ID(), c.Goodput)
			}
		}
		if len(rs.Rates) != len(res.Cells) || len(rs.Rates) < 2 || rs.Rates[0] != 8 {
			t.Errorf("search measured %v, cells %d: want one cell per rate, starting at 8", rs.Rates, len(res.Cells))
		}
		passes := func(rate float64) bool {
			c, ok := byRate[rate]
			return ok && *c.Goodput >= 0.9 && !c.Saturated
		}
		if rs.RatePerSecond > 0 && !passes(rs.RatePerSecond) {
			t.Errorf("result %g req/s did not pass: %+v", rs.RatePerSecond, byRate[rs.RatePerSecond])
		}
		if f := rs.FailingRatePerSecond; f > 0 && (passes(f) || f <= rs.RatePerSecond) {
			t.Errorf("failing rate %g passed or lies below %g", f, rs.RatePerSecond)
		}
		if rs.FailingRatePerSecond == 0 && rs.RatePerSecond != 32 {
			t.Errorf("no failing rate, yet the result %g is not the ceiling", rs.RatePerSecond)
		}
	})
}

// rateSearchPlan searches rates from 8 requests/s up to max, requests per cell, for goodput
// ≥ 0.9 against an end-to-end objective of 30 s.
func rateSearchPlan(t *testing.T, max float64, requests int) servebench.Plan {
	t.Helper()
	p := smallPlan(t, "1k", "1", 16)
	e2e := 30.0
	p.Sweep.Mode, p.Sweep.AutoRate, p.Sweep.Rate, p.Sweep.MaxRate, p.Sweep.GoodputTarget, p.Sweep.Requests = servebench.ModeRate, true, 8, max, 0.9, requests
	p.SLO = &servebench.Thresholds{E2ELatencySecondsMax: &e2e}
	return p
}
