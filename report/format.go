package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// ctxLabel writes a token count as "8K" when it is a whole multiple of 1024.
func ctxLabel(tokens int) string { return servebench.Tokens(tokens).String() }

// fmtDur writes seconds as "66ms" below one second and "35.9s" above; 0 decimals for ms.
func fmtDur(sec float64) string {
	if math.IsNaN(sec) {
		return "n/a"
	}
	if sec < 1 {
		return fmt.Sprintf("%.0fms", sec*1000)
	}
	if sec < 100 {
		return fmt.Sprintf("%.1fs", sec)
	}
	return fmt.Sprintf("%.0fs", sec)
}

// withheldMark stands in for a percentile withheld because the sample is too small for it.
const withheldMark = "n<min"

// fmtOpt writes *p with f, or withheldMark when p is nil (a withheld percentile).
func fmtOpt(p *float64, f func(float64) string) string {
	if p == nil {
		return withheldMark
	}
	return f(*p)
}

// fmtMS writes seconds as milliseconds with one decimal below 100 ms ("5.8ms", "135ms").
func fmtMS(sec float64) string {
	ms := sec * 1000
	if ms < 100 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
}

// fmtTPS writes a token rate with one decimal: "458.3 tok/s".
func fmtTPS(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " tok/s" }

// fmtTPS0 writes a token rate without decimals: "197 tok/s".
func fmtTPS0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " tok/s" }

// fmtPct writes a ratio (0..1) as a percentage with one decimal: "100.0%".
func fmtPct(ratio float64) string { return strconv.FormatFloat(ratio*100, 'f', 1, 64) + "%" }

// fmtPct0 writes a ratio as a whole percentage: "41%".
func fmtPct0(ratio float64) string { return strconv.FormatFloat(ratio*100, 'f', 0, 64) + "%" }

// fmtInt writes an integer with thousands separators: "33,639".
func fmtInt(v int) string { return servebench.Thousands(v) }

// fmtCount writes a count compactly: 950, 4.7K, 1.2M.
func fmtCount(v int) string {
	switch {
	case v >= 1_000_000:
		return strconv.FormatFloat(float64(v)/1e6, 'f', 1, 64) + "M"
	case v >= 1000:
		return strconv.FormatFloat(float64(v)/1e3, 'f', 1, 64) + "K"
	}
	return strconv.Itoa(v)
}

