// Package runner measures a resolved plan against a target: it walks the sweep's cells and the
// capacity searches, drives each cell with a load driver, writes every record as it ends and
// keeps, beside the records, what only the run knew of each cell (cells.jsonl: its window, the
// server's and GPU's telemetry around it). It computes nothing itself: a cell's numbers come from
// results.Cell and the run's results from a results.Builder, and the searches are decided by a
// decider that Recompute makes too, reading the levels back from the run folder instead of
// measuring them. The formulas live in the root package (per request), stats (per cell) and
// capacity (verdicts).
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/collect/gpu"
	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/results"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// prewarmer is a Client that can open a cell's connections before its measured phase.
type prewarmer interface {
	Prewarm(ctx context.Context, n int) (int, error)
}

// PromptBuilder makes a prompt of exactly tokens tokens for request seq.
type PromptBuilder interface {
	Prompt(ctx context.Context, seq int64, tokens int) (string, error)
}

// Recorder persists what the run produces as it goes (the run folder).
type Recorder interface {
	Append(rec servebench.Record) error
	AppendSamples(s []servebench.Sample) error
	// AppendCellLog keeps what the run knew of a cell beside its records (cells.jsonl), so
	// that Recompute can compute the results again.
	AppendCellLog(l servebench.CellLog) error
	WriteResults(res servebench.Results) error
}

// ServerMetrics reads the target's Prometheus metrics around a cell: a snapshot before it, and
// one after it once it holds what the cell's figures need, or once it is known that it will
// not (the reason is kept in the cell's log). *promscrape.Scraper is one.
type ServerMetrics interface {
	Scrape(ctx context.Context) (*promscrape.Snapshot, error)
	After(ctx context.Context, before *promscrape.Snapshot, w promscrape.Wait) (*promscrape.Snapshot, string, error)
}

// GPUReader reads every GPU once; the runner samples it during each cell. gpu.Source is one.
type GPUReader interface {
	Name() string
	Read(ctx context.Context) (gpu.Reading, error)
}

// EventKind says what an Event reports.
type EventKind string

// The kinds of Event.
const (
	EventPhase     EventKind = "phase"      // a phase begins (Phase: servebench.PhaseSweep …)
	EventCellStart EventKind = "cell-start" // a cell begins (Cell, Planned)
	EventRequest   EventKind = "request"    // a request of the current cell finished
	EventCellDone  EventKind = "cell-done"  // a cell finished (Result)
	EventNote      EventKind = "note"       // something to tell the user (Message)
)

// Generator releases a cell's requests and sinks each one's record (exactly one per request):
// load.Run on this machine with the runner's Client, or the workers of a distributed run (package
// dist), which decide nothing themselves. Every decision (when a cell is sure, the capacity
// search's next level, outages) stays in the runner and load.Spec, on the merged records.
type Generator interface {
	Run(ctx context.Context, spec load.Spec, next load.Source, sink load.Sink) (load.Outcome, error)
}

// Fleet is a Generator made of workers; Results lists them.
type Fleet interface {
	Workers() []servebench.Worker
}

// Event is pushed to the live view; the view never drives the run.
type Event struct {
	Kind EventKind
	// Phase is servebench.PhaseSweep, PhaseSessions, CapacityPhase(use case) or, for the header
	// of a dedicated scenario, "scenario NAME".
	Phase string
	// Title is a phase's header for a reader: what it measures ("scenario Chatbot: bursts of
	// 1, 2, 4 requests released together, 2K in / 512 out tokens").
	Title     string
	Cell      servebench.CellKey
	CellIndex int // 1-based within the phase; 0 when unknown
	CellCount int // cells planned in the phase; 0 when unknown (capacity search)
	Requests  int // requests finished in the current cell
	Planned   int // requests the cell plans to run at least
	Total     int // requests finished in the run
	Result    *servebench.CellResult
	Message   string
	Elapsed   time.Duration
	// CellElapsed is the time since the current cell started (0 outside a cell).
	CellElapsed time.Duration
	// CellEstimate is the current cell's expected wall time, and Left the expected time until
	// the phase ends, current cell included (estimateCell over the cells measured so far); 0
	// when nothing measured can tell yet. A capacity search's Left covers its current level only.
	CellEstimate, Left time.Duration
	// SearchesAfter counts the capacity searches still to come after the current phase (the
	// time they take is not known until their levels are measured); Budget is the run's time
	// budget (sweep.max_time, 0 without one) and BudgetLeft what is left of it.
	SearchesAfter      int
	Budget, BudgetLeft time.Duration
	// Interleaved says the capacity searches run together, one level at a time (a budgeted
	// run: decider.searchInterleaved), not one after the other: during a search's level,
	// SearchesAfter then counts the other searches still open; once they are all decided, 0.
	Interleaved bool
	// Progress is how sure the current sustained cell is so far; nil before its window opens
	// and for other load modes.
	Progress *CellProgress
}

