// Package gate decides whether a candidate run is worse than a baseline run, metric by metric,
// for a CI job: a metric fails the gate when the candidate is worse than the baseline both
// beyond the two runs' measurement uncertainty (the 95% interval of the difference, from
// stats.DifferenceCI95, lies wholly on the worse side of zero) and beyond the metric's threshold
// (the relative change exceeds it). A change inside the noise, or smaller than the threshold,
// passes; so a repeat of the baseline passes however many cells it has, as long as the
// thresholds are wider than the run-to-run variation the intervals do not capture.
//
// The metrics, at every cell the two runs both measured (same scenario, load mode, context,
// output length, concurrency, rate and turn):
//
//	throughput   system output throughput (tokens/s); lower is worse
//	ttft         mean time to first token (s); higher is worse
//	speed        mean per-user generation speed (tokens/s per user); lower is worse
//
// and at every use case both runs searched:
//
//	capacity     the capacity limit (concurrent users); lower is worse. Its uncertainty is
//	             the limit's range (limit_range: the levels the data cannot tell apart from
//	             the limit at 95%): the candidate is worse beyond it when the candidate's
//	             range lies wholly below the baseline's.
//
// A value's interval is judged only where it rests on at least stats.MinIntervalSamples
// requests in both runs (successful requests for throughput, the values of the mean for TTFT
// and speed), as every report shows it: from fewer, the interval's own width is too uncertain
// to tell noise from a regression. Such a row is neither passed nor failed but TooFew, "too
// few samples", with both counts; a gate with such rows and no failure is undecided
// (Result.Undecided), which a CI job must not read as a pass.
package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Metric names a gated metric.
type Metric string

// The gated metrics.
const (
	Throughput Metric = "throughput"
	TTFT       Metric = "ttft"
	Speed      Metric = "speed"
	Capacity   Metric = "capacity"
)

// Metrics lists every metric, in the order the table shows them.
var Metrics = []Metric{Throughput, TTFT, Speed, Capacity}

// Thresholds are the largest relative worsening each metric may show before it fails the gate
// (0.05 = 5%), when the worsening is also beyond the uncertainty. A metric absent from the map
// is not gated (its rows still show, as "not gated").
type Thresholds map[Metric]float64

// DefaultThresholds: 5% less output throughput, 10% more mean TTFT, 5% less per-user speed, 10%
// fewer users at a use case's capacity limit.
func DefaultThresholds() Thresholds {
	return Thresholds{Throughput: 0.05, TTFT: 0.10, Speed: 0.05, Capacity: 0.10}
}

// Outcome is how one row of the gate came out: passed, failed, or why it was not judged worse.
type Outcome string

const (
	// Pass: not worse beyond both the uncertainty and the threshold (or better).
	Pass Outcome = "ok"
	// Fail: worse beyond the uncertainty and beyond the threshold.
	Fail Outcome = "WORSE"
	// Noise: worse by more than the threshold, but the difference is within the uncertainty.
	Noise Outcome = "within noise"
	// Small: worse beyond the uncertainty, but by less than the threshold.
	Small Outcome = "within threshold"
	// NoInterval: worse by more than the threshold, and a run has no interval to tell; it
	// fails: a gate does not pass what it cannot check.
	NoInterval Outcome = "WORSE (no interval)"
	// TooFew: a run has fewer than stats.MinIntervalSamples requests behind the value, so its
	// interval, which a verdict would rest on, is not shown or judged: neither pass nor fail.
	// The row's BaselineN and CandidateN say how many each run has.
	TooFew Outcome = "too few samples"
	// NotGated: the metric has no threshold.
	NotGated Outcome = "not gated"
)

// Failed says whether the verdict fails the gate.
func (v Outcome) Failed() bool { return v == Fail || v == NoInterval }

