package gate

import (
	"math"
	"testing"

	"github.com/servebench/servebench"
)

func iv(lo, hi float64) *servebench.Interval { return &servebench.Interval{Low: lo, High: hi} }

// cell is a cell of 10 successful requests (the fewest an interval is judged from).
func cell(conc int, tps float64, tpsCI *servebench.Interval, ttft float64, ttftCI *servebench.Interval) servebench.CellResult {
	return cellN(10, conc, tps, tpsCI, ttft, ttftCI)
}

// cellN is a cell of n successful requests, every mean over all n.
func cellN(n, conc int, tps float64, tpsCI *servebench.Interval, ttft float64, ttftCI *servebench.Interval) servebench.CellResult {
	c := servebench.CellResult{RequestsSucceeded: n, SystemOutputThroughputTPS: tps, SystemOutputThroughputCI95: tpsCI}
	c.ContextTokens, c.OutputTokens, c.Concurrency, c.LoadMode = 1024, 128, conc, servebench.ModeSustained
	c.TTFTSeconds.Count, c.TTFTSeconds.Mean, c.TTFTSeconds.CI95 = n, ttft, ttftCI
	c.GenerationSpeedTPS.Count, c.GenerationSpeedTPS.Mean, c.GenerationSpeedTPS.CI95 = n, 100, iv(99, 101)
	return c
}

func find(t *testing.T, r Result, m Metric, where string) Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Metric == m && row.Where == where {
			return row
		}
	}
	t.Fatalf("no %s row at %q in %+v", m, where, r.Rows)
	return Row{}
}

func TestDecideValues(t *testing.T) {
	base := servebench.Results{Cells: []servebench.CellResult{
		cell(1, 1000, iv(990, 1010), 0.100, iv(0.099, 0.101)),
		cell(2, 1000, iv(990, 1010), 0.100, iv(0.099, 0.101)),
		cell(3, 1000, iv(800, 1200), 0.100, iv(0.099, 0.101)),
		cell(4, 1000, iv(990, 1010), 0.100, nil),
		cell(5, 1000, iv(990, 1010), 0.100, iv(0.099, 0.101)),
		cell(6, 1000, iv(990, 1010), 0.100, iv(0.099, 0.101)),
	}}
	cand := servebench.Results{Cells: []servebench.CellResult{
		cell(1, 800, iv(790, 810), 0.100, iv(0.099, 0.101)),    // 20% slower, well beyond the noise: fails
		cell(2, 980, iv(975, 985), 0.100, iv(0.099, 0.101)),    // 2% slower beyond the noise, under 5%: passes
		cell(3, 900, iv(700, 1100), 0.100, iv(0.099, 0.101)),   // 10% slower inside wide intervals: passes
		cell(4, 1000, iv(990, 1010), 0.200, nil),               // TTFT doubled, no interval to tell: fails
		cell(5, 1200, iv(1190, 1210), 0.050, iv(0.049, 0.051)), // better: passes
		// concurrency 6 not measured by the candidate: not compared
		cell(7, 1, iv(0, 2), 9, iv(8, 10)), // not measured by the baseline: not compared
	}}
	r := Decide(base, cand, DefaultThresholds())
	if r.CommonCells != 5 {
		t.Fatalf("%d common cells, want 5", r.CommonCells)
	}
	for _, tc := range []struct {
		m     Metric
		where string
		want  Outcome
	}{
		{Throughput, "1K in / 128 out, c=1", Fail},
		{Throughput, "1K in / 128 out, c=2", Small},
		{Throughput, "1K in / 128 out, c=3", Noise},
		{TTFT, "1K in / 128 out, c=4", NoInterval},
		{Throughput, "1K in / 128 out, c=5", Pass},
		{TTFT, "1K in / 128 out, c=5", Pass},
		{Speed, "1K in / 128 out, c=1", Pass},
	} {
		if got := find(t, r, tc.m, tc.where); got.Outcome != tc.want {
			t.Errorf("%s at %s: %q (change %.3f, diff %v), want %q", tc.m, tc.where, got.Outcome, got.Change, got.Diff, tc.want)
		}
	}
	if n := len(r.Failed()); n != 2 {
		t.Errorf("%d failing rows, want 2", n)
	}
	// without a throughput threshold the slower cell is shown, not gated
	th := DefaultThresholds()
	delete(th, Throughput)
	if got := find(t, Decide(base, cand, th), Throughput, "1K in / 128 out, c=1"); got.Outcome != NotGated {
		t.Errorf("ungated throughput: %q", got.Outcome)
	}
	// the same run against itself passes everywhere
	if f := Decide(base, base, DefaultThresholds()).Failed(); len(f) != 0 {
		t.Errorf("a run against itself fails: %+v", f)
	}
}

