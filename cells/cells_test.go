package cells

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func basePlan() servebench.Plan {
	return servebench.Plan{Sweep: servebench.Sweep{Mode: servebench.ModeSustained, Contexts: []servebench.Tokens{1024, 8192},
		Concurrency: []int{1, 4}, OutputTokens: 128, MinRequests: 8, Rounds: 3, Bursts: 2}}
}

// Expand lists the sweep, the scenarios, the sessions and the searches in the order a run
// measures them, each with its size and source, and says why a cell that cannot fit is skipped.
func TestExpandOrderSizesAndSkips(t *testing.T) {
	p := basePlan()
	p.Scenarios = []servebench.Scenario{{Name: "chat", ContextTokens: 2048, OutputTokens: 64}}
	p.UseCases = []servebench.UseCase{{Name: "long", ContextTokens: 16384, OutputTokens: 128}}
	got := Expand(p, Server{MaxModelLen: 9000}, Inputs{})
	var ids []string
	for _, c := range got {
		ids = append(ids, c.Key.ID())
	}
	want := 4 + 3 + 1 // 2 contexts × 2 levels, 3 default burst sizes, one capacity search
	if len(got) != want {
		t.Fatalf("Expand: %d cells %v, want %d", len(got), ids, want)
	}
	for _, tc := range []struct {
		i        int
		requests int
		skip     bool
		src      Source
	}{
		{0, 1 + max(8, 3*1, 2*1), false, Synthetic}, // 1K c=1: warm-up 1 + max(min_requests, rounds × n, 2n)
		{1, 4 + max(8, 3*4, 2*4), false, Synthetic}, // 1K c=4
		{3, 4 + max(8, 3*4, 2*4), false, Synthetic}, // 8K c=4 fits 9000 with its 128 output tokens
		{4, (2 + 1) * 1, false, Synthetic},          // scenario burst of 1: bursts + a warm-up burst
		{6, (2 + 1) * 4, false, Synthetic},          // burst of 4 (DefaultScenarioLevels)
		{7, LevelCost(p.Sweep, 1), true, Synthetic}, // the search is not viable at 16K + 128 > 9000
	} {
		c := got[tc.i]
		if c.Requests != tc.requests || (c.Skip != "") != tc.skip || c.Source != tc.src {
			t.Errorf("cell %d %s: requests %d skip %q source %s, want %d skip=%v %s", tc.i, c.Key.ID(), c.Requests, c.Skip, c.Source, tc.requests, tc.skip, tc.src)
		}
	}
	if got[4].Bursts != 2 || got[4].Key.Kind != servebench.KindScenario {
		t.Errorf("scenario cell: %+v, want 2 bursts of kind scenario", got[4])
	}
	if !got[7].Search || got[7].Phase != servebench.CapacityPhase("long") {
		t.Errorf("capacity entry: %+v, want a search in its phase", got[7])
	}
}

