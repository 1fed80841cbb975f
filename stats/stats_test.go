package stats_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// seq returns 1, 2, …, n.
func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

// The expected values are numpy.percentile(x, 100*q) (method="linear"), worked by hand with
// h = (n−1)q and checked against NumPy.
func TestPercentileMatchesNumPy(t *testing.T) {
	tests := []struct {
		name string
		x    []float64
		q    float64
		want float64
	}{
		{"four values p90: h=2.7 → 3+0.7", []float64{1, 2, 3, 4}, 0.90, 3.7},
		{"four values p50: h=1.5 → 2.5", []float64{1, 2, 3, 4}, 0.50, 2.5},
		{"four values p95: h=2.85", []float64{1, 2, 3, 4}, 0.95, 3.85},
		{"four values p99: h=2.97", []float64{1, 2, 3, 4}, 0.99, 3.97},
		{"two values p90", []float64{10, 20}, 0.90, 19},
		{"two values p99", []float64{10, 20}, 0.99, 19.9},
		{"outlier dominates p99: 0.97×100", []float64{0, 0, 0, 100}, 0.99, 97},
		{"outlier p90: 0.7×100", []float64{0, 0, 0, 100}, 0.90, 70},
		{"1..100 p90: h=89.1 → 90.1 (not nearest-rank 90)", seq(100), 0.90, 90.1},
		{"1..100 p99: h=98.01", seq(100), 0.99, 99.01},
		{"1..100 p50: h=49.5", seq(100), 0.50, 50.5},
		{"1..100 p95: h=94.05", seq(100), 0.95, 95.05},
		{"single value is every percentile", []float64{5}, 0.99, 5},
		{"q=0 is the minimum", []float64{-3, 1, 7}, 0, -3},
		{"q=1 is the maximum", []float64{-3, 1, 7}, 1, 7},
		{"q above 1 clamps to max", []float64{-3, 1, 7}, 1.5, 7},
		{"q below 0 clamps to min", []float64{-3, 1, 7}, -0.5, -3},
		{"ties interpolate to the tie", []float64{2, 2, 2, 9}, 0.5, 2},
	}
	for _, tt := range tests {
		if got := stats.Percentile(tt.x, tt.q); !near(got, tt.want) {
			t.Errorf("%s: Percentile(%v, %g) = %.15g, want %g", tt.name, tt.x, tt.q, got, tt.want)
		}
	}
	if !math.IsNaN(stats.Percentile(nil, 0.5)) {
		t.Error("empty input must give NaN")
	}
	if !math.IsNaN(stats.Percentile([]float64{1}, math.NaN())) {
		t.Error("NaN q must give NaN")
	}
}

