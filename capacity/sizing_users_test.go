package capacity

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// A use case with a users' limit is sized from it (no users per slot applied), its cost per 1M
// tokens from the throughput of the population at the limit; one without falls back to the
// cold-prompt limit × users per slot and says why; a run with no population is sized as before.
func TestSizeFromUsersLimit(t *testing.T) {
	cold := func(name string, limit int) servebench.CapacityResult {
		return servebench.CapacityResult{UseCase: name, Title: name, LimitKind: servebench.LimitMeasured, Limit: servebench.Int(limit),
			FirstFailing: servebench.Int(limit + 1),
			Points:       []servebench.CapacityPoint{{Concurrency: limit, Pass: true, CellID: "cold-" + name, Values: map[string]float64{MetricSystemThroughput: 200}}}}
	}
	chat := servebench.UsersCapacity{Profile: "chat", CapacityResult: servebench.CapacityResult{UseCase: "chat", Title: "Chat",
		LimitKind: servebench.LimitMeasured, Limit: servebench.Int(37), FirstFailing: servebench.Int(38), LimitRange: &[2]int{35, 37},
		Points: []servebench.CapacityPoint{
			{Concurrency: 24, Pass: true, CellID: "u24", Values: map[string]float64{MetricSystemThroughput: 300}},
			{Concurrency: 37, Pass: true, CellID: "u37", Values: map[string]float64{MetricSystemThroughput: 450}},
			{Concurrency: 38, Pass: false, CellID: "u38", Values: map[string]float64{MetricSystemThroughput: 455}},
		}}}
	// the agent's search was interrupted: its use case falls back to the cold-prompt limit
	agent := servebench.UsersCapacity{Profile: "agent", CapacityResult: servebench.CapacityResult{UseCase: "agent", Title: "Agent",
		LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(8), Interrupted: true}}
	in := SizingInput{Plan: servebench.SizingPlan{UsersPerSlot: 4, TargetUsers: []int{100, 1000}, GPUUSDPerHour: 3},
		DeclaredGPU: "2x H200", Users: []servebench.UsersCapacity{chat, agent}}
	s := Size([]servebench.CapacityResult{cold("chat", 6), cold("agent", 3), cold("docs", 5)}, in)
	if len(s.UseCases) != 3 {
		t.Fatalf("%d use cases sized, want 3", len(s.UseCases))
	}
	c := s.UseCases[0]
	// 37 users per replica (not 6 × 4 = 24); 100 users → ⌈2.70⌉ = 3 replicas = 6 GPUs, 1,000 → ⌈27.03⌉ = 28 = 56 GPUs.
	if c.Basis != SizeBasisUsers || c.UsersLimit == nil || *c.UsersLimit != 37 || !near(*c.UsersPerReplica, 37) || c.UsersProfile != "chat" {
		t.Fatalf("chat sized %+v, want from the users' limit of 37", c)
	}
	if c.SlotsPerReplica == nil || *c.SlotsPerReplica != 6 {
		t.Errorf("chat's slots per replica %v, want the cold-prompt limit 6 beside it", c.SlotsPerReplica)
	}
	for i, w := range []struct{ replicas, gpus int }{{3, 6}, {28, 56}} {
		g := c.Targets[i]
		if g.Replicas != w.replicas || g.GPUs != w.gpus || !near(*g.MonthlyUSD, float64(w.gpus)*3*730) {
			t.Errorf("chat target %d = %+v, want %d replicas, %d GPUs", i, g, w.replicas, w.gpus)
		}
	}
	// 2 GPUs × $3/h ÷ (450 tok/s × 3,600 s) × 10⁶ = $3.7037 per 1M output tokens, at the population of 37
	if c.ThroughputConcurrency != 37 || !near(*c.HardwareUSDPerMillionOutputTokens, 2*3/(450*3600.0)*1e6) {
		t.Errorf("chat cost at %d users: %v, want $3.7037 at 37", c.ThroughputConcurrency, c.HardwareUSDPerMillionOutputTokens)
	}
	a := s.UseCases[1]
	if a.Basis != SizeBasisCold || a.BasisNote != "users' search interrupted" || !near(*a.UsersPerReplica, 12) {
		t.Errorf("agent sized %+v, want the cold-prompt 3 × 4 = 12 users, saying its users' search was interrupted", a)
	}
	d := s.UseCases[2]
	if d.Basis != SizeBasisCold || d.BasisNote != "not searched in users" || !near(*d.UsersPerReplica, 20) {
		t.Errorf("docs sized %+v, want the cold-prompt 5 × 4 = 20 users, its users' limit not measured", d)
	}
	// no population: no basis at all, as before
	in.Users = nil
	plain := Size([]servebench.CapacityResult{cold("chat", 6)}, in)
	if p := plain.UseCases[0]; p.Basis != "" || p.BasisNote != "" || p.UsersLimit != nil || !near(*p.UsersPerReplica, 24) {
		t.Errorf("without populations: %+v, want 6 × 4 = 24 users and no basis", p)
	}
}