// CellProgress is a sustained cell's statistical progress, as its driver last judged it.
type CellProgress struct {
	// WindowSeconds is the measured window so far (s).
	WindowSeconds float64
	// TTFTMean (s) and Throughput (output tok/s) are the current estimates, each with the
	// relative half-width of its 95% interval (+Inf while unknown).
	TTFTMean, TTFTRelHalfWidth         float64
	Throughput, ThroughputRelHalfWidth float64
	// Target is the relative half-width aimed for; Settled says a capacity level's verdict is
	// already certain.
	Target  float64
	Settled bool
}

// Runner measures one plan. Build it with the dependencies; call Run once.
type Runner struct {
	Plan     servebench.Plan
	Server   servebench.ServerInfo
	RunInfo  servebench.RunInfo
	Client   servebench.Client
	Prompts  PromptBuilder
	Recorder Recorder
	// Metrics reads the server's Prometheus metrics; nil when there are none.
	Metrics ServerMetrics
	// MetricsNote says why Metrics is nil.
	MetricsNote string
	// Notes are run-level facts known before the run (e.g. how far the simulator is from
	// published measurements); Results lists them first.
	Notes []string
	// GPU reads GPU telemetry; nil when there is none (GPUNote says why).
	GPU     GPUReader
	GPUNote string
	// Origin is the run's clock origin (monotonic); record offsets are from it.
	Origin time.Time
	// Done holds cells already measured (resume): they are kept and not re-run.
	Done []servebench.CellResult
	// PastOutages are the outages earlier attempts recorded (resume): kept in the results.
	PastOutages []servebench.Outage
	// Events receives progress events; may be nil.
	Events func(Event)
	// Dataset, when set, supplies the sweep's prompts (see Replayer); nil: synthetic prompts.
	Dataset Replayer
	// Trace, when set, replaces the sweep by one open-loop cell replaying it.
	Trace TraceReplayer
	// SessionScript, when set, supplies the multi-turn sessions' user turns from a dataset's
	// conversations instead of synthetic text (Plan.Sessions still sizes the levels).
	SessionScript []ScriptedSession
	// UserFiles are the files the plan's users replay (users.profiles dataset:PATH, trace:PATH),
	// read once where the run starts (workload.LoadUserFiles); nil: read when a population
	// needs them.
	UserFiles *workload.UserFiles
	// Probe asks whether the server answers again (nil error: it does). With a Probe, a request
	// that cannot connect (or a burst of broken streams) pauses the run: the cell's attempt is
	// discarded, the server probed with backoff for up to OutageTimeout, and the cell measured
	// again from its start. Nil disables outage handling.
	Probe func(ctx context.Context) error
	// OutageTimeout is how long an outage may last before the run stops with ErrServerGone
	// (default 5 minutes).
	OutageTimeout time.Duration
	// EventCapacity, when set, estimates the stream events per second this machine can read
	// with its timing intact (selfcheck.Carry). The runner asks it once, before the first cell
	// planned above eventRateFloor, and warns before every cell planned above the answer.
	EventCapacity func(context.Context) (float64, error)
	// Load releases each cell's requests; nil: load.Run on this machine with Client.
	Load Generator

	seq   atomic.Int64
	total atomic.Int64
	// rates is the event-rate check's state (see warnEventRate).
	rates eventRates
	// clock is the current cell's timing for the live view (nil outside a cell); costs are the
	// finished cells the estimates learn from.
	clock atomic.Pointer[cellClock]
	costs []cellCost
	// res folds the cells, decisions and notes into Results (Recompute folds the same values
	// read back from the run folder).
	res      results.Builder
	sessions *workload.Sessions // the multi-turn sessions of the level being measured
	pop      *load.Population   // the population of users being measured
	// bud keeps the plan's time budget (nil without one); search is the capacity search in
	// progress as the budget sees it
	bud    *budget
	search searchState
	// searchesDone is set once every capacity search is decided (the live view then names none
	// still to come)
	searchesDone bool
}

// searchState is what the budget needs to know of the capacity search in progress: the use
// cases left to search (this one included) and how many levels it has so far.
type searchState struct{ useCasesLeft, points int }

// SeqStart sets the first request sequence number (resume continues after existing records).
func (r *Runner) SeqStart(n int64) { r.seq.Store(n) }

func (r *Runner) emit(e Event) {
	if r.Events != nil {
		e.Total = int(r.total.Load())
		e.Elapsed = time.Since(r.Origin)
		switch {
		case r.searchesDone:
		case r.search.useCasesLeft == 0:
			e.SearchesAfter = len(r.Plan.UseCases)
		default:
			e.SearchesAfter = r.search.useCasesLeft - 1
		}
		if r.bud != nil {
			e.Budget, e.BudgetLeft = r.bud.total, time.Until(r.bud.end)
			e.Interleaved = len(r.Plan.UseCases) > 0
		}
		if c := r.clock.Load(); c != nil && e.Kind != EventPhase {
			e.CellElapsed = time.Since(c.start)
			if c.estimate > 0 {
				e.CellEstimate = c.estimate
				e.Left = c.after + max(c.estimate-e.CellElapsed, 0)
			}
		}
		r.Events(e)
	}
}

