package stats_test

import (
	"math"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func f(v float64) *float64 { return &v }

func reading(sec float64, watts []float64, joules ...*float64) servebench.PowerReading {
	return servebench.PowerReading{AtSeconds: sec, Watts: watts, EnergyJoules: joules}
}

func TestPower(t *testing.T) {
	cases := []struct {
		name               string
		rs                 []servebench.PowerReading
		tokens             int
		joules, mean, peak float64
		source             string
	}{
		// two GPUs with energy counters: (1300−1000) + (700−500) J over 2 s
		{"counter", []servebench.PowerReading{
			reading(0, []float64{100, 90}, f(1000), f(500)),
			reading(1, []float64{160, 110}, f(1150), f(600)),
			reading(2, []float64{140, 100}, f(1300), f(700)),
		}, 1000, 500, 250, 270, "energy-counter"},
		// no counter: trapezoids (100+200)/2·1 + (200+300)/2·1 = 400 J over 2 s
		{"integrated", []servebench.PowerReading{reading(0, []float64{100}), reading(1, []float64{200}), reading(2, []float64{300})},
			400, 400, 200, 300, "integrated-power"},
		// a counter that went down (driver reload) falls back to integration
		{"reset", []servebench.PowerReading{reading(0, []float64{100}, f(5000)), reading(4, []float64{100}, f(10))},
			0, 400, 100, 100, "integrated-power"},
		// one GPU without a counter: integration
		{"partial", []servebench.PowerReading{reading(0, []float64{100, 100}, f(0), nil), reading(2, []float64{100, 100}, f(200), nil)},
			0, 400, 200, 200, "integrated-power"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, e, why := stats.Power(c.rs, 2*time.Second, c.tokens, 0.10, "test")
			if p == nil || e == nil {
				t.Fatalf("nil: %s", why)
			}
			if e.Joules != c.joules || p.MeanWatts != c.mean || p.PeakWatts != c.peak || e.Source != c.source {
				t.Fatalf("joules %v mean %v peak %v source %s", e.Joules, p.MeanWatts, p.PeakWatts, e.Source)
			}
			if want := c.mean / 1000 * 0.10; math.Abs(e.CostUSDPerHour-want) > 1e-12 {
				t.Errorf("cost/hour %v want %v", e.CostUSDPerHour, want)
			}
			if c.tokens > 0 {
				if e.JoulesPerOutputToken != c.joules/float64(c.tokens) {
					t.Errorf("J/token %v", e.JoulesPerOutputToken)
				}
				if want := c.joules / 3.6e6 * 0.10 / float64(c.tokens) * 1e6; math.Abs(e.CostUSDPerMillionOutputTokens-want) > 1e-12 {
					t.Errorf("cost per 1M tokens %v want %v", e.CostUSDPerMillionOutputTokens, want)
				}
			} else if e.JoulesPerOutputToken != 0 {
				t.Error("no tokens: no per-token figures")
			}
		})
	}
	if p, e, why := stats.Power([]servebench.PowerReading{reading(0, []float64{1})}, time.Second, 1, 0.1, "x"); p != nil || e != nil || why == "" {
		t.Fatal("one reading cannot give energy")
	}
}

func TestWindowReadings(t *testing.T) {
	var rs []servebench.PowerReading
	for i := range 10 {
		rs = append(rs, reading(float64(i), []float64{1}))
	}
	// [2.5, 5.5]: inside 3, 4, 5 plus 2 before and 6 after
	got := stats.WindowReadings(rs, 2.5, 5.5)
	if len(got) != 5 || got[0].AtSeconds != 2 || got[4].AtSeconds != 6 {
		t.Fatalf("%+v", got)
	}
}

func TestServerMean(t *testing.T) {
	// Δsum 6 s over Δcount 12 requests: 0.5 s
	v := stats.ServerMean(&servebench.HistogramDelta{Metric: "vllm:request_queue_time_seconds", Sum: 6, Count: 12})
	if v == nil || v.Mean != 0.5 || v.Requests != 12 || v.Source != "prometheus:vllm:request_queue_time_seconds" {
		t.Fatalf("%+v", v)
	}
	if stats.ServerMean(&servebench.HistogramDelta{Count: 0}) != nil || stats.ServerMean(nil) != nil {
		t.Fatal("no observation: no mean")
	}
}
