package dist

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// Every forgery of a worker that holds the token, as a rogue worker sends it beside two honest
// ones in a sustained cell of concurrency 3 (a share of 1 each): the forged record never
// reaches the sink (so no statistic), the rogue is dropped with the reason, the forged record
// is handed to Rejected, the cell ends with a *load.LostError (the runner measures it again),
// and the rogue may not join again.
func TestForgedRecordsDropTheWorker(t *testing.T) {
	now := func(g *rogue) float64 { return g.clk.since() }
	for _, tc := range []struct {
		name, why string
		act       func(g *rogue, o order)
		forged    func(rec servebench.Record) bool
	}{
		{"ttft 1 µs with a million output tokens", "output tokens", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.OutputTokens, rec.TTFTSeconds = 1_000_000, 1e-6
			servebench.Derive(&rec, servebench.Timing{FirstToken: time.Microsecond, LastToken: 10 * time.Millisecond, End: 10 * time.Millisecond})
			g.send(rec)
		}, func(r servebench.Record) bool { return r.OutputTokens > 16 }},
		{"start offset -1e12", "starts at", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.StartOffsetSeconds = -1e12
			_ = g.p.send(msg{T: tStarted, Seq: rec.Seq, Warm: rec.Warmup, At: now(g) - 0.01})
			_ = g.p.send(msg{T: tRecord, Rec: &rec})
		}, func(r servebench.Record) bool { return r.StartOffsetSeconds < -1 }},
		{"a start announced at -1e12", "outside the cell's span", func(g *rogue, o order) {
			rec := g.record(o, 0, -1e12, 0.01)
			g.send(rec)
		}, func(r servebench.Record) bool { return r.StartOffsetSeconds < -1 }},
		{"e2e -5 s", "e2e -5", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.E2ELatencySeconds = -5
			g.send(rec)
		}, func(r servebench.Record) bool { return r.E2ELatencySeconds < 0 }},
		{"a duplicate seq", "started twice", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			g.send(rec)
			g.send(rec)
		}, func(r servebench.Record) bool { return false }},
		{"a record never started", "not in flight", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			_ = g.p.send(msg{T: tRecord, Rec: &rec})
		}, func(r servebench.Record) bool { return r.Worker == "rogue" && r.OK() }},
		{"a seq of another worker", "not one of the sequence numbers", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.Seq++
			g.send(rec)
		}, func(r servebench.Record) bool { return r.Worker == "rogue" && r.OK() }},
		{"a cell that does not exist", "names cell", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.ContextTokens, rec.Concurrency = 999999, 77
			g.send(rec)
		}, func(r servebench.Record) bool { return r.ContextTokens != 64 || r.Concurrency != 3 }},
		{"another worker's name", "names worker", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.Worker = "victim-worker"
			g.send(rec)
		}, func(r servebench.Record) bool { return r.Worker == "victim-worker" }},
		{"ttft beyond e2e", "beyond its e2e", func(g *rogue, o order) {
			rec := g.record(o, 0, now(g)-0.01, 0.01)
			rec.TTFTSeconds = 0.5
			g.send(rec)
		}, func(r servebench.Record) bool { return r.TTFTSeconds > r.E2ELatencySeconds }},
		{"30,000 records from a share of 1", "took", func(g *rogue, o order) {
			for j := range 30000 {
				rec := g.record(o, j, now(g)-0.001, 0.001)
				if j == o.Share {
					_ = g.p.send(msg{T: tWarm, At: now(g)})
				}
				g.send(rec)
			}
		}, func(r servebench.Record) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				var mu sync.Mutex
				var rejected []Rejection
				r.c.Rejected = func(j Rejection) { mu.Lock(); rejected = append(rejected, j); mu.Unlock() }
				r.honest("h1")
				r.honest("h2")
				if err := r.c.WaitFor(t.Context(), 2, time.Minute); err != nil {
					t.Fatal(err)
				}
				r.rogue("rogue", tc.act)
				if err := r.c.WaitFor(t.Context(), 3, time.Minute); err != nil {
					t.Fatal(err)
				}
				var s sinkInto
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // virtual
				defer cancel()
				_, err := r.c.Run(ctx, r.spec(3, 30), nil, s.sink)
				var lost *load.LostError
				if !errors.As(err, &lost) || lost.Worker != "rogue" || !strings.Contains(lost.Cause, tc.why) {
					t.Fatalf("cell ended with %v, want the rogue lost for %q", err, tc.why)
				}
				for _, rec := range s.recs {
					if tc.forged(rec) {
						t.Errorf("a forged record reached the sink: %+v", rec)
					}
				}
				if n := len(s.by("rogue")); n > 501 { // (the time check lets 2 × 0.25 s of 1-ms requests by)
					t.Errorf("%d records of the rogue reached the sink", n)
				}
				mu.Lock()
				n := len(rejected)
				mu.Unlock()
				if !strings.Contains("started twice|outside the cell's span|not one of the sequence numbers", tc.why) && (n != 1 || rejected[0].Worker != "rogue") {
					t.Errorf("rejected records %+v, want the forged one", rejected)
				}
				if w := r.c.Workers(); len(w) != 3 || w[2].LostAt == nil || !strings.Contains(w[2].LostCause, "contradict its order") {
					t.Errorf("workers %+v: want the rogue lost with the reason", w)
				}
				// it may not join again under its name
				conn, _ := r.ln.DialContext(t.Context(), "", "")
				p := newPeer(conn, maxMessageBytes)
				mine := nonce()
				_ = p.send(msg{T: tHello, Name: "rogue", Nonce: mine})
				ch, _ := p.recv()
				_ = p.send(msg{T: tAuth, MAC: proof(testToken, "worker", ch.Nonce, mine)})
				if m, _ := p.recv(); m.T != tRefused {
					t.Errorf("the dropped worker joined again: %+v", m.T)
				}
				conn.Close()
			})
		})
	}
}