// cellClock is the current cell's start and time estimates (estimateCell): its own expected
// wall time and that of the phase's cells after it (0 when unknown).
type cellClock struct {
	start           time.Time
	estimate, after time.Duration
}

// startCell starts the live view's clock for c; rest are the phase's cells after it (their
// sizes from cells.Expand).
func (r *Runner) startCell(c cells.Cell, rest []cells.Cell) {
	clk := &cellClock{start: time.Now()}
	if d, ok := estimateCell(c.Key, c.Requests, r.family(c.Key)); ok {
		clk.estimate = d
		for _, k := range rest {
			if d, ok := estimateCell(k.Key, k.Requests, r.family(k.Key)); ok {
				clk.after += d
			}
		}
	}
	r.clock.Store(clk)
}

// startLevel starts the clock for a level of a search, sized when it is decided. Under a time
// budget its estimate is at least what the budget counts the level to cost (budget.levelCost):
// the cell estimate takes the latency of the levels below, and a level's grows with its
// concurrency (General Chatbot at 8 users on GLM-4.7-Flash: estimated ~27 s, took 1m45s).
func (r *Runner) startLevel(key servebench.CellKey) {
	r.startCell(cells.Cell{Key: key, Requests: r.planned(key)}, nil)
	if c := r.clock.Load(); c != nil && r.bud != nil && r.bud.levelEst > 0 {
		cc := *c
		cc.estimate = max(cc.estimate, time.Duration(float64(r.bud.levelEst)*r.bud.overrun()))
		r.clock.Store(&cc)
	}
}

// endCell stops the clock and remembers what the finished cell cost.
func (r *Runner) endCell(key servebench.CellKey, res servebench.CellResult) {
	c := r.clock.Swap(nil)
	if c == nil || res.RequestsSucceeded == 0 {
		return
	}
	r.costs = append(r.costs, cellCost{key: key, wall: time.Since(c.start).Seconds(), planned: r.planned(key),
		ttft: res.TTFTSeconds.Mean, e2e: res.E2ELatencySeconds.Mean})
}

// family returns the finished cells that can teach k's estimate: those of k's scenario, load
// mode and output length; when there are none yet, every finished cell of k's load mode with
// its decode time scaled to k's output length (e2e' = ttft + (e2e − ttft) × out_k / out).
func (r *Runner) family(k servebench.CellKey) []cellCost { return familyOf(r.costs, k) }

// Results returns what has been computed so far (also after an interrupted Run).
func (r *Runner) Results() servebench.Results {
	info := r.RunInfo
	info.FinishedAt = time.Now().UTC()
	run := results.Run{Plan: r.Plan, Server: r.Server, Info: info, Notes: r.Notes}
	if f, ok := r.Load.(Fleet); ok {
		run.Workers = f.Workers()
	}
	return r.res.Results(run)
}

// tally counts a finished request: in the run, and among those that stopped short of (or ran
// past) the output length asked for.
func (r *Runner) tally(rec servebench.Record) {
	r.total.Add(1)
	r.res.Count(rec)
}

// SweepScenario is the scenario name of the sweep's cells.
const SweepScenario = servebench.SweepScenario

