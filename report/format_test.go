package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func TestFmtUSD(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "$0.00"},
		{12.345, "$12.35"},
		{1, "$1.00"},
		{0.5, "$0.50"},
		{0.03, "$0.030"},
		{0.0149, "$0.015"},
		{0.0025, "$0.0025"},
		{0.001, "$0.0010"},
		{0.00001234, "$0.000012"},
	} {
		if got := fmtUSD(tt.v); got != tt.want {
			t.Errorf("fmtUSD(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestMDText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"< 15 tok/s", "< 15 tok/s"},
		{"TTFT < 8s, speed > 15 tok/s", "TTFT < 8s, speed > 15 tok/s"},
		{"> 50 tok/s", "\\> 50 tok/s"},
		{" \n> quote", "  \\> quote"},
		{"<a>>", "&lt;a>>"},
		{"<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"},
		{"<!-- x -->", "&lt;!-- x -->"},
		{"<http://evil.example>", "&lt;http://evil.example>"},
		{"R&D &amp; &#60;", "R&amp;D &amp;amp; &amp;#60;"},
		{"a|b *c* _d_ `e` [f](g)", "a\\|b \\*c\\* \\_d\\_ \\`e\\` \\[f\\](g)"},
		{"line\nbreak", "line break"},
	} {
		if got := mdText(tt.in); got != tt.want {
			t.Errorf("mdText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCaveatNamesTheWorstVerdict(t *testing.T) {
	cell := func(v servebench.Verdict) *servebench.CellResult {
		return &servebench.CellResult{Validity: servebench.Validity{Verdict: v}}
	}
	valid, low, bad := cell(servebench.VerdictValid), cell(servebench.VerdictLowConfidence), cell(servebench.VerdictInvalid)
	for _, tc := range []struct {
		name  string
		cells []*servebench.CellResult
		want  string
	}{
		{"valid", []*servebench.CellResult{valid}, ""},
		{"unassessed", []*servebench.CellResult{cell("")}, ""},
		{"none", nil, ""},
		{"low", []*servebench.CellResult{valid, low}, "low-confidence"},
		{"invalid wins", []*servebench.CellResult{low, bad, low}, "invalid"},
		{"nil cell", []*servebench.CellResult{nil, low}, "low-confidence"},
	} {
		if got := caveat(tc.cells...); got != tc.want {
			t.Errorf("%s: caveat = %q, want %q", tc.name, got, tc.want)
		}
		if a, i := after(caveat(tc.cells...)), inside(caveat(tc.cells...)); (tc.want == "") != (a == "" && i == "") || (tc.want != "" && (a != " ("+tc.want+")" || i != ", "+tc.want)) {
			t.Errorf("%s: after %q, inside %q", tc.name, a, i)
		}
	}
}

// A 95% interval is written relative to its value, and a width that would round to ±0% is never
// written so: a server whose every sample was alike says so, and a tiny width says it is tiny.
func TestPlusMinusNeverPrintsZero(t *testing.T) {
	for _, tc := range []struct {
		name   string
		iv     *servebench.Interval
		center float64
		want   string
	}{
		{"no interval", nil, 10, ""},
		{"unbounded", &servebench.Interval{Low: math.Inf(-1), High: 12}, 10, ""},
		{"a usual width", &servebench.Interval{Low: 9.6, High: 10.4}, 10, " ±4%"},
		{"every sample alike (a deterministic server)", &servebench.Interval{Low: 10, High: 10}, 10, " (no spread)"},
		{"under half a percent", &servebench.Interval{Low: 9.99, High: 10.01}, 10, " ±<1%"},
		{"half a percent rounds as usual", &servebench.Interval{Low: 9.95, High: 10.05}, 10, " ±1%"},
	} {
		if got := PlusMinus(tc.iv, tc.center); got != tc.want {
			t.Errorf("%s: PlusMinus = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An interval resting on fewer requests than stats.MinIntervalSamples is never written as a
// width (the bug report's "TTFT 8.80s ±0%" from 2–6 samples beside rows at ±86%): the sweep
// summary (the terminal's), the frontier table and compare write "n<min" in its place, as a
// percentile from too small a sample is; a cell with enough requests keeps its ±.
func TestIntervalsNeedTheirMinimumSamples(t *testing.T) {
	in := loadFixture(t)
	var few, many *servebench.CellResult
	for i := range in.Results.Cells {
		c := &in.Results.Cells[i]
		if !c.OnSweepGrid() || c.LoadMode != servebench.ModeSustained || c.RequestsSucceeded == 0 {
			continue
		}
		switch {
		case few == nil:
			few = c
		case many == nil && c.ContextTokens == few.ContextTokens:
			many = c
		}
	}
	if few == nil || many == nil {
		t.Fatal("the fixture needs two measured sustained sweep cells at one context")
	}
	// Nine requests that happen to agree: widths under half a percent, from too few of them.
	n := stats.MinIntervalSamples - 1
	few.RequestsSucceeded, few.TTFTSeconds.Count, few.GenerationSpeedTPS.Count = n, n, n
	few.TTFTSeconds.CI95 = &servebench.Interval{Low: few.TTFTSeconds.Mean * 0.999, High: few.TTFTSeconds.Mean * 1.001}
	few.GenerationSpeedTPS.CI95 = &servebench.Interval{Low: few.GenerationSpeedTPS.Mean * 0.999, High: few.GenerationSpeedTPS.Mean * 1.001}
	few.SystemOutputThroughputCI95 = &servebench.Interval{Low: few.SystemOutputThroughputTPS * 0.999, High: few.SystemOutputThroughputTPS * 1.001}
	m := stats.MinIntervalSamples
	many.RequestsSucceeded, many.TTFTSeconds.Count, many.GenerationSpeedTPS.Count = max(many.RequestsSucceeded, m), max(many.TTFTSeconds.Count, m), max(many.GenerationSpeedTPS.Count, m)
	many.TTFTSeconds.CI95 = &servebench.Interval{Low: many.TTFTSeconds.Mean * 0.9, High: many.TTFTSeconds.Mean * 1.1}
	many.SystemOutputThroughputCI95 = &servebench.Interval{Low: many.SystemOutputThroughputTPS * 0.95, High: many.SystemOutputThroughputTPS * 1.05}
	r := Build(in)
	for _, row := range r.Summary.Rows {
		if row[0] != ctxLabel(few.ContextTokens) {
			continue
		}
		l := strings.Join(row, " | ")
		switch row[1] {
		case fmt.Sprint(few.Concurrency):
			if strings.Contains(l, "±") || strings.Count(l, "(n<min)") != 2 {
				t.Errorf("a %d-request cell writes its intervals in the sweep summary: %q, want TTFT and throughput as (n<min)", n, l)
			}
		case fmt.Sprint(many.Concurrency):
			if strings.Count(l, "±") != 2 {
				t.Errorf("a %d-request cell lost its intervals in the sweep summary: %q", many.RequestsSucceeded, l)
			}
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	// the frontier's table of every measured level: "| 1 | 188.7 (n<min) | 186.9 (n<min) | …"
	frontierRow := "| " + fmt.Sprint(few.Concurrency) + " | " + fmtNum(few.GenerationSpeedTPS.Mean, 1) + " "
	const mdMark = "(n&lt;min)" // Markdown escapes the "<"
	found := false
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, frontierRow) {
			found = found || strings.Count(l, mdMark) == 2
			if strings.Contains(l, "±") {
				t.Errorf("the frontier table writes a %d-request cell's intervals: %q", n, l)
			}
		}
	}
	if !found {
		t.Errorf("no frontier row %q with both intervals as n<min in the report", frontierRow)
	}
	var cmp bytes.Buffer
	if err := CompareMarkdown(&cmp, Compare([]Input{in, loadFixture(t)})); err != nil {
		t.Fatal(err)
	}
	cellRow := "| " + few.Scenario + " " + ctxLabel(few.ContextTokens) + "/" + fmt.Sprint(few.OutputTokens) + " c=" + fmt.Sprint(few.Concurrency) + " |"
	found = false
	for _, l := range strings.Split(cmp.String(), "\n") {
		if strings.HasPrefix(l, cellRow) {
			found = true
			if strings.Contains(l, "±") || strings.Count(l, mdMark) != 2 {
				t.Errorf("compare writes the %d-request cell's intervals: %q", n, l)
			}
		}
	}
	if !found {
		t.Errorf("no compare row %q in:\n%s", cellRow, cmp.String())
	}
}
