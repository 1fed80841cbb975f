package frontier

import (
	"math"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// cell is a sweep cell at 8K in / 2K out with the given level, mean per-user speed, system
// output throughput and mean TTFT.
func cell(conc int, speed, tps, ttft float64, v servebench.Verdict) servebench.CellResult {
	c := servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeSustained,
		ContextTokens: 8192, OutputTokens: 2048, Concurrency: conc}}
	c.RequestsTotal, c.RequestsSucceeded = 10, 10
	c.GenerationSpeedTPS = servebench.Summary{Count: 10, Mean: speed}
	c.TTFTSeconds = servebench.Summary{Count: 10, Mean: ttft}
	c.SystemOutputThroughputTPS = tps
	c.TotalThroughputTPS = 5 * tps
	c.SystemOutputThroughputCI95 = &servebench.Interval{Low: 0.9 * tps, High: 1.1 * tps}
	c.Validity.Verdict = v
	return c
}

func testCells() []servebench.CellResult {
	return []servebench.CellResult{
		cell(1, 200, 200, 0.5, servebench.VerdictValid),
		cell(4, 150, 600, 1.0, servebench.VerdictValid),
		// dominated: slower per user than c=4 and less throughput
		cell(6, 140, 500, 1.2, servebench.VerdictValid),
		cell(8, 100, 800, 3.0, servebench.VerdictLowConfidence),
		// invalid: would dominate everything, but an invalid cell never stands on the frontier
		cell(12, 300, 5000, 0.1, servebench.VerdictInvalid),
		cell(16, 60, 960, 12.0, servebench.VerdictValid),
	}
}

func TestCurvesAndPareto(t *testing.T) {
	h := Resolve(servebench.SizingPlan{}, "4x B200")
	cvs := Curves(testCells(), h)
	if len(cvs) != 1 {
		t.Fatalf("%d curves, want 1", len(cvs))
	}
	want := map[int]bool{1: true, 4: true, 6: false, 8: true, 12: false, 16: true}
	for _, p := range cvs[0].Points {
		if p.Pareto != want[p.Concurrency] {
			t.Errorf("c=%d: pareto %v, want %v", p.Concurrency, p.Pareto, want[p.Concurrency])
		}
	}
	// per GPU: 960 tok/s on 4 GPUs is 240, its interval divided alike, input = (total − output) / 4
	last := cvs[0].Points[0] // slowest first: c=16 at 60 tok/s
	if last.Concurrency != 16 || last.OutputTPSPerGPU != 240 || last.OutputTPSPerGPUCI95.Low != 216 || last.InputTPSPerGPU != 960 {
		t.Errorf("c=16 point = %+v", last)
	}
	// priced at the B200 rental default first: 240 tok/s/GPU at $3.70 → $4.28 per 1M
	if c := last.Economics.Costs[0]; c.Tier != "rental" || math.Round(c.USDPerMillionOutputTokens*100) != 428 {
		t.Errorf("cost = %+v", c)
	}
}

