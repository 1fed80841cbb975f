package stats

import (
	"math"
	"sync"

	"github.com/servebench/servebench"
)

// Confidence is the two-sided confidence level of every interval servebench reports: 95%.
const Confidence = 0.95

// MinSamples is how many values the q-percentile needs before it is reported:
//
//	min_samples(q) = ⌈1 / (1 − q)⌉     p50: 2, p90: 10, p95: 20, p99: 100
//
// i.e. the sample must be expected to hold at least one value above the percentile. Below that
// the "percentile" is the sample maximum (or an interpolation towards it) and says nothing about
// the tail, so Summarize withholds it. This is the smallest sample for which the percentile is a
// statement about the tail at all; a tight interval needs more (MLPerf's early-stopping rule
// asks for several hundred queries before it accepts a p99 bound, and PercentileCI95 has a
// finite upper end only from n ≥ 368 for p99, 72 for p95, 36 for p90, 6 for p50: the n with
// 1 − q^n ≥ 0.975).
func MinSamples(q float64) int {
	if q >= 1 {
		return math.MaxInt
	}
	return int(math.Ceil(1/(1-q) - 1e-9))
}

// MinIntervalSamples is the fewest measured requests a 95% interval of a mean (MeanCI95 over the
// requests' values) or of a throughput (batch means over the window, which the window's
// successful requests make) is reported from: 10. Below that the interval's own width is a poor
// estimate — the sample standard deviation's relative standard error, ≈ 1/√(2(n − 1)) for normal
// values and more for the skewed ones latencies are, exceeds 24%, so two or three close values
// read "±0%" where the next cell reads ±86% — and on exponential-shaped latencies the t interval
// covers the true mean in under 90% of samples (88% at n = 5, 90% at n = 10; see
// TestMinIntervalSamplesCoverage). Every report, page and comparison writes "n<min" in its place,
// as it does for a percentile below MinSamples(q). It equals the default sweep floor
// (min_requests 10), so a default sustained cell always has its intervals.
const MinIntervalSamples = 10

// IntervalShown reports whether an interval resting on n measured requests is reported
// (n ≥ MinIntervalSamples): the one test every renderer applies.
func IntervalShown(n int) bool { return n >= MinIntervalSamples }

// MeanCI95 is the 95% confidence interval of the mean of values by Student's t:
//
//	mean ± t(0.975, n − 1) · s / √n,   s = sample standard deviation (n − 1 denominator)
//
// in the values' unit. It assumes the values are independent draws from one distribution
// (requests of a cell in steady state); n < 2 gives ok = false.
func MeanCI95(values []float64) (iv servebench.Interval, ok bool) {
	n := len(values)
	if n < 2 {
		return iv, false
	}
	m := mean(values)
	var ss float64
	for _, v := range values {
		ss += (v - m) * (v - m)
	}
	s := math.Sqrt(ss / float64(n-1))
	h := StudentT(0.5+Confidence/2, n-1) * s / math.Sqrt(float64(n))
	return servebench.Interval{Low: m - h, High: m + h}, true
}

// DifferenceCI95 is the 95% interval of the difference a − b between two independent
// estimates, each given with its own 95% interval (ia around a, ib around b), in their unit:
//
//	(a − b) ± √(ha² + hb²),   h = the larger distance from an estimate to an end of its interval
//
// The half-widths add in quadrature, as the standard errors of independent estimates do (two
// runs, or two cells, measured apart); taking each interval's larger side keeps an interval cut
// at 0 from counting as narrower than it was. When the result excludes 0 the data show a
// difference at 95%; when it includes 0 they do not. ok is false when either interval is
// missing or unbounded: the difference then has no interval.
func DifferenceCI95(a float64, ia *servebench.Interval, b float64, ib *servebench.Interval) (iv servebench.Interval, ok bool) {
	if ia == nil || ib == nil || !ia.Bounded() || !ib.Bounded() {
		return iv, false
	}
	ha := math.Max(a-ia.Low, ia.High-a)
	hb := math.Max(b-ib.Low, ib.High-b)
	h := math.Hypot(ha, hb)
	return servebench.Interval{Low: a - b - h, High: a - b + h}, true
}

