package stats

import (
	"math"

	"github.com/servebench/servebench"
)

// SaturationRatio is the share of an open-loop cell's requests that must finish at the pace
// they arrived for the cell not to count as saturated: 0.8 (see OpenLoop).
const SaturationRatio = 0.8

// Goodput sets c.Goodput and c.GoodputRPS from the cell's records (the same records and the same
// window Cell used):
//
//	goodput     = measured requests meeting every objective (servebench.MeetsSLO) /
//	              measured requests                                   (fraction; failures miss)
//	goodput_rps = measured requests meeting every objective whose EndOffsetSeconds lies in the
//	              window / window seconds                             (requests/s)
//
// Both stay nil when there are no measured requests (goodput) or no window (goodput_rps).
func Goodput(c *servebench.CellResult, recs []servebench.Record, slo servebench.Thresholds) {
	w := Window{Start: c.WindowStartSeconds, End: c.WindowStartSeconds + c.WindowSeconds}
	var measured, good, inWindow int
	for i := range recs {
		r := &recs[i]
		if r.Warmup {
			continue
		}
		measured++
		if servebench.MeetsSLO(r, slo) {
			good++
			if w.Contains(r.EndOffsetSeconds) {
				inWindow++
			}
		}
	}
	c.Goodput, c.GoodputRPS = nil, nil
	if measured > 0 {
		c.Goodput = servebench.Float(float64(good) / float64(measured))
	}
	if c.WindowSeconds > 0 {
		c.GoodputRPS = servebench.Float(float64(inWindow) / c.WindowSeconds)
	}
}

// OpenLoop sets c.AchievedRatePerSecond and c.Saturated for an open-loop cell (RatePerSecond > 0),
// over the measured records that were sent (never-sent ones aside):
//
//	achieved_rate_per_second = (sent − 1) / (last start − first start)       (requests/s; 0 with
//	                           fewer than two sends)
//	kept_pace = successful requests ending in [first start + L, last start + L], where L is the
//	            shortest end-to-end latency of the cell (an unqueued request): a target that keeps
//	            up finishes each request about L after it arrived, so nearly all end inside
//	saturated = kept_pace < SaturationRatio × sent (requests finished more slowly than they
//	            arrived: the queue grew during the cell), or late_sends > (1 − SaturationRatio) ×
//	            sent (the sender itself could not keep the schedule)
func OpenLoop(c *servebench.CellResult, recs []servebench.Record) {
	c.AchievedRatePerSecond, c.Saturated = 0, false
	if c.RatePerSecond <= 0 {
		return
	}
	lo, hi, fastest := math.Inf(1), math.Inf(-1), math.Inf(1)
	sent := 0
	for i := range recs {
		r := &recs[i]
		if r.Warmup || (r.StartUnixNano == 0 && r.StartOffsetSeconds == 0) {
			continue
		}
		sent++
		lo, hi = min(lo, r.StartOffsetSeconds), max(hi, r.StartOffsetSeconds)
		if r.OK() {
			fastest = min(fastest, r.E2ELatencySeconds)
		}
	}
	if sent >= 2 && hi > lo {
		c.AchievedRatePerSecond = float64(sent-1) / (hi - lo)
	}
	kept := 0
	if !math.IsInf(fastest, 1) {
		w := Window{Start: lo + fastest, End: hi + fastest}
		for i := range recs {
			if r := &recs[i]; !r.Warmup && r.OK() && w.Contains(r.EndOffsetSeconds) {
				kept++
			}
		}
	}
	c.Saturated = float64(c.LateSends) > (1-SaturationRatio)*float64(sent) || float64(kept) < SaturationRatio*float64(sent)
}