// Sessions: every turn of a level, then its fresh-prompt cells; a turn that cannot fit ends the
// level's conversations there; a dataset's conversations size the turns and the requests.
func TestExpandSessions(t *testing.T) {
	p := basePlan()
	p.Sessions = &servebench.SessionPlan{Turns: 3, FirstTurnTokens: 1000, TurnTokens: 100, OutputTokens: 100, Concurrency: []int{2}}
	got := Expand(p, Server{}, Inputs{})
	var turns []int
	for _, c := range got {
		turns = append(turns, c.Key.Turn)
		if c.Requests != max(MinSessions, SessionsPerLevel*2) {
			t.Errorf("%s: %d requests, want one per session", c.Key.ID(), c.Requests)
		}
	}
	if !slices.Equal(turns, []int{1, 2, 3, 2, 3}) || got[0].Source != SessionTurn || got[3].Source != Synthetic || !got[3].Matched {
		t.Fatalf("sessions: turns %v, sources %s/%s: want turns 1-3 then fresh 2-3", turns, got[0].Source, got[3].Source)
	}
	// turn 2's conversation is 1000 + 100 + 100 = 1200 tokens: with its answer past 1250
	got = Expand(p, Server{MaxModelLen: 1250}, Inputs{})
	if len(got) != 2 || got[1].Skip == "" || got[1].Key.Turn != 2 {
		t.Fatalf("sessions at max length 1250: %+v, want turn 1 then turn 2 skipped, nothing after", got)
	}
	// a dataset's conversations: 3, 1 and 2 turns; sessions.turns 0 runs them all
	p.Sessions.Turns, p.Sessions.FirstTurnTokens, p.Sessions.TurnTokens = 0, 0, 0
	in := Inputs{ScriptTurns: []int{3, 1, 2}}
	got = Expand(p, Server{}, in)
	var reqs []int
	for _, c := range got {
		reqs = append(reqs, c.Requests)
	}
	if !slices.Equal(reqs, []int{3, 2, 1, 2, 1}) {
		t.Errorf("scripted sessions' requests %v, want one per conversation with the turn: 3 2 1, fresh 2 1", reqs)
	}
}

// Open-loop cells: sweep.requests, else ⌈rate × duration⌉; a trace's cell its schedule at the
// trace's mean rate; a dataset replaces the contexts.
func TestExpandOpenLoopTraceAndDataset(t *testing.T) {
	p := basePlan()
	p.Sweep.Mode, p.Sweep.Rates, p.Sweep.Duration = servebench.ModeRate, []float64{2.5, 4}, servebench.Duration(3*time.Second)
	got := Expand(p, Server{}, Inputs{})
	if len(got) != 4 || got[0].Requests != 8 || got[1].Requests != 12 || got[0].Duration != 3*time.Second {
		t.Fatalf("rate sweep: %+v, want ⌈2.5 × 3⌉ = 8 and 12 requests over 3 s", got)
	}
	got = Expand(p, Server{}, Inputs{TraceSchedule: []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second}})
	if len(got) != 1 || got[0].Source != Trace || got[0].Requests != 4 || got[0].Key.RatePerSecond != 0.75 {
		t.Fatalf("trace: %+v, want one cell of 4 requests at 3 / 4 s = 0.75/s", got)
	}
	p = basePlan()
	got = Expand(p, Server{}, Inputs{Dataset: true})
	if len(got) != 2 || got[0].Source != Dataset || got[0].Key.ContextTokens != 0 || got[0].Key.Scenario != DatasetScenario {
		t.Fatalf("dataset: %+v, want one cell per level at context 0", got)
	}
}

// A schedule with no span has no rate (the trace loader refuses it).
func TestTraceRate(t *testing.T) {
	for _, tc := range []struct {
		sched []time.Duration
		want  float64
	}{
		{[]time.Duration{0, 500 * time.Millisecond, time.Second}, 2},    // two gaps in one second
		{[]time.Duration{0}, math.Inf(1)},                               // one request
		{[]time.Duration{time.Second, time.Second}, math.Inf(1)},        // one instant
		{[]time.Duration{0, 0, 0, 10 * time.Second}, float64(3) / 10.0}, // a burst, then one more
	} {
		if got := TraceRate(tc.sched); got != tc.want {
			t.Errorf("TraceRate(%v) = %g, want %g", tc.sched, got, tc.want)
		}
	}
}

// A time budget, like a search level, drops the count floors.
func TestSizingFloors(t *testing.T) {
	s := basePlan().Sweep
	if got := Sizing(s, false).Minimum(4); got != 4+12 {
		t.Errorf("sustained c=4: %d, want 16", got)
	}
	if got := Sizing(s, true).Minimum(4); got != 4+8 {
		t.Errorf("search level c=4: %d, want 12 (warm-up + 2n)", got)
	}
	s.MaxTime = servebench.Duration(time.Minute)
	if got := LevelCost(s, 4); got != 12 {
		t.Errorf("budgeted c=4: %d, want 12", got)
	}
}
