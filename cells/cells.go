// Package cells says what a plan will run: Expand lists the cells in the order a run measures
// them, each with its key, its size (requests, bursts, duration), where its prompts come from,
// or why it is skipped. It is the one place where the defaults of a cell's size live (see the
// constants and the sizing functions below): the runner, its time estimates, its progress lines
// and the capacity search's dense-grid cost all read them from here instead of computing them
// again.
//
// The package is pure: no I/O, no clock. What a plan's files say that decides cells (a trace's
// schedule, the turn counts of a dataset's conversations) comes in as Inputs.
package cells

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/stats"
)

// The defaults of a cell's size, each defined once. The plan package fills them into a resolved
// plan from here; the sizing functions below apply them to a plan that left them out.
var (
	// DefaultScenarioLevels are a dedicated scenario's burst sizes when it names none.
	DefaultScenarioLevels = []int{1, 2, 4}
	// DefaultSessionLevels are the multi-turn sessions' concurrency levels when the plan names none.
	DefaultSessionLevels = []int{1, 4}
)

const (
	// DefaultTraceSpeed replays a trace as recorded (trace.speed left out).
	DefaultTraceSpeed = 1.0
	// DefaultTraceBlockTokens is the tokens of one hash id of a trace (as in the Mooncake traces).
	DefaultTraceBlockTokens = 512
	// MaxUserTokens bounds the lengths a users' trace or dataset may name (a prompt, an answer,
	// a turn's text): 10M tokens, past any model's context window, so a length beyond it is a
	// mistake in the file, refused before the run.
	MaxUserTokens = 10_000_000
	// MaxUserDelay bounds the think or tool time a users' trace may give before a turn.
	MaxUserDelay = 24 * time.Hour
	// MinSessions is the fewest sessions a level of the multi-turn sessions runs (sessions.count
	// left out): max(MinSessions, SessionsPerLevel × level).
	MinSessions = 4
	// SessionsPerLevel is how many sessions per session in flight a level runs by default.
	SessionsPerLevel = 2
	// DefaultGoodputTarget is the goodput (share of requests within the SLO) a rate must keep
	// in the open-loop rate search (sweep.auto_rate; sweep.goodput_target left out).
	DefaultGoodputTarget = 0.99
	// DefaultAutoRateStart is the rate (requests/s) the rate search starts at (sweep.rate left
	// out).
	DefaultAutoRateStart = 1.0
	// DefaultMaxRate is the highest rate (requests/s) the rate search tries (sweep.max_rate left
	// out).
	DefaultMaxRate = 256.0
	// DefaultMaxUsers is the largest population a users' search measures (users.max_users left
	// out).
	DefaultMaxUsers = 256
	// DefaultThinkScale multiplies the user profiles' think and tool times (users.think_scale
	// left out): 1 keeps them as profiled.
	DefaultThinkScale = 1.0
)

// The scenario names of the cells that replay a dataset and a trace.
const (
	DatasetScenario = servebench.DatasetScenario
	TraceScenario   = servebench.TraceScenario
)

// Server is what the target says that decides a plan's cells.
type Server struct {
	// MaxModelLen is the target's maximum model length (tokens); 0 when unknown.
	MaxModelLen int
}

// Inputs are what a plan's files say that decides its cells.
type Inputs struct {
	// TraceSchedule is the trace's send offsets from the cell's start at its replay speed; nil
	// without a trace.
	TraceSchedule []time.Duration
	// Dataset says the sweep replays a dataset's prompts (their own lengths).
	Dataset bool
	// ScriptTurns is the user-turn count of each conversation of a dataset run as sessions
	// (dataset.sessions), in order; nil for synthetic sessions.
	ScriptTurns []int
}

// Source says where a cell's prompts come from.
type Source string