// Run measures the sweep, the dedicated scenarios and the capacity searches. It writes results
// after every cell, so an interrupted run keeps everything it measured. A canceled ctx stops
// new requests; Run then returns ctx's error and Results still holds the finished cells.
func (r *Runner) Run(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			r.unsearched()
		}
	}()
	done := map[servebench.CellKey]servebench.CellResult{}
	for _, c := range r.Done {
		c.FillKind() // a resumed run from a servebench before cells named their kind
		done[c.CellKey] = c
		r.res.AddCell(c)
	}
	for _, o := range r.PastOutages {
		r.res.AddOutage(o)
	}
	info := r.RunInfo
	if err := r.keep(servebench.CellLog{Event: servebench.LogSession, Notes: r.Notes, Run: &info}); err != nil {
		return err
	}
	r.bud = newBudget(time.Duration(r.Plan.Sweep.MaxTime), time.Now())
	defer func() {
		if n := r.bud.note(r.Plan.Sweep); n != "" {
			// kept in cells.jsonl too: Recompute cannot tell how the budget was kept
			if kerr := r.keep(servebench.CellLog{Event: servebench.LogNote, Notes: []string{n}}); err == nil {
				err = kerr
			}
			r.res.AddNote(n)
			r.flush()
		}
	}()

	// 1. the sweep and the dedicated scenarios
	var sweep []cells.Cell
	for _, c := range r.expand() {
		if c.Phase == servebench.PhaseSweep && !c.Search {
			sweep = append(sweep, c)
		}
	}
	keys := make([]servebench.CellKey, len(sweep))
	for i, c := range sweep {
		keys[i] = c.Key
	}
	r.emit(Event{Kind: EventPhase, Phase: servebench.PhaseSweep, Title: r.sweepTitle(keys), CellCount: len(sweep)})
	if r.bud != nil {
		sweep = levelsFirst(sweep, r.Plan.UseCases)
	}
	scenario := servebench.SweepScenario
	var later []cells.Cell // a budgeted run's cells measured after its searches (sweepLater)
	for i, c := range sweep {
		key := c.Key
		if r.deferSweep(c, done) {
			later = append(later, c)
			continue
		}
		if key.Scenario != scenario && key.Kind == servebench.KindScenario {
			scenario = key.Scenario
			r.emit(Event{Kind: EventPhase, Phase: "scenario " + key.Scenario, Title: r.scenarioTitle(key.Scenario), CellCount: len(sweep)})
		}
		if _, ok := done[key]; ok {
			continue
		}
		if c.Skip != "" {
			if err := r.skipSweepCell(key, c.Skip); err != nil {
				return err
			}
			r.emit(Event{Kind: EventNote, Phase: servebench.PhaseSweep, Cell: key, Message: key.ID() + " " + c.Skip})
			continue
		}
		var rest, phase []cells.Cell // phase: rest less a budgeted run's cells measured after its searches (the live view's estimate of the phase)
		for _, k := range sweep[i+1:] {
			if _, ok := done[k.Key]; !ok && k.Skip == "" {
				rest = append(rest, k)
				if !r.deferSweep(k, done) {
					phase = append(phase, k)
				}
			}
		}
		if !r.budgetSweepCell(key, rest, len(r.Plan.UseCases)) {
			if err := r.skipSweepCell(key, budgetSkipNote); err != nil {
				return err
			}
			continue
		}
		if err := r.measureSweepCell(ctx, c, phase, i, len(sweep), done); err != nil {
			return err
		}
	}
	if err := r.runSessions(ctx, done); err != nil {
		return err
	}
	d := r.decider()
	if err := d.searchRates(ctx, done, r.measureRate); err != nil {
		return err
	}

	// 2. capacity searches, reusing every sustained cell already measured; then in users
	if err := d.searchCapacity(ctx, done, func(ctx context.Context, uc servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
		phase := servebench.CapacityPhase(uc.Name)
		if err := r.budgetLevel(key, r.search.points > 0, r.search.useCasesLeft); err != nil {
			return servebench.CellResult{}, 0, err
		}
		r.startLevel(key)
		r.emit(Event{Kind: EventCellStart, Phase: phase, Cell: key, Planned: r.planned(key)})
		c, sent, err := r.measure(ctx, key, phase, 0, 0, func(c servebench.CellResult) bool { return capacity.Settled(uc, c) })
		r.bud.cellStopped(c)
		r.endCell(key, c)
		return c, sent, err
	}); err != nil {
		return err
	}
	r.searchesDone = true
	if err := r.sweepLater(ctx, later, done); err != nil {
		return err
	}
	return d.searchUsers(ctx, done)
}

// skippedCell is a cell that was not run, for the reason note.
func skippedCell(key servebench.CellKey, note string) servebench.CellResult {
	return servebench.CellResult{CellKey: key, Skipped: true, Note: note, Validity: servebench.NotMeasured(note)}
}

// unsearched adds, after a run that stopped early, an interrupted capacity result with no levels
// for every use case of the plan that has none yet (results.Builder.Unsearched).
func (r *Runner) unsearched() {
	if r.res.Unsearched(r.Plan) {
		r.flush()
	}
}

// keep appends l to the run folder's cells.jsonl; a failure stops the run like a failed record
// write (the results could no longer be recomputed from the folder).
func (r *Runner) keep(l servebench.CellLog) error {
	if r.Recorder == nil {
		return nil
	}
	if err := r.Recorder.AppendCellLog(l); err != nil {
		return fmt.Errorf("%w: %w (nothing measured so far is lost; fix the disk problem and --resume the run)", ErrWrite, err)
	}
	return nil
}

func (r *Runner) rateFor() float64 {
	if r.Plan.Sweep.Mode == servebench.ModeRate || (r.Plan.Sweep.Mode == servebench.ModeFixed && r.Plan.Sweep.Rate > 0) {
		return r.Plan.Sweep.Rate
	}
	return 0
}

// sizing is the load.Sizing of a sustained cell (cells.Sizing), its window capped at what the
// time budget allows.
func (r *Runner) sizing(search bool) load.Sizing {
	z := cells.Sizing(r.Plan.Sweep, search)
	if r.bud != nil && r.bud.cap > 0 {
		z.MaxDuration = min(cmp.Or(z.MaxDuration, r.bud.cap), r.bud.cap)
	}
	return z
}

// levelCost is the fewest requests a sustained level of concurrency n costs (load.Sizing.Minimum
// of sizing): the dense-grid cost a capacity search compares itself with.
func (r *Runner) levelCost(n int) int { return cells.LevelCost(r.Plan.Sweep, n) }

// planned is how many requests the cell key sends at least (cells.Planned).
func (r *Runner) planned(key servebench.CellKey) int { return cells.Planned(r.Plan, r.inputs(), key) }

func (r *Runner) addCell(c servebench.CellResult) {
	r.res.AddCell(c)
	r.flush()
}

