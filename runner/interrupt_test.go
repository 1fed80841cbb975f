package runner_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/runner"
)

// TestInterruptedSearchIsKeptAndResumedHonestly stops a run (its context canceled, as Ctrl-C
// does) when the first use case's search starts its third level of its own, then resumes it
// with what the first attempt measured. The interrupted run still lists both use cases: the
// first with the levels it measured and its limit so far, the second as not searched. After the
// resume, the first search counts its earlier levels as measured by it (before the resume) with
// what they cost, not as reused for free; only the sweep's levels are reused.
func TestInterruptedSearchIsKeptAndResumedHonestly(t *testing.T) {
	const ctxTokens, out, ceiling = 256, 16, 32
	srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
	p := controlledPlan(t, ctxTokens, out, "1,2", ceiling)
	for _, uc := range []servebench.UseCase{
		{Name: "e2e_bound", Title: "End-to-end-bound", Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(1.0)}}, // limit 10
		{Name: "speed_bound", Title: "Speed-bound", Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}},    // limit 13
	} {
		uc.ContextTokens, uc.OutputTokens, uc.Statistic = ctxTokens, out, servebench.StatMean
		p.UseCases = append(p.UseCases, uc)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		own := 0
		first, err := runAttempt(ctx, t, srv, p, nil, func(ev runner.Event) {
			if ev.Kind == runner.EventCellStart && ev.Cell.Kind == servebench.KindCapacity {
				if own++; own == 3 {
					cancel()
				}
			}
		})
		if err == nil {
			t.Fatal("the interrupted run returned no error")
		}
		caps := first.res.Capacity
		if len(caps) != 2 {
			t.Fatalf("%d capacity results after the interruption, want both use cases: %+v", len(caps), caps)
		}
		e2e := caps[0]
		if !e2e.Interrupted || e2e.Limit == nil || e2e.LimitKind != servebench.LimitLowerBound || len(e2e.Points) < 3 {
			t.Fatalf("interrupted search: %+v, want the levels so far and a limit so far", e2e)
		}
		if !caps[1].Interrupted || len(caps[1].Points) != 0 {
			t.Errorf("unreached search: %+v, want it marked interrupted with no levels", caps[1])
		}
		t.Logf("interrupted: levels %v, limit so far %d, %d requests", levels(e2e.Points), *e2e.Limit, e2e.RequestsSpent)

		var done []servebench.CellResult
		for _, c := range first.res.Cells {
			if !c.Skipped {
				done = append(done, c)
			}
		}
		second, err := runAttempt(t.Context(), t, srv, p, done, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := second.res.Capacity[0]
		if got.Interrupted || got.Limit == nil || *got.Limit != 10 {
			t.Fatalf("resumed search: limit %v interrupted %v, want 10", deref(got.Limit), got.Interrupted)
		}
		sum, resumed := 0, 0
		for _, pt := range got.Points {
			sum += pt.RequestsSpent
			switch {
			case pt.Concurrency <= 2:
				if !pt.Reused || pt.Resumed {
					t.Errorf("level %d: reused %v resumed %v, want reused from the sweep", pt.Concurrency, pt.Reused, pt.Resumed)
				}
			case pt.Reused:
				t.Errorf("level %d, measured by this search before the resume, counts as reused (free)", pt.Concurrency)
			case pt.Resumed:
				resumed++
				if pt.RequestsSpent == 0 {
					t.Errorf("level %d measured before the resume cost nothing", pt.Concurrency)
				}
			}
		}
		if resumed == 0 {
			t.Errorf("no level is marked as measured before the resume: %+v", got.Points)
		}
		if got.RequestsSpent != sum || got.RequestsSpent <= e2e.RequestsSpent-1 {
			t.Errorf("spent %d requests (levels sum %d; the first attempt alone spent %d)", got.RequestsSpent, sum, e2e.RequestsSpent)
		}
	})
}

// runAttempt runs plan p against srv (inside a synctest bubble) with done as the cells an
// earlier attempt measured, and returns what it recorded and Run's error.
func runAttempt(ctx context.Context, t *testing.T, srv http.Handler, p servebench.Plan, done []servebench.CellResult, events func(runner.Event)) (*memRecorder, error) {
	t.Helper()
	ln := newPipeListener()
	stop := simtest.Serve(t, ln, srv)
	origin := time.Now()
	client, err := openai.New(openai.Config{BaseURL: p.Target.URL, API: servebench.APIChat, Model: "controlled",
		Origin: origin, MaxConnections: 32, DialContext: ln.DialContext})
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	r := &runner.Runner{Plan: p, Server: servebench.ServerInfo{Models: []string{"controlled"}}, Client: client,
		Prompts: wordPrompts{}, Recorder: rec, Origin: origin, RunInfo: servebench.RunInfo{ID: "interrupted"}, Events: events, Done: done}
	runErr := r.Run(ctx)
	client.Close()
	stop()
	return rec, runErr
}
