package stats

import (
	"fmt"
	"math"

	"github.com/servebench/servebench"
)

// DefaultRelHalfWidth is the precision a cell aims for when nothing else is set: the 95%
// intervals of throughput and mean TTFT within ±5% of their value.
const DefaultRelHalfWidth = 0.05

// MinWindowLifetimes and MinRequestsPerSlot are the window rule of a sustained cell: the
// measured window lasts at least 2 × the cell's mean end-to-end latency, and the cell measured
// at least 2 × N requests (N = concurrency; warm-up excluded). Shorter, a throughput reflects
// where requests happened to start and end rather than the steady state. (In a closed loop in
// steady state a window of 2 × the mean end-to-end latency holds about 2 × N completions.)
const (
	MinWindowLifetimes = 2
	MinRequestsPerSlot = 2
)

// WindowLongEnough applies the window rule: windowSeconds ≥ MinWindowLifetimes × meanE2ESeconds
// and measured ≥ MinRequestsPerSlot × concurrency. It is the one definition used both to
// decide when a sustained cell may stop (package load) and to judge it afterwards (Assess).
func WindowLongEnough(windowSeconds, meanE2ESeconds float64, measured, concurrency int) bool {
	return windowSeconds > 0 && windowSeconds >= MinWindowLifetimes*meanE2ESeconds*(1-1e-9) &&
		measured >= MinRequestsPerSlot*concurrency
}

// The failure shares of Assess: a cell with more than FailuresLowConfidence of its measured
// requests failed is low-confidence, with more than FailuresInvalid invalid; one with fewer than
// MinSuccesses successes has no interval and is invalid.
const (
	FailuresLowConfidence = 0.01
	FailuresInvalid       = 0.5
	MinSuccesses          = 2
)

// UnstableShift is the relative difference between the two halves of a window beyond which a
// cell is unstable: 25%.
const UnstableShift = 0.25

// Assess sets c.Validity from the cell's own numbers (recs and w as given to Cell; relHalfWidth
// ≤ 0 means DefaultRelHalfWidth). Reasons and the level each is added at:
//
//	too-few-samples    invalid when fewer than 2 requests succeeded (no interval exists);
//	                   low-confidence when 2 to MinIntervalSamples − 1 succeeded (an interval
//	                   exists but is not shown: the cell has none to read), or when the
//	                   mean-TTFT or throughput interval is wider than ±relHalfWidth (the cell
//	                   hit its request or time cap before it was sure)
//	failures           low-confidence when more than 1% of measured requests failed, invalid
//	                   above 50%
//	window-too-short   invalid, sustained cells only, when WindowLongEnough fails (mean
//	                   end-to-end latency of the measured successes that ended by the
//	                   window's end, as the driver saw it when it stopped)
//	unstable           low-confidence, sustained cells only, when the two halves of the window
//	                   differ by more than UnstableShift: output throughput inside each half, or
//	                   mean TTFT of the requests that started in each half with disjoint 95%
//	                   intervals
//	cache-contaminated low-confidence when c.CacheContaminated (TTFT and prefill optimistic)
//	server-inconsistent low-confidence when a measured response carries a violation
//	                   (servebench.CheckWire); the note counts them by kind
//	not-streamed       low-confidence when a successful measured response arrived in one
//	                   piece (Record.NotStreamed): ITL and generation speed unknown
//
// A skipped cell is invalid with the single reason not-measured (its note is the cell's). Other stages add outage, server-restart and client-bound
// with Validity.Add. Call Assess after the server-side fields (cache) are attributed.
func Assess(c *servebench.CellResult, recs []servebench.Record, w Window, relHalfWidth float64) {
	if c.Skipped {
		c.Validity = servebench.NotMeasured(c.Note)
		return
	}
	recs = Sanitize(recs)
	if relHalfWidth <= 0 {
		relHalfWidth = DefaultRelHalfWidth
	}
	v := c.Validity
	if v.Verdict == "" {
		v = servebench.Valid()
	}
	lc, bad := servebench.VerdictLowConfidence, servebench.VerdictInvalid
	if c.RequestsSucceeded < MinSuccesses {
		v.Add(servebench.ReasonTooFewSamples, bad, fmt.Sprintf("%d successful measured request(s); an interval needs at least %d", c.RequestsSucceeded, MinSuccesses))
	}
	if c.RequestsTotal > 0 {
		share := float64(c.RequestsFailed) / float64(c.RequestsTotal)
		note := fmt.Sprintf("%d of %d measured requests failed", c.RequestsFailed, c.RequestsTotal)
		switch {
		case share > FailuresInvalid:
			v.Add(servebench.ReasonFailures, bad, note)
		case share > FailuresLowConfidence:
			v.Add(servebench.ReasonFailures, lc, note)
		}
	}
	sustained := c.LoadMode == servebench.ModeSustained || c.LoadMode == ""
	if sustained && c.RequestsSucceeded > 0 {
		e2e := lifetimeInWindow(recs, c)
		if !WindowLongEnough(c.WindowSeconds, e2e, c.RequestsTotal, c.Concurrency) {
			v.Add(servebench.ReasonWindowTooShort, bad, fmt.Sprintf("window %.3g s from %d measured requests; needs ≥ %d × mean end-to-end latency (%.3g s) and ≥ %d × %d requests",
				c.WindowSeconds, c.RequestsTotal, MinWindowLifetimes, e2e, MinRequestsPerSlot, c.Concurrency))
		}
	}
	switch {
	case c.RequestsSucceeded >= MinSuccesses && !IntervalShown(c.RequestsSucceeded):
		// the intervals exist but rest on too few values to be shown or judged by (how wide
		// they are is itself too uncertain), so the cell lacks them
		v.Add(servebench.ReasonTooFewSamples, lc, fmt.Sprintf("%d successful measured requests, fewer than the %d a 95%% interval is shown from (n<%d): the cell's means and throughput have no interval",
			c.RequestsSucceeded, MinIntervalSamples, MinIntervalSamples))
	case c.RequestsSucceeded >= MinSuccesses:
		var wide []string
		if hw := c.TTFTSeconds.CI95RelHalfWidth(); hw > relHalfWidth {
			wide = append(wide, fmt.Sprintf("mean TTFT ±%s", pct(hw)))
		}
		if sustained && c.SystemOutputThroughputTPS > 0 {
			hw := math.Inf(1)
			if c.SystemOutputThroughputCI95 != nil {
				hw = c.SystemOutputThroughputCI95.RelHalfWidth(c.SystemOutputThroughputTPS)
			}
			if hw > relHalfWidth {
				wide = append(wide, "output throughput ±"+pct(hw))
			}
		}
		if len(wide) > 0 {
			v.Add(servebench.ReasonTooFewSamples, lc, fmt.Sprintf("%s at 95%% (target ±%s)", join(wide), pct(relHalfWidth)))
		}
	}
	if sustained && c.WindowSeconds > 0 {
		if note := unstable(recs, w, c); note != "" {
			v.Add(servebench.ReasonUnstable, lc, note)
		}
	}
	if c.CacheContaminated {
		hits := 0
		if c.CacheHitTokens != nil {
			hits = *c.CacheHitTokens
		}
		v.Add(servebench.ReasonCacheContaminated, lc, fmt.Sprintf("%d input tokens served from the prefix cache; TTFT and prefill are optimistic", hits))
	}
	assessWire(&v, recs)
	c.Validity = v
}