// A users' lower bound sizes "at most"; a users' limit of not viable sizes nothing and says
// what 1 user measured; a use case searched in users only is sized too.
func TestSizeFromUsersBounds(t *testing.T) {
	uc := servebench.Thresholds{TTFTSecondsMax: servebench.Float(2)}
	low := servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "a", LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(64),
		Points: []servebench.CapacityPoint{{Concurrency: 64, Pass: true, Values: map[string]float64{MetricSystemThroughput: 900}}}}}
	nv := servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "b", LimitKind: servebench.LimitNotViable, FirstFailing: servebench.Int(1),
		Statistic: servebench.StatMean, Thresholds: uc,
		Points: []servebench.CapacityPoint{{Concurrency: 1, Failing: []string{MetricTTFT}, Values: map[string]float64{MetricTTFT: 3}}}}}
	only := servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "c", LimitKind: servebench.LimitInterpolated, Limit: servebench.Int(10),
		Points: []servebench.CapacityPoint{{Concurrency: 8, Pass: true}, {Concurrency: 16}}}}
	s := Size([]servebench.CapacityResult{{UseCase: "a", LimitKind: servebench.LimitMeasured, Limit: servebench.Int(4)}, {UseCase: "b", LimitKind: servebench.LimitMeasured, Limit: servebench.Int(2)}},
		SizingInput{Plan: servebench.SizingPlan{TargetUsers: []int{100}}, Users: []servebench.UsersCapacity{low, nv, only}})
	if len(s.UseCases) != 3 {
		t.Fatalf("%d use cases sized, want 3", len(s.UseCases))
	}
	if a := s.UseCases[0]; !a.AtMost || a.Targets[0].Replicas != 2 { // ⌈100 / 64⌉
		t.Errorf("lower bound sized %+v, want at most 2 replicas", a)
	}
	if b := s.UseCases[1]; b.UsersPerReplica != nil || !strings.Contains(b.Note, "even 1 user fails") || !strings.Contains(b.Note, "TTFT reaches 3") {
		t.Errorf("not viable sized %+v", b)
	}
	if c := s.UseCases[2]; c.Basis != SizeBasisUsers || !c.Approximate || c.SlotsPerReplica != nil || c.Targets[0].Replicas != 10 {
		t.Errorf("users-only use case sized %+v, want ~10 users per replica, 10 replicas", c)
	}
}

// Sizable: what Size can size, so that every caller builds a sizing for the same runs.
func TestSizable(t *testing.T) {
	decided := servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "a", LimitKind: servebench.LimitMeasured, Limit: servebench.Int(9)}}
	skipped := servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "a", Skipped: true}}
	cold := []servebench.CapacityResult{{UseCase: "a"}}
	for _, tc := range []struct {
		name  string
		caps  []servebench.CapacityResult
		users []servebench.UsersCapacity
		want  bool
	}{
		{"nothing searched", nil, nil, false},
		{"a cold-prompt search", cold, nil, true},
		{"searched only in users, decided", nil, []servebench.UsersCapacity{decided}, true},
		{"searched only in users, skipped", nil, []servebench.UsersCapacity{skipped}, false},
		{"both", cold, []servebench.UsersCapacity{decided}, true},
	} {
		if got := Sizable(tc.caps, tc.users); got != tc.want {
			t.Errorf("%s: Sizable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