func TestSummarize(t *testing.T) {
	in := []float64{3, 1, 2}
	got := stats.Summarize(in)
	// Three values: p50 is shown (needs 2), p90/p95/p99 are withheld (need 10/20/100).
	// Mean interval: 2 ± t(0.975, 2)·s/√3 with s = 1, t = 4.302653.
	h := 4.302652729911275 / math.Sqrt(3)
	want := servebench.Summary{Count: 3, Mean: 2, Min: servebench.Float(1), Max: servebench.Float(3), P50: servebench.Float(2),
		CI95: &servebench.Interval{Low: 2 - h, High: 2 + h}}
	if !summaryNear(got, want) {
		t.Errorf("Summarize(3,1,2) = %+v, want %+v", got, want)
	}
	if got.P50CI95 == nil || !math.IsInf(got.P50CI95.Low, -1) || !math.IsInf(got.P50CI95.High, 1) {
		t.Errorf("p50 interval from 3 values = %v, want unbounded both sides", got.P50CI95)
	}
	if !slices.Equal(in, []float64{3, 1, 2}) {
		t.Errorf("Summarize modified its input: %v", in)
	}
	if (!reflect.DeepEqual(stats.Summarize(nil), servebench.Summary{})) {
		t.Error("no values must give the zero summary")
	}
	// Compensated mean: 1e16 + 1 + 1 − 1e16 over 4 values is 0.5; naive summation gives 0.
	if m := stats.Summarize([]float64{1e16, 1, 1, -1e16}).Mean; m != 0.5 {
		t.Errorf("mean = %g, want 0.5", m)
	}
	// 100 values 1…100: every percentile is shown, with NumPy's values.
	full := stats.Summarize(seq(100))
	for _, c := range []struct {
		st   servebench.Statistic
		want float64
	}{{servebench.StatP50, 50.5}, {servebench.StatP90, 90.1}, {servebench.StatP95, 95.05}, {servebench.StatP99, 99.01}} {
		v, ok := full.Pick(c.st)
		if !ok || !near(v, c.want) {
			t.Errorf("%s of 1…100 = %v (%v), want %g", c.st, v, ok, c.want)
		}
		if iv := full.PickCI95(c.st); iv == nil || !(iv.Low <= c.want) || !(iv.High >= c.want) {
			t.Errorf("%s interval %v does not contain the estimate %g", c.st, iv, c.want)
		}
	}
	// 99 values: p99 is withheld, and Pick says so.
	if _, ok := stats.Summarize(seq(99)).Pick(servebench.StatP99); ok {
		t.Error("p99 of 99 values must be withheld")
	}
}

func summaryNear(a, b servebench.Summary) bool {
	opt := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || near(*x, *y)) }
	iv := func(x, y *servebench.Interval) bool {
		return (x == nil) == (y == nil) && (x == nil || (math.Abs(x.Low-y.Low) <= 1e-9 && math.Abs(x.High-y.High) <= 1e-9))
	}
	return a.Count == b.Count && near(a.Mean, b.Mean) && nearP(a.Min, b.Min) && nearP(a.Max, b.Max) &&
		opt(a.P50, b.P50) && opt(a.P90, b.P90) && opt(a.P95, b.P95) && opt(a.P99, b.P99) && iv(a.CI95, b.CI95)
}

func FuzzPercentile(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.3, 0.9)
	f.Add([]byte{}, 0.0, 1.0)
	f.Fuzz(func(t *testing.T, raw []byte, q1, q2 float64) {
		var x []float64
		for len(raw) >= 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw))
			raw = raw[8:]
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				x = append(x, v)
			}
		}
		if len(x) == 0 || math.IsNaN(q1) || math.IsNaN(q2) {
			return
		}
		slices.Sort(x)
		if q1 > q2 {
			q1, q2 = q2, q1
		}
		p1, p2 := stats.Percentile(x, q1), stats.Percentile(x, q2)
		if p1 > p2 {
			t.Fatalf("not monotone: P(%g)=%g > P(%g)=%g over %v", q1, p1, q2, p2, x)
		}
		for _, p := range []float64{p1, p2} {
			if p < x[0] || p > x[len(x)-1] || math.IsNaN(p) {
				t.Fatalf("P=%g outside [%g, %g]", p, x[0], x[len(x)-1])
			}
		}
	})
}

