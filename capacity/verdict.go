package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
)

// LimitLabel is the short form of a capacity limit for tables: "24" (measured), "~35"
// (interpolated), "125+" (lower bound: the ceiling held), "not viable" (fails at 1 request), or
// "not measured" (skipped or incomplete).
func LimitLabel(r servebench.CapacityResult) string {
	switch r.LimitKind {
	case servebench.LimitNotViable:
		return "not viable"
	case servebench.LimitLowerBound:
		n := r.Ceiling
		if r.Limit != nil {
			n = *r.Limit
		}
		return strconv.Itoa(n) + "+"
	case servebench.LimitMeasured:
		if r.Limit != nil {
			return strconv.Itoa(*r.Limit)
		}
	case servebench.LimitInterpolated:
		if r.Limit != nil {
			return "~" + strconv.Itoa(*r.Limit)
		}
	}
	return "not measured"
}

// Headline is the verdict's first sentence without its full stop, e.g. "Capacity limit: 24
// concurrent requests", "Capacity limit: 125+ concurrent requests", "Capacity limit: not viable".
func Headline(r servebench.CapacityResult) string {
	switch l := LimitLabel(r); l {
	case "not viable", "not measured":
		return "Capacity limit: " + l
	case "1":
		return "Capacity limit: 1 request"
	default:
		return "Capacity limit: " + l + " concurrent requests"
	}
}

// Verdict is the capacity verdict in sentences generated from the result: the headline, then
// what happens at the first failing level (or at the ceiling for a lower bound, or at 1 request
// when not viable) with each metric's value against its threshold, e.g.
//
//	Capacity limit: 23 concurrent requests. At 24 concurrent requests, end-to-end latency
//	reaches 2016ms, just above the 2,000ms threshold.
//
// "just" marks a miss within 5 % of the threshold; "right at" a value equal to the threshold at
// the precision shown.
func Verdict(r servebench.CapacityResult) string {
	uc := servebench.UseCase{Statistic: r.Statistic, Thresholds: r.Thresholds}
	if r.Skipped {
		if r.Note == "" {
			return Headline(r) + "."
		}
		return sentence(r.Note)
	}
	switch r.LimitKind {
	case servebench.LimitLowerBound:
		n := r.Ceiling
		if r.Limit != nil {
			n = *r.Limit
		}
		p, ok := pointAt(r, n)
		s := Headline(r) + "."
		if ok {
			s += " At " + requests(n) + ", " + passing(uc, p, checks(r.Thresholds)) + "."
		}
		return s + fmt.Sprintf(" Capacity likely extends higher than the tested ceiling of %d.", r.Ceiling)
	case servebench.LimitNotViable:
		p, ok := pointAt(r, 1)
		if !ok {
			return Headline(r) + "."
		}
		return "Not viable: even at 1 request, " + failingText(uc, p) + "." + othersText(uc, p, "at this concurrency")
	case servebench.LimitMeasured, servebench.LimitInterpolated:
		if r.FirstFailing == nil || r.Limit == nil {
			break
		}
		hi := *r.FirstFailing
		s := Headline(r) + "."
		if r.LimitKind == servebench.LimitInterpolated {
			lo := lastPassingBelow(r, hi)
			s = fmt.Sprintf("%s, interpolated on %s between %d (passes) and %d (fails).", Headline(r), metricName(uc, r.LimitingMetric), lo, hi)
		}
		p, ok := pointAt(r, hi)
		if !ok {
			return s
		}
		return s + " At " + requests(hi) + ", " + failingText(uc, p) + "." + othersText(uc, p, "at this concurrency")
	}
	return Headline(r) + "."
}

// failingText describes the failing metrics of p, joined with "; ".
func failingText(uc servebench.UseCase, p servebench.CapacityPoint) string {
	var parts []string
	for _, m := range p.Failing {
		parts = append(parts, clause(uc, p, m))
	}
	return strings.Join(parts, "; ")
}

