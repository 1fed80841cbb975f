package dist

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
)

type memRecorder struct {
	mu   sync.Mutex
	recs []servebench.Record
	res  servebench.Results
}

func (m *memRecorder) Append(r servebench.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}
func (m *memRecorder) AppendSamples([]servebench.Sample) error { return nil }
func (m *memRecorder) AppendCellLog(servebench.CellLog) error  { return nil }
func (m *memRecorder) WriteResults(r servebench.Results) error {
	m.mu.Lock()
	m.res = r
	m.mu.Unlock()
	return nil
}
func (m *memRecorder) results() servebench.Results  { m.mu.Lock(); defer m.mu.Unlock(); return m.res }
func (m *memRecorder) records() []servebench.Record { m.mu.Lock(); defer m.mu.Unlock(); return m.recs }

// A rogue worker with the token cannot change any number of a run's results: on virtual time,
// against a server whose latencies are fixed, a run with two honest workers and a rogue that
// forges a record (TTFT 1 µs, a million output tokens) measures exactly what the two honest
// workers measure alone; the rogue is dropped, its attempt discarded, the cell measured again,
// and the run's notes say so.
func TestRogueChangesNoResult(t *testing.T) {
	p, err := plan.Resolve(nil, plan.Overrides{"url": "http://127.0.0.1:8000/v1", "contexts": "64", "concurrency": "2,4",
		"output-tokens": "16", "use-cases": "none", "min-requests": "20", "rounds": "1"})
	if err != nil {
		t.Fatal(err)
	}
	p.Sweep.MinDuration = 0
	p.Scenarios = nil
	run := func(t *testing.T, withRogue bool) (servebench.Results, []servebench.Record, []Rejection) {
		r := newRig(t)
		r.c.Plan, r.c.MinWorkers = p, 2
		var mu sync.Mutex
		var rejected []Rejection
		r.c.Rejected = func(j Rejection) { mu.Lock(); rejected = append(rejected, j); mu.Unlock() }
		r.honest("h1")
		r.honest("h2")
		if err := r.c.WaitFor(t.Context(), 2, time.Minute); err != nil {
			t.Fatal(err)
		}
		if withRogue {
			r.rogue("rogue", func(g *rogue, o order) {
				time.Sleep(60 * time.Millisecond)
				rec := g.record(o, 0, g.clk.since()-0.01, 0.01)
				rec.OutputTokens = 1_000_000
				servebench.Derive(&rec, servebench.Timing{FirstToken: time.Microsecond, LastToken: 10 * time.Millisecond, End: 10 * time.Millisecond})
				g.send(rec)
			})
			if err := r.c.WaitFor(t.Context(), 3, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		rec := &memRecorder{}
		rn := &runner.Runner{Plan: p, Server: servebench.ServerInfo{Models: []string{"m"}}, Prompts: noPrompts{}, Recorder: rec,
			Origin: r.origin, RunInfo: servebench.RunInfo{ID: "rogue"}, Load: r.c}
		if err := rn.Run(context.WithoutCancel(t.Context())); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return rn.Results(), rec.records(), rejected
	}
	synctest.Test(t, func(t *testing.T) {
		honest, _, _ := run(t, false)
		forged, recs, rejected := run(t, true)
		if len(honest.Cells) != 2 || len(forged.Cells) != len(honest.Cells) {
			t.Fatalf("%d cells alone, %d beside the rogue", len(honest.Cells), len(forged.Cells))
		}
		// Every latency is the server's own (50 ms to the first token, 10 ms a token, 16
		// tokens), as alone; throughput agrees with the honest workers' alone up to which of two
		// records that arrive at the same virtual instant is counted first when the cell stops.
		for i, h := range honest.Cells {
			f := forged.Cells[i]
			exact := orZero(f.TTFTSeconds.Min) == 0.05 && orZero(f.TTFTSeconds.Max) == 0.05 && math.Abs(f.ITLSeconds.Mean-0.01) < 1e-12 && math.Abs(orZero(f.E2ELatencySeconds.Max)-0.2) < 1e-12 &&
				f.OutputTokensMean == 16 && f.SuccessRate == 1 && f.TTFTSeconds.Mean == h.TTFTSeconds.Mean && f.GenerationSpeedTPS.Mean == h.GenerationSpeedTPS.Mean
			if !exact || math.Abs(f.SystemOutputThroughputTPS/h.SystemOutputThroughputTPS-1) > 0.02 || f.RequestsTotal < h.RequestsTotal-1 || f.RequestsTotal > h.RequestsTotal+1 {
				t.Errorf("cell %s beside the rogue: TTFT %.6f–%.6f s, ITL %.6f s, e2e max %.6f s, %.1f output tokens, success %.3f, %.3f tok/s, %d requests; alone %.3f tok/s, %d requests",
					f.ID(), orZero(f.TTFTSeconds.Min), orZero(f.TTFTSeconds.Max), f.ITLSeconds.Mean, orZero(f.E2ELatencySeconds.Max), f.OutputTokensMean, f.SuccessRate, f.SystemOutputThroughputTPS, f.RequestsTotal, h.SystemOutputThroughputTPS, h.RequestsTotal)
			}
		}
		last := len(forged.Cells) - 1
		// at concurrency 2 of 3 workers the rogue has no share; at 4 it has one
		if forged.Cells[last].Attempt != 1 || honest.Cells[last].Attempt != 0 {
			t.Errorf("attempts %d (alone) and %d (beside the rogue): want the c=4 cell measured again", honest.Cells[last].Attempt, forged.Cells[last].Attempt)
		}
		if len(rejected) != 1 || rejected[0].Record.OutputTokens != 1_000_000 {
			t.Errorf("rejected %+v: want the forged record", rejected)
		}
		for _, r := range recs {
			if r.OutputTokens > 16 {
				t.Errorf("the forged record was kept: %+v", r)
			}
			if r.Worker == "rogue" && r.CellAttempt != 0 {
				t.Errorf("a record of the rogue in a kept attempt: %+v", r)
			}
		}
		notes := strings.Join(forged.Notes, "\n")
		if len(forged.Outages) != 1 || forged.Outages[0].Worker != "rogue" || !strings.Contains(notes, "worker rogue") || !strings.Contains(notes, "contradict its order") {
			t.Errorf("outages %+v, notes:\n%s\nwant the rogue's drop stated", forged.Outages, notes)
		}
	})
}

// orZero is *p, or 0 for a summary's unknown minimum or maximum (an empty summary's).
func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