// The sources of prompts.
const (
	// Synthetic prompts of exactly the key's context length (the sweep, scenarios, capacity
	// levels, the fresh-prompt cells beside sessions).
	Synthetic Source = "synthetic"
	// Dataset replays a dataset's prompts in order, cycling.
	Dataset Source = "dataset"
	// Trace replays a trace's requests on its schedule.
	Trace Source = "trace"
	// SessionTurn is one turn of every multi-turn session: the conversation so far plus new text.
	SessionTurn Source = "session turn"
	// Population is a population of users, each a conversation proceeding on its own.
	Population Source = "user population"
)

// SourceOf is where the prompts of the cell key come from.
func SourceOf(key servebench.CellKey) Source {
	switch {
	case key.Kind == servebench.KindDataset:
		return Dataset
	case key.Kind == servebench.KindTrace:
		return Trace
	case key.Kind == servebench.KindSession && key.Scenario == stats.SessionScenario:
		return SessionTurn
	case key.Kind == servebench.KindUsers || key.LoadMode == servebench.ModeUsers:
		return Population
	}
	return Synthetic
}

// Cell is one cell a plan will run (or skip).
type Cell struct {
	Key servebench.CellKey
	// Phase is servebench.PhaseSweep (the sweep and the dedicated scenarios), PhaseSessions,
	// CapacityPhase(use case) or UsersPhase(use case).
	Phase  string
	Source Source
	// Requests is how many requests the cell sends at least (Planned).
	Requests int
	// Bursts is a dedicated cell's measured bursts (one warm-up burst comes first).
	Bursts int
	// Duration bounds an open-loop cell's time (sweep.duration); 0: no bound.
	Duration time.Duration
	// Search says the entry stands for a search whose levels are decided as it measures them (a
	// use case's capacity search, its users' search, a --rate auto search at one context): its
	// Key has no level, and Requests is the cost of its first level.
	Search bool
	// Matched says the cell's context length is decided as it runs: a fresh-prompt cell beside
	// a session turn takes that turn's measured mean prompt length (Key holds the nominal one).
	Matched bool
	// Skip says why the cell is not run; "" when it runs.
	Skip string
}

// Expand lists what plan p runs against srv, in the order a run measures it: the sweep (or the
// trace's cell, or a rate search per context), the dedicated scenarios, the multi-turn sessions
// (every turn of a level, then its fresh-prompt cells), the capacity searches and the users'
// searches.
func Expand(p servebench.Plan, srv Server, in Inputs) []Cell {
	var out []Cell
	add := func(c Cell) {
		if c.Requests == 0 {
			c.Requests = Planned(p, in, c.Key)
		}
		c.Source = SourceOf(c.Key)
		if c.Key.LoadMode == servebench.ModeDedicated {
			c.Bursts = Bursts(p.Sweep)
		}
		if c.Key.LoadMode == servebench.ModeRate || (c.Key.LoadMode == servebench.ModeFixed && c.Key.RatePerSecond > 0) {
			c.Duration = time.Duration(p.Sweep.Duration)
		}
		out = append(out, c)
	}
	for _, k := range SweepKeys(p, in) {
		add(Cell{Key: k, Phase: servebench.PhaseSweep, Skip: tooLong(srv, k.ContextTokens, k.OutputTokens)})
	}
	if s := p.Sweep; s.AutoRate && p.Sessions == nil {
		for _, c := range s.Contexts {
			k := servebench.CellKey{Kind: servebench.KindRate, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeRate,
				ContextTokens: int(c), OutputTokens: int(s.OutputTokens), RatePerSecond: s.Rate}
			add(Cell{Key: k, Phase: servebench.PhaseSweep, Search: true, Skip: tooLong(srv, k.ContextTokens, k.OutputTokens)})
		}
	}
	for _, k := range ScenarioKeys(p) {
		add(Cell{Key: k, Phase: servebench.PhaseSweep, Skip: tooLong(srv, k.ContextTokens, k.OutputTokens)})
	}
	if ss := p.Sessions; ss != nil {
		for _, n := range ss.Concurrency {
			nt := SessionTurns(ss, in, n)
			ran := 0
			for t := 1; t <= nt; t++ {
				k := SessionKey(ss, n, t)
				if srv.MaxModelLen > 0 && k.ContextTokens > 0 && k.ContextTokens+k.OutputTokens > srv.MaxModelLen {
					add(Cell{Key: k, Phase: servebench.PhaseSessions, Skip: fmt.Sprintf("skipped: turn %d's conversation (about %d tokens) and its %d-token answer exceed the target's maximum model length of %d tokens", t, k.ContextTokens, k.OutputTokens, srv.MaxModelLen)})
					break // the conversations end here: no later turn
				}
				add(Cell{Key: k, Phase: servebench.PhaseSessions})
				ran = t
			}
			for t := 2; t <= ran; t++ {
				k := SessionKey(ss, n, t)
				k.Scenario = stats.FreshScenario
				add(Cell{Key: k, Phase: servebench.PhaseSessions, Matched: true})
			}
		}
	}
	for _, uc := range p.UseCases {
		k := servebench.CellKey{Kind: servebench.KindCapacity, Scenario: uc.Name, LoadMode: servebench.ModeSustained,
			ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens), Concurrency: 1}
		skip := ""
		if srv.MaxModelLen > 0 && k.ContextTokens+k.OutputTokens > srv.MaxModelLen {
			skip = fmt.Sprintf("not viable on this target: its maximum model length (%d tokens) is below this use case's %d context + %d output tokens", srv.MaxModelLen, uc.ContextTokens, uc.OutputTokens)
		}
		add(Cell{Key: k, Phase: servebench.CapacityPhase(uc.Name), Search: true, Skip: skip})
	}
	if up := p.Users; up != nil {
		for _, name := range up.UseCases {
			for _, uc := range p.UseCases {
				if uc.Name == name {
					add(Cell{Key: UsersKey(uc, srv, 1), Phase: servebench.UsersPhase(uc.Name), Search: len(up.Populations) == 0})
				}
			}
		}
	}
	return out
}

