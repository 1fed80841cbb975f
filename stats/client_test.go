package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

func TestHistogramSummarize(t *testing.T) {
	inf := math.Inf(1)
	h := servebench.Histogram{Buckets: []float64{0, 0.0001, 0.001, 0.01, inf}, Counts: []uint64{90, 8, 2, 0}}
	s := HistogramSummarize(h)
	// rank 50 lies in the first bucket, rank 99 in the third
	if s.Count != 100 || s.P50 != 0.0001 || s.P99 != 0.01 || s.Max != 0.01 {
		t.Errorf("%+v", s)
	}
	// a value in the open last bucket is reported at its lower bound
	h.Counts = []uint64{0, 0, 0, 1}
	if s := HistogramSummarize(h); s.P99 != 0.01 || s.Max != 0.01 {
		t.Errorf("open bucket: %+v", s)
	}
	if s := HistogramSummarize(servebench.Histogram{}); s.Count != 0 {
		t.Errorf("empty: %+v", s)
	}
	d := HistogramDelta(servebench.Histogram{Buckets: h.Buckets, Counts: []uint64{5, 5, 5, 5}}, servebench.Histogram{Buckets: h.Buckets, Counts: []uint64{5, 7, 5, 6}})
	if d.Counts[0] != 0 || d.Counts[1] != 2 || d.Counts[3] != 1 {
		t.Errorf("delta %v", d.Counts)
	}
}

func TestClientTimingAndBound(t *testing.T) {
	f := servebench.Float
	rec := func(clock string, lag *float64, gap0 float64) servebench.Record {
		return servebench.Record{ClockSource: clock, ClientLagSeconds: lag, ClientLagMaxSeconds: lag, ChunkGapsSeconds: []float64{gap0, 0.02, 0.02}}
	}
	inf := math.Inf(1)
	calm := servebench.Histogram{Buckets: []float64{0, 0.0001, 0.01, inf}, Counts: []uint64{100, 0, 0}}
	busy := servebench.Histogram{Buckets: []float64{0, 0.0001, 0.01, inf}, Counts: []uint64{50, 50, 0}} // p99 10 ms
	cases := []struct {
		name   string
		recs   []servebench.Record
		sched  servebench.Histogram
		late   int
		clock  string
		bound  bool
		reason string
	}{
		// the first token has a stamp of its own: exact, whatever the lag
		{"kernel, own stamp", []servebench.Record{rec("kernel", f(0.005), 0.020), rec("kernel", f(0.0001), 0.003)}, calm, 0, "kernel", false, ""},
		// the first token shares its stamp with the next event: late by about one 20 ms gap
		{"kernel, coalesced", []servebench.Record{rec("kernel", f(0.0002), 0)}, calm, 0, "kernel", true, "TTFT may be late by up to 20.00 ms"},
		{"kernel, busy scheduler", []servebench.Record{rec("kernel", f(0.0001), 0.020)}, busy, 0, "kernel", true, "left later"},
		{"kernel, late sends", []servebench.Record{rec("kernel", f(0.0001), 0.020)}, calm, 2, "kernel", true, "after their scheduled time"},
		{"user, calm", []servebench.Record{rec("user", nil, 0.02)}, calm, 0, "user", false, ""},
		{"user, busy scheduler", []servebench.Record{rec("user", nil, 0.02)}, busy, 0, "user", true, "stamped in user space"},
		{"mixed is judged like user", []servebench.Record{rec("user", nil, 0.02), rec("kernel", f(0.0001), 0.02)}, busy, 0, "mixed", true, "stamped in user space"},
	}
	for _, c := range cases {
		ct := ClientTiming(c.recs, c.sched)
		if ct.ClockSource != c.clock {
			t.Errorf("%s: clock %q, want %q", c.name, ct.ClockSource, c.clock)
		}
		bound, note := ClientBound(ct, c.late)
		if bound != c.bound || !strings.Contains(note, c.reason) {
			t.Errorf("%s: bound %v (%q), want %v (%q)", c.name, bound, note, c.bound, c.reason)
		}
	}
	ct := ClientTiming([]servebench.Record{rec("kernel", f(0.005), 0.003), rec("kernel", f(0.001), 0.020), {Warmup: true, ClockSource: "user"}}, calm)
	if ct.LagSeconds == nil || ct.LagSeconds.Count != 2 || *ct.LagMaxSeconds != 0.005 || ct.CoalescedTTFTSeconds.Max == nil || *ct.CoalescedTTFTSeconds.Max != 0 {
		t.Errorf("summaries %+v %+v %v", ct.LagSeconds, ct.CoalescedTTFTSeconds, ct.LagMaxSeconds)
	}
}

func TestCoalescedLateness(t *testing.T) {
	cases := []struct {
		gaps []float64
		lag  float64
		want float64
	}{
		{[]float64{0.01, 0.01}, 0.5, 0},              // own stamp: exact
		{[]float64{0, 0, 0.01, 0.03, 0.01}, 0, 0.02}, // two events coalesced, cadence 10 ms
		{[]float64{0, 0}, 0.004, 0.004},              // all coalesced: only the lag is known
	}
	for _, c := range cases {
		if got := coalescedLateness(c.gaps, c.lag); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("gaps %v lag %v: %v, want %v", c.gaps, c.lag, got, c.want)
		}
	}
}
