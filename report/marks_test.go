package report

import (
	"slices"
	"strings"
	"testing"

	servebench "github.com/servebench/servebench"
)

// markCapacityCells makes every cell behind the general chatbot search's points not valid (as
// in the README demo): the highest invalid, the others low-confidence. It returns their levels.
func markCapacityCells(t *testing.T, in *Input) (low, invalid []int) {
	t.Helper()
	for _, cr := range in.Results.Capacity {
		if cr.UseCase != "general_chatbot" {
			continue
		}
		for j, p := range cr.Points {
			for i := range in.Results.Cells {
				c := &in.Results.Cells[i]
				if c.ID() != p.CellID {
					continue
				}
				if j == len(cr.Points)-1 {
					c.Validity = servebench.Validity{Verdict: servebench.VerdictInvalid, Reasons: []servebench.Reason{servebench.ReasonWindowTooShort}}
					invalid = append(invalid, p.Concurrency)
				} else {
					c.Validity = servebench.Validity{Verdict: servebench.VerdictLowConfidence, Reasons: []servebench.Reason{servebench.ReasonTooFewSamples}}
					low = append(low, p.Concurrency)
				}
			}
		}
	}
	if len(low) == 0 || len(invalid) == 0 {
		t.Fatal("the fixture's general chatbot search has no points backed by cells")
	}
	return low, invalid
}

// Every chart that plots cells marks the points of cells that are not valid, its data table
// says the verdict, and its caption explains the mark: the capacity charts like the sweep's.
func TestCapacityChartsMarkCells(t *testing.T) {
	in := loadFixture(t)
	low, invalid := markCapacityCells(t, &in)
	r := Build(in)
	var got []*Chart
	for _, c := range charts(r.Sections) {
		if strings.HasPrefix(c.ID, "chart-capacity-general-chatbot") {
			got = append(got, c)
		}
	}
	if len(got) == 0 {
		t.Fatal("no general chatbot capacity chart")
	}
	for _, c := range got {
		for _, s := range c.Series {
			if len(s.Marks) != len(s.Data) {
				t.Fatalf("%s %s: %d marks for %d points", c.ID, s.Name, len(s.Marks), len(s.Data))
			}
			for i, x := range c.XValues {
				n := int(x)
				want := ""
				switch {
				case s.Data[i] == nil:
				case slices.Contains(low, n):
					want = "low-confidence"
				case slices.Contains(invalid, n):
					want = "invalid"
				}
				if s.Marks[i] != want {
					t.Errorf("%s %s at %d: mark %q, want %q", c.ID, s.Name, n, s.Marks[i], want)
				}
			}
		}
		if !strings.Contains(c.MarkNote, "Hollow points come from low-confidence cells") || !strings.Contains(c.MarkNote, "crosses from invalid cells") {
			t.Errorf("%s: the caption's note does not explain both marks: %q", c.ID, c.MarkNote)
		}
		tab := chartTable(c)
		var text []string
		for _, row := range tab.Rows {
			text = append(text, strings.Join(row, " | "))
		}
		all := strings.Join(text, "\n")
		if !strings.Contains(all, "(low-confidence)") || !strings.Contains(all, "(invalid)") {
			t.Errorf("%s: the data table does not name the verdicts:\n%s", c.ID, all)
		}
	}
	// a chart whose points are all valid says nothing about marks
	for _, c := range charts(r.Sections) {
		marked := false
		for _, s := range c.Series {
			marked = marked || slices.ContainsFunc(s.Marks, func(m string) bool { return m != "" })
		}
		if !marked && c.MarkNote != "" {
			t.Errorf("%s has no marked point but says %q", c.ID, c.MarkNote)
		}
	}
}

// Series.add keeps Marks aligned with Data, and nil while every point is valid.
func TestSeriesAdd(t *testing.T) {
	valid := &servebench.CellResult{Validity: servebench.Valid()}
	old := &servebench.CellResult{} // from before validity: trusted
	low := &servebench.CellResult{Validity: servebench.Validity{Verdict: servebench.VerdictLowConfidence}}
	var s Series
	s.add(ptr(1), valid)
	s.add(nil, low) // no point, no mark
	s.add(ptr(2), old)
	if s.Marks != nil {
		t.Fatalf("marks %q with every point valid", s.Marks)
	}
	s.add(ptr(3), low)
	s.add(ptr(4), valid)
	if want := []string{"", "", "", "low-confidence", ""}; !slices.Equal(s.Marks, want) || len(s.Data) != len(want) {
		t.Errorf("marks %q for %d points, want %q", s.Marks, len(s.Data), want)
	}
}