// tooLong says why a cell of ctx context and out output tokens cannot run on srv ("" when it can).
func tooLong(srv Server, ctx, out int) string {
	if srv.MaxModelLen > 0 && ctx+out > srv.MaxModelLen {
		return fmt.Sprintf("skipped: %d context + %d output tokens exceed the target's maximum model length of %d tokens", ctx, out, srv.MaxModelLen)
	}
	return ""
}

// SweepKeys lists the sweep's cells: contexts × concurrency levels; a dataset replaces the
// contexts (one context 0: the entries' own lengths), a rate sweep the concurrency levels (one
// open-loop cell per rate, concurrency 0: uncapped), and a trace the whole grid (one open-loop
// cell at the trace's mean rate). Sessions and a rate search replace the grid.
func SweepKeys(p servebench.Plan, in Inputs) []servebench.CellKey {
	s := p.Sweep
	if p.Sessions != nil || s.AutoRate {
		return nil
	}
	if in.TraceSchedule != nil {
		return []servebench.CellKey{{Kind: servebench.KindTrace, Scenario: TraceScenario, LoadMode: servebench.ModeRate, RatePerSecond: TraceRate(in.TraceSchedule)}}
	}
	scenario, kind := servebench.SweepScenario, servebench.KindSweep
	if s.Mode == servebench.ModeRate {
		kind = servebench.KindRate
	}
	contexts := make([]int, 0, len(s.Contexts))
	for _, c := range s.Contexts {
		contexts = append(contexts, int(c))
	}
	if in.Dataset {
		scenario, kind, contexts = DatasetScenario, servebench.KindDataset, []int{0}
	}
	type level struct {
		n    int
		rate float64
	}
	var levels []level
	switch {
	case s.Mode == servebench.ModeRate && len(s.Rates) > 0:
		for _, rate := range s.Rates {
			levels = append(levels, level{0, rate})
		}
	case s.Mode == servebench.ModeRate:
		levels = []level{{0, s.Rate}}
	default:
		rate := 0.0
		if s.Mode == servebench.ModeFixed && s.Rate > 0 {
			rate = s.Rate // a paced fixed cell
		}
		for _, n := range s.Concurrency {
			levels = append(levels, level{n, rate})
		}
	}
	var keys []servebench.CellKey
	for _, c := range contexts {
		for _, l := range levels {
			keys = append(keys, servebench.CellKey{Kind: kind, Scenario: scenario, LoadMode: s.Mode, ContextTokens: c,
				OutputTokens: int(s.OutputTokens), Concurrency: l.n, RatePerSecond: l.rate})
		}
	}
	return keys
}

