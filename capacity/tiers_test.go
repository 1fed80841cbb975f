package capacity

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// usersCell is a population of n users of use case "agent" with mean TTFT ttft (s) and speed
// (tok/s), each with a ±5% interval of its mean.
func usersCell(n int, ttft, speed float64) servebench.CellResult {
	sum := func(v float64) servebench.Summary {
		return servebench.Summary{Count: 100, Mean: v, CI95: &servebench.Interval{Low: 0.95 * v, High: 1.05 * v}}
	}
	return servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindUsers, Scenario: "agent", LoadMode: servebench.ModeUsers, ContextTokens: 65792, Concurrency: n},
		RequestsTotal: 100, RequestsSucceeded: 100, SuccessRate: 1, TTFTSeconds: sum(ttft), GenerationSpeedTPS: sum(speed), SystemOutputThroughputTPS: float64(n) * speed}
}

// tierCells: the populations a users' search measured (4, 8, 16, 24, 25), and cells that are
// not this use case's populations (a capacity level, another use case's population).
func tierCells() []servebench.CellResult {
	cs := []servebench.CellResult{usersCell(4, 1, 120), usersCell(8, 2, 90), usersCell(16, 5, 60), usersCell(24, 10, 35), usersCell(25, 16, 29)}
	bad := usersCell(2, 99, 1)
	bad.Kind, bad.LoadMode = servebench.KindCapacity, servebench.ModeSustained
	other := usersCell(2, 99, 1)
	other.Scenario = "chat"
	return append(cs, bad, other)
}

// Three speed floors under one TTFT ceiling of 15 s give three limits, each decided by hand:
//
//   - 30 tok/s: 24 passes (TTFT 10 s, 35 tok/s), 25 fails (TTFT 16 s > 15, violation 1/15 =
//     0.067; speed 29 < 30, 1/30 = 0.033): measured 24, bound by TTFT, range 24–24;
//   - 100 tok/s: 4 passes (120), 8 fails (90, violation 0.1): interpolated on speed,
//     4 + (100 − 120)/(90 − 120) × 4 = 6.67 → ~6, range 4–7 (both settled: 114–126 ≥ 100,
//     85.5–94.5 < 100);
//   - 150 tok/s: the smallest population, 4, already fails (120 < 150): below 4, not bracketed.
//
// A ceiling of 20 s with a floor of 20 tok/s passes every population: at least 25 users.
func TestUsersTiers(t *testing.T) {
	uc := servebench.UseCase{Name: "agent", Title: "Agent", ContextTokens: 65536, OutputTokens: 256, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(12), E2ELatencySecondsMax: servebench.Float(1)}}
	ev := []servebench.UsersEvidence{{Users: 8, CachedShare: servebench.Float(0.9), TTFTSeconds: 2, GenerationSpeedTPS: 90},
		{Users: 24, Pass: true, CachedShare: servebench.Float(0.8)}, {Users: 25, CachedShare: servebench.Float(0.3), TTFTSeconds: 16}}
	tiers := UsersTiers(&servebench.UsersTiers{TTFTSecondsMax: 15, SpeedsTPSMin: []float64{30, 100, 150}}, uc, 256, tierCells(), ev)
	if len(tiers) != 3 {
		t.Fatalf("%d tiers, want 3", len(tiers))
	}
	t30, t100, t150 := tiers[0], tiers[1], tiers[2]
	if t30.Label != "24" || t30.LimitKind != servebench.LimitMeasured || *t30.LimitRange != [2]int{24, 24} || t30.LimitingMetric != MetricTTFT ||
		*t30.FirstFailing != 25 || t30.Why != "eviction" || t30.Statistic != servebench.StatMean {
		t.Errorf("30 tok/s tier: %+v", t30)
	}
	if !strings.HasPrefix(t30.Verdict, "24 users: 24 passes, and at 25, TTFT reaches 16") {
		t.Errorf("30 tok/s verdict %q", t30.Verdict)
	}
	if t100.Label != "~6" || t100.LimitKind != servebench.LimitInterpolated || *t100.LimitRange != [2]int{4, 7} || t100.LimitingMetric != MetricGenerationSpeed || t100.Why != "batch" {
		t.Errorf("100 tok/s tier: %+v (range %v)", t100, t100.LimitRange)
	}
	if !strings.Contains(t100.Verdict, "About 6 users (95% range 4–7), interpolated between 4, which passes, and 8") {
		t.Errorf("100 tok/s verdict %q", t100.Verdict)
	}
	if t150.Label != "below 4" || t150.Limit != nil || t150.LimitKind != "" || t150.Below == nil || *t150.Below != 4 || t150.LimitingMetric != MetricGenerationSpeed {
		t.Errorf("150 tok/s tier: %+v", t150)
	}
	if !strings.Contains(t150.Verdict, "Fewer than 4 users: the smallest population measured, 4, fails") {
		t.Errorf("150 tok/s verdict %q", t150.Verdict)
	}
	loose := UsersTiers(&servebench.UsersTiers{TTFTSecondsMax: 20, SpeedsTPSMin: []float64{20}}, uc, 256, tierCells(), ev)
	if l := loose[0]; l.Label != "25+" || l.LimitKind != servebench.LimitLowerBound || *l.Limit != 25 || l.Why != "" ||
		!strings.Contains(l.Verdict, "At least 25 users: every population measured passes, the largest 25") {
		t.Errorf("20 tok/s, 20 s tier: %+v", l)
	}
	if UsersTiers(nil, uc, 256, tierCells(), ev) != nil {
		t.Error("no tiers planned, tiers decided")
	}
}