// othersText describes the thresholds that still hold at p, as one sentence (leading space),
// or "" when none do.
func othersText(uc servebench.UseCase, p servebench.CapacityPoint, where string) string {
	var parts []string
	for _, k := range checks(uc.Thresholds) {
		if !contains(p.Failing, k.metric) {
			parts = append(parts, clause(uc, p, k.metric))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + sentence(where+", "+strings.Join(parts, "; "))
}

// passing describes a level where every threshold holds: "TTFT is 5.7 seconds and generation
// speed is 23 tok/s, both within the thresholds".
func passing(uc servebench.UseCase, p servebench.CapacityPoint, ks []check) string {
	if len(ks) == 1 {
		return clause(uc, p, ks[0].metric)
	}
	var parts []string
	for _, k := range ks {
		parts = append(parts, metricName(uc, k.metric)+" is "+formatValue(k.metric, p.Values[k.metric], k.limit))
	}
	all := "all"
	if len(parts) == 2 {
		all = "both"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + ", " + all + " within the thresholds"
}

// clause states metric m at p against its threshold.
func clause(uc servebench.UseCase, p servebench.CapacityPoint, m string) string {
	name := metricName(uc, m)
	k, ok := checkFor(uc, m)
	v, have := p.Values[m]
	if !have {
		return name + " could not be measured (no request qualified), so its threshold cannot be shown to hold"
	}
	if !ok {
		return name + " is " + formatValue(m, v, v)
	}
	val, thr := formatValue(m, v, k.limit), formatThreshold(m, k.limit)
	// Never print a value that reads as the threshold itself unless it is: add decimals.
	for extra := 1; extra <= 3 && v != k.limit && val == formatValue(m, k.limit, k.limit); extra++ {
		val = formatPrec(m, v, k.limit, extra)
	}
	noun := "threshold"
	if !k.upper {
		noun = "minimum"
	}
	switch {
	case v == k.limit:
		return fmt.Sprintf("%s is %s, right at the %s %s", name, val, thr, noun)
	case k.holds(v) && k.upper:
		return fmt.Sprintf("%s is %s, within the %s %s", name, val, thr, noun)
	case k.holds(v):
		return fmt.Sprintf("%s is %s, above the %s %s", name, val, thr, noun)
	}
	just := ""
	if k.violation(v) <= 0.05 {
		just = "just "
	}
	if k.upper {
		return fmt.Sprintf("%s reaches %s, %sabove the %s %s", name, val, just, thr, noun)
	}
	return fmt.Sprintf("%s drops to %s, %sbelow the %s %s", name, val, just, thr, noun)
}

// metricName is the reader's name of a metric, prefixed with the statistic when it is not the
// mean ("p99 TTFT").
func metricName(uc servebench.UseCase, m string) string {
	var n string
	switch m {
	case MetricTTFT:
		n = "TTFT"
	case MetricGenerationSpeed:
		n = "generation speed"
	case MetricE2ELatency:
		n = "end-to-end latency"
	case MetricITL:
		n = "inter-token latency"
	case MetricFirstContent:
		n = "time to first answer"
	case MetricSuccessRate:
		return "success rate"
	case MetricSystemThroughput:
		return "system throughput"
	default:
		return m
	}
	if uc.Statistic != "" && uc.Statistic != servebench.StatMean {
		n = string(uc.Statistic) + " " + n
	}
	return n
}

// msScale reports whether a seconds metric with this threshold reads better in milliseconds
// (thresholds under 5 s, and ITL always).
func msScale(m string, threshold float64) bool {
	return m == MetricITL || threshold < 5
}

// formatValue renders v of metric m in the unit its threshold is read in, at the usual
// precision: "2,016ms", "45.3ms", "11.6 seconds", "23 tok/s", "8.5 tok/s", "99.5%".
func formatValue(m string, v, threshold float64) string { return formatPrec(m, v, threshold, 0) }

// formatPrec is formatValue with extra decimals.
func formatPrec(m string, v, threshold float64, extra int) string {
	fixed := func(x float64, prec int) string {
		if prec == 0 {
			return thousands(int(math.Round(x)))
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	switch m {
	case MetricTTFT, MetricE2ELatency, MetricITL, MetricFirstContent:
		if msScale(m, threshold) {
			ms := v * 1000
			if ms < 100 {
				return fixed(ms, 1+extra) + "ms"
			}
			return fixed(ms, extra) + "ms"
		}
		return fixed(v, 1+extra) + " seconds"
	case MetricGenerationSpeed, MetricSystemThroughput:
		if v < 10 {
			return fixed(v, 1+extra) + " tok/s"
		}
		return fixed(v, extra) + " tok/s"
	case MetricSuccessRate:
		return fixed(v*100, 1+extra) + "%"
	}
	return strconv.FormatFloat(v, 'g', 4+extra, 64)
}

// formatThreshold renders a threshold as an adjective: "2,000ms", "12-second", "15 tok/s", "99%".
func formatThreshold(m string, t float64) string {
	switch m {
	case MetricTTFT, MetricE2ELatency, MetricITL, MetricFirstContent:
		if msScale(m, t) {
			return thousandsFloat(t*1000) + "ms"
		}
		return strconv.FormatFloat(t, 'g', -1, 64) + "-second"
	case MetricGenerationSpeed:
		return strconv.FormatFloat(t, 'g', -1, 64) + " tok/s"
	case MetricSuccessRate:
		return strconv.FormatFloat(t*100, 'g', -1, 64) + "%"
	}
	return strconv.FormatFloat(t, 'g', -1, 64)
}

// thousandsFloat writes whole numbers with thousands separators and others as %g.
func thousandsFloat(v float64) string {
	if r := math.Round(v); math.Abs(v-r) < 1e-9 && math.Abs(r) < 1e15 {
		return thousands(int(r))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// thousands writes n with comma separators: 2016 → "2,016".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// requests is "1 request" or "N concurrent requests".
func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.Itoa(n) + " concurrent requests"
}

func pointAt(r servebench.CapacityResult, n int) (servebench.CapacityPoint, bool) {
	for _, p := range r.Points {
		if p.Concurrency == n {
			return p, true
		}
	}
	return servebench.CapacityPoint{}, false
}

// lastPassingBelow is the highest passing point below hi (0 if none).
func lastPassingBelow(r servebench.CapacityResult, hi int) int {
	lo := 0
	for _, p := range r.Points {
		if p.Pass && p.Concurrency < hi && p.Concurrency > lo {
			lo = p.Concurrency
		}
	}
	return lo
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