// ScenarioKeys lists the dedicated scenarios' cells: one per burst size of each scenario.
func ScenarioKeys(p servebench.Plan) []servebench.CellKey {
	var keys []servebench.CellKey
	for _, s := range p.Scenarios {
		for _, n := range ScenarioLevels(s) {
			keys = append(keys, servebench.CellKey{Kind: servebench.KindScenario, Scenario: s.Name, LoadMode: servebench.ModeDedicated,
				ContextTokens: int(s.ContextTokens), OutputTokens: int(s.OutputTokens), Concurrency: n})
		}
	}
	return keys
}

// ScenarioLevels is scenario s's burst sizes: its own, else DefaultScenarioLevels.
func ScenarioLevels(s servebench.Scenario) []int {
	if len(s.Concurrency) > 0 {
		return s.Concurrency
	}
	return DefaultScenarioLevels
}

// Bursts is how many measured bursts a dedicated cell runs: sweep.bursts, else sweep.rounds.
func Bursts(s servebench.Sweep) int {
	if s.Bursts > 0 {
		return s.Bursts
	}
	return s.Rounds
}

// OpenLoopRequests is how many requests an open-loop (or paced fixed) sweep cell at rate sends:
// sweep.requests, else ⌈rate × sweep.duration⌉ (rate in requests/s).
func OpenLoopRequests(s servebench.Sweep, rate float64) int {
	if s.Requests > 0 || s.Duration <= 0 || rate <= 0 {
		return s.Requests
	}
	return int(math.Ceil(rate * time.Duration(s.Duration).Seconds()))
}

// TraceRate is a trace's mean arrival rate (requests/s): (n − 1) / (last − first send). A
// schedule with no span (one request, or every request at one instant) has no rate: +Inf,
// which the trace loader refuses before a run (see workload.LoadTrace).
func TraceRate(sched []time.Duration) float64 {
	n := len(sched)
	if n < 2 || sched[n-1] <= sched[0] {
		return math.Inf(1)
	}
	return float64(n-1) / (sched[n-1] - sched[0]).Seconds()
}

// Sizing is the load.Sizing of a sustained cell from the sweep: its floors, precision and caps.
// A capacity or users' search level (search) has no count floors: it stops as soon as its
// verdict is settled; nor has any cell of a run with a time budget (sweep.max_time), which stops
// every cell as soon as it is sure.
func Sizing(s servebench.Sweep, search bool) load.Sizing {
	z := load.Sizing{MinRequests: s.MinRequests, Rounds: s.Rounds, MinDuration: time.Duration(s.MinDuration),
		RelHalfWidth: s.Precision, MaxRequests: s.MaxRequests, MaxDuration: time.Duration(s.MaxDuration)}
	if search || s.MaxTime > 0 {
		z.MinRequests, z.Rounds, z.MinDuration = 0, 0, 0
	}
	return z
}

// Precision is the relative half-width a sustained cell aims for: sweep.precision, else
// stats.DefaultRelHalfWidth (the one definition of the default).
func Precision(s servebench.Sweep) float64 {
	if s.Precision > 0 {
		return s.Precision
	}
	return stats.DefaultRelHalfWidth
}

// LevelCost is the fewest requests a sustained level of concurrency n costs with the sweep's
// floors (load.Sizing.Minimum): the ETA's plan for a sustained cell and the dense-grid cost a
// capacity search compares itself with.
func LevelCost(s servebench.Sweep, n int) int { return Sizing(s, false).Minimum(n) }