func TestScalingEfficiency(t *testing.T) {
	k := func(mode servebench.LoadMode, ctx, n int) servebench.CellKey {
		return servebench.CellKey{Scenario: "sweep", LoadMode: mode, ContextTokens: ctx, OutputTokens: 1024, Concurrency: n}
	}
	cells := []servebench.CellResult{
		{CellKey: k(servebench.ModeSustained, 1024, 2), SystemOutputThroughputTPS: 150}, // 150/(2×100)
		{CellKey: k(servebench.ModeSustained, 1024, 1), SystemOutputThroughputTPS: 100}, // base: itself → 1
		{CellKey: k(servebench.ModeSustained, 1024, 4), SystemOutputThroughputTPS: 200}, // 200/(4×100)
		{CellKey: k(servebench.ModeSustained, 8192, 2), SystemOutputThroughputTPS: 80},  // no c=1 at 8K → nil
		{CellKey: k(servebench.ModeDedicated, 1024, 1), SystemOutputThroughputTPS: 50},  // other mode has its own base
		{CellKey: k(servebench.ModeDedicated, 1024, 2), SystemOutputThroughputTPS: 90},  // 90/(2×50)
		{CellKey: k(servebench.ModeSustained, 1024, 8), Skipped: true},                  // skipped → nil
		{CellKey: k(servebench.ModeSustained, 32768, 1), SystemOutputThroughputTPS: 0},  // zero base → nil
		{CellKey: k(servebench.ModeSustained, 32768, 2), SystemOutputThroughputTPS: 40, // zero base → nil
			ScalingEfficiency: servebench.Float(9)}, // stale value is cleared
	}
	want := []*float64{servebench.Float(0.75), servebench.Float(1), servebench.Float(0.5), nil,
		servebench.Float(1), servebench.Float(0.9), nil, nil, nil}
	stats.ScalingEfficiency(cells)
	for i, c := range cells {
		got, w := c.ScalingEfficiency, want[i]
		if (got == nil) != (w == nil) || (got != nil && !near(*got, *w)) {
			t.Errorf("cell %s: efficiency %v, want %v", c.ID(), ptr(got), ptr(w))
		}
	}
}

func ptr(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

var key = servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1000, OutputTokens: 100, Concurrency: 4}

// ok builds a successful measured record; decode > 0 and out > 1 make it Measurable.
func ok(start, end float64, in, out int, ttft, decode float64) servebench.Record {
	r := servebench.Record{CellKey: key, StartUnixNano: 1, StartOffsetSeconds: start, EndOffsetSeconds: end,
		InputTokens: in, InputTokensRequested: 1000, OutputTokens: out, OutputTokensRequested: 100,
		TTFTSeconds: ttft, FirstContentSeconds: ttft, E2ELatencySeconds: end - start, DecodeSeconds: decode}
	if out > 1 && decode > 0 {
		r.ITLSeconds = decode / float64(out-1)
		r.GenerationSpeedTPS = float64(out-1) / decode
	}
	return r
}

func cellRecords() []servebench.Record {
	a := ok(8, 12, 1000, 100, 0.5, 3.3) // in window (ends at 12)
	a.Retries = 1
	a.Chunks, a.ChunkGapsSeconds = 100, []float64{0.03, 0.03}
	b := ok(11, 15, 1010, 100, 1.0, 2.97) // in window; deviation 10; no content delta
	b.FirstContentSeconds = 0
	b.Chunks, b.ChunkGapsSeconds = 50, []float64{0.05}
	c := ok(16, 20, 990, 90, 2.0, 1.78) // ends exactly at window end: counted; short output
	c.LengthMismatch = true
	c.FirstContentSeconds = 2.5 // reasoning came first
	c.Chunks, c.ChunkGapsSeconds = 45, []float64{0.1}
	d := ok(18, 21, 1000, 1, 0.25, 0) // after window; one token: not Measurable
	d.Chunks = 1
	e := ok(5, 9.99, 1000, 100, 0.5, 4.0) // before window; sent 1 s late on an open-loop schedule
	e.ScheduledOffsetSeconds = 4
	e.Chunks, e.ChunkGapsSeconds = 100, []float64{0.02}
	f := servebench.Record{CellKey: key, StartUnixNano: 1, StartOffsetSeconds: 12, EndOffsetSeconds: 20,
		ErrorClass: servebench.ErrTimeoutFirstToken, OutputTokens: 50, ChunkGapsSeconds: []float64{9}}
	g := servebench.Record{CellKey: key, ScheduledOffsetSeconds: 30, ErrorClass: servebench.ErrCanceled} // never sent
	h := servebench.Record{CellKey: key, StartUnixNano: 1, StartOffsetSeconds: 10.005, EndOffsetSeconds: 10.1,
		ScheduledOffsetSeconds: 10, ErrorClass: servebench.ErrHTTPStatus, HTTPStatus: 503} // 5 ms late: tolerated
	w1 := ok(0, 10.5, 5000, 500, 0.1, 1)
	w1.Warmup, w1.Retries = true, 1
	w2 := ok(0, 10, 5000, 500, 0.1, 1)
	w2.Warmup = true
	return []servebench.Record{w1, w2, a, b, c, d, e, f, g, h}
}

