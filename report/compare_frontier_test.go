package report

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/frontier"
)

// TestCompareFrontier: the comparison overlays the runs' frontiers before the capacity
// verdicts and answers, at a target speed, with package frontier's readings; a price given by
// label replaces a run's own; the sentence names the run with the most tokens per dollar.
func TestCompareFrontier(t *testing.T) {
	ins := twoRuns(t)
	ins[1].Manifest.Plan.Metadata.Label = "slow"
	cmp := Compare(ins)
	q := FrontierQuestion{TargetPerUserTPS: 60, Users: 2000, Prices: map[string]float64{"slow": 1.25}}
	got := AddFrontier(cmp, ins, q)
	i, j := -1, -1
	for k, s := range cmp.Sections {
		switch s.ID {
		case "frontier":
			i = k
		case "capacity":
			j = k
		}
	}
	if i < 0 || j != i+1 {
		t.Fatalf("frontier section at %d, capacity at %d: want it just before", i, j)
	}
	if len(got) == 0 || len(cmp.Frontier) != len(got) {
		t.Fatalf("answers = %+v", got)
	}
	cf := got[0]
	if len(cf.Answers) != 2 {
		t.Fatalf("%d answers, want 2", len(cf.Answers))
	}
	a, b := cf.Answers[0], cf.Answers[1]
	// the first run keeps its own declared $3.50, the second takes the label's $1.25 (declared)
	if p, _ := a.Hardware.Primary(); p.USDPerGPUHour != 3.50 {
		t.Errorf("first run's price = %v", p)
	}
	if p, _ := b.Hardware.Primary(); p.USDPerGPUHour != 1.25 || p.Source != frontier.Declared {
		t.Errorf("second run's price = %+v", p)
	}
	// the readings are the package's, on each run's own curve
	for k, in := range ins {
		an := analyzeFrontier(&in.Manifest, &in.Results)
		for _, w := range an.Curves {
			if w.ContextTokens != cf.ContextTokens || w.OutputTokens != cf.OutputTokens {
				continue
			}
			want := w.At(q.TargetPerUserTPS, cf.Answers[k].Hardware)
			if math.Abs(want.OutputTPSPerGPU-cf.Answers[k].Reading.OutputTPSPerGPU) > 1e-9 || want.Kind != cf.Answers[k].Reading.Kind {
				t.Errorf("run %d: reading %+v, want %+v", k, cf.Answers[k].Reading, want)
			}
		}
	}
	// the sentence names the run with more output tokens per dollar
	ca, _ := primaryCost(a.Reading.Economics)
	cb, _ := primaryCost(b.Reading.Economics)
	best := cmp.Labels[0]
	if cb.OutputTokensPerUSD > ca.OutputTokensPerUSD {
		best = cmp.Labels[1]
	}
	text := ""
	for _, bl := range cmp.Sections[i].Blocks {
		text += bl.Text + "\n"
	}
	if !strings.Contains(text, "At 60 tok/s per user, "+best+" gives the most output tokens per dollar") {
		t.Errorf("the sentence does not name %s:\n%s", best, text)
	}
	if !strings.Contains(text, "2,000 users ("+frontier.UsersDefinition("", capacity.DefaultUsersPerSlot)+") need") {
		t.Errorf("no fleet for 2,000 users:\n%s", text)
	}
}