// The what-if of a users' limit: at the run's own thresholds it decides what the search did;
// a stricter threshold moves it, and a use case with no population says so.
func TestReconsiderUsers(t *testing.T) {
	uc := servebench.UseCase{Name: "agent", Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(12)}}
	r := ReconsiderUsers(uc, 256, tierCells())
	// 24 passes (10 s), 25 fails (16 s)
	if !r.Decided || r.Label != "24" || r.ContextTokens != 65792 || len(r.Points) != 5 {
		t.Errorf("at the run's thresholds: %+v", r)
	}
	uc.Thresholds.TTFTSecondsMax = servebench.Float(1.5)
	// 4 passes (1 s), 8 fails (2 s): TTFT linear, 4 + (1.5 − 1)/(2 − 1) × 4 = 6
	if r := ReconsiderUsers(uc, 256, tierCells()); r.Label != "~6" {
		t.Errorf("TTFT ≤ 1.5 s: %s (%s)", r.Label, r.Verdict)
	}
	// A plateau at the floor (the users' search's resolution): 229 settles (24 tok/s), 244 and
	// 260 sit within their ±5% of 15 tok/s: interpolated, the verdicts said unsettled, and the
	// range to the ceiling said why.
	flat := []servebench.CellResult{usersCell(229, 0.4, 24), usersCell(244, 1.6, 15.3), usersCell(260, 4.5, 14.7)}
	sp := servebench.UseCase{Name: "agent", Statistic: servebench.StatMean, Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}
	if r := ReconsiderUsers(sp, 512, flat); r.Label != "~252" || *r.LimitRange != [2]int{229, 512} ||
		!strings.Contains(r.Verdict, "at 244 and 260 the verdict did not settle") || !strings.Contains(r.Verdict, "ceiling of 512 because no failing population's verdict settled") {
		t.Errorf("a plateau at the floor: %s %v (%s)", r.Label, r.LimitRange, r.Verdict)
	}
	// The search's other ending: 244 passes within its noise and the model through 229 and 244
	// crosses 15 tok/s at 244.8, before 260: about 244, no failing population, the same verdict
	// as the users' search's (DecideWithin at UsersResolution). A floor of 10 tok/s clears
	// 244's noise: at least 244.
	two := flat[:2]
	if r := ReconsiderUsers(sp, 512, two); r.Label != "~244" || r.Crossing == nil || *r.LimitRange != [2]int{229, 512} ||
		!strings.Contains(r.Verdict, "crosses at 244.8 users") || !strings.Contains(r.Verdict, "no failing population was measured") {
		t.Errorf("a crossing within the resolution: %s %v (%s)", r.Label, r.LimitRange, r.Verdict)
	}
	sp.Thresholds.GenerationSpeedTPSMin = servebench.Float(10)
	if r := ReconsiderUsers(sp, 512, two); r.Label != "244+" || r.Crossing != nil {
		t.Errorf("a floor 244 clears: %s (%s)", r.Label, r.Verdict)
	}
	uc.Name = "docs"
	if r := ReconsiderUsers(uc, 256, tierCells()); r.Decided || r.Label != LabelNotMeasured || !strings.Contains(r.Verdict, "no population of users for docs") {
		t.Errorf("no population: %+v", r)
	}
}