func TestAt(t *testing.T) {
	h := Resolve(servebench.SizingPlan{}, "4x B200")
	cv := Curves(testCells(), h)[0]
	cases := []struct {
		name   string
		target float64
		kind   ReadingKind
		perGPU float64
		// the measured point that meets the target with the most throughput
		measured int
	}{
		// slower than the slowest frontier point: that point is faster than asked, measured
		{"below the frontier", 40, ReadMeasured, 240, 16},
		// exactly on a point
		{"on a point", 100, ReadMeasured, 200, 8},
		// between c=16 (60, 240/GPU) and c=8 (100, 200/GPU): 80 is half way → 220 per GPU
		{"between two points", 80, ReadInterpolated, 220, 8},
		// between c=4 (150, 150/GPU) and c=1 (200, 50/GPU): 175 → 100; c=6 is dominated, skipped
		{"over a dominated point", 175, ReadInterpolated, 100, 1},
		// faster than anything measured: no answer, never extrapolated
		{"out of range", 250, ReadOutOfRange, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cv.At(c.target, h)
			if r.Kind != c.kind || math.Abs(r.OutputTPSPerGPU-c.perGPU) > 1e-9 {
				t.Fatalf("At(%v) = %s %v, want %s %v", c.target, r.Kind, r.OutputTPSPerGPU, c.kind, c.perGPU)
			}
			if c.measured == 0 {
				if r.Measured != nil || r.Note == "" {
					t.Errorf("out of range: measured %+v, note %q", r.Measured, r.Note)
				}
				return
			}
			if r.Measured == nil || r.Measured.Concurrency != c.measured {
				t.Errorf("measured point = %+v, want c=%d", r.Measured, c.measured)
			}
			if c.kind == ReadInterpolated && (r.Below == nil || r.Above == nil || r.OutputTPSPerGPUCI95 == nil) {
				t.Errorf("interpolated reading without its two points or interval: %+v", r)
			}
		})
	}
	// the interpolated reading's worst verdict: c=8 is low-confidence
	r := cv.At(80, h)
	if r.Verdict != servebench.VerdictLowConfidence {
		t.Errorf("verdict = %q, want low-confidence", r.Verdict)
	}
	// half way between c=16 and c=8 stands for 12 requests in flight per replica; users are
	// Capacity Planning's, 4 per request slot: 48 users per replica, so 1,000 users take
	// ⌈20.8⌉ = 21 replicas of 4 GPUs = 84 GPUs, × $3.70 × 730 h = $226,884 a month
	f, ok := r.Fleet(1000, h, "", 4)
	if !ok || r.Level != 12 || f.UsersPerReplica != 48 || f.UsersPerSlot != 4 || f.Replicas != 21 || f.GPUs != 84 || math.Abs(f.MonthlyUSD-226_884) > 0.005 || !f.Interpolated {
		t.Errorf("fleet = %+v (level %v)", f, r.Level)
	}
	// one user per slot is the InferenceX count (users = requests in flight): 84 replicas
	if f, _ := r.Fleet(1000, h, "", 1); f.Replicas != 84 {
		t.Errorf("at 1 user per slot: fleet = %+v", f)
	}
	// a population curve's level counts users already: 12 users per replica → 84 replicas
	if f, _ := r.Fleet(1000, h, "chat", 4); f.Replicas != 84 || f.UsersPerReplica != 12 || f.UsersPerSlot != 0 {
		t.Errorf("population fleet = %+v", f)
	}
	// a measured reading below the frontier holds its own level: c=16 is 64 users, 1,000 users →
	// ⌈15.6⌉ = 16 replicas
	if f, _ := cv.At(40, h).Fleet(1000, h, "", 4); f.Replicas != 16 || f.Interpolated {
		t.Errorf("measured fleet = %+v", f)
	}
	if _, ok := cv.At(250, h).Fleet(1000, h, "", 4); ok {
		t.Error("a reading out of range gave a fleet")
	}
}

func TestFirstTokenLimits(t *testing.T) {
	h := Resolve(servebench.SizingPlan{}, "4x B200")
	cv := Curves(testCells(), h)[0]
	rows := cv.FirstTokenLimits([]float64{0.2, 2, 5, 15}, 35)
	// 0.2 s: only the invalid c=12 (0.1 s) is that fast, and it is never cited
	// 2 s: c=4 (1.0 s, 150/GPU) beats c=1 and c=6; 5 s: c=8 (3.0 s); 15 s: c=16 (12 s)
	want := []int{0, 4, 8, 16}
	for i, r := range rows {
		got := 0
		if r.Point != nil {
			got = r.Point.Concurrency
		}
		if got != want[i] {
			t.Errorf("cap %v s: c=%d, want c=%d", r.TTFTCapSeconds, got, want[i])
		}
	}
	// the speed floor excludes a cell that meets the cap: at 70 tok/s c=16 (60) no longer counts
	if r := cv.FirstTokenLimits([]float64{15}, 70)[0]; r.Point == nil || r.Point.Concurrency != 8 {
		t.Errorf("with a 70 tok/s floor: %+v, want c=8", r.Point)
	}
}

func TestTiers(t *testing.T) {
	h := Resolve(servebench.SizingPlan{}, "4x B200")
	tiers := Tiers(testCells(), 8192, 2048, "", nil, []float64{30, 100, 300}, h, 4)
	// TTFT ≤ 15 s by default: 30 tok/s → c=16 (the highest level, so "at least"), 100 → c=8,
	// 300 → nobody (the 300 tok/s cell is invalid); users at 4 per request slot
	want := []struct {
		level int
		users float64
		lower bool
	}{{16, 64, true}, {8, 32, false}, {0, 0, false}}
	for i, tr := range tiers {
		if tr.Level != want[i].level || tr.Users != want[i].users || tr.Lower != want[i].lower {
			t.Errorf("floor %v: level %d, %v users (at least %v), want %d, %v (%v)", tr.SpeedFloorTPS, tr.Level, tr.Users, tr.Lower, want[i].level, want[i].users, want[i].lower)
		}
	}
	// 32 users on 4 GPUs = 8 per GPU; 4 × 1.71 kW = 6.84 kW → 32 / 0.00684 = 4,678.4 per MW;
	// 4 × $3.70 = $14.80/h → 2.1622 users per $/h
	tr := tiers[1]
	if tr.UsersPerGPU != 8 || math.Round(tr.UsersPerMW*10) != 46784 || math.Round(tr.UsersPerUSDHour*10000) != 21622 {
		t.Errorf("normalised tier = %+v", tr)
	}
	// a use case's own TTFT ceiling (2 s) and speed floor (120) replace the defaults
	uc := &servebench.CapacityResult{UseCase: "chat", ContextTokens: 8192, OutputTokens: 2048, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(2), GenerationSpeedTPSMin: servebench.Float(120)}}
	tiers = Tiers(testCells(), 8192, 2048, "", uc, []float64{30}, h, 4)
	if len(tiers) != 2 || tiers[0].Level != 6 || tiers[1].SpeedFloorTPS != 120 || tiers[1].Level != 6 || tiers[1].Users != 24 || tiers[0].UseCase != "chat" {
		t.Errorf("use case tiers = %+v", tiers)
	}
}