// A worker that answers pings but never reports its warm-up's end cannot keep a sustained
// cell open: once the honest workers have warmed up it has Grace (or three times their time)
// to follow, then it is dropped and the cell ends, long before the honest workers have sent
// hundreds of requests.
func TestSilentWarmupIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.honest("h1")
		if err := r.c.WaitFor(t.Context(), 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		r.rogue("mute", func(g *rogue, o order) {})
		if err := r.c.WaitFor(t.Context(), 2, time.Minute); err != nil {
			t.Fatal(err)
		}
		spec := r.spec(2, 40)
		spec.Sizing.MaxRequests = 40
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		began := time.Now()
		var s sinkInto
		_, err := r.c.Run(ctx, spec, nil, s.sink)
		var lost *load.LostError
		if !errors.As(err, &lost) || lost.Worker != "mute" || !strings.Contains(lost.Cause, "did not end its warm-up") {
			t.Fatalf("cell ended with %v after %s, want the mute worker lost for its warm-up", err, time.Since(began))
		}
		if d := time.Since(began); d > 62*time.Second {
			t.Errorf("the cell stayed open %s, want about the 1-minute grace", d)
		}
		// one slot at 0.2 s a request for a minute
		if n := r.srv.requests.Load(); n > 310 {
			t.Errorf("the honest worker sent %d requests meanwhile", n)
		}
	})
}

// A worker that stops reporting after the stop (its done never comes) is dropped as well.
func TestSilentDoneIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		r.honest("h1")
		if err := r.c.WaitFor(t.Context(), 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		r.rogue("sticky", func(g *rogue, o order) {
			// one plausible request, the warm-up's end, then silence (pings only)
			start := g.clk.since()
			time.Sleep(200 * time.Millisecond)
			g.send(g.record(o, 0, start, 0.2))
			_ = g.p.send(msg{T: tWarm, At: g.clk.since()})
		})
		if err := r.c.WaitFor(t.Context(), 2, time.Minute); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		var s sinkInto
		_, err := r.c.Run(ctx, r.spec(2, 10), nil, s.sink)
		var lost *load.LostError
		if !errors.As(err, &lost) || lost.Worker != "sticky" || !strings.Contains(lost.Cause, "did not finish its part") {
			t.Fatalf("cell ended with %v, want the sticky worker lost after the stop", err)
		}
	})
}

// Honest workers pass every check in every load mode.
func TestHonestWorkersPassTheChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		for _, n := range []string{"h1", "h2", "h3"} {
			r.honest(n)
		}
		if err := r.c.WaitFor(t.Context(), 3, time.Minute); err != nil {
			t.Fatal(err)
		}
		key := func(m servebench.LoadMode, c int) servebench.CellKey {
			return servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: m, ContextTokens: 64, OutputTokens: 16, Concurrency: c}
		}
		next := r.spec(7, 60).NextSeq
		clock := func() time.Duration { return time.Since(r.origin) }
		for _, spec := range []load.Spec{
			r.spec(7, 60),
			{Key: key(servebench.ModeDedicated, 5), Bursts: 3},
			{Key: key(servebench.ModeFixed, 4), Requests: 11},
			{Key: key(servebench.ModeRate, 0), Requests: 13, Rate: 20, Poisson: true, Seed: 3},
		} {
			spec.NextSeq, spec.Clock = next, clock
			var s sinkInto
			out, err := r.c.Run(t.Context(), spec, nil, s.sink)
			if err != nil {
				t.Fatalf("%s: %v", spec.Key.ID(), err)
			}
			if len(s.recs) != out.Sent || out.Sent == 0 {
				t.Errorf("%s: %d records for %d sent", spec.Key.ID(), len(s.recs), out.Sent)
			}
			for _, rec := range s.recs {
				if !rec.OK() || rec.CellKey != spec.Key {
					t.Errorf("%s: record %+v", spec.Key.ID(), rec)
				}
			}
		}
		if r.c.Live() != 3 {
			t.Errorf("%d workers remain: %v", r.c.Live(), r.logs)
		}
	})
}