// lifetimeInWindow is the mean end-to-end latency the window rule is judged by: over the
// successful measured requests that ended by the window's end (the ones a driver has seen when
// it decides to stop; requests draining after the window do not move the bar afterwards).
// The cell's mean over all its successes when none ended inside or no records are given.
func lifetimeInWindow(recs []servebench.Record, c *servebench.CellResult) float64 {
	end := c.WindowStartSeconds + c.WindowSeconds
	var sum float64
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.Warmup || !r.OK() || r.EndOffsetSeconds > end {
			continue
		}
		sum += r.E2ELatencySeconds
		n++
	}
	if n == 0 {
		return c.E2ELatencySeconds.Mean
	}
	return sum / float64(n)
}

// unstable compares the two halves of the cell's window (see Assess); "" when stable or when a
// half has too little in it to judge.
func unstable(recs []servebench.Record, w Window, c *servebench.CellResult) string {
	if w.End <= w.Start {
		w = Window{Start: c.WindowStartSeconds, End: c.WindowStartSeconds + c.WindowSeconds}
	}
	mid := (w.Start + w.End) / 2
	halves := [2]Window{{w.Start, mid}, {math.Nextafter(mid, math.Inf(1)), w.End}}
	var out [2]float64
	var ttft [2][]float64
	for i := range recs {
		r := &recs[i]
		if !r.OK() {
			continue
		}
		for h, hw := range halves {
			o, _ := tokensInWindow(r, hw)
			out[h] += o
			if !r.Warmup && hw.Contains(r.StartOffsetSeconds) {
				ttft[h] = append(ttft[h], r.TTFTSeconds)
			}
		}
	}
	if c.SystemOutputThroughputTPS > 0 && c.WindowSeconds >= MinWindowLifetimes*c.E2ELatencySeconds.Mean {
		a, b := out[0]/halves[0].Seconds(), out[1]/halves[1].Seconds()
		if d := math.Abs(a-b) / c.SystemOutputThroughputTPS; d > UnstableShift {
			return fmt.Sprintf("output throughput %.4g tok/s in the first half of the window, %.4g in the second", a, b)
		}
	}
	ia, okA := MeanCI95(ttft[0])
	ib, okB := MeanCI95(ttft[1])
	if okA && okB && (ia.High < ib.Low || ib.High < ia.Low) {
		a, b := mean(ttft[0]), mean(ttft[1])
		if d := math.Abs(a-b) / max(a, b); d > UnstableShift {
			return fmt.Sprintf("mean TTFT %.3g s for requests started in the first half of the window, %.3g s in the second", a, b)
		}
	}
	return ""
}

func pct(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "∞"
	}
	return fmt.Sprintf("%.3g%%", 100*x)
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " and "
		}
		out += x
	}
	return out
}