func (r *Runner) addCapacity(c servebench.CapacityResult) {
	r.res.AddCapacity(c)
	r.flush()
}

func (r *Runner) flush() {
	if r.Recorder != nil {
		if err := r.Recorder.WriteResults(r.Results()); err != nil {
			r.emit(Event{Kind: EventNote, Message: "could not write results.json: " + err.Error()})
		}
	}
}

// warmSeq is the sequence number of the prompt built ahead of each cell (never sent): the
// largest a marker can hold, so it cannot collide with a real request's.
const warmSeq = 1<<32 - 1

// ErrWrite marks a failure to persist records: the run stops rather than lose data.
var ErrWrite = errors.New("writing requests.jsonl failed")

// measureOnce runs one attempt at a cell and returns its result and how many requests it sent.
// An outage ends the attempt early with an *outageError. settled, when set, makes it a capacity
// level: it may stop as soon as settled says the level's verdict is certain (within the window
// rule and the caps of load.Sizing). Its jobs, in order: build what the cell needs before its
// clock matters (prepare), watch the server and the GPUs (startTelemetry), run the cell's
// requests through the load generator while keeping every record (cellRecords), then turn what
// it kept into the cell's log and result (finishCell).
func (r *Runner) measureOnce(ctx context.Context, key servebench.CellKey, phase string, idx, count, attempt int, settled func(servebench.CellResult) bool) (servebench.CellResult, int, servebench.CellLog, error) {
	firstSeq := r.seq.Load()
	if err := r.prepare(ctx, key); err != nil {
		return servebench.CellResult{}, 0, servebench.CellLog{}, err
	}
	// The attempt stops early (no new requests) when a write fails or the server goes away.
	cellCtx, stopCell := context.WithCancelCause(ctx)
	defer stopCell(nil)
	tel := r.startTelemetry(ctx)
	planned := r.planned(key)
	var live atomic.Pointer[CellProgress]
	kept := &cellRecords{r: r, attempt: attempt, stop: stopCell, watch: outageWatch{concurrency: key.Concurrency}}
	kept.then = func(rec servebench.Record, n int) {
		if r.sessions != nil && cells.SourceOf(key) == cells.SessionTurn {
			r.sessions.Ended(int(rec.Seq-firstSeq), rec.Turn, rec.EndOffsetSeconds)
		}
		r.emit(Event{Kind: EventRequest, Phase: phase, Cell: key, CellIndex: idx, CellCount: count, Requests: n, Planned: planned, Progress: live.Load()})
	}
	spec := r.spec(key, settled)
	spec.Judge = judge(key, &kept.mu, &kept.recs, settled, cells.Precision(r.Plan.Sweep), &live)
	gen := r.Load
	if gen == nil {
		gen = localLoad{r: r, phase: phase}
	}
	sched0 := host.SchedLatency()
	out, runErr := gen.Run(cellCtx, spec, r.sources().Requests(key, firstSeq), kept.sink)
	sched := stats.HistogramDelta(sched0, host.SchedLatency())
	readings := tel.stop()
	recs, err := kept.end(ctx, key, runErr)
	if err != nil {
		return servebench.CellResult{}, len(recs), servebench.CellLog{}, err
	}
	l := servebench.CellLog{Event: servebench.LogCell, Phase: phase, Cell: key, Attempt: attempt,
		WindowStartSeconds: out.WindowStart, WindowEndSeconds: out.WindowEnd, SchedLatency: &sched}
	r.finishLog(ctx, &l, recs, tel, readings)
	cell := r.cellFrom(l, recs)
	r.emit(Event{Kind: EventCellDone, Phase: phase, Cell: key, CellIndex: idx, CellCount: count, Requests: len(recs), Planned: planned, Result: &cell})
	return cell, len(recs), l, nil
}

// sources are the run's sources of prompts, as the cell being measured sees them.
func (r *Runner) sources() *workload.Sources {
	return &workload.Sources{Prompts: r.Prompts, Dataset: r.Dataset, Trace: r.Trace, Sessions: r.sessions}
}

// inputs are what the plan's files say that decides its cells (cells.Expand).
func (r *Runner) inputs() cells.Inputs {
	in := cells.Inputs{Dataset: r.Dataset != nil, ScriptTurns: workload.ScriptTurns(r.SessionScript)}
	if r.Trace != nil {
		in.TraceSchedule = r.Trace.Schedule()
	}
	return in
}

// expand is what the plan runs against this target (cells.Expand).
func (r *Runner) expand() []cells.Cell {
	return cells.Expand(r.Plan, cells.Server{MaxModelLen: r.Server.MaxModelLen}, r.inputs())
}

