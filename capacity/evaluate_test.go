package capacity_test

import (
	"slices"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func TestEvaluate(t *testing.T) {
	general := useCase("general_chatbot") // TTFT ≤ 8 s, speed ≥ 15 tok/s
	p99 := general
	p99.Statistic = servebench.StatP99
	itl := servebench.UseCase{Name: "itl", Thresholds: servebench.Thresholds{ITLSecondsMax: servebench.Float(0.05)}}
	key := servebench.CellKey{Scenario: "general_chatbot", LoadMode: servebench.ModeSustained, ContextTokens: 32768, OutputTokens: 1024, Concurrency: 6}
	cell := func(ttft, speed, rate float64) servebench.CellResult {
		c := servebench.CellResult{CellKey: key, RequestsTotal: 100, SuccessRate: rate, SystemOutputThroughputTPS: 321}
		if ttft >= 0 {
			c.TTFTSeconds = flat(ttft) // p99 = 1.5 × mean
		}
		if speed >= 0 {
			c.GenerationSpeedTPS = servebench.Summary{Count: 10, Mean: speed, P99: servebench.Float(speed / 2)}
		}
		return c
	}
	tests := []struct {
		name    string
		uc      servebench.UseCase
		c       servebench.CellResult
		pass    bool
		failing []string
		values  map[string]float64
	}{
		{"everything holds at the mean", general, cell(4, 40, 1), true, nil,
			map[string]float64{"ttft_seconds": 4, "generation_speed_tps": 40, "success_rate": 1, "system_output_throughput_tps": 321}},
		{"values exactly at both thresholds hold", general, cell(8, 15, 0.99), true, nil,
			map[string]float64{"ttft_seconds": 8, "generation_speed_tps": 15, "success_rate": 0.99, "system_output_throughput_tps": 321}},
		{"TTFT over", general, cell(8.01, 40, 1), false, []string{"ttft_seconds"}, nil},
		{"speed under", general, cell(4, 14.9, 1), false, []string{"generation_speed_tps"}, nil},
		{"both fail, listed in fixed order", general, cell(20, 5, 1), false, []string{"ttft_seconds", "generation_speed_tps"}, nil},
		{"p99 picks the tail: mean passes, p99 TTFT 1.5×6 = 9 and p99 speed 40/2 = 20", p99, cell(6, 40, 1), false,
			[]string{"ttft_seconds"}, map[string]float64{"ttft_seconds": 9, "generation_speed_tps": 20, "success_rate": 1, "system_output_throughput_tps": 321}},
		{"p99 speed under while the mean is fine", p99, cell(1, 28, 1), false, []string{"generation_speed_tps"}, nil},
		{"success rate 98 % fails alone", general, cell(4, 40, 0.98), false, []string{"success_rate"}, nil},
		{"missing speed (no measurable request) fails and has no value", general, cell(4, -1, 1), false,
			[]string{"generation_speed_tps"}, map[string]float64{"ttft_seconds": 4, "success_rate": 1, "system_output_throughput_tps": 321}},
		{"missing ITL fails", itl, cell(4, 40, 1), false, []string{"itl_seconds"}, nil},
	}
	for _, tt := range tests {
		p := capacity.Evaluate(tt.uc, tt.c)
		if p.Pass != tt.pass || !slices.Equal(p.Failing, tt.failing) {
			t.Errorf("%s: pass %v failing %v, want %v %v", tt.name, p.Pass, p.Failing, tt.pass, tt.failing)
		}
		if tt.values != nil && !mapsEqual(p.Values, tt.values) {
			t.Errorf("%s: values %v, want %v", tt.name, p.Values, tt.values)
		}
		if p.Concurrency != 6 || p.CellID != key.ID() || p.Reused {
			t.Errorf("%s: point header %+v", tt.name, p)
		}
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
