package stats_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Over many seeded repetitions, the 95% intervals contain the truth about 95% of the time:
// the mean's Student t interval and the p50/p90 order-statistic intervals, for samples drawn
// from a skewed latency-like distribution whose truth is known in closed form (lognormal:
// mean e^(μ+σ²/2), q-quantile e^(μ+σ·z_q)). Percentile intervals are conservative (≥ 95%
// by construction, discrete ranks), so only their lower side is tight.
func TestIntervalsCover95(t *testing.T) {
	const reps, n, mu, sigma = 2000, 60, -1.0, 0.5
	trueMean := math.Exp(mu + sigma*sigma/2)
	z := map[float64]float64{0.5: 0, 0.9: 1.2815515655446004}
	rng := rand.New(rand.NewPCG(7, 11))
	var hitMean int
	hitQ := map[float64]int{}
	x := make([]float64, n)
	for range reps {
		for i := range x {
			x[i] = math.Exp(mu + sigma*rng.NormFloat64())
		}
		s := stats.Summarize(x)
		if s.CI95 != nil && s.CI95.Low <= trueMean && trueMean <= s.CI95.High {
			hitMean++
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		for q, zq := range z {
			iv := stats.PercentileCI95(sorted, q)
			if truth := math.Exp(mu + sigma*zq); iv.Low <= truth && truth <= iv.High {
				hitQ[q]++
			}
		}
	}
	// 2000 repetitions: the coverage's standard error is about 0.5 %.
	if c := float64(hitMean) / reps; c < 0.93 || c > 0.97 {
		t.Errorf("mean interval covered the truth in %.1f%% of %d samples, want about 95%%", 100*c, reps)
	}
	for q := range z {
		if c := float64(hitQ[q]) / reps; c < 0.94 || c > 0.995 {
			t.Errorf("p%.0f interval covered the truth in %.1f%%, want at least about 95%%", 100*q, 100*c)
		}
	}
}

// The batch-means throughput interval covers the true rate of a steady closed loop: N slots
// each run back-to-back requests of random length (exponential, mean 1 s) producing 100 tokens
// at an even pace, so the true output throughput is N × 101 tokens / the mean request length.
// Records are built on virtual offsets; nothing sleeps. (With batches of one mean lifetime the
// coverage was 86%: consecutive batches share requests, hence batches of two lifetimes, at most 10 of them.)
func TestThroughputIntervalCovers(t *testing.T) {
	const reps, slots, tokens = 400, 4, 101
	truth := float64(slots) * tokens / 1.0 // tokens per request / mean length (1 s)
	rng := rand.New(rand.NewPCG(3, 5))
	hit, have := 0, 0
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: slots}
	for range reps {
		var recs []servebench.Record
		for range slots {
			t0 := rng.Float64() // staggered starts, as in steady state
			for t0 < 40 {
				d := rng.ExpFloat64()
				recs = append(recs, servebench.Record{CellKey: key, Seq: int64(len(recs)), StartOffsetSeconds: t0, EndOffsetSeconds: t0 + d,
					TTFTSeconds: 0, DecodeSeconds: d, E2ELatencySeconds: d, OutputTokens: tokens, Chunks: tokens})
				t0 += d
			}
		}
		c := stats.Cell(key, recs, stats.Window{Start: 5, End: 35})
		if c.SystemOutputThroughputCI95 == nil {
			continue
		}
		have++
		if iv := c.SystemOutputThroughputCI95; iv.Low <= truth && truth <= iv.High {
			hit++
		}
	}
	if have < reps*9/10 {
		t.Fatalf("only %d of %d cells had an interval", have, reps)
	}
	if c := float64(hit) / float64(have); c < 0.91 || c > 0.99 {
		t.Errorf("throughput interval covered the true rate in %.1f%% of %d cells, want about 95%%", 100*c, have)
	}
}

// MinIntervalSamples is where the mean's t interval starts to say what it claims on skewed,
// latency-like values (exponential, mean 1): from MinIntervalSamples requests it covers the true
// mean in at least 89% of samples, while just below the minimum (5 values) it covers it in
// under 89%.
func TestMinIntervalSamplesCoverage(t *testing.T) {
	cover := func(n int) float64 {
		const reps = 20000
		rng := rand.New(rand.NewPCG(uint64(n), 17))
		hit := 0
		x := make([]float64, n)
		for range reps {
			for i := range x {
				x[i] = rng.ExpFloat64()
			}
			if iv, ok := stats.MeanCI95(x); ok && iv.Low <= 1 && 1 <= iv.High {
				hit++
			}
		}
		return float64(hit) / reps // standard error about 0.2%
	}
	if c := cover(stats.MinIntervalSamples); c < 0.89 {
		t.Errorf("at the minimum (%d values) the mean interval covered the truth in %.1f%%, want at least 89%%", stats.MinIntervalSamples, 100*c)
	}
	if c := cover(5); c >= 0.89 {
		t.Errorf("at 5 values the mean interval covered the truth in %.1f%%: the minimum of %d is then not needed", 100*c, stats.MinIntervalSamples)
	}
	if stats.IntervalShown(stats.MinIntervalSamples-1) || !stats.IntervalShown(stats.MinIntervalSamples) {
		t.Errorf("IntervalShown must start at MinIntervalSamples (%d)", stats.MinIntervalSamples)
	}
}
