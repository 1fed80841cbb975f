package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/sim"
)

// A short budget is kept too: the reference report's grid on GLM-4.7-Flash / H200 (on virtual
// time) ends within its --max-time plus 3%, a level or cell whose least cost (the window rule's
// floors, never cut) does not fit the time left being left out and said so rather than started.
// Before, a search's first level was started whenever any time was left at all: with 60 s, Long
// Document's level 1 (34 s) started at 42 s and the run took 76 s. Each use case is decided on
// at least one level where the budget holds one (3m: all five), and one it had no time for says
// so.
func TestBudgetKeepsShortBudgets(t *testing.T) {
	prof, err := sim.LookupProfile("h200-glm47-flash")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		budget      time.Duration
		minSearched int // use cases decided on at least one level
	}{
		{time.Minute, 3},     // 8K at 1 (the sweep's first cell, Short-form's level 1), Code Completion, General Chatbot
		{3 * time.Minute, 5}, // every first level fits
	} {
		t.Run(tc.budget.String(), func(t *testing.T) {
			rec, took := referenceGridRun(t, prof, tc.budget)
			searched := 0
			for _, c := range rec.res.Capacity {
				t.Logf("%s: %s %v (levels %v) %s", c.UseCase, c.LimitKind, deref(c.Limit), levels(c.Points), c.Note)
				switch {
				case len(c.Points) > 0:
					searched++
				case !strings.Contains(c.Note, "time budget"):
					t.Errorf("%s has no level and no note saying the budget left it out: %q", c.UseCase, c.Note)
				}
			}
			if searched < tc.minSearched {
				t.Errorf("%d use cases decided on a level, want at least %d", searched, tc.minSearched)
			}
			t.Logf("took %s of %s", took.Round(time.Second), tc.budget)
			if limit := tc.budget + tc.budget*3/100; took > limit {
				t.Errorf("took %s, over its budget %s + 3%%", took.Round(time.Second), tc.budget)
			}
		})
	}
}
