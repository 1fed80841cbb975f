package workload_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/workload"
)

// agentTrace writes a trace of sessions sessions of turns turns: a first turn of 1,024 tokens
// whose first 4 blocks of 64 (a shared system prompt) every session names, then 256 new tokens a
// turn, answers of 32 tokens, 200 ms of tool time between turns.
func agentTrace(t *testing.T, sessions, turns int) string {
	var b strings.Builder
	next := 100
	for s := range sessions {
		ids := []int{0, 1, 2, 3}
		in := 1024
		for range in/64 - 4 {
			ids = append(ids, next)
			next++
		}
		for k := range turns {
			if k > 0 {
				in += 32 + 256
				for len(ids)*64 < in {
					ids = append(ids, next)
					next++
				}
			}
			fmt.Fprintf(&b, `{"session_id": "s%d", "input_length": %d, "output_length": 32, "hash_ids": %s, "delay": 200}`+"\n", s, in, strings.ReplaceAll(fmt.Sprint(ids), " ", ", "))
		}
	}
	p := filepath.Join(t.TempDir(), "agent.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A population replaying an agent trace against the built-in simulator (over HTTP on in-memory
// connections, in virtual time): every turn past a user's joining turn re-sends a history the
// server has seen, so the prompt tokens it serves from its prefix cache grow with the turn's
// depth; a session's first turn finds the system prompt other sessions share.
func TestTraceUsersAgainstSimulator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := agentTrace(t, 6, 8)
		prof, err := workload.LookupProfile("trace:" + path)
		if err != nil {
			t.Fatal(err)
		}
		srv := simtest.StartInMemory(t, simtest.Config{Options: sim.Options{Seed: 1}})
		hc := srv.HTTPClient()
		t.Cleanup(hc.CloseIdleConnections)
		ctx := context.Background()
		origin := time.Now()
		cfg := openai.Config{BaseURL: srv.URL + "/v1", API: servebench.APIChat, Origin: origin, MaxConnections: 8, DialContext: srv.Dial}
		info, q, err := openai.Discover(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Quirks, cfg.Model = q, info.Models[0]
		client, err := openai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(client.Close)
		b, err := workload.NewBuilder(ctx, workload.Config{RunID: "users-trace", API: servebench.APIChat, BaseURL: srv.URL + "/v1",
			Model: cfg.Model, HTTPClient: hc, Probe: client.ProbePromptTokens})
		if err != nil {
			t.Fatal(err)
		}
		const users = 4
		pop := workload.NewPopulation(workload.PopulationConfig{Users: &servebench.UsersPlan{Seed: 1, ThinkScale: 1, BlockTokens: 64},
			Profile: prof, Window: 8192, N: users, Prompts: b, MinTokens: b.MinTokens(), Stride: 1})
		var mu sync.Mutex
		var recs []servebench.Record
		sp := load.Spec{Key: servebench.CellKey{Kind: servebench.KindUsers, LoadMode: servebench.ModeUsers, Concurrency: users, ContextTokens: 8192},
			Sizing: load.Sizing{MinRequests: 60}, Clock: func() time.Duration { return time.Since(origin) }, Population: pop}
		if _, err := load.Run(ctx, sp, client, nil, func(r servebench.Record) {
			mu.Lock()
			recs = append(recs, r)
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
		// each user's first request is its joining turn (cold); the rest re-send a history
		first := map[int]bool{}
		sum, n := map[int]float64{}, map[int]int{}
		for _, r := range recs {
			if !r.OK() {
				t.Fatalf("request %d failed: %s %s", r.Seq, r.ErrorClass, r.Error)
			}
			if !first[r.User] {
				first[r.User] = true
				continue
			}
			if r.CachedTokens == nil {
				t.Fatalf("request %d: the simulator reported no cached tokens", r.Seq)
			}
			sum[r.Turn] += float64(*r.CachedTokens)
			n[r.Turn]++
		}
		mean := func(turn int) float64 { return sum[turn] / float64(n[turn]) }
		t.Logf("cached prompt tokens by turn: 1: %.0f (%d), 2: %.0f (%d), 4: %.0f (%d), 8: %.0f (%d)", mean(1), n[1], mean(2), n[2], mean(4), n[4], mean(8), n[8])
		for _, turn := range []int{1, 2, 4, 8} {
			if n[turn] == 0 {
				t.Fatalf("no request of turn %d past a joining turn", turn)
			}
		}
		// a first turn finds the shared system prompt (4 blocks of 64), no more than its 1,024
		if m := mean(1); m < 4*64-64 || m >= 1024 {
			t.Errorf("first turns found %.0f cached tokens, want the shared system prompt (~256)", m)
		}
		// turn t re-sends a history of about 1,024 + (t − 1) × 288 tokens, cached
		for _, turn := range []int{2, 4, 8} {
			history := float64(1024 + (turn-2)*288 + 32)
			if m := mean(turn); m < history-128 || m > history+288 {
				t.Errorf("turn %d found %.0f cached tokens, want about its history's %.0f", turn, m, history)
			}
		}
		if !(mean(1) < mean(2) && mean(2) < mean(4) && mean(4) < mean(8)) {
			t.Errorf("cached tokens do not grow with the turn's depth: %.0f, %.0f, %.0f, %.0f", mean(1), mean(2), mean(4), mean(8))
		}
	})
}
