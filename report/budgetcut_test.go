package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// A search that a run's time budget stopped at 8, below its ceiling of 128, is a lower bound on
// the level it reached: its section neither tells the reader to raise --capacity-max (the
// ceiling was never reached, the budget is what stopped it), nor labels its chart's line
// "ceiling passes", nor claims it saved 100% of a dense grid up to 128 it never meant to
// measure. A search that did pass its ceiling keeps all three.
func TestBudgetCutSearchNamesWhatStoppedIt(t *testing.T) {
	in := loadFixture(t)
	var cr servebench.CapacityResult
	for _, c := range in.Results.Capacity {
		if len(c.Points) >= 2 {
			cr = c
			break
		}
	}
	if cr.UseCase == "" {
		t.Fatal("the fixture has no search of 2 levels or more")
	}
	var pts []servebench.CapacityPoint
	for _, p := range cr.Points {
		if p.Pass {
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		t.Fatalf("the fixture's %s search has no passing level", cr.UseCase)
	}
	top := pts[len(pts)-1].Concurrency
	for _, tc := range []struct {
		name         string
		ceiling      int
		want, unwant []string
		marker       string
	}{
		// the budget stopped the search below its ceiling
		{"below its ceiling", top * 16, []string{"the search's ceiling of", "was not reached", "below its ceiling of"},
			[]string{"Raise capacity.max_concurrency", "saved"}, "(highest tested)"},
		// the ceiling itself passed: raising it is what searches further
		{"at its ceiling", top, []string{"Raise capacity.max_concurrency (--capacity-max) to search further."}, []string{"below its ceiling of"}, "(ceiling passes)"},
	} {
		c := cr
		c.Points, c.Ceiling, c.FirstFailing, c.LimitRange = pts, tc.ceiling, nil, nil
		c.LimitKind, c.Limit = servebench.LimitLowerBound, servebench.Int(top)
		c.DenseGridRequests, c.RequestsSpent = 24768, 3
		in.Results.Capacity = []servebench.CapacityResult{c}
		in.Results.Sizing = nil
		r := Build(in)
		text := sectionText(r, "capacity-"+slug(c.UseCase))
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the section does not say %q:\n%s", tc.name, w, text)
			}
		}
		for _, w := range tc.unwant {
			if strings.Contains(text, w) {
				t.Errorf("%s: the section says %q:\n%s", tc.name, w, text)
			}
		}
		var markers []string
		for _, s := range r.Sections {
			if s.ID != "capacity-"+slug(c.UseCase) {
				continue
			}
			for _, bl := range s.Blocks {
				if bl.Chart != nil {
					for _, m := range bl.Chart.Markers {
						markers = append(markers, m.Name)
					}
				}
			}
		}
		if len(markers) == 0 {
			t.Fatalf("%s: no chart marker", tc.name)
		}
		for _, m := range markers {
			if !strings.HasSuffix(m, tc.marker) {
				t.Errorf("%s: the chart's marker reads %q, want it to end %q", tc.name, m, tc.marker)
			}
		}
	}
}
