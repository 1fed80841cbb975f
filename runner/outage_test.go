package runner_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
)

// switchListener is a simtest.PipeListener that can be "killed": while down, dials are refused and the
// open connections were closed, like a server process that died; up again, it serves.
type switchListener struct {
	*simtest.PipeListener
	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

func (l *switchListener) DialContext(ctx context.Context, n, a string) (net.Conn, error) {
	l.mu.Lock()
	down := l.down
	l.mu.Unlock()
	if down {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	c, err := l.PipeListener.DialContext(ctx, n, a)
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *switchListener) setDown(down bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = down
	if down {
		for _, c := range l.conns {
			c.Close()
		}
		l.conns = nil
	}
}

func (l *switchListener) probe(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return errors.New("connection refused")
	}
	return nil
}

// outageRun measures a sweep and one capacity search against the controlled server; when
// downAt > 0 the server dies at that (virtual) time and comes back downFor later.
func outageRun(t *testing.T, downAt, downFor, timeout time.Duration) (servebench.Results, []servebench.Record, time.Duration, error) {
	const ceiling = 32
	url := "http://127.0.0.1:8000/v1"
	p, err := plan.Resolve(nil, plan.Overrides{"url": url, "contexts": "256", "concurrency": "1,2,4",
		"output-tokens": "16", "use-cases": "none", "min-requests": "4", "rounds": "2"})
	if err != nil {
		t.Fatal(err)
	}
	p.Sweep.MinDuration = 0
	p.Capacity.MaxConcurrency = ceiling
	p.Scenarios = nil
	p.UseCases = []servebench.UseCase{{Name: "speed_bound", Title: "Speed-bound", ContextTokens: 256, OutputTokens: 16,
		Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}}

	var res servebench.Results
	var recs []servebench.Record
	var took time.Duration
	var runErr error
	synctest.Test(t, func(t *testing.T) {
		srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
		ln := &switchListener{PipeListener: newPipeListener()}
		stop := simtest.Serve(t, ln, srv)
		origin := time.Now()
		client, err := openai.New(openai.Config{BaseURL: url, API: servebench.APIChat, Model: "controlled",
			Origin: origin, MaxConnections: ceiling, DialContext: ln.DialContext})
		if err != nil {
			t.Fatal(err)
		}
		finished := make(chan struct{})
		defer close(finished)
		if downAt > 0 {
			go func() {
				time.Sleep(downAt)
				ln.setDown(true)
				select {
				case <-time.After(downFor):
				case <-finished:
				}
				ln.setDown(false)
			}()
		}
		rec := &memRecorder{}
		r := &runner.Runner{Plan: p, Server: servebench.ServerInfo{Models: []string{"controlled"}}, Client: client,
			Prompts: wordPrompts{}, Recorder: rec, Origin: origin, RunInfo: servebench.RunInfo{ID: "outage"},
			Probe: ln.probe, OutageTimeout: timeout}
		runErr = r.Run(t.Context())
		took = time.Since(origin)
		client.Close()
		stop()
		res, recs = r.Results(), rec.recs
	})
	return res, recs, took, runErr
}

// A server that dies in the middle of a capacity search and comes back 1.5 s later: the run
// pauses, discards the interrupted cell's attempt (its records stay, marked), measures the cell
// again, and ends with every cell clean and the same capacity as without the outage.
func TestOutagePausesAndRemeasuresTheCell(t *testing.T) {
	clean, _, took, err := outageRun(t, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if clean.Capacity[0].Limit == nil {
		t.Fatalf("no limit without an outage: %+v", clean.Capacity[0])
	}
	for _, frac := range []float64{0.03, 0.7} { // during the sweep, during the capacity search
		t.Run(fmt.Sprint(frac), func(t *testing.T) {
			res, recs, _, err := outageRun(t, time.Duration(frac*float64(took)), 1500*time.Millisecond, 0)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if len(res.Outages) != 1 {
				t.Fatalf("%d outages recorded, want 1: %+v", len(res.Outages), res.Outages)
			}
			o := res.Outages[0]
			t.Logf("outage %+v; capacity %d", o, *res.Capacity[0].Limit)
			if !o.Recovered || o.DownSeconds < 1.5 || o.DownSeconds > 1.5+5 || o.Failed == 0 {
				t.Errorf("outage %+v: want recovered after 1.5 s (at most one probe interval later), with failures", o)
			}
			for _, c := range res.Cells {
				if c.SuccessRate != 1 || c.RequestsFailed != 0 {
					t.Errorf("cell %s: success %.3f, %d failed: a cell measured during the outage was kept", c.ID(), c.SuccessRate, c.RequestsFailed)
				}
				if c.CellKey == o.Cell && c.Attempt != o.Attempt+1 {
					t.Errorf("cell %s: attempt %d, want %d (measured again)", c.ID(), c.Attempt, o.Attempt+1)
				}
			}
			if got, want := *res.Capacity[0].Limit, *clean.Capacity[0].Limit; got != want {
				t.Errorf("capacity %d with the outage, %d without", got, want)
			}
			discarded, seqs := 0, map[int64]bool{}
			for _, r := range recs {
				if seqs[r.Seq] {
					t.Errorf("seq %d twice", r.Seq)
				}
				seqs[r.Seq] = true
				if r.CellKey == o.Cell && r.CellAttempt == o.Attempt {
					discarded++
				}
			}
			if discarded != o.Requests || discarded == 0 {
				t.Errorf("%d records of the discarded attempt, outage says %d", discarded, o.Requests)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "Outage: the server stopped answering at") {
				t.Errorf("no outage note: %q", res.Notes)
			}
		})
	}
}

// A server that never comes back stops the run with ErrServerGone after the outage timeout,
// keeping every cell finished before it.
func TestOutageTimeoutStopsTheRun(t *testing.T) {
	_, _, took, err := outageRun(t, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, _, _, err := outageRun(t, took/2, time.Hour, 30*time.Second)
	if !errors.Is(err, runner.ErrServerGone) {
		t.Fatalf("run error %v, want ErrServerGone", err)
	}
	if len(res.Outages) != 1 || res.Outages[0].Recovered || len(res.Cells) == 0 {
		t.Fatalf("outages %+v, %d cells kept", res.Outages, len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.SuccessRate != 1 {
			t.Errorf("cell %s kept with success %.3f", c.ID(), c.SuccessRate)
		}
	}
}