func TestCell(t *testing.T) {
	got := stats.Cell(key, cellRecords(), stats.Window{Start: 10, End: 20})
	want := servebench.CellResult{
		CellKey:        key,
		RequestsTotal:  8, // a..h; warm-ups excluded
		WarmupRequests: 2,
		// a, b, c, d, e
		RequestsSucceeded: 5,
		RequestsFailed:    3,
		ErrorsByClass: map[servebench.ErrorClass]int{
			servebench.ErrTimeoutFirstToken: 1, servebench.ErrCanceled: 1, servebench.ErrHTTPStatus: 1},
		SuccessRate:             5.0 / 8,
		LengthMismatches:        1,
		Retries:                 1,
		LateSends:               1,
		DroppedSends:            1,
		InputTokensMean:         1000,
		OutputTokensMean:        391.0 / 5,
		InputTokensMaxDeviation: 10,
		WindowStartSeconds:      10,
		WindowSeconds:           10,
		// tokens produced in [10, 20]: a straddles the start (first token 8.5, decode to 11.8:
		// 99·1.8/3.3 = 54), b 100, c 90, d 1, e and the warm-ups none → 245 / 10 s; inputs of
		// b, c, d (first token inside) add 3000.
		SystemOutputThroughputTPS: 24.5,
		TotalThroughputTPS:        324.5,
		RequestThroughputRPS:      0.3,
		TTFTSeconds:               stats.Summarize([]float64{0.5, 1.0, 2.0, 0.25, 0.5}),
		FirstContentSeconds:       stats.Summarize([]float64{0.5, 2.5, 0.25, 0.5}),
		E2ELatencySeconds:         stats.Summarize([]float64{4, 4, 4, 3, 4.99}),
		ITLSeconds:                stats.Summarize([]float64{3.3 / 99, 2.97 / 99, 1.78 / 89, 4.0 / 99}),
		GenerationSpeedTPS:        stats.Summarize([]float64{99 / 3.3, 99 / 2.97, 89 / 1.78, 99 / 4.0}),
		ChunkGapSeconds:           stats.Summarize([]float64{0.03, 0.03, 0.05, 0.1, 0.02}),
		TokensPerChunk:            391.0 / 296,
		// mean(1000/0.5, 1010/1, 990/2, 1000/0.25, 1000/0.5)
		EffectivePrefillSpeedTPS: 1901,
	}
	// Hand-checked anchors, independent of Summarize.
	if got.TTFTSeconds.Count != 5 || !near(got.TTFTSeconds.Mean, 0.85) || got.TTFTSeconds.P90 != nil || got.TTFTSeconds.P50 == nil || *got.TTFTSeconds.P50 != 0.5 {
		t.Errorf("ttft summary %+v, want count 5, mean 0.85, p50 0.5, p90 withheld (5 < 10 values)", got.TTFTSeconds)
	}
	if got.ITLSeconds.Count != 4 || got.ChunkGapSeconds.Count != 5 || got.FirstContentSeconds.Count != 4 {
		t.Errorf("counts: itl %d (want 4), gaps %d (want 5), first content %d (want 4)",
			got.ITLSeconds.Count, got.ChunkGapSeconds.Count, got.FirstContentSeconds.Count)
	}
	compareCells(t, got, want)
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("cell does not marshal: %v", err)
	}
}

