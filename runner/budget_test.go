package runner_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/sim"
)

// A run of the reference report's grid on GLM-4.7-Flash / H200 with --max-time 10m ends within
// its budget (on virtual time: the plan's and the profile's figure, not this machine's), and
// every one of the reference report's five use cases is decided: a limit or a lower bound of at
// least one level, none left unsearched. The notes say how the budget was kept. Without the
// budget the same plan takes far longer (the issue saw two 15-minute tries not finish).
func TestBudgetKeepsMaxTime(t *testing.T) {
	prof, err := sim.LookupProfile("h200-glm47-flash")
	if err != nil {
		t.Fatal(err)
	}
	budget := 10 * time.Minute
	rec, took := referenceGridRun(t, prof, budget)
	for _, c := range rec.res.Capacity {
		limit := -1
		if c.Limit != nil {
			limit = *c.Limit
		}
		t.Logf("%s: %s %d (levels %v) %s", c.UseCase, c.LimitKind, limit, levels(c.Points), c.Note)
		if c.Skipped || (c.LimitKind != servebench.LimitNotViable && limit < 1) {
			t.Errorf("%s undecided: %s %d %s", c.UseCase, c.LimitKind, limit, c.Note)
		}
	}
	// the levers' effect, measured on this clock: with half the budget reserved for the searches
	// and the sweep in the plan's order, Coding Assistant and Long Document got one level each
	// (1+, 1+); now Coding Assistant is bracketed like the reference's (1: 2 fails) and Long
	// Document gets at least two levels
	// Code Completion's limit sits at 26–27 requests, where a level's verdict is within its
	// noise: usually 27 fails and the search ends on 7 levels, but 27 can pass (the run is on
	// virtual time, yet not every run orders its events alike: CI under -race saw it once in
	// ~15 runs, with [1 2 8 15 25 26 27 28 108]), and the search then climbs to
	// 4 × 27 = 108 and back to 28. Those two levels (~25 s) can leave General Chatbot's next
	// level out of the budget; that run is still right, so the chatbots' bound below is asked
	// only of a run whose Code Completion search took its usual path.
	usual := true
	for _, c := range rec.res.Capacity {
		if c.UseCase == "code_completion" && len(c.Points) > 7 {
			usual = false
			t.Logf("code_completion measured %d levels (%v): its verdict at its limit flipped; the chatbots' bound is not asked", len(c.Points), levels(c.Points))
		}
	}
	for _, c := range rec.res.Capacity {
		switch c.UseCase {
		case "automated_coding_assistant":
			if c.LimitKind != servebench.LimitMeasured || c.Limit == nil || *c.Limit != 1 {
				t.Errorf("%s: %s %v (levels %v), want measured 1 (the reference's; 2 fails)", c.UseCase, c.LimitKind, deref(c.Limit), levels(c.Points))
			}
		case "long_document_processing":
			if len(c.Points) < 2 {
				t.Errorf("%s: levels %v, want at least 2", c.UseCase, levels(c.Points))
			}
		case "general_chatbot", "short_form_chatbot":
			if !usual {
				if c.Limit == nil || *c.Limit < 2 || !strings.Contains(c.Note, "did not fit the time left") {
					t.Errorf("%s: %s %v (levels %v) %q, want at least 2 and a note naming the level that did not fit", c.UseCase, c.LimitKind, deref(c.Limit), levels(c.Points), c.Note)
				}
				continue
			}
			// a lower bound raised again counts at more than one raised the first time
			// (valueWeight): with the same weight for both, Short-form's 32 went before
			// General's 8, which then did not fit (Short-form 32+, General 2+; published 125+
			// and 12+)
			if c.Limit == nil || *c.Limit < 8 {
				t.Errorf("%s: %s %v (levels %v), want at least 8", c.UseCase, c.LimitKind, deref(c.Limit), levels(c.Points))
			}
		}
	}
	if len(rec.res.Capacity) != 5 {
		t.Errorf("%d use cases searched, want the reference report's 5", len(rec.res.Capacity))
	}
	valid := 0
	for _, c := range rec.res.Cells {
		if c.Validity.Verdict == servebench.VerdictValid {
			valid++
		}
	}
	t.Logf("%d cells (%d valid) in %s", len(rec.res.Cells), valid, took.Round(time.Second))
	if took > budget {
		t.Errorf("the run took %s on the simulated clock, over its --max-time %s", took.Round(time.Second), budget)
	}
	// and it uses the budget: with the largest single overrun as the calibration and the fit
	// tested against 95% of the budget, it stopped at 9m4s (the last sweep cells, ~20 s each,
	// did not fit 26 s); the summed overrun and a tail of 2% leave less unused
	if took < budget*95/100 {
		t.Errorf("the run took %s on the simulated clock: more than 5%% of its --max-time %s unused", took.Round(time.Second), budget)
	}
	found := false
	for _, n := range rec.res.Notes {
		if strings.Contains(n, "Time budget 10m") {
			found = true
			t.Log(n)
			// every search the budget ended is named with the level it did not measure and
			// what that level was expected to cost
			for _, c := range rec.res.Capacity {
				if c.LimitKind == servebench.LimitLowerBound && !strings.Contains(n, c.Title+" (next: ") {
					t.Errorf("the note does not name %s's next level: %s", c.Title, n)
				}
			}
		}
	}
	if !found {
		t.Errorf("no note says how the budget was kept: %q", rec.res.Notes)
	}
}