// prepare builds, before the cell's clock matters, one prompt of the length the cell's own
// prompts have, so counting calls to the server (tokenize, calibration) never overlap the
// measured phase; a session turn's attempt also starts here (nothing of an earlier one is kept).
func (r *Runner) prepare(ctx context.Context, key servebench.CellKey) error {
	if r.sessions != nil && cells.SourceOf(key) == cells.SessionTurn {
		r.sessions.Begin()
	}
	tokens := r.sources().AheadTokens(key, r.Plan.Sessions)
	if tokens <= 0 {
		return nil
	}
	if _, err := r.Prompts.Prompt(ctx, warmSeq, tokens); err != nil {
		if r.Probe != nil && ctx.Err() == nil && r.Probe(ctx) != nil {
			return &outageError{at: time.Now(), cause: "building a prompt: " + err.Error()}
		}
		return fmt.Errorf("cell %s: building a %d-token prompt: %w", key.ID(), tokens, err)
	}
	return nil
}

// spec is the load.Spec of the cell key: its sizing (a search level's when settled is set), its
// bursts, request count, rate and schedule, from the plan's cells (package cells).
func (r *Runner) spec(key servebench.CellKey, settled func(servebench.CellResult) bool) load.Spec {
	s := r.Plan.Sweep
	spec := load.Spec{
		Key: key, Sizing: r.sizing(settled != nil),
		Bursts: cells.Bursts(s), Requests: r.planned(key), Rate: key.RatePerSecond, Poisson: s.Arrivals != "constant",
		MaxDuration: time.Duration(s.Duration),
		Seed:        int64(key.ContextTokens)*7919 + int64(key.Concurrency), NextSeq: &r.seq,
		Clock: func() time.Duration { return time.Since(r.Origin) },
	}
	switch cells.SourceOf(key) {
	case cells.Trace:
		if r.Trace != nil {
			spec.Offsets = r.Trace.Schedule()
		}
	case cells.SessionTurn:
		if r.sessions != nil {
			spec.Groups = r.sessions.Active(key.Turn) // a session's turns stay on one worker
		}
	case cells.Population:
		spec.Population = r.pop
	}
	return spec
}

// telemetry is what watches the server and the GPUs during a cell: the server's metrics before
// it (or why there are none) and the GPU meter.
type telemetry struct {
	before    *promscrape.Snapshot
	scrapeErr error
	meter     *gpu.Meter
}

func (r *Runner) startTelemetry(ctx context.Context) *telemetry {
	t := &telemetry{}
	if r.Metrics != nil {
		t.before, t.scrapeErr = r.Metrics.Scrape(ctx)
	}
	if r.GPU != nil {
		t.meter = gpu.NewMeter(r.GPU, 250*time.Millisecond)
		t.meter.Start(ctx)
	}
	return t
}

// stop ends the GPU meter and returns its readings.
func (t *telemetry) stop() []gpu.Reading {
	if t.meter == nil {
		return nil
	}
	return t.meter.Stop()
}

// cellRecords keeps one attempt's records as they end: each is numbered with the attempt,
// written to the run folder and watched for an outage; a failed write or an outage stops the
// attempt (stop). then, when set, follows every record (n: the records so far).
type cellRecords struct {
	r       *Runner
	attempt int
	stop    context.CancelCauseFunc
	then    func(rec servebench.Record, n int)

	mu       sync.Mutex
	recs     []servebench.Record
	writeErr error
	watch    outageWatch
	outage   *outageError
}

func (c *cellRecords) sink(rec servebench.Record) {
	rec.CellAttempt = c.attempt
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	n := len(c.recs)
	if err := c.r.Recorder.Append(rec); err != nil && c.writeErr == nil {
		c.writeErr = err
		c.stop(err)
	}
	if c.r.Probe != nil && c.outage == nil && c.watch.see(rec) {
		c.outage = &outageError{at: time.Unix(0, rec.StartUnixNano), cause: string(rec.ErrorClass) + ": " + rec.Error}
		c.stop(c.outage)
	}
	c.mu.Unlock()
	c.r.tally(rec)
	if c.then != nil {
		c.then(rec, n)
	}
}

// end is the attempt's records once its generator returned runErr, or why the attempt does not
// count: a failed write (ErrWrite), an outage (*outageError), the generator's error, or ctx's.
func (c *cellRecords) end(ctx context.Context, key servebench.CellKey, runErr error) ([]servebench.Record, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.writeErr != nil:
		return c.recs, fmt.Errorf("%w: %w (nothing measured so far is lost; fix the disk problem and --resume the run)", ErrWrite, c.writeErr)
	case c.outage != nil && ctx.Err() == nil:
		for _, rec := range c.recs {
			if !rec.OK() {
				c.outage.failed++
			}
		}
		return c.recs, c.outage
	case runErr != nil && ctx.Err() == nil:
		return c.recs, fmt.Errorf("cell %s: %w", key.ID(), runErr)
	case ctx.Err() != nil:
		return c.recs, ctx.Err()
	}
	return c.recs, nil
}