// Row is one metric at one cell or use case.
type Row struct {
	Metric Metric
	// Where is the cell ("1K in / 128 out, concurrency 4") or use case ("code_completion").
	Where     string
	Unit      string
	Baseline  float64
	Candidate float64
	// Change is (candidate − baseline) / baseline; +Inf or NaN when the baseline is 0.
	Change float64
	// Worse is the candidate's worsening in the metric's own direction, as a fraction of the
	// baseline (positive = worse): −Change for the higher-is-better metrics, Change otherwise.
	Worse float64
	// Diff is the 95% interval of candidate − baseline (metric units); nil when either run has
	// no interval for the value, or too few samples for one (TooFew). For capacity it is the
	// difference of the two limit ranges' ends, [cand.low − base.high, cand.high − base.low].
	Diff *servebench.Interval
	// BaselineN and CandidateN are how many values each run's interval rests on (successful
	// requests for throughput, the mean's values for TTFT and speed); 0 for capacity.
	BaselineN, CandidateN int
	Threshold             float64
	Gated                 bool
	Outcome               Outcome
}

// Result is the gate's decision.
type Result struct {
	Rows []Row
	// CommonCells is how many cells both runs measured; CommonUseCases how many use cases both
	// searched.
	CommonCells, CommonUseCases int
}

// Failed lists the rows that fail the gate.
func (r Result) Failed() []Row {
	return r.rows(Outcome.Failed)
}

// Undecided lists the gated rows the gate could not judge (TooFew): with none failed, the
// gate neither passes nor fails, and says how to measure enough.
func (r Result) Undecided() []Row {
	return r.rows(func(o Outcome) bool { return o == TooFew })
}

func (r Result) rows(keep func(Outcome) bool) []Row {
	var out []Row
	for _, row := range r.Rows {
		if keep(row.Outcome) {
			out = append(out, row)
		}
	}
	return out
}

// where names a cell in the table.
func where(k servebench.CellKey) string {
	s := fmt.Sprintf("%s in / %d out, c=%d", tokens(k.ContextTokens), k.OutputTokens, k.Concurrency)
	if k.RatePerSecond > 0 {
		s += fmt.Sprintf(", %.3g req/s", k.RatePerSecond)
	}
	if k.Turn > 0 {
		s += fmt.Sprintf(", turn %d", k.Turn)
	}
	if k.Scenario != "" {
		s = k.Scenario + ": " + s
	}
	if k.LoadMode != "" && k.LoadMode != servebench.ModeSustained {
		s += " (" + string(k.LoadMode) + ")"
	}
	return s
}

func tokens(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}

// measured says whether a cell has numbers to compare: run, and not judged invalid.
func measured(c servebench.CellResult) bool {
	return !c.Skipped && c.RequestsSucceeded > 0 && c.Validity.Verdict != servebench.VerdictInvalid
}

// Decide compares candidate with baseline under th.
func Decide(baseline, candidate servebench.Results, th Thresholds) Result {
	var res Result
	// two runs' cells are the same cell when their whole keys (kind included) are equal
	base := map[servebench.CellKey]servebench.CellResult{}
	for _, c := range baseline.Cells {
		if measured(c) {
			base[c.CellKey] = c
		}
	}
	var keys []servebench.CellKey
	cand := map[servebench.CellKey]servebench.CellResult{}
	for _, c := range candidate.Cells {
		k := c.CellKey
		if _, ok := base[k]; ok && measured(c) {
			if _, dup := cand[k]; !dup {
				keys = append(keys, k)
			}
			cand[k] = c
		}
	}
	slices.SortFunc(keys, servebench.CellKey.Compare)
	res.CommonCells = len(keys)
	for _, k := range keys {
		b, c := base[k], cand[k]
		res.Rows = append(res.Rows,
			valueRow(Throughput, where(k), "tok/s", true,
				value{b.SystemOutputThroughputTPS, b.SystemOutputThroughputCI95, b.RequestsSucceeded},
				value{c.SystemOutputThroughputTPS, c.SystemOutputThroughputCI95, c.RequestsSucceeded}, th),
			valueRow(TTFT, where(k), "s", false, meanOf(b.TTFTSeconds), meanOf(c.TTFTSeconds), th),
			valueRow(Speed, where(k), "tok/s/user", true, meanOf(b.GenerationSpeedTPS), meanOf(c.GenerationSpeedTPS), th))
	}
	candCap := map[string]servebench.CapacityResult{}
	for _, c := range candidate.Capacity {
		candCap[c.UseCase] = c
	}
	for _, b := range baseline.Capacity {
		c, ok := candCap[b.UseCase]
		if !ok || skipped(b) || skipped(c) {
			continue
		}
		res.CommonUseCases++
		res.Rows = append(res.Rows, capacityRow(b, c, th))
	}
	return res
}

