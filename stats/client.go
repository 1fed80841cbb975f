package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/servebench/servebench"
)

// ClientBoundSeconds is the distortion above which a cell is client-bound: 1 ms.
const ClientBoundSeconds = 0.001

// ClientTiming describes how a cell was timed and how far behind the client ran, from its
// records and the client process's scheduler-latency histogram over the cell (sched, seconds;
// see HistogramDelta). Over measured records:
//
//	clock_source   = "kernel" when every record's ClockSource is kernel, "user" when none is,
//	                 "mixed" otherwise (records without a clock are not counted)
//	lag_seconds    = Summarize(Record.ClientLagSeconds) over successful records that have one:
//	                 user-space read time − kernel receive stamp of the first token (s)
//	lag_max_seconds = max Record.ClientLagMaxSeconds (s)
//	coalesced_ttft_seconds = Summarize(d) over successful records with a lag and a chunk gap (s):
//	                 d = z × m, where z counts the leading chunk gaps that are exactly 0 and m is
//	                 the median of the record's non-zero gaps (the server's cadence; the lag
//	                 when every gap is 0). The kernel stamps bytes that queued up unread with the
//	                 newest arrival: a first token that shares its stamp with the z events after
//	                 it was read only after they had all arrived, and its stamp is late by about
//	                 z gaps between events. d = 0 when the first token has a stamp of its own.
//	sched_latency_seconds = HistogramSummarize(sched)
func ClientTiming(recs []servebench.Record, sched servebench.Histogram) servebench.ClientTiming {
	var ct servebench.ClientTiming
	var kernel, user int
	var lags, coalesced []float64
	var maxLag *float64
	for i := range recs {
		r := &recs[i]
		if r.Warmup {
			continue
		}
		switch r.ClockSource {
		case servebench.ClockKernel:
			kernel++
		case servebench.ClockUser:
			user++
		}
		if r.ClientLagMaxSeconds != nil && (maxLag == nil || *r.ClientLagMaxSeconds > *maxLag) {
			maxLag = servebench.Float(*r.ClientLagMaxSeconds)
		}
		if !r.OK() || r.ClientLagSeconds == nil {
			continue
		}
		lags = append(lags, *r.ClientLagSeconds)
		if g := r.ChunkGapsSeconds; len(g) > 0 {
			coalesced = append(coalesced, coalescedLateness(g, *r.ClientLagSeconds))
		}
	}
	switch {
	case kernel > 0 && user == 0:
		ct.ClockSource = servebench.ClockKernel
	case kernel > 0:
		ct.ClockSource = "mixed"
	default:
		ct.ClockSource = servebench.ClockUser
	}
	if len(lags) > 0 {
		s := Summarize(lags)
		ct.LagSeconds = &s
	}
	if len(coalesced) > 0 {
		s := Summarize(coalesced)
		ct.CoalescedTTFTSeconds = &s
	}
	ct.LagMaxSeconds = maxLag
	if h := HistogramSummarize(sched); h.Count > 0 {
		ct.SchedLatency = &h
	}
	return ct
}

// ClientBound says whether a cell's numbers could be distorted by more than
// ClientBoundSeconds because of the client, and why (a note with the numbers):
//
//   - user clock (or mixed): scheduler latency p99 > 1 ms — a read that returned was stamped
//     up to that late;
//   - kernel clock: coalesced_ttft_seconds p99 > 1 ms (first-token stamps late), or scheduler
//     latency p99 > 1 ms (requests could leave later than the load asked for), or late sends
//     of an open-loop schedule (lateSends > 0).
func ClientBound(ct servebench.ClientTiming, lateSends int) (bool, string) {
	schedP99 := 0.0
	if ct.SchedLatency != nil {
		schedP99 = ct.SchedLatency.P99
	}
	ms := func(s float64) string { return fmt.Sprintf("%.2f ms", s*1000) }
	if ct.ClockSource != servebench.ClockKernel {
		if schedP99 > ClientBoundSeconds {
			return true, fmt.Sprintf("responses were stamped in user space and the client's goroutines waited up to %s (scheduler latency p99) before running: times may be that late", ms(schedP99))
		}
		return false, ""
	}
	if c := ct.CoalescedTTFTSeconds; c != nil {
		// too few records for a p99: the worst one stands in for it
		p99, what := 0.0, "in the worst request"
		if c.Max != nil {
			p99 = *c.Max
		}
		if c.P99 != nil {
			p99, what = *c.P99, "at p99"
		}
		if p99 > ClientBoundSeconds {
			return true, fmt.Sprintf("the client read first tokens after the next event had arrived: TTFT may be late by up to %s %s", ms(p99), what)
		}
	}
	if schedP99 > ClientBoundSeconds {
		return true, fmt.Sprintf("the client's goroutines waited up to %s (scheduler latency p99) before running: requests may have left later than the load asked for", ms(schedP99))
	}
	if lateSends > 0 {
		return true, fmt.Sprintf("%d request(s) left more than %s after their scheduled time", lateSends, ms(LateTolerance))
	}
	return false, ""
}

