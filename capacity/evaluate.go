package capacity

import (
	"math"

	"github.com/servebench/servebench"
)

// MinSuccessRate is the success rate a level needs besides its thresholds: 0.99, i.e. at most
// 1 failed request in 100. Latency of the requests that did succeed says nothing about those
// that timed out or were refused, so a level that drops requests cannot pass on latency alone.
const MinSuccessRate = 0.99

// check is one threshold of a use case.
type check struct {
	metric string
	limit  float64
	upper  bool // value must be ≤ limit (a maximum); otherwise ≥ limit (a minimum)
	// budget: the violation is measured against the allowance 1 − limit (success rate: 95 %
	// against 99 % is five times the allowed failures, not a 4 % miss).
	budget bool
}

// checks lists the thresholds set on t, in a fixed order: TTFT, generation speed, end-to-end
// latency, ITL, time to first answer.
func checks(t servebench.Thresholds) []check {
	var out []check
	if t.TTFTSecondsMax != nil {
		out = append(out, check{metric: MetricTTFT, limit: *t.TTFTSecondsMax, upper: true})
	}
	if t.GenerationSpeedTPSMin != nil {
		out = append(out, check{metric: MetricGenerationSpeed, limit: *t.GenerationSpeedTPSMin})
	}
	if t.E2ELatencySecondsMax != nil {
		out = append(out, check{metric: MetricE2ELatency, limit: *t.E2ELatencySecondsMax, upper: true})
	}
	if t.ITLSecondsMax != nil {
		out = append(out, check{metric: MetricITL, limit: *t.ITLSecondsMax, upper: true})
	}
	if t.FirstContentSecondsMax != nil {
		out = append(out, check{metric: MetricFirstContent, limit: *t.FirstContentSecondsMax, upper: true})
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

// holds reports whether value v meets the check; a value exactly at the threshold holds
// ("TTFT < 12 s" is met by 12.0 s, as in the reference reports).
func (k check) holds(v float64) bool {
	if k.upper {
		return v <= k.limit
	}
	return v >= k.limit
}

// violation is how far v misses the check, relative to the threshold: (v − max)/max for a
// maximum, (min − v)/min for a minimum, (min − v)/(1 − min) for the success rate; ≤ 0 when it
// holds.
func (k check) violation(v float64) float64 {
	d := v - k.limit
	if !k.upper {
		d = -d
	}
	if k.budget && k.limit < 1 {
		return d / (1 - k.limit)
	}
	if k.limit != 0 {
		d /= math.Abs(k.limit)
	}
	return d
}

// Evaluate judges one measured cell against a use case. Values holds each thresholded metric at
// uc.Statistic (mean when empty), plus success_rate and system_output_throughput_tps. A level
// passes when every threshold holds (value ≤ maximum, ≥ minimum) and success_rate ≥
// MinSuccessRate. A thresholded metric that could not be measured (its summary has no requests,
// e.g. no request produced two tokens for a speed, or the statistic is a percentile withheld
// because the sample is too small for it) fails and has no entry in Values: a threshold
// that cannot be shown to hold does not hold. Failing lists the failed metric names in the order
// ttft, generation speed, end-to-end latency, ITL, success rate.
func Evaluate(uc servebench.UseCase, c servebench.CellResult) servebench.CapacityPoint {
	p := servebench.CapacityPoint{
		Concurrency: c.Concurrency,
		CellID:      c.ID(),
		Values: map[string]float64{
			MetricSuccessRate:      c.SuccessRate,
			MetricSystemThroughput: c.SystemOutputThroughputTPS,
		},
	}
	for _, k := range checks(uc.Thresholds) {
		s := summary(&c, k.metric)
		v, ok := s.Pick(uc.Statistic)
		if !ok {
			p.Failing = append(p.Failing, k.metric)
			continue
		}
		p.Values[k.metric] = v
		if !k.holds(v) {
			p.Failing = append(p.Failing, k.metric)
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

// violationOf is metric m's relative violation at p (see check.violation); +Inf when missing.
func violationOf(uc servebench.UseCase, p servebench.CapacityPoint, m string) float64 {
	k, ok := checkFor(uc, m)
	if !ok {
		return math.Inf(1)
	}
	v, ok := p.Values[m]
	if !ok {
		return math.Inf(1)
	}
	return k.violation(v)
}

// checkFor returns the check behind metric m of uc; success_rate maps to MinSuccessRate.
func checkFor(uc servebench.UseCase, m string) (check, bool) {
	if m == MetricSuccessRate {
		return check{metric: MetricSuccessRate, limit: MinSuccessRate, budget: true}, true
	}
	for _, k := range checks(uc.Thresholds) {
		if k.metric == m {
			return k, true
		}
	}
	return check{}, false
}
