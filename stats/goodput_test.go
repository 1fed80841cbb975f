package stats_test

import (
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func TestMeetsSLO(t *testing.T) {
	f := servebench.Float
	ok := servebench.Record{TTFTSeconds: 0.5, FirstContentSeconds: 1.5, E2ELatencySeconds: 5, OutputTokens: 101, DecodeSeconds: 4, ITLSeconds: 0.04, GenerationSpeedTPS: 25}
	one := servebench.Record{TTFTSeconds: 0.5, E2ELatencySeconds: 0.5, OutputTokens: 1}
	failed := ok
	failed.ErrorClass = servebench.ErrTimeoutIdle
	tests := []struct {
		name string
		rec  servebench.Record
		slo  servebench.Thresholds
		want bool
	}{
		{"no objectives", ok, servebench.Thresholds{}, true},
		{"failure never meets", failed, servebench.Thresholds{}, false},
		{"ttft at the limit", ok, servebench.Thresholds{TTFTSecondsMax: f(0.5)}, true},
		{"ttft above", ok, servebench.Thresholds{TTFTSecondsMax: f(0.49)}, false},
		{"first answer", ok, servebench.Thresholds{FirstContentSecondsMax: f(1)}, false},
		{"first answer = ttft without reasoning", one, servebench.Thresholds{FirstContentSecondsMax: f(0.5)}, true},
		{"itl", ok, servebench.Thresholds{ITLSecondsMax: f(0.05)}, true},
		{"itl above", ok, servebench.Thresholds{ITLSecondsMax: f(0.03)}, false},
		{"speed below", ok, servebench.Thresholds{GenerationSpeedTPSMin: f(30)}, false},
		{"one token has no itl to miss", one, servebench.Thresholds{ITLSecondsMax: f(0.001), GenerationSpeedTPSMin: f(1e6)}, true},
		{"e2e", ok, servebench.Thresholds{E2ELatencySecondsMax: f(4.9)}, false},
	}
	for _, tt := range tests {
		if got := servebench.MeetsSLO(&tt.rec, tt.slo); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestGoodput(t *testing.T) {
	k := servebench.CellKey{LoadMode: servebench.ModeRate, RatePerSecond: 2}
	rec := func(start, ttft, e2e float64, warm bool, class servebench.ErrorClass) servebench.Record {
		return servebench.Record{CellKey: k, Warmup: warm, StartUnixNano: 1, StartOffsetSeconds: start, EndOffsetSeconds: start + e2e,
			TTFTSeconds: ttft, E2ELatencySeconds: e2e, OutputTokens: 1, ErrorClass: class}
	}
	recs := []servebench.Record{
		rec(0, 0.2, 1, false, ""),
		rec(0.5, 0.4, 1, false, ""),
		rec(1, 0.9, 1.2, false, ""),                       // misses ttft
		rec(1.5, 0.1, 1, false, servebench.ErrHTTPStatus), // failed: misses
		rec(2, 0.1, 9, false, ""),                         // meets, ends outside the window
		rec(0, 0.1, 1, true, ""),                          // warm-up: ignored
	}
	c := servebench.CellResult{CellKey: k, WindowStartSeconds: 0, WindowSeconds: 4}
	stats.Goodput(&c, recs, servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.5)})
	if c.Goodput == nil || *c.Goodput != 3.0/5 || c.GoodputRPS == nil || *c.GoodputRPS != 2.0/4 {
		t.Errorf("goodput %v rps %v, want 0.6 and 0.5", ptrV(c.Goodput), ptrV(c.GoodputRPS))
	}
	empty := servebench.CellResult{}
	stats.Goodput(&empty, recs[5:], servebench.Thresholds{})
	if empty.Goodput != nil || empty.GoodputRPS != nil {
		t.Error("no measured requests and no window: goodput must stay nil")
	}
}

func TestOpenLoopSaturation(t *testing.T) {
	k := servebench.CellKey{LoadMode: servebench.ModeRate, RatePerSecond: 2}
	mk := func(e2e func(i int) float64) []servebench.Record {
		var out []servebench.Record
		for i := range 10 {
			s := 0.5 * float64(i)
			out = append(out, servebench.Record{CellKey: k, StartUnixNano: 1, StartOffsetSeconds: s, EndOffsetSeconds: s + e2e(i), E2ELatencySeconds: e2e(i), OutputTokens: 1})
		}
		// one scheduled but never sent: not a send
		return append(out, servebench.Record{CellKey: k, ErrorClass: servebench.ErrCanceled})
	}
	steady := servebench.CellResult{CellKey: k}
	stats.OpenLoop(&steady, mk(func(i int) float64 { return 1 + 0.01*float64(i%3) }))
	if steady.AchievedRatePerSecond != 2 || steady.Saturated {
		t.Errorf("steady: achieved %v saturated %v, want 2 and false", steady.AchievedRatePerSecond, steady.Saturated)
	}
	growing := servebench.CellResult{CellKey: k}
	stats.OpenLoop(&growing, mk(func(i int) float64 { return 1 + 0.5*float64(i) }))
	if !growing.Saturated {
		t.Error("latency growing with every arrival (the queue grows): not flagged saturated")
	}
	late := servebench.CellResult{CellKey: k, LateSends: 3}
	stats.OpenLoop(&late, mk(func(int) float64 { return 1 }))
	if !late.Saturated {
		t.Error("3 of 10 sends late: not flagged saturated")
	}
	one := servebench.CellResult{CellKey: k, LateSends: 1}
	if stats.OpenLoop(&one, mk(func(int) float64 { return 1 })); one.Saturated {
		t.Error("1 late send of 10 (a scheduling hiccup) flagged saturated")
	}
	closed := servebench.CellResult{CellKey: servebench.CellKey{LoadMode: servebench.ModeSustained}}
	stats.OpenLoop(&closed, mk(func(int) float64 { return 100 }))
	if closed.Saturated || closed.AchievedRatePerSecond != 0 {
		t.Error("a closed-loop cell has no requested rate to miss")
	}
}

func ptrV(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