// Planned is how many requests the cell key sends at least: a sustained or users' level its
// LevelCost, a dedicated cell (Bursts + 1) × its burst size, a session turn one per session that
// has the turn, a trace's cell its schedule, an open-loop cell OpenLoopRequests.
func Planned(p servebench.Plan, in Inputs, key servebench.CellKey) int {
	switch {
	case key.LoadMode == servebench.ModeSustained || key.LoadMode == servebench.ModeUsers:
		return LevelCost(p.Sweep, key.Concurrency)
	case key.LoadMode == servebench.ModeDedicated:
		return (Bursts(p.Sweep) + 1) * key.Concurrency
	case key.Kind == servebench.KindTrace && in.TraceSchedule != nil:
		return len(in.TraceSchedule)
	case key.Kind == servebench.KindSession && p.Sessions != nil:
		return SessionRequests(p.Sessions, in, key.Concurrency, key.Turn)
	}
	return OpenLoopRequests(p.Sweep, key.RatePerSecond)
}

// SessionCount is how many sessions run at level n: sessions.count, else
// max(MinSessions, SessionsPerLevel × n); a dataset's conversations are no more than it holds.
func SessionCount(ss *servebench.SessionPlan, in Inputs, n int) int {
	c := ss.Count
	if c <= 0 {
		c = max(MinSessions, SessionsPerLevel*n)
	}
	if in.ScriptTurns != nil {
		c = min(c, len(in.ScriptTurns))
	}
	return c
}

// SessionTurns is how many turns level n measures: sessions.turns, and for a dataset's
// conversations no more than the longest of those the level runs (all of them when
// sessions.turns is 0).
func SessionTurns(ss *servebench.SessionPlan, in Inputs, n int) int {
	if in.ScriptTurns == nil {
		return ss.Turns
	}
	longest := 0
	for _, t := range in.ScriptTurns[:SessionCount(ss, in, n)] {
		longest = max(longest, t)
	}
	if ss.Turns <= 0 || ss.Turns > longest {
		return longest
	}
	return ss.Turns
}

// SessionRequests is how many requests turn t's cell (or its fresh-prompt cell) sends at level
// n: one per session that has turn t.
func SessionRequests(ss *servebench.SessionPlan, in Inputs, n, t int) int {
	c := SessionCount(ss, in, n)
	if in.ScriptTurns == nil {
		return c
	}
	k := 0
	for _, turns := range in.ScriptTurns[:c] {
		if turns >= t {
			k++
		}
	}
	return k
}

// SessionContext is the nominal prompt of turn t (tokens): the first turn's prompt plus, for
// every earlier turn, its answer and the next turn's new user text. The server's count adds the
// chat template's tokens per message; records carry that count. A dataset's sessions have no
// nominal length (0).
func SessionContext(ss *servebench.SessionPlan, t int) int {
	if ss.FirstTurnTokens == 0 {
		return 0
	}
	return int(ss.FirstTurnTokens) + (t-1)*(int(ss.OutputTokens)+int(ss.TurnTokens))
}

// SessionKey is the cell of turn t of the sessions at level n.
func SessionKey(ss *servebench.SessionPlan, n, t int) servebench.CellKey {
	return servebench.CellKey{Kind: servebench.KindSession, Scenario: stats.SessionScenario, LoadMode: servebench.ModeFixed,
		ContextTokens: SessionContext(ss, t), OutputTokens: int(ss.OutputTokens), Concurrency: n, Turn: t}
}

// UsersKey is the cell of a population of n users of use case uc: its conversations are at
// most uc's context and output tokens long, and no longer than the target's maximum model length.
func UsersKey(uc servebench.UseCase, srv Server, n int) servebench.CellKey {
	w := int(uc.ContextTokens + uc.OutputTokens)
	if srv.MaxModelLen > 0 {
		w = min(w, srv.MaxModelLen)
	}
	return servebench.CellKey{Kind: servebench.KindUsers, Scenario: uc.Name, LoadMode: servebench.ModeUsers, ContextTokens: w, Concurrency: n}
}
