package stats

import (
	"math"
	"slices"

	"github.com/servebench/servebench"
)

// Percentile returns the q-quantile (q in [0, 1]) of sorted, which must be in ascending order,
// by NumPy's default "linear" method (linear interpolation between closest ranks):
//
//	h = (n − 1)·q,  i = ⌊h⌋,  p = x[i] + (h − i)·(x[i+1] − x[i])
//
// The result has the unit of the values. q below 0 or above 1 is clamped; an empty slice or a
// NaN q gives NaN. The result always lies in [x[i], x[i+1]], so it is monotone in q and within
// [min, max] even where floating-point rounding would overshoot.
//
// Example (NumPy agrees): Percentile([1 2 3 4], 0.9) = 3.7.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	q = min(max(q, 0), 1)
	h := float64(n-1) * q
	i := int(math.Floor(h))
	if i >= n-1 {
		return sorted[n-1]
	}
	a, b := sorted[i], sorted[i+1]
	t := h - float64(i)
	d := b - a
	var p float64
	if math.IsInf(d, 0) && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
		// b − a overflowed: interpolate at half scale.
		p = 2 * (a/2 + (b/2-a/2)*t)
	} else {
		p = a + d*t
	}
	if !(p >= a) { // also catches NaN from ±Inf endpoints
		p = a
	}
	if p > b {
		p = b
	}
	return p
}

// Summarize describes values (any order; the slice is not modified): Count, Mean (arithmetic,
// compensated summation) with its 95% interval (MeanCI95, Student t), Min, Max, and the
// P50/P90/P95/P99 percentiles of Percentile, each with its 95% interval (PercentileCI95, order
// statistics). A percentile with fewer than MinSamples(q) values is withheld (nil). The unit is
// the values' unit. No values give the zero Summary.
func Summarize(values []float64) servebench.Summary {
	n := len(values)
	if n == 0 {
		return servebench.Summary{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	lo, hi := s[0], s[n-1] // copies: a pointer into s would keep every value alive
	out := servebench.Summary{
		Count: n,
		Mean:  mean(s),
		Min:   &lo,
		Max:   &hi,
	}
	if iv, ok := MeanCI95(s); ok {
		out.CI95 = &iv
	}
	for _, p := range []struct {
		q      float64
		v      **float64
		interv **servebench.Interval
	}{
		{0.50, &out.P50, &out.P50CI95},
		{0.90, &out.P90, &out.P90CI95},
		{0.95, &out.P95, &out.P95CI95},
		{0.99, &out.P99, &out.P99CI95},
	} {
		if n < MinSamples(p.q) {
			continue
		}
		v := Percentile(s, p.q)
		iv := PercentileCI95(s, p.q)
		*p.v, *p.interv = &v, &iv
	}
	return out
}

// mean is the Kahan–Babuška (Neumaier) compensated mean of v; 0 for no values.
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var sum, c float64
	for _, x := range v {
		t := sum + x
		if math.Abs(sum) >= math.Abs(x) {
			c += (sum - t) + x
		} else {
			c += (x - t) + sum
		}
		sum = t
	}
	return (sum + c) / float64(len(v))
}

// ScalingEfficiency fills ScalingEfficiency of every cell in place:
//
//	scaling_efficiency = system_output_throughput_tps(N) / (N × system_output_throughput_tps(1))
//
// (dimensionless; 1 = perfectly linear scaling), where the concurrency-1 cell has the same
// scenario, load mode, context tokens, output tokens and rate. It is set to nil where that cell
// is missing, skipped or has zero throughput, and for skipped cells. Where several cells share
// the concurrency-1 key, the one with the most measured requests is the base.
func ScalingEfficiency(cells []servebench.CellResult) {
	base := make(map[servebench.CellKey]int) // key with Concurrency 0 → index of its c=1 cell
	for i, c := range cells {
		if c.Concurrency != 1 || c.Skipped || c.SystemOutputThroughputTPS <= 0 {
			continue
		}
		k := c.CellKey
		k.Concurrency = 0
		if j, ok := base[k]; !ok || cells[j].RequestsTotal < c.RequestsTotal {
			base[k] = i
		}
	}
	for i := range cells {
		c := &cells[i]
		c.ScalingEfficiency = nil
		if c.Skipped || c.Concurrency < 1 {
			continue
		}
		k := c.CellKey
		k.Concurrency = 0
		j, ok := base[k]
		if !ok {
			continue
		}
		c.ScalingEfficiency = servebench.Float(c.SystemOutputThroughputTPS / (float64(c.Concurrency) * cells[j].SystemOutputThroughputTPS))
	}
}