// TestPopulationCurve: a use case's user populations are a curve of their own (their
// concurrency is users, who pause between turns), never mixed into the concurrency levels of
// the same workload, and their tiers count users.
func TestPopulationCurve(t *testing.T) {
	cells := testCells()
	for _, n := range []int{10, 40} {
		c := cell(n, 300-float64(n)*5, float64(n)*20, 1, servebench.VerdictValid)
		c.Kind, c.LoadMode, c.Scenario = servebench.KindUsers, servebench.ModeUsers, "chat"
		cells = append(cells, c)
	}
	a := Analyze(Input{Cells: cells, DeclaredGPU: "4x B200",
		Capacity: []servebench.CapacityResult{{UseCase: "chat", ContextTokens: 4096, OutputTokens: 512, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(2)}}}})
	if len(a.Curves) != 2 || a.Curves[0].Population != "" || a.Curves[1].Population != "chat" {
		t.Fatalf("curves = %+v", a.Curves)
	}
	if n := len(a.Curves[0].Points); n != 6 {
		t.Errorf("the concurrency curve has %d points, want the 6 levels alone", n)
	}
	if n := len(a.Curves[1].Points); n != 2 {
		t.Errorf("the population curve has %d points, want 2", n)
	}
	// the use case named by the population sets the ceiling (2 s), and 40 users (100 tok/s)
	// meet a 100 tok/s floor
	var tier *Tier
	for i, tr := range a.Curves[1].Tiers {
		if tr.SpeedFloorTPS == 100 {
			tier = &a.Curves[1].Tiers[i]
		}
	}
	if tier == nil || tier.UseCase != "chat" || tier.TTFTCeilingSecond != 2 || tier.Users != 40 {
		t.Errorf("population tier = %+v", tier)
	}
}

// A point whose cell had fewer successful requests than stats.MinIntervalSamples keeps its
// value but not its intervals (withheld, written "n<min"), and a reading resting on it says so,
// measured or interpolated; a point with enough requests keeps both.
func TestIntervalsWithheldBelowMinimumSamples(t *testing.T) {
	cells := testCells()
	for i := range cells {
		cells[i].GenerationSpeedTPS.CI95 = &servebench.Interval{Low: cells[i].GenerationSpeedTPS.Mean * 0.999, High: cells[i].GenerationSpeedTPS.Mean * 1.001}
	}
	few := &cells[1] // c=4: on the frontier, between c=1 and c=8
	n := stats.MinIntervalSamples - 1
	few.RequestsSucceeded, few.GenerationSpeedTPS.Count = n, n
	h := Resolve(servebench.SizingPlan{}, "4x B200")
	cv := Curves(cells, h)[0]
	for _, p := range cv.Points {
		withheld := p.Concurrency == 4
		if withheld != (p.OutputTPSPerGPUCI95 == nil) || withheld != p.OutputCI95Withheld ||
			withheld != (p.PerUserTPSCI95 == nil) || withheld != p.PerUserCI95Withheld {
			t.Errorf("c=%d (withheld %v): output interval %v withheld %v, per-user interval %v withheld %v",
				p.Concurrency, withheld, p.OutputTPSPerGPUCI95, p.OutputCI95Withheld, p.PerUserTPSCI95, p.PerUserCI95Withheld)
		}
	}
	for _, tc := range []struct {
		speed    float64
		kind     ReadingKind
		withheld bool
	}{
		{150, ReadMeasured, true},     // the c=4 point itself
		{125, ReadInterpolated, true}, // between c=8 and c=4
		{175, ReadInterpolated, true}, // between c=4 and c=1
		{80, ReadInterpolated, false}, // between c=16 and c=8: both with enough requests
	} {
		r := cv.At(tc.speed, h)
		if r.Kind != tc.kind || r.OutputCI95Withheld != tc.withheld || (r.OutputTPSPerGPUCI95 == nil) != tc.withheld {
			t.Errorf("at %v tok/s: %s, interval %v withheld %v; want %s, withheld %v", tc.speed, r.Kind, r.OutputTPSPerGPUCI95, r.OutputCI95Withheld, tc.kind, tc.withheld)
		}
	}
}
