package report

import (
	"math"
	"testing"

	"github.com/servebench/servebench"
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
