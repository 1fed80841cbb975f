package capacity

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
)

// Labels of a capacity limit that carry no number.
const (
	LabelNotViable   = "not viable"   // concurrency 1 already fails
	LabelNotMeasured = "not measured" // the search did not reach a verdict (interrupted or skipped)
	// LabelDoesNotFit: the use case's context and answer exceed the target's maximum model
	// length, so nothing was measured; a word of its own, so "not viable" always means that one
	// request already fails a threshold.
	LabelDoesNotFit = "does not fit"
)

// DoesNotFit reports whether r's use case was not searched because its context and answer
// exceed the target's maximum model length (LabelDoesNotFit), as opposed to failing at 1
// request (LabelNotViable).
func DoesNotFit(r servebench.CapacityResult) bool {
	return r.LimitKind == servebench.LimitNotViable && r.LimitingMetric == MetricContextTokens
}

// MetricContextTokens is the limiting metric of a use case whose context does not fit the
// target's maximum model length.
const MetricContextTokens = "context_tokens"

// LimitLabel is the short form of a capacity limit for tables: "24" (measured), "~35"
// (interpolated), "125+" (lower bound: the ceiling held), "≥8" (an interrupted search whose
// highest passing level so far is 8), LabelNotViable (fails at 1 request or
// LabelDoesNotFit (the target cannot hold the use case's context), or LabelNotMeasured (no verdict: an
// interrupted search or a use case skipped for another reason).
func LimitLabel(r servebench.CapacityResult) string {
	if r.Interrupted {
		if r.Limit != nil && *r.Limit > 0 {
			return "≥" + strconv.Itoa(*r.Limit)
		}
		return LabelNotMeasured
	}
	if r.Skipped && r.LimitKind != servebench.LimitNotViable && (r.Limit == nil || *r.Limit < 1) {
		// a search left out with no level measured (a run's time budget had no time for its
		// first): no bound at all, not "0+"
		return LabelNotMeasured
	}
	switch r.LimitKind {
	case servebench.LimitNotViable:
		if DoesNotFit(r) {
			return LabelDoesNotFit
		}
		return LabelNotViable
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
	return LabelNotMeasured
}

// MetricLabel is the reader's name of metric m, prefixed with the statistic when it is not the
// mean: "TTFT", "p99 TTFT", "generation speed", "end-to-end latency", "ITL (per token)",
// "success rate", "system throughput". The statistic never applies to the success rate or the
// system throughput (one value per cell).
func MetricLabel(m string, st servebench.Statistic) string {
	var n string
	switch m {
	case MetricTTFT:
		n = "TTFT"
	case MetricGenerationSpeed:
		n = "generation speed"
	case MetricE2ELatency:
		n = "end-to-end latency"
	case MetricITL:
		n = "ITL (per token)"
	case MetricFirstContent:
		n = "time to first answer"
	case MetricSuccessRate:
		return "success rate"
	case MetricSystemThroughput:
		return "system throughput"
	default:
		return m
	}
	if st != "" && st != servebench.StatMean {
		n = string(st) + " " + n
	}
	return n
}

// MetricUnit is the unit of metric m's values: "s", "tok/s", or "" (a fraction: success rate).
func MetricUnit(m string) string {
	switch m {
	case MetricTTFT, MetricE2ELatency, MetricITL, MetricFirstContent:
		return "s"
	case MetricGenerationSpeed, MetricSystemThroughput:
		return "tok/s"
	}
	return ""
}

// LevelReading is one metric at one concurrency level, judged against its threshold.
type LevelReading struct {
	Metric string
	// Value is the metric at the level; Measured is false when it has none (no request
	// qualified, or the level lies outside the measured ones).
	Value    float64
	Measured bool
	// Approx is set when Value is interpolated linearly between the two nearest measured levels.
	Approx bool
	// Check is the threshold behind the metric; HasCheck is false for a metric without one.
	Check    Check
	HasCheck bool
	// Holds is whether the value meets the check (false when not measured).
	Holds bool
}

// Explanation is what a capacity verdict states, decided here; Verdict and Detail word it.
type Explanation struct {
	// Label is LimitLabel; Kind the limit kind ("" when the search reached no verdict).
	Label string
	Kind  servebench.LimitKind
	// Limit is the limit (the ceiling that held for a lower bound); 0 when not viable or none.
	Limit int
	// Passing and Failing bracket the limit: the highest measured passing level below Failing
	// and the lowest measured failing level (0 when there is none).
	Passing, Failing int
	// AtLimit holds every threshold at Limit (at 1 when not viable), in Checks order; the values
	// are interpolated (Approx) where Limit was not measured.
	AtLimit []LevelReading
	// AtFailing holds the metrics that fail at Failing, in the order of CapacityPoint.Failing.
	AtFailing []LevelReading
	// LimitingMetric is the failing metric with the largest relative violation at Failing.
	LimitingMetric string
}

// Explain gathers the facts of r's verdict: the label, the bracketing levels, each threshold at
// the limit and the failing metrics at the first failing level.
func Explain(r servebench.CapacityResult) Explanation {
	ex := Explanation{Label: LimitLabel(r), Kind: r.LimitKind, LimitingMetric: r.LimitingMetric}
	uc := servebench.UseCase{Statistic: r.Statistic, Thresholds: r.Thresholds}
	if r.FirstFailing != nil {
		ex.Failing = *r.FirstFailing
		ex.Passing = lastPassingBelow(r, ex.Failing)
	}
	at := 0
	switch r.LimitKind {
	case servebench.LimitNotViable:
		at = 1
	case servebench.LimitLowerBound:
		ex.Limit = r.Ceiling
		if r.Limit != nil {
			ex.Limit = *r.Limit
		}
		at = ex.Limit
	case servebench.LimitMeasured, servebench.LimitInterpolated:
		if r.Limit != nil {
			ex.Limit = *r.Limit
			at = ex.Limit
		}
	}
	if at > 0 {
		for _, k := range Checks(r.Thresholds) {
			ex.AtLimit = append(ex.AtLimit, readingAt(r, k, at))
		}
	}
	if p, ok := PointAt(r, ex.Failing); ok {
		for _, m := range p.Failing {
			rd := LevelReading{Metric: m}
			rd.Value, rd.Measured = p.Values[m]
			rd.Check, rd.HasCheck = checkFor(uc, m)
			ex.AtFailing = append(ex.AtFailing, rd)
		}
	}
	return ex
}

// readingAt is check k's metric at level n of r, judged.
func readingAt(r servebench.CapacityResult, k Check, n int) LevelReading {
	rd := LevelReading{Metric: k.Metric, Check: k, HasCheck: true}
	rd.Value, rd.Approx, rd.Measured = ValueAt(r, k.Metric, n)
	rd.Holds = rd.Measured && k.Holds(rd.Value)
	return rd
}

// AllFailed reports whether every request of a measured level failed (success rate 0).
func AllFailed(p servebench.CapacityPoint) bool {
	v, ok := p.Values[MetricSuccessRate]
	return ok && v == 0
}

// PointAt returns r's measured point at concurrency n.
func PointAt(r servebench.CapacityResult, n int) (servebench.CapacityPoint, bool) {
	for _, p := range r.Points {
		if p.Concurrency == n {
			return p, true
		}
	}
	return servebench.CapacityPoint{}, false
}

// ValueAt returns metric m at concurrency n: the measured value when n was measured, otherwise
// the linear interpolation between the nearest measured levels below and above n,
// v = v_lo + (n − lo)/(hi − lo)·(v_hi − v_lo) (approx = true). ok is false when the metric has
// no value there or n lies outside the measured levels (no extrapolation).
func ValueAt(r servebench.CapacityResult, m string, n int) (v float64, approx, ok bool) {
	if p, found := PointAt(r, n); found {
		v, ok = p.Values[m]
		return v, false, ok
	}
	var lo, hi *servebench.CapacityPoint
	for i := range r.Points {
		p := &r.Points[i]
		if p.Concurrency < n && (lo == nil || p.Concurrency > lo.Concurrency) {
			lo = p
		}
		if p.Concurrency > n && (hi == nil || p.Concurrency < hi.Concurrency) {
			hi = p
		}
	}
	if lo == nil || hi == nil {
		return 0, false, false
	}
	a, okA := lo.Values[m]
	c, okC := hi.Values[m]
	if !okA || !okC {
		return 0, false, false
	}
	f := float64(n-lo.Concurrency) / float64(hi.Concurrency-lo.Concurrency)
	return a + f*(c-a), true, true
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

// SearchInterrupted is what an interrupted search's limit says it is.
const SearchInterrupted = "search interrupted"

// LimitPhrase is the limit as a phrase: "24 concurrent requests", "1 request", "~35 concurrent
// requests", "125+ concurrent requests", "not viable", "not measured", and for an interrupted
// search "at least 8 concurrent requests so far (search interrupted)" or "not measured (search
// interrupted)".
func LimitPhrase(r servebench.CapacityResult) string {
	if r.Interrupted {
		if r.Limit != nil && *r.Limit > 0 {
			return "at least " + Requests(*r.Limit) + " so far (" + SearchInterrupted + ")"
		}
		return LabelNotMeasured + " (" + SearchInterrupted + ")"
	}
	switch l := LimitLabel(r); l {
	case LabelNotViable, LabelNotMeasured, LabelDoesNotFit:
		return l
	default:
		return requestsOf(l)
	}
}

// Headline is the verdict's first sentence without its full stop, e.g. "Capacity limit: 24
// concurrent requests", "Capacity limit: 125+ concurrent requests", "Capacity limit: not viable".
func Headline(r servebench.CapacityResult) string { return "Capacity limit: " + LimitPhrase(r) }

// Verdict is the capacity verdict in sentences generated from the result: the headline, then
// what happens at the first failing level (or at the ceiling for a lower bound, or at 1 request
// when not viable) with each metric's value against its threshold, e.g.
//
//	Capacity limit: 23 concurrent requests. At 24 concurrent requests, end-to-end latency
//	reaches 2,016ms, just above the 2,000ms threshold.
//
// "just" marks a miss within 5 % of the threshold; "right at" a value equal to the threshold at
// the precision shown. Metrics are named with the use case's statistic ("p99 TTFT").
func Verdict(r servebench.CapacityResult) string {
	head, interp, rest := verdictParts(r)
	if head == "" {
		return rest
	}
	if interp != "" {
		head += ", " + interp
	}
	if rest == "" {
		return head + "."
	}
	return head + ". " + rest
}

// Detail is Verdict without its headline, for a page that shows Headline on its own; "" when
// the verdict is only its headline.
func Detail(r servebench.CapacityResult) string {
	head, interp, rest := verdictParts(r)
	if head == "" {
		return rest
	}
	if interp != "" {
		return strings.TrimSpace(sentence(interp) + " " + rest)
	}
	return rest
}

// verdictParts splits the verdict: its headline (without full stop; "" when the verdict opens
// otherwise), the interpolation clause of an interpolated limit, and the sentences after.
func verdictParts(r servebench.CapacityResult) (head, interp, rest string) {
	uc := servebench.UseCase{Statistic: r.Statistic, Thresholds: r.Thresholds}
	if r.Interrupted {
		return Headline(r), "", interruptedText(uc, r)
	}
	if r.Skipped {
		if DoesNotFit(r) {
			// (runs recorded before the word of its own wrote "not viable on this target: …")
			why := strings.TrimPrefix(strings.TrimPrefix(r.Note, "not viable on this target: "), "does not fit this target: ")
			if why == "" {
				return "", "", "Does not fit this target's maximum model length: not measured."
			}
			return "", "", sentence("does not fit this target: " + why)
		}
		if r.Note == "" {
			return Headline(r), "", ""
		}
		return "", "", sentence(r.Note)
	}
	switch r.LimitKind {
	case servebench.LimitLowerBound:
		n := r.Ceiling
		if r.Limit != nil {
			n = *r.Limit
		}
		if p, ok := PointAt(r, n); ok {
			rest = "At " + Requests(n) + ", " + passing(uc, p, Checks(r.Thresholds)) + ". "
		}
		if n < r.Ceiling {
			// the search stopped below its ceiling (a time budget, a level it could not afford):
			// the ceiling was never tested, so it is not the bound to name
			return Headline(r), "", rest + fmt.Sprintf("Capacity likely extends higher than %d, the highest level tested (the search's ceiling of %d was not reached).", n, r.Ceiling)
		}
		return Headline(r), "", rest + fmt.Sprintf("Capacity likely extends higher than the tested ceiling of %d.", r.Ceiling)
	case servebench.LimitNotViable:
		p, ok := PointAt(r, 1)
		if !ok {
			return Headline(r), "", ""
		}
		return "", "", "Not viable: even at 1 request, " + failingText(uc, p) + "." + othersText(uc, p, "at this concurrency")
	case servebench.LimitMeasured, servebench.LimitInterpolated:
		if r.Crossing != nil && r.Limit != nil && r.FirstFailing == nil {
			// a users' search that ended at a crossing (DecideWithin): no failing level
			// (r.Note, which says how, is shown beside the verdict)
			return Headline(r), fmt.Sprintf("where the model through the two highest passing levels crosses the %s threshold (at %.1f); no failing level measured", MetricLabel(r.LimitingMetric, uc.Statistic), *r.Crossing), ""
		}
		if r.FirstFailing == nil || r.Limit == nil {
			break
		}
		hi := *r.FirstFailing
		if r.LimitKind == servebench.LimitInterpolated {
			interp = fmt.Sprintf("interpolated on %s between %d (passes) and %d (fails)", MetricLabel(r.LimitingMetric, uc.Statistic), lastPassingBelow(r, hi), hi)
		}
		if p, ok := PointAt(r, hi); ok {
			rest = "At " + Requests(hi) + ", " + failingText(uc, p) + "." + othersText(uc, p, "at this concurrency")
		}
		return Headline(r), interp, rest
	}
	return Headline(r), "", ""
}

// interruptedText is what an interrupted search measured before it stopped: the levels, the
// highest passing one and the lowest failing one, and how to finish it.
func interruptedText(uc servebench.UseCase, r servebench.CapacityResult) string {
	if len(r.Points) == 0 {
		return "The search was interrupted before it measured a level. Resume the run (servebench run --resume RUN_DIR) to search this use case."
	}
	var levels []string
	for _, p := range r.Points {
		levels = append(levels, strconv.Itoa(p.Concurrency))
	}
	s := "The search was interrupted after measuring " + plural(len(levels), "level") + " (" + joinAnd(levels) + " concurrent requests)."
	if r.Limit != nil && *r.Limit > 0 {
		if p, ok := PointAt(r, *r.Limit); ok {
			s += " At " + Requests(*r.Limit) + ", " + passing(uc, p, Checks(r.Thresholds)) + "."
		}
	}
	if r.FirstFailing != nil {
		if p, ok := PointAt(r, *r.FirstFailing); ok {
			s += " At " + Requests(*r.FirstFailing) + ", " + failingText(uc, p) + "."
		}
	}
	return s + " Resume the run (servebench run --resume RUN_DIR) to finish the search."
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
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
	for _, k := range Checks(uc.Thresholds) {
		if !contains(p.Failing, k.Metric) {
			parts = append(parts, clause(uc, p, k.Metric))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + sentence(where+", "+strings.Join(parts, "; "))
}

// passing describes a level where every threshold holds: "TTFT is 5.7 seconds and generation
// speed is 23 tok/s, both within the thresholds".
func passing(uc servebench.UseCase, p servebench.CapacityPoint, ks []Check) string {
	if len(ks) == 1 {
		return clause(uc, p, ks[0].Metric)
	}
	var parts []string
	for _, k := range ks {
		parts = append(parts, MetricLabel(k.Metric, uc.Statistic)+" is "+formatValue(k.Metric, p.Values[k.Metric], k.Limit))
	}
	all := "all"
	if len(parts) == 2 {
		all = "both"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + ", " + all + " within the thresholds"
}

// RefusedText says which statuses the server refused p's failed requests with, most frequent
// first: "14 requests were rate limited (HTTP 429)", "14 requests were rate limited (HTTP 429)
// and 3 overloaded (HTTP 503)"; "" when no request was refused with a status.
func RefusedText(p servebench.CapacityPoint) string {
	type st struct{ status, n int }
	var all []st
	for s, n := range p.ErrorsByHTTPStatus {
		if n > 0 {
			all = append(all, st{s, n})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].status < all[j].status
	})
	var parts []string
	for i, x := range all {
		words := servebench.HTTPStatusCause(x.status)
		switch {
		case i > 0:
			parts = append(parts, fmt.Sprintf("%d %s", x.n, words))
		case x.n == 1:
			parts = append(parts, "1 request was "+words)
		default:
			parts = append(parts, fmt.Sprintf("%d requests were %s", x.n, words))
		}
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// clause states metric m at p against its threshold.
func clause(uc servebench.UseCase, p servebench.CapacityPoint, m string) string {
	s := measureClause(uc, p, m)
	if m == MetricSuccessRate && contains(p.Failing, m) {
		if r := RefusedText(p); r != "" {
			s += ": " + r
		}
	}
	return s
}

// measureClause is clause without the refused requests of a failing success rate.
func measureClause(uc servebench.UseCase, p servebench.CapacityPoint, m string) string {
	name := MetricLabel(m, uc.Statistic)
	k, ok := checkFor(uc, m)
	v, have := p.Values[m]
	if !have {
		return name + " could not be measured (no request qualified), so its threshold cannot be shown to hold"
	}
	if !ok {
		return name + " is " + formatValue(m, v, v)
	}
	val, thr := formatValue(m, v, k.Limit), formatThreshold(m, k.Limit)
	// Never print a value that reads as the threshold itself unless it is: add decimals.
	for extra := 1; extra <= 3 && v != k.Limit && val == formatValue(m, k.Limit, k.Limit); extra++ {
		val = formatPrec(m, v, k.Limit, extra)
	}
	noun := "threshold"
	if !k.Upper {
		noun = "minimum"
	}
	switch {
	case v == k.Limit:
		return fmt.Sprintf("%s is %s, right at the %s %s", name, val, thr, noun)
	case k.Holds(v) && k.Upper:
		return fmt.Sprintf("%s is %s, within the %s %s", name, val, thr, noun)
	case k.Holds(v):
		return fmt.Sprintf("%s is %s, above the %s %s", name, val, thr, noun)
	}
	just := ""
	if k.Violation(v) <= 0.05 {
		just = "just "
	}
	if k.Upper {
		return fmt.Sprintf("%s reaches %s, %sabove the %s %s", name, val, just, thr, noun)
	}
	return fmt.Sprintf("%s drops to %s, %sbelow the %s %s", name, val, just, thr, noun)
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
			return servebench.Thousands(int(math.Round(x)))
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
		return servebench.Thousands(int(r))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Requests is a concurrency level in words: "1 request" or "N concurrent requests".
func Requests(n int) string { return requestsOf(strconv.Itoa(n)) }

// requestsOf is Requests of a level already written ("8+", "~35").
func requestsOf(n string) string {
	if n == "1" {
		return "1 request"
	}
	return n + " concurrent requests"
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