func compareCells(t *testing.T, got, want servebench.CellResult) {
	t.Helper()
	gj, _ := json.MarshalIndent(got, "", " ")
	// Compare floats with a tolerance by normalising through near() on known fields.
	fl := []struct {
		name    string
		g, w    float64
		summary bool
	}{
		{"success_rate", got.SuccessRate, want.SuccessRate, false},
		{"input_tokens_mean", got.InputTokensMean, want.InputTokensMean, false},
		{"output_tokens_mean", got.OutputTokensMean, want.OutputTokensMean, false},
		{"window_start_seconds", got.WindowStartSeconds, want.WindowStartSeconds, false},
		{"window_seconds", got.WindowSeconds, want.WindowSeconds, false},
		{"system_output_throughput_tps", got.SystemOutputThroughputTPS, want.SystemOutputThroughputTPS, false},
		{"total_throughput_tps", got.TotalThroughputTPS, want.TotalThroughputTPS, false},
		{"request_throughput_rps", got.RequestThroughputRPS, want.RequestThroughputRPS, false},
		{"tokens_per_chunk", got.TokensPerChunk, want.TokensPerChunk, false},
		{"effective_prefill_speed_tps", got.EffectivePrefillSpeedTPS, want.EffectivePrefillSpeedTPS, false},
	}
	for _, f := range fl {
		if !near(f.g, f.w) {
			t.Errorf("%s = %.15g, want %.15g", f.name, f.g, f.w)
		}
	}
	ints := []struct {
		name string
		g, w int
	}{
		{"requests_total", got.RequestsTotal, want.RequestsTotal},
		{"requests_succeeded", got.RequestsSucceeded, want.RequestsSucceeded},
		{"requests_failed", got.RequestsFailed, want.RequestsFailed},
		{"warmup_requests", got.WarmupRequests, want.WarmupRequests},
		{"length_mismatches", got.LengthMismatches, want.LengthMismatches},
		{"retries", got.Retries, want.Retries},
		{"late_sends", got.LateSends, want.LateSends},
		{"dropped_sends", got.DroppedSends, want.DroppedSends},
		{"input_tokens_max_deviation", got.InputTokensMaxDeviation, want.InputTokensMaxDeviation},
	}
	for _, f := range ints {
		if f.g != f.w {
			t.Errorf("%s = %d, want %d", f.name, f.g, f.w)
		}
	}
	sums := []struct {
		name string
		g, w servebench.Summary
	}{
		{"ttft_seconds", got.TTFTSeconds, want.TTFTSeconds},
		{"first_content_seconds", got.FirstContentSeconds, want.FirstContentSeconds},
		{"e2e_latency_seconds", got.E2ELatencySeconds, want.E2ELatencySeconds},
		{"itl_seconds", got.ITLSeconds, want.ITLSeconds},
		{"generation_speed_tps", got.GenerationSpeedTPS, want.GenerationSpeedTPS},
		{"chunk_gap_seconds", got.ChunkGapSeconds, want.ChunkGapSeconds},
	}
	for _, s := range sums {
		if !summaryNear(s.g, s.w) {
			t.Errorf("%s = %+v, want %+v", s.name, s.g, s.w)
		}
	}
	if len(got.ErrorsByClass) != len(want.ErrorsByClass) {
		t.Errorf("errors_by_class = %v, want %v", got.ErrorsByClass, want.ErrorsByClass)
	}
	for k, v := range want.ErrorsByClass {
		if got.ErrorsByClass[k] != v {
			t.Errorf("errors_by_class[%s] = %d, want %d", k, got.ErrorsByClass[k], v)
		}
	}
	if got.CellKey != want.CellKey {
		t.Errorf("key %+v, want %+v", got.CellKey, want.CellKey)
	}
	if got.QueueWaitSeconds != nil || got.PrefillSeconds != nil || got.PrefillSpeedTPS != nil ||
		got.GPUPowerWatts != nil || got.EnergyJoules != nil || got.ScalingEfficiency != nil || got.Unavailable != nil {
		t.Errorf("server-side fields must stay nil for the caller:\n%s", gj)
	}
}