// value is one run's value of a cell: the estimate, its 95% interval, and how many values
// the interval rests on.
type value struct {
	v  float64
	iv *servebench.Interval
	n  int
}

// meanOf is a summary's mean as a gated value.
func meanOf(s servebench.Summary) value { return value{s.Mean, s.CI95, s.Count} }

// valueRow judges one value of a cell. higherBetter says which direction is better.
func valueRow(m Metric, where, unit string, higherBetter bool, b, c value, th Thresholds) Row {
	r := Row{Metric: m, Where: where, Unit: unit, Baseline: b.v, Candidate: c.v, Change: relChange(b.v, c.v), BaselineN: b.n, CandidateN: c.n}
	r.Worse = r.Change
	if higherBetter {
		r.Worse = -r.Change
	}
	r.Threshold, r.Gated = th[m]
	if !stats.IntervalShown(min(b.n, c.n)) {
		// an interval from so few values is not one to judge by, whichever way the value moved
		r.Outcome = TooFew
		if !r.Gated {
			r.Outcome = NotGated
		}
		return r
	}
	if iv, ok := stats.DifferenceCI95(c.v, c.iv, b.v, b.iv); ok {
		r.Diff = &iv
	}
	worseBeyondNoise := false
	if r.Diff != nil {
		if higherBetter {
			worseBeyondNoise = r.Diff.High < 0
		} else {
			worseBeyondNoise = r.Diff.Low > 0
		}
	}
	r.Outcome = judge(r.Gated, r.Worse > r.Threshold, worseBeyondNoise, r.Diff != nil)
	return r
}

// judge is the rule every row follows.
func judge(gated, beyondThreshold, beyondNoise, hasInterval bool) Outcome {
	switch {
	case !gated:
		return NotGated
	case beyondThreshold && beyondNoise:
		return Fail
	case beyondThreshold && !hasInterval:
		return NoInterval
	case beyondThreshold:
		return Noise
	case beyondNoise:
		return Small
	}
	return Pass
}

// relChange is (c − b) / |b|; NaN when both are 0, ±Inf when only b is.
func relChange(b, c float64) float64 {
	if b == 0 {
		if c == 0 {
			return 0
		}
		return math.Copysign(math.Inf(1), c)
	}
	return (c - b) / math.Abs(b)
}

// skipped says whether a use case's search did not run (no verdict to compare).
func skipped(c servebench.CapacityResult) bool {
	return c.LimitKind == ""
}

// limitSpan is the levels a capacity result cannot tell apart from its limit: limit_range when
// it has one, [limit, +Inf) for a lower bound (the limit was not reached), [0, 0] when not
// viable, else [limit, limit].
func limitSpan(c servebench.CapacityResult) (value, low, high float64) {
	if c.Limit == nil || c.LimitKind == servebench.LimitNotViable {
		return 0, 0, 0
	}
	v := float64(*c.Limit)
	switch {
	case c.LimitKind == servebench.LimitLowerBound:
		return v, v, math.Inf(1)
	case c.LimitRange != nil:
		return v, float64(c.LimitRange[0]), float64(c.LimitRange[1])
	}
	return v, v, v
}

// capacityRow judges a use case's capacity limit.
func capacityRow(b, c servebench.CapacityResult, th Thresholds) Row {
	bv, bl, bh := limitSpan(b)
	cv, cl, ch := limitSpan(c)
	r := Row{Metric: Capacity, Where: b.UseCase, Unit: "users", Baseline: bv, Candidate: cv, Change: relChange(bv, cv)}
	r.Worse = -r.Change
	r.Diff = &servebench.Interval{Low: cl - bh, High: ch - bl}
	if math.IsNaN(r.Diff.Low) {
		r.Diff.Low = math.Inf(-1)
	}
	if math.IsNaN(r.Diff.High) {
		r.Diff.High = math.Inf(1)
	}
	r.Threshold, r.Gated = th[Capacity]
	// a candidate lower bound at or above the baseline's limit is never worse
	r.Outcome = judge(r.Gated, r.Worse > r.Threshold, r.Diff.High < 0, true)
	return r
}