// HistogramDelta is after − before, bucket by bucket (the histogram of what happened between
// the two readings); empty when the bucket layouts differ.
func HistogramDelta(before, after servebench.Histogram) servebench.Histogram {
	if len(before.Counts) != len(after.Counts) {
		if len(before.Counts) == 0 {
			return after
		}
		return servebench.Histogram{}
	}
	d := servebench.Histogram{Counts: make([]uint64, len(after.Counts)), Buckets: after.Buckets}
	for i := range after.Counts {
		if after.Counts[i] > before.Counts[i] {
			d.Counts[i] = after.Counts[i] - before.Counts[i]
		}
	}
	return d
}

// HistogramSummarize describes a bucketed histogram: count = Σ counts; the q-quantile is the
// upper bound of the bucket holding the value of rank ⌈q·count⌉ (so it never understates;
// an infinite upper bound gives the bucket's lower bound); max is the upper bound of the
// highest non-empty bucket (same rule).
func HistogramSummarize(h servebench.Histogram) servebench.HistogramSummary {
	var s servebench.HistogramSummary
	for _, c := range h.Counts {
		s.Count += c
	}
	if s.Count == 0 || len(h.Buckets) != len(h.Counts)+1 {
		return servebench.HistogramSummary{}
	}
	upper := func(i int) float64 {
		if u := h.Buckets[i+1]; !math.IsInf(u, 1) {
			return u
		}
		return h.Buckets[i]
	}
	quantile := func(q float64) float64 {
		rank := uint64(math.Ceil(q * float64(s.Count)))
		var seen uint64
		for i, c := range h.Counts {
			seen += c
			if c > 0 && seen >= rank {
				return upper(i)
			}
		}
		return upper(len(h.Counts) - 1)
	}
	s.P50, s.P99 = quantile(0.50), quantile(0.99)
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] > 0 {
			s.Max = upper(i)
			break
		}
	}
	return s
}

// coalescedLateness is d of coalesced_ttft_seconds (see ClientTiming) for one record.
func coalescedLateness(gaps []float64, lag float64) float64 {
	z := 0
	for z < len(gaps) && gaps[z] == 0 {
		z++
	}
	if z == 0 {
		return 0
	}
	var nonzero []float64
	for _, g := range gaps {
		if g > 0 {
			nonzero = append(nonzero, g)
		}
	}
	if len(nonzero) == 0 {
		return lag
	}
	slices.Sort(nonzero)
	return float64(z) * Percentile(nonzero, 0.5)
}

// StreamEventRate is the events per second one stream of cell c delivers while it decodes:
// mean generation speed (tokens/s) / tokens per chunk (tokens/event), in events/s. 0 when the
// cell has neither (nothing succeeded). A cell of concurrency N asks its client to read about
// N × StreamEventRate events per second.
func StreamEventRate(c servebench.CellResult) float64 {
	if c.TokensPerChunk <= 0 || c.GenerationSpeedTPS.Mean <= 0 {
		return 0
	}
	return c.GenerationSpeedTPS.Mean / c.TokensPerChunk
}