// logSpans logs, in the order they ran, each cell's span on the simulated clock (first request
// start to last end), its requests, window and validity: where a budgeted run's time went.
func logSpans(t *testing.T, rec *memRecorder) {
	t.Helper()
	type span struct {
		id         string
		start, end float64
		n          int
	}
	spans := map[string]*span{}
	var order []*span
	for _, r := range rec.recs {
		id := r.CellKey.ID()
		s := spans[id]
		if s == nil {
			s = &span{id: id, start: r.StartOffsetSeconds, end: r.EndOffsetSeconds}
			spans[id] = s
			order = append(order, s)
		}
		s.start, s.end = min(s.start, r.StartOffsetSeconds), max(s.end, r.EndOffsetSeconds)
		s.n++
	}
	sort.Slice(order, func(i, j int) bool { return order[i].start < order[j].start })
	cells := map[string]servebench.CellResult{}
	for _, c := range rec.res.Cells {
		cells[c.ID()] = c
	}
	windows := map[string]servebench.CellLog{}
	for _, l := range rec.logs {
		if l.Event == servebench.LogCell {
			windows[l.Cell.ID()] = l
		}
	}
	for _, s := range order {
		c, l := cells[s.id], windows[s.id]
		t.Logf("%-48s %6.1f–%6.1f s %6.1f s (warm-up %5.1f, window %5.1f, drain %5.1f) %4d req  e2e %5.1f s  %s %v", s.id, s.start, s.end, s.end-s.start,
			l.WindowStartSeconds-s.start, l.WindowEndSeconds-l.WindowStartSeconds, s.end-l.WindowEndSeconds, s.n,
			c.E2ELatencySeconds.Mean, c.Validity.Verdict, c.Validity.Reasons)
	}
}

// referenceGridRun runs the reference report's grid (1k, 8k, 32k × 1, 2, 4, 8, the default use
// cases) against prof with --max-time budget on virtual time, logs its spans, and checks that
// the run folder gives the same results again (Recompute walks the interleaved searches in the
// order the run measured them, a search the budget ended to the same decision).
func referenceGridRun(t *testing.T, prof sim.Profile, budget time.Duration) (*memRecorder, time.Duration) {
	t.Helper()
	var resolved servebench.Plan
	rec, took := demoRun(t, prof, func(p *servebench.Plan) {
		r, err := plan.Resolve(nil, plan.Overrides{"sim-profile": prof.Name, "contexts": "1k,8k,32k", "concurrency": "1,2,4,8",
			"max-time": budget.String()})
		if err != nil {
			t.Fatal(err)
		}
		r.Target.URL = p.Target.URL
		*p = r
		resolved = r
	})
	logSpans(t, rec)
	sameResults(t, servebench.Manifest{Plan: resolved, Server: servebench.ServerInfo{MaxModelLen: prof.Engine.MaxModelLen}}, rec.recs, rec.logs, rec.res)
	return rec, took
}