func TestCellWindowFromRecords(t *testing.T) {
	// No window given: [earliest start, latest end] of the sent measured records = [5, 21];
	// the never-sent record (offset 0) does not stretch it.
	got := stats.Cell(key, cellRecords(), stats.Window{})
	if got.WindowStartSeconds != 5 || got.WindowSeconds != 16 {
		t.Fatalf("window = [%g, +%g], want [5, +16]", got.WindowStartSeconds, got.WindowSeconds)
	}
	if !near(got.SystemOutputThroughputTPS, 391.0/16) || !near(got.RequestThroughputRPS, 5.0/16) {
		t.Errorf("throughput %g tok/s, %g req/s; want %g, %g", got.SystemOutputThroughputTPS, got.RequestThroughputRPS, 391.0/16, 5.0/16)
	}
}

func TestCellEmpty(t *testing.T) {
	tests := []struct {
		name string
		recs []servebench.Record
	}{
		{"no records at all", nil},
		{"only warm-up records", []servebench.Record{{CellKey: key, Warmup: true, EndOffsetSeconds: 3}}},
		{"only failures", []servebench.Record{{CellKey: key, StartUnixNano: 1, StartOffsetSeconds: 1, EndOffsetSeconds: 2, ErrorClass: servebench.ErrConnect}}},
	}
	for _, tt := range tests {
		c := stats.Cell(key, tt.recs, stats.Window{Start: 0, End: 10})
		if c.SuccessRate != 0 || c.SystemOutputThroughputTPS != 0 || c.TTFTSeconds.Count != 0 || c.InputTokensMean != 0 {
			t.Errorf("%s: %+v", tt.name, c)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Errorf("%s: does not marshal (NaN?): %v", tt.name, err)
		}
	}
}

func BenchmarkCell100k(b *testing.B) {
	recs := make([]servebench.Record, 100_000)
	for i := range recs {
		s := float64(i) * 0.01
		r := ok(s, s+5+float64(i%97)*0.01, 1000+i%7, 100, 0.2+float64(i%13)*0.01, 4+float64(i%31)*0.01)
		r.Chunks = 50
		r.ChunkGapsSeconds = []float64{0.04, 0.05, 0.06}
		r.Warmup = i < 4
		recs[i] = r
	}
	w := stats.Window{Start: 10, End: 990}
	b.ReportAllocs()
	for b.Loop() {
		stats.Cell(key, recs, w)
	}
}

func TestClockOffset(t *testing.T) {
	// the worker is 5 s ahead; 2 ms out, 4 ms back, 1 ms inside the worker
	t1 := int64(1_000_000_000)
	t2 := t1 + 2_000_000 + 5_000_000_000
	t3 := t2 + 1_000_000
	t4 := t3 - 5_000_000_000 + 4_000_000
	off, unc := stats.ClockOffset(t1, t2, t3, t4)
	if math.Abs(off-(5-0.001)) > 1e-9 || math.Abs(unc-0.003) > 1e-9 {
		t.Fatalf("offset %v uncertainty %v, want 4.999 and 0.003", off, unc)
	}
	if math.Abs(off-5) > unc {
		t.Fatalf("the true offset 5 s is outside %v ± %v", off, unc)
	}
	drift, u := stats.ClockAgreement([]servebench.Worker{
		{Clock: []servebench.ClockSample{{OffsetSeconds: 1, UncertaintySeconds: 0.001}, {OffsetSeconds: 1.004, UncertaintySeconds: 0.002}}},
		{Clock: []servebench.ClockSample{{OffsetSeconds: -3, UncertaintySeconds: 0.0005}}},
	})
	if math.Abs(drift-0.004) > 1e-12 || u != 0.002 {
		t.Fatalf("drift %v uncertainty %v, want 0.004 and 0.002", drift, u)
	}
}

// nearP reports whether two optional values are both absent or both present and near.
func nearP(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || near(*a, *b)) }
