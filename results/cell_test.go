package results

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// A cell whose prompts the server served from its prefix cache is cache-contaminated only where
// the plan meant every prompt to be unique; the note that says so comes from the cell's value.
func TestCellCacheContamination(t *testing.T) {
	sweep := servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 16, Concurrency: 1}
	session := sweep
	session.Kind, session.Scenario, session.Turn = servebench.KindSession, "session", 2
	users := sweep
	users.Kind, users.Scenario, users.LoadMode = servebench.KindUsers, "chat", servebench.ModeUsers
	for _, tc := range []struct {
		name  string
		plan  func(*servebench.Plan)
		key   servebench.CellKey
		dirty bool
	}{
		// unique prompts meant, 600 tokens cached: contaminated
		{"sweep", func(*servebench.Plan) {}, sweep, true},
		// a shared prefix is cached on purpose
		{"shared prefix", func(p *servebench.Plan) { p.Sweep.SharedPrefix = 512 }, sweep, false},
		// a dataset's and a trace's prompts repeat on purpose
		{"dataset", func(p *servebench.Plan) { p.Dataset = &servebench.DatasetPlan{} }, sweep, false},
		{"trace", func(p *servebench.Plan) { p.Trace = &servebench.TracePlan{} }, sweep, false},
		// a session resends its conversation; a user population continues its own
		{"session turn", func(*servebench.Plan) {}, session, false},
		{"users", func(*servebench.Plan) {}, users, false},
	} {
		var p servebench.Plan
		tc.plan(&p)
		cached := 300
		var recs []servebench.Record
		for i := range 2 {
			recs = append(recs, servebench.Record{Seq: int64(i), StartOffsetSeconds: float64(i), EndOffsetSeconds: float64(i) + 0.5,
				InputTokens: 1024, OutputTokens: 16, CachedTokens: &cached})
		}
		c := Cell(p, servebench.CellLog{Cell: tc.key, WindowStartSeconds: 0, WindowEndSeconds: 2}, recs)
		if c.CacheHitTokens == nil || *c.CacheHitTokens != 600 {
			t.Errorf("%s: cache hits %v, want 600", tc.name, c.CacheHitTokens)
		}
		if c.CacheContaminated != tc.dirty {
			t.Errorf("%s: contaminated %v, want %v", tc.name, c.CacheContaminated, tc.dirty)
		}
		notes := Notes(c)
		if said := len(notes) == 1 && strings.Contains(notes[0], "cache-contaminated: the server served 600 input tokens"); said != tc.dirty {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
	}
}

// A level of a use case's capacity search is measured to decide pass or fail: once that verdict
// is settled at 95% its wide mean is what it aimed for (valid), while the same records in a
// sweep cell, or at a level whose verdict is still open, are too few for the plan's precision.
// A settled level of fewer than 10 requests still lacks its intervals (n<10): low-confidence.
func TestSettledLevelIsJudgedOnItsVerdict(t *testing.T) {
	level := servebench.CellKey{Kind: servebench.KindCapacity, Scenario: "chat", LoadMode: servebench.ModeFixed, ContextTokens: 1024, OutputTokens: 16, Concurrency: 2}
	sweep := level
	sweep.Kind, sweep.Scenario = servebench.KindSweep, servebench.SweepScenario
	records := func(n int) []servebench.Record {
		var recs []servebench.Record
		for i := range n {
			ttft := []float64{0.10, 0.30, 0.15, 0.25, 0.20, 0.12}[i%6] // mean 0.187 s; ±25% over 12, ±45% over 6
			recs = append(recs, servebench.Record{Seq: int64(i), StartOffsetSeconds: float64(i), EndOffsetSeconds: float64(i) + 0.9,
				TTFTSeconds: ttft, E2ELatencySeconds: 0.9, InputTokens: 1024, OutputTokens: 16})
		}
		return recs
	}
	for _, tc := range []struct {
		name    string
		key     servebench.CellKey
		n       int
		ttftMax float64
		want    servebench.Verdict
		note    string // in the too-few-samples note, when there is one
	}{
		{"settled pass", level, 12, 2, servebench.VerdictValid, ""},                                                         // the whole interval far under 2 s
		{"open verdict", level, 12, 0.2, servebench.VerdictLowConfidence, "target ±5%"},                                     // the interval straddles 0.2 s
		{"sweep", sweep, 12, 2, servebench.VerdictLowConfidence, "target ±5%"},                                              // a sweep cell aims for precision
		{"settled on 6", level, 6, 2, servebench.VerdictLowConfidence, "6 successful measured requests, fewer than the 10"}, // no interval shown
	} {
		p := servebench.Plan{UseCases: []servebench.UseCase{{Name: "chat", Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(tc.ttftMax)}}}}
		p.Sweep.Precision = 0.05
		c := Cell(p, servebench.CellLog{Cell: tc.key, WindowStartSeconds: 0, WindowEndSeconds: float64(tc.n)}, records(tc.n))
		if c.Validity.Verdict != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.name, c.Validity.Verdict, c.Validity.Reasons, tc.want)
		}
		if note := c.Validity.Notes[servebench.ReasonTooFewSamples]; !strings.Contains(note, tc.note) {
			t.Errorf("%s: too-few-samples note %q, want it to say %q", tc.name, note, tc.note)
		}
	}
}

// A cell whose GPU readings were all refused as impossible (gpu.Check) has no power, and says
// why in the meter's words; readings that were kept give the cell its power.
func TestCellPowerRefusedReadings(t *testing.T) {
	key := servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 16, Concurrency: 1}
	var recs []servebench.Record
	for i := range 4 {
		recs = append(recs, servebench.Record{Seq: int64(i), StartOffsetSeconds: float64(i), EndOffsetSeconds: float64(i) + 0.9, E2ELatencySeconds: 0.9, InputTokens: 1024, OutputTokens: 16})
	}
	refused := "8 GPU reading(s) of the cell refused as impossible (the first: GPU 0: power (W) NaN is impossible)"
	c := Cell(servebench.Plan{}, servebench.CellLog{Cell: key, WindowEndSeconds: 4, PowerSource: "nvidia-smi", PowerNote: refused}, recs)
	if c.GPUPowerWatts != nil || !strings.Contains(c.Unavailable["gpu_power_watts"], refused) {
		t.Fatalf("power %v, unavailable %q: want none, and the refusal said", c.GPUPowerWatts, c.Unavailable["gpu_power_watts"])
	}
	var power []servebench.PowerReading
	for i := range 17 {
		power = append(power, servebench.PowerReading{AtSeconds: float64(i) * 0.25, Watts: []float64{300}})
	}
	c = Cell(servebench.Plan{}, servebench.CellLog{Cell: key, WindowEndSeconds: 4, PowerSource: "nvidia-smi", Power: power}, recs)
	if c.GPUPowerWatts == nil || c.GPUPowerWatts.MeanWatts != 300 {
		t.Fatalf("power %v, want 300 W (unavailable: %q)", c.GPUPowerWatts, c.Unavailable["gpu_power_watts"])
	}
}
