package runner_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/dist"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/runner"
)

// runDistributed runs plan p like runControlled, but through a coordinator whose n workers
// each have their own client; every connection is in memory, so inside a synctest bubble every
// timing is exact. With killAfter > 0, worker w2 is cut off (as if its process died: its
// connection drops, its requests end with it) once the server has received killAfter requests.
func runDistributed(t *testing.T, srv *controlled, p servebench.Plan, url string, n, minWorkers int, killAfter int64) (*memRecorder, *dist.Coordinator, error) {
	t.Helper()
	return runDistributedWith(t, srv, p, url, n, minWorkers, killAfter, workloads{})
}

// workloads are the plan's files as a test hands them to the runner and to every worker.
type workloads struct {
	dataset runner.Replayer
	trace   runner.TraceReplayer
	script  []runner.ScriptedSession
}

func (w workloads) attach(r *runner.Runner) {
	r.Dataset, r.Trace, r.SessionScript = w.dataset, w.trace, w.script
}

// runDistributedWith is runDistributed with the plan's files.
func runDistributedWith(t *testing.T, srv *controlled, p servebench.Plan, url string, n, minWorkers int, killAfter int64, wl workloads) (*memRecorder, *dist.Coordinator, error) {
	t.Helper()
	ln := newPipeListener()
	defer simtest.Serve(t, ln, srv)()

	origin := time.Now()
	links := newPipeListener()
	c := &dist.Coordinator{Token: "t", Plan: p, Marker: "dist", Origin: origin, MinWorkers: minWorkers, Rejoin: time.Second}
	c.Serve(t.Context(), links)
	ctx, cancel := context.WithCancel(t.Context())
	workersDone := make(chan error, n)
	for i := range n {
		wctx, kill := context.WithCancel(ctx)
		if i == 1 && killAfter > 0 {
			go func() {
				for srv.requests.Load() < killAfter && wctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				kill()
			}()
		}
		w := &dist.Worker{Token: "t", Name: fmt.Sprintf("w%d", i+1), Priority: fmt.Sprintf("nice -%d (test)", i+1), Dial: func(ctx context.Context) (net.Conn, error) { return links.DialContext(ctx, "", "") },
			Open: func(ctx context.Context, plan servebench.Plan, marker string) (*dist.Target, error) {
				client, err := openai.New(openai.Config{BaseURL: url, API: servebench.APIChat, Model: "controlled",
					Origin: time.Now(), MaxConnections: 64, DialContext: ln.DialContext})
				if err != nil {
					return nil, err
				}
				return &dist.Target{Client: client, Prompts: wordPrompts{}, Origin: time.Now(), Close: client.Close,
					Dataset: wl.dataset, Trace: wl.trace, Script: wl.script}, nil
			}}
		go func() { workersDone <- w.Run(wctx); kill() }()
	}
	if err := c.WaitFor(ctx, n, time.Minute); err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	r := &runner.Runner{Plan: p, Server: servebench.ServerInfo{Models: []string{"controlled"}}, Prompts: wordPrompts{},
		Recorder: rec, Origin: origin, RunInfo: servebench.RunInfo{ID: "dist"}, Load: c}
	wl.attach(r)
	runErr := r.Run(ctx)
	rec.res = r.Results()
	c.Close()
	for range n {
		<-workersDone
	}
	cancel()
	links.Close()
	return rec, c, runErr
}