// A value whose interval rests on fewer than stats.MinIntervalSamples requests in either run is
// not judged, whichever way it moved: the row is "too few samples" with both counts, neither a
// pass nor a failure, and the gate is undecided, not passed.
func TestDecideTooFewSamples(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand servebench.CellResult
		th         Thresholds
		want       map[Metric]Outcome
		undecided  int
		failed     int
	}{
		// both runs at the minimum: judged as before (20% slower beyond tight intervals fails)
		{"10 and 10", cellN(10, 1, 1000, iv(990, 1010), 0.1, iv(0.099, 0.101)), cellN(10, 1, 800, iv(790, 810), 0.1, iv(0.099, 0.101)), DefaultThresholds(),
			map[Metric]Outcome{Throughput: Fail, TTFT: Pass, Speed: Pass}, 0, 1},
		// a candidate of 9: the same 20% drop with "tight" intervals is too few samples to judge
		{"candidate 9", cellN(10, 1, 1000, iv(990, 1010), 0.1, iv(0.099, 0.101)), cellN(9, 1, 800, iv(790, 810), 0.1, iv(0.099, 0.101)), DefaultThresholds(),
			map[Metric]Outcome{Throughput: TooFew, TTFT: TooFew, Speed: TooFew}, 3, 0},
		// a baseline of 2 (±0% from two equal values): the same candidate is not judged either
		{"baseline 2", cellN(2, 1, 1000, iv(1000, 1000), 0.1, iv(0.1, 0.1)), cellN(10, 1, 1000, iv(990, 1010), 0.1, iv(0.099, 0.101)), DefaultThresholds(),
			map[Metric]Outcome{Throughput: TooFew, TTFT: TooFew, Speed: TooFew}, 3, 0},
		// better by far on 5 requests: still not a pass
		{"better on 5", cellN(5, 1, 1000, iv(990, 1010), 0.1, iv(0.099, 0.101)), cellN(5, 1, 2000, iv(1990, 2010), 0.05, iv(0.049, 0.051)), DefaultThresholds(),
			map[Metric]Outcome{Throughput: TooFew, TTFT: TooFew}, 3, 0},
		// no interval at all on 4 requests: too few samples, not "WORSE (no interval)"
		{"no interval on 4", cellN(4, 1, 1000, nil, 0.1, nil), cellN(4, 1, 500, nil, 0.3, nil), DefaultThresholds(),
			map[Metric]Outcome{Throughput: TooFew, TTFT: TooFew}, 3, 0},
		// a metric without a threshold stays "not gated", and is not counted undecided
		{"ungated", cellN(3, 1, 1000, iv(990, 1010), 0.1, iv(0.099, 0.101)), cellN(3, 1, 800, iv(790, 810), 0.1, iv(0.099, 0.101)), Thresholds{TTFT: 0.1},
			map[Metric]Outcome{Throughput: NotGated, TTFT: TooFew, Speed: NotGated}, 1, 0},
	} {
		r := Decide(servebench.Results{Cells: []servebench.CellResult{tc.base}}, servebench.Results{Cells: []servebench.CellResult{tc.cand}}, tc.th)
		for m, want := range tc.want {
			row := find(t, r, m, "1K in / 128 out, c=1")
			if row.Outcome != want {
				t.Errorf("%s: %s %q, want %q", tc.name, m, row.Outcome, want)
			}
			if row.BaselineN != tc.base.RequestsSucceeded || row.CandidateN != tc.cand.RequestsSucceeded {
				t.Errorf("%s: %s counts %d and %d, want %d and %d", tc.name, m, row.BaselineN, row.CandidateN, tc.base.RequestsSucceeded, tc.cand.RequestsSucceeded)
			}
			if row.Outcome == TooFew && (row.Diff != nil || row.Outcome.Failed()) {
				t.Errorf("%s: %s is too few samples yet shows an interval %v or fails", tc.name, m, row.Diff)
			}
		}
		if n := len(r.Undecided()); n != tc.undecided {
			t.Errorf("%s: %d undecided rows, want %d", tc.name, n, tc.undecided)
		}
		if n := len(r.Failed()); n != tc.failed {
			t.Errorf("%s: %d failing rows, want %d", tc.name, n, tc.failed)
		}
	}
}

func limit(n int, kind servebench.LimitKind, rng *[2]int) servebench.CapacityResult {
	c := servebench.CapacityResult{UseCase: "chat", LimitKind: kind, LimitRange: rng}
	if kind != servebench.LimitNotViable {
		c.Limit = &n
	}
	return c
}

func TestDecideCapacity(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand servebench.CapacityResult
		want       Outcome
	}{
		{"settled drop", limit(8, servebench.LimitMeasured, &[2]int{8, 8}), limit(5, servebench.LimitMeasured, &[2]int{5, 5}), Fail},
		{"ranges overlap", limit(8, servebench.LimitMeasured, &[2]int{6, 9}), limit(6, servebench.LimitMeasured, &[2]int{5, 7}), Noise},
		{"same", limit(8, servebench.LimitMeasured, &[2]int{7, 9}), limit(8, servebench.LimitMeasured, &[2]int{7, 9}), Pass},
		{"now not viable", limit(4, servebench.LimitMeasured, &[2]int{4, 4}), limit(0, servebench.LimitNotViable, nil), Fail},
		{"below a lower bound", limit(16, servebench.LimitLowerBound, nil), limit(9, servebench.LimitMeasured, &[2]int{9, 10}), Fail},
		{"still a lower bound", limit(16, servebench.LimitLowerBound, nil), limit(16, servebench.LimitLowerBound, nil), Pass},
		{"both not viable", limit(0, servebench.LimitNotViable, nil), limit(0, servebench.LimitNotViable, nil), Pass},
	} {
		r := Decide(servebench.Results{Capacity: []servebench.CapacityResult{tc.base}}, servebench.Results{Capacity: []servebench.CapacityResult{tc.cand}}, DefaultThresholds())
		if r.CommonUseCases != 1 || len(r.Rows) != 1 {
			t.Fatalf("%s: %+v", tc.name, r)
		}
		if got := r.Rows[0]; got.Outcome != tc.want {
			t.Errorf("%s: %q (diff %v), want %q", tc.name, got.Outcome, got.Diff, tc.want)
		}
	}
	if c := relChange(0, 0); c != 0 || !math.IsInf(relChange(0, 1), 1) {
		t.Error("relChange at a zero baseline")
	}
}
