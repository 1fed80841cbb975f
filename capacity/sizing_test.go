package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

func TestGPUsDeclared(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		isOK bool
	}{
		{"2x RTX Pro 6000", 2, true},
		{"1x H100 SXM", 1, true},
		{"8 × H100", 8, true},    // multiplication sign and spaces
		{"4*A100 80GB", 4, true}, // asterisk
		{"H100 SXM", 0, false},   // no count written
		{"", 0, false},
		{"0x H100", 0, false}, // zero GPUs is not a count
		{"RTX 6000", 0, false},
	} {
		n, ok := GPUsDeclared(tc.in)
		if n != tc.n || ok != tc.isOK {
			t.Errorf("GPUsDeclared(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.isOK)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSizeArithmetic(t *testing.T) {
	measured := servebench.CapacityResult{UseCase: "chat", Title: "Chat", LimitKind: servebench.LimitMeasured,
		Limit: servebench.Int(24), FirstFailing: servebench.Int(25),
		Points: []servebench.CapacityPoint{
			{Concurrency: 16, Pass: true, CellID: "c16", Values: map[string]float64{MetricSystemThroughput: 400}},
			{Concurrency: 24, Pass: true, CellID: "c24", Values: map[string]float64{MetricSystemThroughput: 500}},
			{Concurrency: 25, Pass: false, CellID: "c25", Values: map[string]float64{MetricSystemThroughput: 510}},
		}}
	cells := []servebench.CellResult{{CellKey: servebench.CellKey{Scenario: "x"}}}
	in := SizingInput{
		Plan:        servebench.SizingPlan{UsersPerSlot: 5, TargetUsers: []int{100, 1000, 120}, GPUUSDPerHour: 2.5},
		DeclaredGPU: "2x RTX Pro 6000",
		Cells:       cells,
	}
	s := Size([]servebench.CapacityResult{measured}, in)
	if s.GPUsPerReplica != 2 || !strings.Contains(s.GPUsPerReplicaSource, "2x RTX Pro 6000") {
		t.Fatalf("GPUs per replica = %d (%s), want 2 from the declared GPU", s.GPUsPerReplica, s.GPUsPerReplicaSource)
	}
	u := s.UseCases[0]
	// 24 slots × 5 users = 120 users per replica.
	if *u.SlotsPerReplica != 24 || !near(*u.UsersPerReplica, 120) {
		t.Fatalf("slots %d users/replica %v, want 24 and 120", *u.SlotsPerReplica, *u.UsersPerReplica)
	}
	want := []struct{ users, replicas, gpus int }{
		{100, 1, 2},   // 100/120 → 1 replica
		{1000, 9, 18}, // 1000/120 = 8.33 → 9
		{120, 1, 2},   // exactly one replica's worth, no rounding up
	}
	for i, w := range want {
		got := u.Targets[i]
		if got.Users != w.users || got.Replicas != w.replicas || got.GPUs != w.gpus {
			t.Errorf("target %d = %+v, want %+v", i, got, w)
		}
		// GPUs × $2.5 × 730 h
		if m := float64(w.gpus) * 2.5 * 730; got.MonthlyUSD == nil || !near(*got.MonthlyUSD, m) {
			t.Errorf("target %d monthly = %v, want %v", i, got.MonthlyUSD, m)
		}
	}
	// 2 GPUs × $2.5/h = $5/h over 500 tok/s × 3600 s = 1.8M tokens/h → $2.777…/1M.
	if u.ThroughputConcurrency != 24 || !near(*u.HardwareUSDPerMillionOutputTokens, 5.0/1.8) {
		t.Errorf("hardware $/1M = %v at %d, want %v at 24", *u.HardwareUSDPerMillionOutputTokens, u.ThroughputConcurrency, 5.0/1.8)
	}
	if u.ElectricityUSDPerMillionOutputTokens != nil || !near(*u.TotalUSDPerMillionOutputTokens, 5.0/1.8) {
		t.Errorf("total without energy should equal hardware: %v", *u.TotalUSDPerMillionOutputTokens)
	}
	if u.AtMost || u.Approximate {
		t.Errorf("a measured limit is neither an upper bound nor approximate: %+v", u)
	}
}

func TestSizeElectricityAddsToHardware(t *testing.T) {
	key := servebench.CellKey{Scenario: "capacity", ContextTokens: 1024, OutputTokens: 128, Concurrency: 8}
	cell := servebench.CellResult{CellKey: key, EnergyJoules: &servebench.Energy{CostUSDPerMillionOutputTokens: 0.25}}
	r := servebench.CapacityResult{UseCase: "a", LimitKind: servebench.LimitMeasured, Limit: servebench.Int(8),
		Points: []servebench.CapacityPoint{{Concurrency: 8, Pass: true, CellID: key.ID(), Values: map[string]float64{MetricSystemThroughput: 1000}}}}
	s := Size([]servebench.CapacityResult{r}, SizingInput{Plan: servebench.SizingPlan{GPUUSDPerHour: 3.6}, Cells: []servebench.CellResult{cell}})
	u := s.UseCases[0]
	// 1 GPU (default) × $3.6/h / (1000 × 3600) × 1e6 = $1.00 hardware + $0.25 electricity.
	if s.GPUsPerReplica != 1 || s.GPUsPerReplicaSource != "default" {
		t.Fatalf("GPUs per replica %d (%s), want the default 1", s.GPUsPerReplica, s.GPUsPerReplicaSource)
	}
	if !near(*u.HardwareUSDPerMillionOutputTokens, 1) || !near(*u.ElectricityUSDPerMillionOutputTokens, 0.25) || !near(*u.TotalUSDPerMillionOutputTokens, 1.25) {
		t.Errorf("costs hw %v el %v total %v, want 1, 0.25, 1.25", *u.HardwareUSDPerMillionOutputTokens, *u.ElectricityUSDPerMillionOutputTokens, *u.TotalUSDPerMillionOutputTokens)
	}
	// defaults: 4 users per slot and the 100 / 1,000 / 10,000 ladder; 8 × 4 = 32 users per replica.
	if s.UsersPerSlot != 4 || len(u.Targets) != 3 || u.Targets[2].Replicas != 313 {
		t.Errorf("defaults: users/slot %v, targets %+v; want 4 and 10,000 users → 313 replicas", s.UsersPerSlot, u.Targets)
	}
	if u.Targets[0].MonthlyUSD == nil || !near(*u.Targets[0].MonthlyUSD, 4*3.6*730) {
		t.Errorf("100 users → 4 replicas × $3.6 × 730 h, got %v", u.Targets[0].MonthlyUSD)
	}
}

func TestSizeBoundsAndNotViable(t *testing.T) {
	lower := servebench.CapacityResult{UseCase: "lb", LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(128), Ceiling: 128,
		Points: []servebench.CapacityPoint{{Concurrency: 128, Pass: true, Values: map[string]float64{MetricSystemThroughput: 2000}}}}
	interp := servebench.CapacityResult{UseCase: "ip", LimitKind: servebench.LimitInterpolated, Limit: servebench.Int(35), FirstFailing: servebench.Int(48),
		Points: []servebench.CapacityPoint{
			{Concurrency: 32, Pass: true, Values: map[string]float64{MetricSystemThroughput: 800}},
			{Concurrency: 48, Pass: false, Values: map[string]float64{MetricSystemThroughput: 900}},
		}}
	notViable := servebench.CapacityResult{UseCase: "nv", LimitKind: servebench.LimitNotViable, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(8), GenerationSpeedTPSMin: servebench.Float(15)},
		Points: []servebench.CapacityPoint{{Concurrency: 1, Pass: false, Failing: []string{MetricTTFT},
			Values: map[string]float64{MetricTTFT: 14.2, MetricGenerationSpeed: 40}}}}
	skipped := servebench.CapacityResult{UseCase: "sk", Skipped: true, LimitKind: servebench.LimitNotViable, Note: "skipped: context above the model's maximum"}
	s := Size([]servebench.CapacityResult{lower, interp, notViable, skipped}, SizingInput{Plan: servebench.SizingPlan{GPUUSDPerHour: 2}})

	if u := s.UseCases[0]; !u.AtMost || u.Targets[2].Replicas != 20 { // 10,000 / (128 × 4) = 19.5 → at most 20
		t.Errorf("lower bound: at most %v, replicas %d; want at most 20", u.AtMost, u.Targets[2].Replicas)
	}
	u := s.UseCases[1]
	// throughput of the interpolated limit comes from the highest passing level below it (32).
	if !u.Approximate || u.ThroughputConcurrency != 32 || !near(*u.HardwareUSDPerMillionOutputTokens, 2/(800*3600.0)*1e6) {
		t.Errorf("interpolated: %+v", u)
	}
	nv := s.UseCases[2]
	if nv.SlotsPerReplica != nil || len(nv.Targets) != 0 {
		t.Errorf("not viable must have no size: %+v", nv)
	}
	for _, want := range []string{"Not viable", "TTFT reaches 14.2 seconds", "TTFT at most 14.2 seconds", "TTFT at most 8.0 seconds at 1 request"} {
		if !strings.Contains(nv.Note, want) {
			t.Errorf("not-viable note lacks %q:\n%s", want, nv.Note)
		}
	}
	if sk := s.UseCases[3]; !strings.HasPrefix(sk.Note, "Not sized: skipped") || sk.Targets != nil {
		t.Errorf("skipped: %+v", sk)
	}
}
