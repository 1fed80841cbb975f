package capacity

import (
	"math"

	"github.com/servebench/servebench"
)

// MinSuccessRate is the success rate a level needs besides its thresholds: 0.99, i.e. at most
// 1 failed request in 100. Latency of the requests that did succeed says nothing about those
// that timed out or were refused, so a level that drops requests cannot pass on latency alone.
const MinSuccessRate = 0.99

// Check is one threshold of a use case.
type Check struct {
	Metric string
	Limit  float64
	Upper  bool // the value must be ≤ Limit (a maximum); otherwise ≥ Limit (a minimum)
	// budget: the violation is measured against the allowance 1 − limit (success rate: 95 %
	// against 99 % is five times the allowed failures, not a 4 % miss).
	budget bool
}

// Checks lists the thresholds set on t, in the one order every verdict, table and chart uses:
// TTFT, generation speed, end-to-end latency, ITL, time to first answer.
func Checks(t servebench.Thresholds) []Check {
	var out []Check
	if t.TTFTSecondsMax != nil {
		out = append(out, Check{Metric: MetricTTFT, Limit: *t.TTFTSecondsMax, Upper: true})
	}
	if t.GenerationSpeedTPSMin != nil {
		out = append(out, Check{Metric: MetricGenerationSpeed, Limit: *t.GenerationSpeedTPSMin})
	}
	if t.E2ELatencySecondsMax != nil {
		out = append(out, Check{Metric: MetricE2ELatency, Limit: *t.E2ELatencySecondsMax, Upper: true})
	}
	if t.ITLSecondsMax != nil {
		out = append(out, Check{Metric: MetricITL, Limit: *t.ITLSecondsMax, Upper: true})
	}
	if t.FirstContentSecondsMax != nil {
		out = append(out, Check{Metric: MetricFirstContent, Limit: *t.FirstContentSecondsMax, Upper: true})
	}
	return out
}

// summary returns the cell's summary for a threshold metric.
func summary(c *servebench.CellResult, metric string) servebench.Summary {
	switch metric {
	case MetricTTFT:
		return c.TTFTSeconds
	case MetricGenerationSpeed:
		return c.GenerationSpeedTPS
	case MetricE2ELatency:
		return c.E2ELatencySeconds
	case MetricITL:
		return c.ITLSeconds
	case MetricFirstContent:
		return c.FirstContentSeconds
	}
	return servebench.Summary{}
}

// Holds reports whether value v meets the check; a value exactly at the threshold holds
// ("TTFT < 12 s" is met by 12.0 s, as in the reference reports).
func (k Check) Holds(v float64) bool {
	if k.Upper {
		return v <= k.Limit
	}
	return v >= k.Limit
}

// Violation is how far v misses the check, relative to the threshold: (v − max)/max for a
// maximum, (min − v)/min for a minimum, (min − v)/(1 − min) for the success rate; ≤ 0 when it
// holds.
func (k Check) Violation(v float64) float64 {
	d := v - k.Limit
	if !k.Upper {
		d = -d
	}
	if k.budget && k.Limit < 1 {
		return d / (1 - k.Limit)
	}
	if k.Limit != 0 {
		d /= math.Abs(k.Limit)
	}
	return d
}

// Evaluate judges one measured cell against a use case. Values holds each thresholded metric at
// uc.Statistic (mean when empty), plus success_rate and system_output_throughput_tps. A level
// passes when every threshold holds (value ≤ maximum, ≥ minimum) and success_rate ≥
// MinSuccessRate. A thresholded metric that could not be measured (its summary has no requests,
// e.g. no request produced two tokens for a speed, or the statistic is a percentile withheld
// because the sample is too small for it) fails and has no entry in Values: a threshold
// that cannot be shown to hold does not hold; when it is ITL or generation speed of a level
// whose responses were not streamed, NotStreamed names it too (Decide then judges nothing). Failing lists the failed metric names in the order
// ttft, generation speed, end-to-end latency, ITL, success rate.
func Evaluate(uc servebench.UseCase, c servebench.CellResult) servebench.CapacityPoint {
	p := servebench.CapacityPoint{
		Concurrency:        c.Concurrency,
		CellID:             c.ID(),
		E2ESeconds:         c.E2ELatencySeconds.Mean,
		Settled:            Settled(uc, c),
		ErrorsByHTTPStatus: c.ErrorsByHTTPStatus,
		Values: map[string]float64{
			MetricSuccessRate:      c.SuccessRate,
			MetricSystemThroughput: c.SystemOutputThroughputTPS,
		},
	}
	for _, k := range Checks(uc.Thresholds) {
		s := summary(&c, k.Metric)
		v, ok := s.Pick(uc.Statistic)
		if !ok {
			p.Failing = append(p.Failing, k.Metric)
			if s.Count == 0 && (k.Metric == MetricGenerationSpeed || k.Metric == MetricITL) && c.Validity.Has(servebench.ReasonNotStreamed) {
				p.NotStreamed = append(p.NotStreamed, k.Metric)
			}
			continue
		}
		p.Values[k.Metric] = v
		if iv := s.PickCI95(uc.Statistic); iv != nil {
			if p.CI95 == nil {
				p.CI95 = map[string]servebench.Interval{}
			}
			p.CI95[k.Metric] = *iv
		}
		if !k.Holds(v) {
			p.Failing = append(p.Failing, k.Metric)
		}
	}
	if c.SuccessRate < MinSuccessRate {
		p.Failing = append(p.Failing, MetricSuccessRate)
	}
	p.Pass = len(p.Failing) == 0
	return p
}

// limitingMetric returns the failing metric of p with the largest relative violation (a metric
// that could not be measured counts as infinitely violated); ties go to the earlier one in
// Failing. Empty when p passes.
func limitingMetric(uc servebench.UseCase, p servebench.CapacityPoint) string {
	best, worst := "", math.Inf(-1)
	for _, m := range p.Failing {
		v := violationOf(uc, p, m)
		if best == "" || v > worst {
			best, worst = m, v
		}
	}
	return best
}

// violationOf is metric m's relative violation at p (see Check.Violation); +Inf when missing.
func violationOf(uc servebench.UseCase, p servebench.CapacityPoint, m string) float64 {
	k, ok := checkFor(uc, m)
	if !ok {
		return math.Inf(1)
	}
	v, ok := p.Values[m]
	if !ok {
		return math.Inf(1)
	}
	return k.Violation(v)
}

// checkFor returns the check behind metric m of uc; success_rate maps to MinSuccessRate.
func checkFor(uc servebench.UseCase, m string) (Check, bool) {
	if m == MetricSuccessRate {
		return Check{Metric: MetricSuccessRate, Limit: MinSuccessRate, budget: true}, true
	}
	for _, k := range Checks(uc.Thresholds) {
		if k.Metric == m {
			return k, true
		}
	}
	return Check{}, false
}
