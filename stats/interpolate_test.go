package stats_test

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func cellAt(ctx, n int, ttft, speed, tps float64) servebench.CellResult {
	c := servebench.CellResult{
		CellKey:       servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: ctx, OutputTokens: 64, Concurrency: n},
		RequestsTotal: 10, RequestsSucceeded: 10, SystemOutputThroughputTPS: tps,
		TTFTSeconds:                servebench.Summary{Count: 10, Mean: ttft, P90: servebench.Float(2 * ttft), CI95: &servebench.Interval{Low: ttft / 2, High: 2 * ttft}},
		SystemOutputThroughputCI95: &servebench.Interval{Low: tps - 10, High: math.Inf(1)},
	}
	if speed > 0 {
		c.GenerationSpeedTPS = servebench.Summary{Count: 10, Mean: speed, P90: servebench.Float(speed / 2)}
	}
	return c
}

func TestInterpolate(t *testing.T) {
	cells := []servebench.CellResult{
		cellAt(1024, 1, 0.1, 100, 100), cellAt(1024, 4, 0.4, 70, 280),
		cellAt(4096, 1, 0.3, 90, 90), cellAt(4096, 4, 0.9, 0, 240), // no speed measured at 4096/4
		cellAt(4096, 8, 1.5, 40, 320), // 8 is measured only at 4096
	}
	dedicated := cellAt(1024, 2, 9, 9, 9)
	dedicated.LoadMode = servebench.ModeDedicated
	cells = append(cells, dedicated)
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name             string
		ctx, n           int
		st               servebench.Statistic
		measured         bool
		from             int
		ttft, speed, tps *float64
		err              string
	}{
		{"a measured cell is returned as is", 1024, 4, "", true, 1, f(0.4), f(70), f(280), ""},
		{"the statistic is picked", 1024, 4, servebench.StatP90, true, 1, f(0.8), f(35), f(280), ""},
		{"in concurrency: 2 is a third of the way from 1 to 4 (the dedicated cell does not count)", 1024, 2, "", false, 2, f(0.2), f(90), f(160), ""},
		{"in context: 2560 is half way from 1024 to 4096", 2560, 1, "", false, 2, f(0.2), f(95), f(95), ""},
		{"both ways", 2560, 2, "", false, 4, f(0.1 + (0.4-0.1)/3 + 0.5*((0.3+(0.9-0.3)/3)-(0.1+(0.4-0.1)/3))), nil, f(0.5 * (160 + 140)), ""},
		{"outside the contexts", 8192, 1, "", false, 0, nil, nil, nil, "context 8192 is outside the measured range 1024–4096"},
		{"outside one bracketing row's concurrency", 2560, 8, "", false, 0, nil, nil, nil, "concurrency at context 1024 8 is outside the measured range 1–4"},
	}
	for _, tt := range tests {
		r, err := stats.Interpolate(cells, tt.ctx, 64, tt.n, tt.st)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if r.Measured != tt.measured || len(r.From) != tt.from || !nearPtr(r.TTFTSeconds, tt.ttft) || !nearPtr(r.GenerationSpeedTPS, tt.speed) || !nearPtr(r.SystemOutputThroughputTPS, tt.tps) {
			t.Errorf("%s: %+v (ttft %v speed %v tps %v), want measured %v from %d ttft %v speed %v tps %v", tt.name, r, deref(r.TTFTSeconds), deref(r.GenerationSpeedTPS),
				deref(r.SystemOutputThroughputTPS), tt.measured, tt.from, deref(tt.ttft), deref(tt.speed), deref(tt.tps))
		}
	}
	// Intervals: the measured cell's own; interpolated ends; an unbounded end stays unbounded.
	r, _ := stats.Interpolate(cells, 1024, 64, 2, "")
	if ci := r.TTFTSeconds.CI95; ci == nil || math.Abs(ci.Low-0.1) > 1e-9 || math.Abs(ci.High-0.4) > 1e-9 {
		t.Errorf("interpolated TTFT interval %v, want [0.1, 0.4] (ends of [0.05, 0.2] and [0.2, 0.8] a third of the way)", deref(ci))
	}
	if ci := r.SystemOutputThroughputTPS.CI95; ci == nil || math.Abs(ci.Low-150) > 1e-9 || !math.IsInf(ci.High, 1) {
		t.Errorf("interpolated throughput interval %v, want [150, +Inf]", deref(ci))
	}
	if r.GenerationSpeedTPS.CI95 != nil {
		t.Errorf("speed has no interval in the cells, got %v", *r.GenerationSpeedTPS.CI95)
	}
	if _, err := stats.Interpolate(cells, 1024, 128, 1, ""); err == nil || !strings.Contains(err.Error(), "128 output tokens") {
		t.Errorf("another output length: %v", err)
	}
}

func nearPtr(a *stats.Value, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(a.Value-*b) < 1e-9
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// A read value whose cell (or either neighbour) had fewer requests than MinIntervalSamples
// behind an interval carries no interval but says it was withheld (the page writes "n<min"); a
// percentile's interval has its own minimum (MinSamples) and is not withheld again.
func TestInterpolateWithholdsSmallSampleIntervals(t *testing.T) {
	few := cellAt(1024, 4, 0.4, 70, 280)
	few.RequestsSucceeded, few.TTFTSeconds.Count = stats.MinIntervalSamples-1, stats.MinIntervalSamples-1
	few.TTFTSeconds.P90CI95 = &servebench.Interval{Low: 0.5, High: 1}
	cells := []servebench.CellResult{cellAt(1024, 1, 0.1, 100, 100), few}
	for _, tc := range []struct {
		name     string
		n        int
		st       servebench.Statistic
		withheld bool
	}{
		{"the small cell itself", 4, "", true},
		{"between it and a full cell", 2, "", true},
		{"the full cell", 1, "", false},
		{"a percentile of the small cell keeps its own interval", 4, servebench.StatP90, false},
	} {
		r, err := stats.Interpolate(cells, 1024, 64, tc.n, tc.st)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]*stats.Value{"ttft": r.TTFTSeconds, "throughput": r.SystemOutputThroughputTPS} {
			if tc.st != "" && name == "throughput" {
				continue // throughput has no percentile
			}
			if v.CI95Withheld != tc.withheld || (v.CI95 == nil) != tc.withheld {
				t.Errorf("%s: %s interval %v withheld %v, want withheld %v", tc.name, name, deref(v.CI95), v.CI95Withheld, tc.withheld)
			}
		}
	}
}
