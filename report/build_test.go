package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func TestFormatting(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"tokens per hour in millions", fmtLarge(458.3 * 3600), "1.6 million"},
		{"tokens per hour in thousands", fmtLarge(218.4 * 3600), "786K"},
		{"sub-second durations in ms", fmtDur(0.066), "66ms"},
		{"seconds with one decimal", fmtDur(35.94), "35.9s"},
		{"thousands separators", fmtInt(33639), "33,639"},
		{"compact request counts", fmtCount(4700), "4.7K"},
		{"ctx label in K", ctxLabel(204800), "200K"},
		{"speed band: slow", speedBand(14.9), "slow"},
		{"speed band: acceptable", speedBand(15.2), "acceptable"},
		{"speed band: fast", speedBand(50), "fast"},
		{"speed band: very fast", speedBand(50.1), "very fast"},
		{"ttft band: instant", ttftBand(0.066), "feels instant"},
		{"ttft band: responsive", ttftBand(1.6), "feels responsive"},
		{"ttft band: frustrating", ttftBand(35.9), "can be frustrating"},
		{"threshold in seconds", fmtThreshold("ttft_seconds", 8), "8s"},
		{"itl threshold in ms", fmtThreshold("itl_seconds", 0.05), "50ms"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestMissingDataSaysWhatToDo strips server metrics, power and capacity and expects each
// section to name what would fill it.
func TestMissingDataSaysWhatToDo(t *testing.T) {
	in := loadFixture(t)
	for i := range in.Results.Cells {
		c := &in.Results.Cells[i]
		c.QueueWaitSeconds, c.PrefillSeconds, c.PrefillSpeedTPS, c.GPUPowerWatts, c.EnergyJoules = nil, nil, nil, nil, nil
		c.Unavailable = map[string]string{"queue_wait_seconds": "the target exposed no Prometheus metrics"}
	}
	in.Results.Capacity = nil
	in.Samples = nil
	var buf bytes.Buffer
	if err := Markdown(&buf, Build(in)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"Queue wait was not measured (the target exposed no Prometheus metrics)",
		"pass --metrics-url",
		"Effective prefill speed (includes queueing)",
		"Power was not measured",
		"--gpu nvml",
		"No capacity analysis in this run",
		"No telemetry samples were recorded",
		"capacity not measured: no use case was analysed",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

func TestSimulatedBannerInEveryFormat(t *testing.T) {
	in := loadFixture(t)
	in.Manifest.Simulated = true
	r := Build(in)
	var md, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "SIMULATED") || !strings.HasPrefix(term.String(), "[SIMULATED]") {
		t.Fatal("a simulated run must say SIMULATED in Markdown and on the terminal")
	}
}

// twoRuns is the fixture twice, the second with another GPU and 60% of the throughput.
func twoRuns(t *testing.T) []Input {
	a, b := loadFixture(t), loadFixture(t)
	b.Manifest.Plan.Metadata.GPU = "1x H100 SXM"
	for i := range b.Results.Cells { // the fixture's cells carry no intervals to scale with them
		b.Results.Cells[i].SystemOutputThroughputTPS *= 0.6
		b.Results.Cells[i].TTFTSeconds.Mean *= 1.5
	}
	b.Results.Cells = b.Results.Cells[1:] // the second run lacks one cell: common cells only
	return []Input{a, b}
}

// The comparison's headline says whether the output-throughput difference between the runs
// is more than their 95% intervals: a clear one (the fixture's 0.6×), one inside the noise
// (the same run twice, 1% apart), and one without an interval.
func TestCompareSaysWhetherRunsDiffer(t *testing.T) {
	head := func(runs []Input) string {
		t.Helper()
		var buf bytes.Buffer
		if err := CompareMarkdown(&buf, Compare(runs)); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		i := strings.Index(out, "## <a id=\"common-cells\">")
		if i < 0 {
			t.Fatal("no common-cells section")
		}
		return out[:i]
	}
	// every cell's throughput known within ±3% (the fixture's cells carry no intervals)
	withIntervals := func(in Input) Input {
		for i := range in.Results.Cells {
			c := &in.Results.Cells[i]
			v := c.SystemOutputThroughputTPS
			c.SystemOutputThroughputCI95 = &servebench.Interval{Low: 0.97 * v, High: 1.03 * v}
		}
		return in
	}
	runs := twoRuns(t)
	runs[0], runs[1] = withIntervals(runs[0]), withIntervals(runs[1])
	if h := head(runs); !strings.Contains(h, "1x H200 SXM generates 1.67× the output throughput of 1x H100 SXM") ||
		!strings.Contains(h, "is more than the two runs' uncertainty") {
		t.Errorf("a 0.6× run is not reported as a measured difference:\n%s", h)
	}

	a, b := loadFixture(t), loadFixture(t)
	b.Manifest.Plan.Metadata.GPU = "1x H100 SXM"
	for i := range b.Results.Cells {
		b.Results.Cells[i].SystemOutputThroughputTPS *= 0.99
	}
	a, b = withIntervals(a), withIntervals(b)
	if h := head([]Input{a, b}); !strings.Contains(h, "1x H200 SXM and 1x H100 SXM do not differ measurably in output throughput") ||
		strings.Contains(h, "generates") {
		t.Errorf("runs 1%% apart within their intervals are reported as different:\n%s", h)
	}

	for i := range b.Results.Cells {
		b.Results.Cells[i].SystemOutputThroughputCI95 = nil
	}
	if h := head([]Input{a, b}); !strings.Contains(h, "whether the difference is more than noise is not known") {
		t.Errorf("a difference without intervals is not qualified:\n%s", h)
	}
}

func TestGoldenCompareMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := CompareMarkdown(&buf, Compare(twoRuns(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md", buf.Bytes())
	if !strings.Contains(buf.String(), "| Output generation (tok/s) | 252 | 151 |") {
		t.Error("headline table does not compare output throughput at the heaviest common cell")
	}
}

func TestCompareHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := CompareHTML(&buf, Compare(twoRuns(t))); err != nil {
		t.Fatal(err)
	}
	m := dataBlockRE.FindStringSubmatch(buf.String())
	if m == nil || !strings.Contains(m[1], "cmp-throughput") || !strings.Contains(m[1], "1x H100 SXM") {
		t.Fatal("comparison HTML lacks the overlaid charts")
	}
}

// The summary leads with the use case the plan's capacity.headline names, worded as capacity
// words its limit; a plan without one leads with general_chatbot (the default).
func TestHeadlineUseCaseFromThePlan(t *testing.T) {
	for _, c := range []struct{ headline, want string }{
		{"", "general_chatbot"},                 // a run folder from before the key: the default
		{"code_completion", "code_completion"},  // the plan names another use case
		{"no_such_use_case", "code_completion"}, // none analysed by that name: the first one
	} {
		in := loadFixture(t)
		in.Manifest.Plan.Capacity.Headline = c.headline
		rep := Build(in)
		var want *servebench.CapacityResult
		for i := range in.Results.Capacity {
			if in.Results.Capacity[i].UseCase == c.want {
				want = &in.Results.Capacity[i]
			}
		}
		if want == nil {
			t.Fatalf("the fixture has no use case %s", c.want)
		}
		h := rep.Highlights[len(rep.Highlights)-1]
		if h.Label != "Concurrent Requests" || h.Value != capacity.LimitLabel(*want) || !strings.Contains(h.Condition, want.Title) {
			t.Errorf("headline %q: highlight %+v, want %s (%s)", c.headline, h, capacity.LimitLabel(*want), want.Title)
		}
	}
}

// Every searched use case says in one sentence what its search measured and spent. A search
// that needed every level from 1 up (here: spent more than the dense grid's floors) says it
// saved nothing rather than claiming a saving or saying nothing.
func TestSearchCostSentence(t *testing.T) {
	for _, c := range []struct {
		name         string
		spent, dense int
		want, not    string
	}{
		{"cheaper", 80, 324, "would have cost 324", "saved nothing"},
		{"every level", 10, 9, "it needed every level from 1 to", "would have cost"},
	} {
		in := loadFixture(t)
		var cr *servebench.CapacityResult
		for i := range in.Results.Capacity {
			if r := &in.Results.Capacity[i]; r.LimitKind == servebench.LimitMeasured && len(r.Points) > 0 {
				cr = r
				break
			}
		}
		if cr == nil {
			t.Fatal("the fixture has no measured capacity limit")
		}
		cr.RequestsSpent, cr.DenseGridRequests = c.spent, c.dense
		cr.LimitRange = &[2]int{*cr.Limit, *cr.Limit}
		text := ""
		for _, s := range Build(in).Sections {
			if s.ID == "capacity-"+slug(cr.UseCase) {
				for _, b := range s.Blocks {
					text += b.Text + "\n"
				}
			}
		}
		for _, w := range []string{fmt.Sprintf("spent %d requests", c.spent), c.want, "Both sides of the limit are settled at 95% confidence."} {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %s section lacks %q:\n%s", c.name, cr.UseCase, w, text)
			}
		}
		if strings.Contains(text, c.not) {
			t.Errorf("%s: %s section says %q:\n%s", c.name, cr.UseCase, c.not, text)
		}
	}
}

// A distributed run's client is its workers: the report gives the scheduling priority each
// worker reported (escaped), grouped when they ran alike, and not the coordinator's, which sent
// nothing.
func TestWorkersPriority(t *testing.T) {
	const raised = "nice -10 (raised from 0 so that other processes delay the client's reads less)"
	for _, tc := range []struct {
		name    string
		workers []servebench.Worker
		want    []string
	}{
		{"alike", []servebench.Worker{{Name: "w1", Priority: raised}, {Name: "w2", Priority: raised}},
			[]string{"Every worker ran at scheduling priority " + raised + "."}},
		{"different", []servebench.Worker{{Name: "w1", Priority: raised}, {Name: "w2", Priority: "nice 0 <b>x</b> (not raised)"}, {Name: "w3"}, {Name: "w4", Priority: raised}},
			[]string{"The workers ran at different scheduling priorities: " + raised + " (w1, w4); nice 0 ", "(not raised) (w2); not reported (w3)."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := loadFixture(t)
			in.Manifest.ClockSource = servebench.ClockKernel
			in.Manifest.ClientPriority = "nice 0 (coordinator)"
			in.Results.Workers = tc.workers
			var buf bytes.Buffer
			if err := Markdown(&buf, Build(in)); err != nil {
				t.Fatal(err)
			}
			md := buf.String()
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("the report lacks %q", want)
				}
			}
			for _, bad := range []string{"coordinator)", "<b>"} {
				if strings.Contains(md, bad) {
					t.Errorf("the report contains %q", bad)
				}
			}
		})
	}
}

// The capacity table of a comparison gives, beside a run's limit, the levels its data cannot
// tell apart from it, when those are more than one.
func TestCompareCapacityShowsTheLimitRange(t *testing.T) {
	runs := twoRuns(t)
	var cr *servebench.CapacityResult
	for i := range runs[0].Results.Capacity {
		if c := &runs[0].Results.Capacity[i]; c.Limit != nil && *c.Limit > 1 && c.LimitKind == servebench.LimitMeasured {
			cr = c
			break
		}
	}
	if cr == nil {
		t.Fatal("the fixture has no measured limit above 1")
	}
	l := *cr.Limit
	cr.LimitRange = &[2]int{l - 1, l + 1}
	var buf bytes.Buffer
	if err := CompareMarkdown(&buf, Compare(runs)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("| %s (%d–%d) |", capacity.LimitLabel(*cr), l-1, l+1)
	if !strings.Contains(buf.String(), want) {
		t.Errorf("capacity table lacks %q:\n%s", want, buf.String()[strings.Index(buf.String(), "Capacity per Use Case"):])
	}
}