// fmtLarge writes a large amount in words: "1.6 million", "786K", "2.1 billion".
func fmtLarge(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + " billion"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + " million"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "K"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtUSD writes a dollar amount: two decimals from $1 up, two significant digits below
// ($0.50, $0.030, $0.0025).
func fmtUSD(v float64) string {
	d := 2
	if a := math.Abs(v); a != 0 && a < 1 {
		d = max(2, 1-int(math.Floor(math.Log10(a)))) // two significant digits below $1
	}
	return "$" + strconv.FormatFloat(v, 'f', d, 64)
}

// fmtNum writes v with the given decimals.
func fmtNum(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// plural writes "1 cell" / "3 cells".
func plural(n int, word string) string { return counted(fmtInt(n), word) }

// wasWere is the verb after a count: " was" for one, " were" otherwise.
func wasWere(n int) string {
	if n == 1 {
		return " was"
	}
	return " were"
}

// counted writes a count already formatted ("1", "1,000", "8+", "~35", "4.5", "1 and 4") with
// its noun, singular only for exactly one: "1 user", "8+ users", "4.5 users".
func counted(label, noun string) string {
	if label == "1" {
		return "1 " + noun
	}
	return label + " " + noun + "s"
}

// rangeLabel writes "1K - 200K" or just "8K" when both ends are equal.
func rangeLabel(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + " - " + hi
}

func ptr(v float64) *float64 { return &v }

// plusMinus writes a relative half-width as " ±4%" ("" when there is none). A half-width that
// would round to ±0% is never written so: exactly 0 (every sample alike, as from a
// deterministic server) is said as " (no spread)", and a non-zero one under 0.5% as " ±<1%",
// so a reader never takes a rounded figure for certainty.
func plusMinus(rel float64) string {
	switch {
	case math.IsInf(rel, 0) || math.IsNaN(rel):
		return ""
	case rel == 0:
		return " (no spread)"
	case rel < 0.005:
		return " ±<1%"
	}
	return " ±" + fmtPct0(rel)
}

// PlusMinusRel is plusMinus for callers outside the package that hold a relative half-width
// (the run's live progress line): " ±4%", " ±<1%", " (no spread)", "" for none.
func PlusMinusRel(rel float64) string { return plusMinus(rel) }

// PlusMinus writes interval iv around center as " ±4%" (its half-width relative to center;
// "" when there is none): how the reports and the benchmark pages write a value's 95% interval.
func PlusMinus(iv *servebench.Interval, center float64) string {
	if iv == nil {
		return ""
	}
	return plusMinus(iv.RelHalfWidth(center))
}

// plusMinusN is PlusMinus for an interval resting on n measured requests: " (n<min)" when n is
// under stats.MinIntervalSamples (the interval is withheld, as a percentile from too small a
// sample is), else PlusMinus.
func plusMinusN(iv *servebench.Interval, center float64, n int) string {
	if iv != nil && !stats.IntervalShown(n) {
		return " (" + withheldMark + ")"
	}
	return PlusMinus(iv, center)
}

// PlusMinusOrWithheld is PlusMinus, or " (n<min)" where the interval was withheld for resting on
// fewer than stats.MinIntervalSamples requests (a frontier point's, a page's peak): how the
// reports and the benchmark pages write a value whose interval may be withheld.
func PlusMinusOrWithheld(iv *servebench.Interval, center float64, withheld bool) string {
	if withheld {
		return " (" + withheldMark + ")"
	}
	return PlusMinus(iv, center)
}

// meanPlusMinus writes a summary's mean interval (plusMinusN over its Count values).
func meanPlusMinus(s servebench.Summary) string { return plusMinusN(s.CI95, s.Mean, s.Count) }

// throughputPlusMinus writes a cell's output throughput interval (batch means over the window
// its successful requests make: plusMinusN over them).
func throughputPlusMinus(c *servebench.CellResult) string {
	return plusMinusN(c.SystemOutputThroughputCI95, c.SystemOutputThroughputTPS, c.RequestsSucceeded)
}

// caveat is what a finding resting on cells adds when one of them is not valid: "invalid" when
// any is invalid, else "low-confidence" when any is low-confidence, else "" — the word the
// charts' data tables put beside such a cell's value, so a finding never leans on a cell that is
// not valid without saying so. Callers write it in parentheses: " (low-confidence)" after a
// value, or ", low-confidence" inside the parentheses that already follow one.
func caveat(cells ...*servebench.CellResult) string {
	var worst servebench.Verdict
	for _, c := range cells {
		if c != nil && !c.Validity.Trusted() {
			worst = worst.Worse(c.Validity.Verdict)
		}
	}
	return string(worst)
}

// after writes a caveat after a value: " (low-confidence)"; "" for none.
func after(caveat string) string {
	if caveat == "" {
		return ""
	}
	return " (" + caveat + ")"
}

// inside writes a caveat inside the parentheses after a value: ", low-confidence"; "" for none.
func inside(caveat string) string {
	if caveat == "" {
		return ""
	}
	return ", " + caveat
}

// fmtSpeed writes a cell's mean generation speed, or says it is unknown: a cell with no
// measurable request (responses not streamed, one-token answers) has no speed, never 0.
func fmtSpeed(c *servebench.CellResult) string {
	if c.GenerationSpeedTPS.Count == 0 {
		return unknownWhy(c)
	}
	return fmtTPS(c.GenerationSpeedTPS.Mean)
}

// unknownWhy says a per-token figure of c is unknown, and why when the cell knows.
func unknownWhy(c *servebench.CellResult) string {
	if c.Validity.Has(servebench.ReasonNotStreamed) {
		return "unknown (responses not streamed)"
	}
	if _, ok := c.Unavailable["generation_speed_tps"]; ok {
		return "unknown (not reported)"
	}
	return "unknown"
}

// unknownMark stands in, in a table cell, for a figure that is unknown: a summary no request
// filled, or a value the tool of an imported run did not report (Notes says why). Never 0.
const unknownMark = "—"

// fmtMean writes a summary's mean with f, or unknownMark when the summary is empty.
func fmtMean(s servebench.Summary, f func(float64) string) string {
	if s.Count == 0 {
		return unknownMark
	}
	return f(s.Mean)
}

// fmtPctl writes the percentile p of c's summary field (p99, …) with f: withheldMark when it
// was withheld for too few values, unknownMark when the summary is empty or the imported
// tool did not report it.
func fmtPctl(c *servebench.CellResult, field string, s servebench.Summary, p *float64, f func(float64) string) string {
	if p != nil {
		return f(*p)
	}
	if s.Count == 0 {
		return unknownMark
	}
	if why, ok := c.Unavailable[field]; ok && !strings.HasPrefix(why, "withheld") {
		return unknownMark
	}
	return withheldMark
}

// notJudged is the validity of a cell imported from another tool's result file: servebench
// judges only a window it measured itself (the import says so under unavailable "validity").
const notJudged = "imported (not judged)"

// ValidityLabel writes a cell's verdict with its reasons: "low-confidence: too-few-samples";
// notJudged for an imported cell, "—" for a cell without a verdict.
func ValidityLabel(c *servebench.CellResult) string {
	v := c.Validity
	if v.Verdict == "" {
		if _, ok := c.Unavailable[servebench.UnavailableValidity]; ok {
			return notJudged
		}
		return "—"
	}
	if len(v.Reasons) == 0 {
		return string(v.Verdict)
	}
	var rs []string
	for _, r := range v.Reasons {
		rs = append(rs, string(r))
	}
	return string(v.Verdict) + ": " + strings.Join(rs, ", ")
}