// finishLog completes a measured attempt's log: the records it covers, what the server's
// metrics and the GPUs said.
func (r *Runner) finishLog(ctx context.Context, l *servebench.CellLog, recs []servebench.Record, tel *telemetry, readings []gpu.Reading) {
	for i, rec := range recs {
		if i == 0 || rec.Seq < l.FirstSeq {
			l.FirstSeq = rec.Seq
		}
		l.EndSeq = max(l.EndSeq, rec.Seq+1)
	}
	r.readServer(ctx, l, recs, tel.before, tel.scrapeErr)
	if r.GPU != nil {
		l.PowerSource = r.GPU.Name()
		for _, rd := range readings {
			l.Power = append(l.Power, rd.Power(r.Origin))
		}
		if tel.meter != nil {
			if n, err := tel.meter.Refused(); n > 0 {
				l.PowerNote = fmt.Sprintf("%d GPU reading(s) of the cell refused as impossible (the first: %v)", n, err)
			}
		}
	} else {
		l.PowerNote = r.GPUNote
	}
}

// readServer completes l with what the server's metrics say about the cell's requests: a
// scrape after the cell, compared with before (or why there is none). The scrape waits for the
// server's histograms only when some request lacked the server's own timings, and for at most
// 5% of the cell's span (serverWait) while they do not move.
func (r *Runner) readServer(ctx context.Context, l *servebench.CellLog, recs []servebench.Record, before *promscrape.Snapshot, scrapeErr error) {
	if r.Metrics != nil && before != nil {
		after, why, err := r.Metrics.After(ctx, before, serverWait(recs))
		if err == nil && after != nil {
			d := promscrape.Delta(before, after)
			d.Wait = why
			l.Metrics = &d
		} else if err != nil {
			scrapeErr = err
		}
	}
	l.ServerNote = r.MetricsNote
	if scrapeErr != nil {
		l.ServerNote = "the server's metrics could not be read: " + scrapeErr.Error()
	}
}

// serverWait is what the scrape after a cell needs: the histograms when some finished request
// came without the server's queue and prefill timings, waited for while they move and for at
// most Quiet = 5% of the cell's span (first start to last end; at least 100 ms, at most 2 s)
// while they do not, and 10 s in all.
func serverWait(recs []servebench.Record) promscrape.Wait {
	w := promscrape.Wait{Timeout: 10 * time.Second}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range recs {
		rec := &recs[i]
		lo, hi = min(lo, rec.StartOffsetSeconds), max(hi, rec.EndOffsetSeconds)
		if !rec.OK() {
			continue
		}
		w.Requests++
		if st := rec.Server; st == nil || st.QueueSeconds == nil || st.PrefillSeconds == nil {
			w.Histograms = true
		}
	}
	span := time.Duration(0)
	if hi > lo {
		span = time.Duration((hi - lo) * float64(time.Second))
	}
	w.Quiet = min(max(span/20, 100*time.Millisecond), 2*time.Second)
	return w
}

// cellFrom computes a measured cell from its records and what the run kept of it (l):
// results.Cell under the run's plan.
func (r *Runner) cellFrom(l servebench.CellLog, recs []servebench.Record) servebench.CellResult {
	return results.Cell(r.Plan, l, recs)
}

// localLoad is the Generator of a local run: load.Run with the runner's Client.
type localLoad struct {
	r     *Runner
	phase string
}

func (l localLoad) Run(ctx context.Context, spec load.Spec, next load.Source, sink load.Sink) (load.Outcome, error) {
	// Open the cell's connections now, so that its first wave pays for no dial.
	if pw, ok := l.r.Client.(prewarmer); ok {
		if _, err := pw.Prewarm(ctx, spec.Key.Concurrency); err != nil {
			l.r.emit(Event{Kind: EventNote, Phase: l.phase, Cell: spec.Key, Message: spec.Key.ID() + ": " + err.Error()})
		}
	}
	return load.Run(ctx, spec, l.r.Client, next, sink)
}

// throughputForecast is the relative half-width the cell's output-throughput interval would
// have were the window [ws, now] to close now, as stats.Assess will judge it: the batch-means
// interval on the same grid (k = stats.ThroughputBatches(now − ws, mean e2e) equal batches),
//
//	t(0.975, k − 1) · s / √k / mean,   s, mean over the batches already complete
//
// where a batch is complete when it ended at least the longest end-to-end latency seen before
// now (every request that produced tokens in it has finished). The batches still open hold
// requests in flight, whose tokens are not known yet; their spread is taken to be that of the
// complete ones. +Inf while fewer than 2 batches are complete. Judging the finished part of the
// window as a window of its own instead (its own grid, fewer batches) let cells stop on a
// lucky 2-batch interval that the closed window, cut differently, did not confirm.
func throughputForecast(rs []servebench.Record, ws, now, longest, e2e float64) float64 {
	k := stats.ThroughputBatches(now-ws, e2e)
	if k < 2 {
		return math.Inf(1)
	}
	step := (now - ws) / float64(k)
	done := min(k, int(math.Floor((now-longest-ws)/step+1e-9)))
	if done < 2 {
		return math.Inf(1)
	}
	bs := stats.BatchOutputThroughputs(rs, stats.Window{Start: ws, End: ws + float64(done)*step}, done)
	iv, ok := stats.MeanCI95(bs)
	if !ok {
		return math.Inf(1)
	}
	m := (iv.Low + iv.High) / 2
	if m <= 0 {
		return math.Inf(1)
	}
	sd := (iv.High - iv.Low) / 2 / stats.StudentT(0.975, done-1) * math.Sqrt(float64(done))
	return stats.StudentT(0.975, k-1) * sd / math.Sqrt(float64(k)) / m
}

