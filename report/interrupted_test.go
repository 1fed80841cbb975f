package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
)

// TestInterruptedSearchAppearsEverywhere: a search interrupted after four passing levels is
// stated as "at least 8 … so far (search interrupted)" in the highlight, Key Findings, Use Case
// Guidance, Capacity Analysis and the terminal, instead of vanishing; a run stopped before any
// search does not claim that no use case was analysed.
func TestInterruptedSearchAppearsEverywhere(t *testing.T) {
	in := loadFixture(t)
	in.Manifest.Status = "interrupted"
	head := in.Manifest.Plan.Capacity.Headline
	if head == "" { // a run folder from before the plan named its headline
		head = plan.Defaults(false).Capacity.Headline
	}
	var cr servebench.CapacityResult
	for _, c := range in.Results.Capacity {
		if c.UseCase == head {
			cr = c
		}
	}
	if cr.UseCase == "" {
		t.Fatalf("the fixture has no result for its headline use case %q", head)
	}
	var pts []servebench.CapacityPoint
	for _, p := range cr.Points {
		if p.Pass && len(pts) < 4 {
			pts = append(pts, p)
		}
	}
	if len(pts) < 2 {
		t.Fatalf("the fixture's %s search has %d passing levels", head, len(pts))
	}
	lo := pts[len(pts)-1].Concurrency
	in.Results.Capacity = []servebench.CapacityResult{{UseCase: cr.UseCase, Title: cr.Title, ContextTokens: cr.ContextTokens, OutputTokens: cr.OutputTokens,
		Statistic: cr.Statistic, Thresholds: cr.Thresholds, Ceiling: cr.Ceiling, Points: pts, Interrupted: true,
		LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(lo), RequestsSpent: 40}}
	in.Results.Sizing = nil
	r := Build(in)
	var md, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	phrase := "at least " + servebenchRequests(lo) + " so far (search interrupted)"
	guidance, analysis := sectionText(r, "use-case-guidance"), sectionText(r, "capacity-"+slug(cr.UseCase))
	for name, s := range map[string]string{"Use Case Guidance": guidance, "Capacity Analysis": analysis, "Markdown": md.String()} {
		if !strings.Contains(strings.ToLower(s), phrase) {
			t.Errorf("%s does not say %q:\n%s", name, phrase, s)
		}
	}
	if !strings.Contains(strings.ToLower(r.Highlights[2].Condition), "search interrupted") {
		t.Errorf("the capacity highlight %+v does not say the search was interrupted", r.Highlights[2])
	}
	if !strings.Contains(term.String(), "≥"+itoa(lo)) || !strings.Contains(term.String(), "search interrupted") {
		t.Errorf("terminal does not show the interrupted search:\n%s", term.String())
	}
	if strings.Contains(md.String()+term.String(), "no use case was analysed") {
		t.Errorf("an interrupted run claims no use case was analysed")
	}

	// stopped before any search: the reason is the interruption, not --use-cases
	in.Results.Capacity = nil
	r = Build(in)
	term.Reset()
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	if s := term.String(); strings.Contains(s, "no use case was analysed") || !strings.Contains(s, "the run stopped before its capacity searches") {
		t.Errorf("a run stopped before its searches:\n%s", s)
	}
}

func servebenchRequests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return itoa(n) + " concurrent requests"
}

func itoa(n int) string { return fmtInt(n) }

// sectionText is the text of section id's blocks (paragraphs, notes, table cells).
func sectionText(r *Report, id string) string {
	var b strings.Builder
	for _, s := range r.Sections {
		if s.ID != id {
			continue
		}
		for _, bl := range s.Blocks {
			b.WriteString(bl.Text + "\n")
			if bl.Table != nil {
				for _, row := range bl.Table.Rows {
					b.WriteString(strings.Join(row, " | ") + "\n")
				}
			}
		}
	}
	return b.String()
}