// On virtual time, a coordinator with 3 workers measures exactly what one process measures:
// the same capacity limits and the controlled server's exact TTFT and speed in every cell (so
// every worker's slots were in flight together, and the stop rule ran on the merged records);
// every record names its worker, sequence numbers are unique run-wide, and each worker's clock
// was measured at its join and before every cell it took part in.
func TestDistributedMatchesLocalOnVirtualTime(t *testing.T) {
	const ctxTokens, out, ceiling = 256, 16, 32
	p := controlledPlan(t, ctxTokens, out, "1,3,7", ceiling)
	for _, uc := range []servebench.UseCase{
		{Name: "speed_bound", Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}, // 13
		{Name: "ttft_bound", Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.5)}},        // 24
		{Name: "e2e_bound", Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(1.0)}},   // 10
	} {
		uc.ContextTokens, uc.OutputTokens, uc.Statistic = ctxTokens, out, servebench.StatMean
		p.UseCases = append(p.UseCases, uc)
	}
	synctest.Test(t, func(t *testing.T) {
		local := runControlled(t, &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}, p, p.Target.URL, ceiling, "local")
		srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
		got, _, err := runDistributed(t, srv, p, p.Target.URL, 3, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got.recs)) != srv.requests.Load() {
			t.Errorf("%d records for %d requests the server received", len(got.recs), srv.requests.Load())
		}
		seqs := map[int64]bool{}
		byWorker := map[string]int{}
		for _, r := range got.recs {
			if !r.OK() || r.Worker == "" || seqs[r.Seq] {
				t.Fatalf("record %+v: want a success naming its worker, its seq unique", r)
			}
			seqs[r.Seq] = true
			byWorker[r.Worker]++
		}
		if len(byWorker) != 3 {
			t.Errorf("records by worker %v, want 3 workers", byWorker)
		}
		res := got.res
		checkControlled(t, res.Cells)
		for _, c := range res.Cells {
			if c.WindowSeconds <= 0 || c.SystemOutputThroughputTPS <= 0 {
				t.Errorf("%s: window %.3f s, throughput %.1f", c.ID(), c.WindowSeconds, c.SystemOutputThroughputTPS)
			}
		}
		if len(res.Capacity) != 3 || len(local.res.Capacity) != 3 {
			t.Fatalf("capacity: %d distributed, %d local", len(res.Capacity), len(local.res.Capacity))
		}
		for i, c := range res.Capacity {
			l := local.res.Capacity[i]
			t.Logf("%s: limit %v distributed, %v local; %d vs %d requests spent", c.UseCase, deref(c.Limit), deref(l.Limit), c.RequestsSpent, l.RequestsSpent)
			if c.Limit == nil || l.Limit == nil || *c.Limit != *l.Limit {
				t.Errorf("%s: limit %v distributed, %v local", c.UseCase, deref(c.Limit), deref(l.Limit))
			}
		}
		if len(res.Workers) != 3 {
			t.Fatalf("%d workers in the results, want 3", len(res.Workers))
		}
		for _, w := range res.Workers {
			if len(w.Clock) < 2 || w.Requests != byWorker[w.Name] {
				t.Errorf("worker %s: %d clock samples, %d requests (%d records)", w.Name, len(w.Clock), w.Requests, byWorker[w.Name])
			}
			if want := "nice -" + strings.TrimPrefix(w.Name, "w") + " (test)"; w.Priority != want {
				t.Errorf("worker %s: priority %q, want %q as it said when it joined", w.Name, w.Priority, want)
			}
		}
	})
}

// A worker that dies in the middle of a cell: its requests in flight are recorded as failed
// (worker-lost), the attempt is discarded, the cell is measured again with the two workers
// that remain, and the run still finds the same limits. With --min-workers 3 the run stops
// instead (load.ErrGeneratorGone, resumable).
func TestDistributedWorkerLost(t *testing.T) {
	const ctxTokens, out = 256, 16
	p := controlledPlan(t, ctxTokens, out, "3,7", 16)
	p.Sweep.MinRequests = 30
	uc := servebench.UseCase{Name: "e2e_bound", Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(1.0)},
		ContextTokens: ctxTokens, OutputTokens: out, Statistic: servebench.StatMean}
	p.UseCases = []servebench.UseCase{uc}
	synctest.Test(t, func(t *testing.T) {
		srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
		// the sweep's first cell (c=3) takes 30+3 requests: the 50th is in the c=7 cell
		got, c, err := runDistributed(t, srv, p, p.Target.URL, 3, 2, 50)
		if err != nil {
			t.Fatal(err)
		}
		res := got.res
		if len(res.Outages) != 1 || res.Outages[0].Worker != "w2" || res.Outages[0].Cell.Concurrency != 7 || res.Outages[0].Failed == 0 {
			t.Fatalf("outages %+v: want worker w2 lost during the c=7 cell with requests in flight", res.Outages)
		}
		lost := 0
		for _, r := range got.recs {
			switch {
			case r.ErrorClass == servebench.ErrWorkerLost:
				lost++
				if r.Worker != "w2" || r.CellAttempt != 0 || r.Concurrency != 7 {
					t.Errorf("lost record %+v: want w2's, attempt 0 of the c=7 cell", r)
				}
			case r.Concurrency == 7 && r.CellAttempt == 1 && r.Worker == "w2":
				t.Errorf("the re-measured cell has a record of the lost worker: %+v", r)
			}
		}
		if lost != res.Outages[0].Failed {
			t.Errorf("%d worker-lost records, the outage says %d", lost, res.Outages[0].Failed)
		}
		for _, cell := range res.Cells {
			if cell.Concurrency == 7 && cell.Scenario == runner.SweepScenario && (cell.Attempt != 1 || cell.SuccessRate != 1) {
				t.Errorf("cell %s: attempt %d success %.3f, want the clean attempt 1", cell.ID(), cell.Attempt, cell.SuccessRate)
			}
			if want := 0.001 + 0.020*float64(cell.Concurrency); !near(cell.TTFTSeconds.Mean, want, 1e-6) {
				t.Errorf("%s: TTFT mean %.6f, want %.6f", cell.ID(), cell.TTFTSeconds.Mean, want)
			}
		}
		if l := res.Capacity[0].Limit; l == nil || *l != 10 {
			t.Errorf("limit %v, want 10", deref(l))
		}
		for _, w := range c.Workers() {
			if (w.Name == "w2") != (w.LostAt != nil) {
				t.Errorf("worker %s lost at %v: want only w2 lost", w.Name, w.LostAt)
			}
		}

		srv = &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
		_, _, err = runDistributed(t, srv, p, p.Target.URL, 3, 3, 50)
		if !errors.Is(err, load.ErrGeneratorGone) {
			t.Fatalf("with 3 workers needed and one lost: %v, want load.ErrGeneratorGone", err)
		}
	})
}
