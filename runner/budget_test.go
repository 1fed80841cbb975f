package runner_test

import (
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
	rec, took := demoRun(t, prof, func(p *servebench.Plan) {
		r, err := plan.Resolve(nil, plan.Overrides{"sim-profile": "h200-glm47-flash", "contexts": "1k,8k,32k", "concurrency": "1,2,4,8",
			"max-time": budget.String()})
		if err != nil {
			t.Fatal(err)
		}
		r.Target.URL = p.Target.URL
		*p = r
	})
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
	found := false
	for _, n := range rec.res.Notes {
		if strings.Contains(n, "Time budget 10m") {
			found = true
			t.Log(n)
		}
	}
	if !found {
		t.Errorf("no note says how the budget was kept: %q", rec.res.Notes)
	}
}
