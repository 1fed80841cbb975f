package report

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// The methodology says which clock timed the run and counts the client-bound cells.
func TestMethodologySaysHowTimingWasTaken(t *testing.T) {
	cases := []struct {
		clock string
		want  string
	}{
		{servebench.ClockKernel, "stamped by the kernel"},
		{servebench.ClockUser, "in user space"},
	}
	for _, c := range cases {
		in := loadFixture(t)
		in.Manifest.ClockSource = c.clock
		in.Results.Cells[0].Validity.Add(servebench.ReasonClientBound, servebench.VerdictLowConfidence, "lag")
		var text string
		for _, s := range Build(in).Sections {
			if s.ID == "methodology" {
				for _, b := range s.Blocks {
					text += b.Text
				}
			}
		}
		if !strings.Contains(text, c.want) || !strings.Contains(text, "client-bound: 1 cell(s)") {
			t.Errorf("%s: methodology says %q", c.clock, text)
		}
	}
}