// judge reports a sustained cell's statistical progress to its driver (load.Spec.Judge) from
// the records so far (recs, guarded by mu): the relative half-widths of the mean-TTFT and
// output-throughput intervals and, for a capacity level, whether its verdict is settled.
// Throughput is judged over [windowStart, now − the longest end-to-end latency seen], the part
// of the window whose requests have all finished. It recomputes only when at least a tenth more
// records (and one more) have arrived since the last time.
//
// It runs on a slot's goroutine between two of its requests (under the driver's lock), so it
// must stay cheap: BenchmarkJudge.
//
// Each time it recomputes, it also leaves the estimates in live for the live view (target is the
// precision aimed for); nothing reads them on the driver's side.
func judge(key servebench.CellKey, mu *sync.Mutex, recs *[]servebench.Record, settled func(servebench.CellResult) bool, target float64, live *atomic.Pointer[CellProgress]) func(ws, now float64) load.Progress {
	switch key.LoadMode {
	case servebench.ModeSustained, servebench.ModeUsers, "":
	case servebench.ModeDedicated:
		// bursts: the mean-TTFT interval only (stats.Assess judges no throughput of a burst)
		return func(ws, now float64) load.Progress {
			mu.Lock()
			rs := slices.Clone(*recs)
			mu.Unlock()
			for i := range rs {
				rs[i].ChunkGapsSeconds = nil
			}
			c := stats.Cell(key, rs, stats.Window{Start: ws, End: now})
			return load.Progress{TTFTRelHalfWidth: c.TTFTSeconds.CI95RelHalfWidth()}
		}
	default:
		return nil
	}
	var last load.Progress
	seen := -1
	return func(ws, now float64) load.Progress {
		mu.Lock()
		n := len(*recs)
		if seen >= 0 && n < seen+max(1, seen/10) {
			mu.Unlock()
			return last
		}
		rs := slices.Clone(*recs)
		mu.Unlock()
		seen = n
		// Nothing judged here reads the chunk gaps, and summarising them (every gap of every
		// record, sorted) was most of a recompute: 12 ms of CPU at 256 streams × 64 tokens,
		// long enough to delay the reads of every other stream on a busy client CPU.
		var longest float64
		for i := range rs {
			rs[i].ChunkGapsSeconds = nil
			if !rs[i].Warmup && rs[i].OK() {
				longest = max(longest, rs[i].E2ELatencySeconds)
			}
		}
		c := stats.Cell(key, rs, stats.Window{Start: ws, End: now})
		last = load.Progress{TTFTRelHalfWidth: c.TTFTSeconds.CI95RelHalfWidth(), ThroughputRelHalfWidth: math.Inf(1)}
		last.ThroughputRelHalfWidth = throughputForecast(rs, ws, now, longest, c.E2ELatencySeconds.Mean)
		if settled != nil {
			last.Settled = settled(c)
		}
		if live != nil && c.TTFTSeconds.Count > 0 {
			live.Store(&CellProgress{WindowSeconds: now - ws, TTFTMean: c.TTFTSeconds.Mean, TTFTRelHalfWidth: last.TTFTRelHalfWidth,
				Throughput: c.SystemOutputThroughputTPS, ThroughputRelHalfWidth: last.ThroughputRelHalfWidth, Target: target, Settled: last.Settled})
		}
		return last
	}
}

// budgetSkipNote is the note of a sweep cell the time budget left unmeasured.
const budgetSkipNote = "skipped: the run's time budget (--max-time) had no time left for this cell"

// skipSweepCell records sweep cell key as skipped, with note saying why.
func (r *Runner) skipSweepCell(key servebench.CellKey, note string) error {
	if err := r.keep(servebench.CellLog{Event: servebench.LogSkipped, Phase: servebench.PhaseSweep, Cell: key, Note: note}); err != nil {
		return err
	}
	r.addCell(skippedCell(key, note))
	return nil
}

// measureSweepCell measures sweep cell c, the (i+1)-th of n (rest: the cells still to come after
// it, for the live view's estimate), and adds its result to done and to the run.
func (r *Runner) measureSweepCell(ctx context.Context, c cells.Cell, rest []cells.Cell, i, n int, done map[servebench.CellKey]servebench.CellResult) error {
	r.startCell(c, rest)
	r.emit(Event{Kind: EventCellStart, Phase: servebench.PhaseSweep, Cell: c.Key, CellIndex: i + 1, CellCount: n, Planned: c.Requests})
	res, _, err := r.measure(ctx, c.Key, servebench.PhaseSweep, i+1, n, nil)
	r.bud.cellStopped(res)
	r.endCell(c.Key, res)
	if err != nil {
		return err
	}
	done[c.Key] = res
	r.addCell(res)
	return nil
}