// PercentileCI95 is the distribution-free 95% confidence interval of the q-quantile from the
// sorted sample (ascending), by order statistics: with B ~ Binomial(n, q) the number of values
// at or below the true quantile,
//
//	low  = x(l), l the largest rank with  P(B ≤ l − 1) ≤ 0.025   (−Inf when there is none)
//	high = x(u), u the smallest rank with P(B ≤ u − 1) ≥ 0.975   (+Inf when u > n)
//
// (ranks 1-based), so the true quantile lies in [low, high] with probability ≥ 95% for any
// continuous distribution. An end the sample is too small to bound is infinite (null in JSON).
func PercentileCI95(sorted []float64, q float64) servebench.Interval {
	n := len(sorted)
	iv := servebench.Interval{Low: math.Inf(-1), High: math.Inf(1)}
	if n == 0 {
		return iv
	}
	r := ranks.get(rankKey{n, q}, func() [2]int { return percentileRanks(n, q) })
	if r[0] >= 1 {
		iv.Low = sorted[r[0]-1]
	}
	if r[1] <= n {
		iv.High = sorted[r[1]-1]
	}
	return iv
}

// ranks remembers percentileRanks' answers, which depend on the sample size and the quantile
// only: every summary of a cell with the same number of values asks for the same ones.
var ranks memo[rankKey, [2]int]

type rankKey struct {
	n int
	q float64
}

// percentileRanks returns PercentileCI95's ranks l and u (0 and n+1 where there is none).
func percentileRanks(n int, q float64) [2]int {
	a := (1 - Confidence) / 2
	// l: largest rank in [1, n] with BinomCDF(l−1) ≤ a; CDF is increasing in its argument.
	lo, hi := 0, n // invariant: rank lo satisfies (rank 0 = none), rank hi+1 does not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if BinomialCDF(mid-1, n, q) <= a {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	l := lo
	// u: smallest rank in [1, n+1] with BinomCDF(u−1) ≥ 1 − a.
	lo, hi = 1, n+1
	for lo < hi {
		mid := (lo + hi) / 2
		if BinomialCDF(mid-1, n, q) >= 1-a {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return [2]int{l, lo}
}

// memo caches a pure function's results by its arguments. It forgets everything once it holds
// memoLimit answers, so a long-running process never grows it without bound.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

const memoLimit = 4096

func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= memoLimit {
		c.m = make(map[K]V)
	}
	c.m[k] = v
	c.mu.Unlock()
	return v
}

// BinomialCDF is P(B ≤ k) for B ~ Binomial(n, p), by the regularized incomplete beta function:
// P(B ≤ k) = I(1−p; n−k, k+1).
func BinomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	return RegIncBeta(1-p, float64(n-k), float64(k+1))
}

// StudentT is the p-quantile of Student's t distribution with df degrees of freedom (p in
// (0, 1)), found by bisection on its CDF, F(t) = 1 − ½·I(ν/(ν+t²); ν/2, ½) for t ≥ 0.
// StudentT(0.975, 10) = 2.228.
func StudentT(p float64, df int) float64 {
	if df < 1 || !(p > 0 && p < 1) {
		return math.NaN()
	}
	if p < 0.5 {
		return -StudentT(1-p, df)
	}
	return quantiles.get(quantileKey{p, df}, func() float64 { return studentT(p, df) })
}

// quantiles remembers StudentT's answers: a cell's summaries ask for the same few degrees of
// freedom again and again (the load driver recomputes a running cell's intervals), and each
// answer costs about fifty evaluations of RegIncBeta.
var quantiles memo[quantileKey, float64]

type quantileKey struct {
	p  float64
	df int
}

// studentT is StudentT for p ≥ 0.5, uncached.
func studentT(p float64, df int) float64 {
	nu := float64(df)
	cdf := func(t float64) float64 { return 1 - 0.5*RegIncBeta(nu/(nu+t*t), nu/2, 0.5) }
	lo, hi := 0.0, 1.0
	for cdf(hi) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// RegIncBeta is the regularized incomplete beta function I(x; a, b) for x in [0, 1] and
// a, b > 0, by its continued fraction (modified Lentz), using the symmetry
// I(x; a, b) = 1 − I(1−x; b, a) where the fraction converges faster.
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function (Numerical Recipes
// §6.4) by the modified Lentz method.
func betaCF(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 100000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
