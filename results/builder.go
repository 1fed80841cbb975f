package results

import (
	"fmt"
	"slices"
	"sync"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
)

// Builder folds what a run decides into its Results as it goes: cells (each with the notes it
// gives, Notes), capacity decisions, users' capacities, rate searches, outages and run-level
// notes. A live run folds each as it is measured and decided; Recompute folds the same values
// read back from the run folder, so both take this one path. The zero Builder is empty and
// ready; it is safe for concurrent use.
type Builder struct {
	mu       sync.Mutex
	cells    []servebench.CellResult
	notes    []note
	caps     []servebench.CapacityResult
	users    []servebench.UsersCapacity
	searches []servebench.RateSearchResult
	outages  []servebench.Outage
	// short counts the measured requests whose output length differed from the one asked for.
	short int
}

// note is a run-level note; cell is the cell it is about (dropped with it), nil for the run's.
type note struct {
	cell *servebench.CellKey
	text string
}

// Run is what Results needs to know of the run besides what was folded.
type Run struct {
	Plan   servebench.Plan
	Server servebench.ServerInfo
	// Info identifies the run; its FinishedAt is when the results say it finished.
	Info servebench.RunInfo
	// Notes are run-level facts known before the run measured anything; listed first.
	Notes []string
	// Workers are the processes of a distributed run (nil in a local run).
	Workers []servebench.Worker
}

// AddCell folds a cell (measured or skipped) and the notes it gives.
func (b *Builder) AddCell(c servebench.CellResult) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cells = append(b.cells, c)
	for _, n := range Notes(c) {
		b.notes = append(b.notes, note{cell: &c.CellKey, text: n})
	}
}

// DropCells forgets the cells drop reports, and their notes (a cell measured again replaces
// them).
func (b *Builder) DropCells(drop func(servebench.CellKey) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cells = slices.DeleteFunc(b.cells, func(c servebench.CellResult) bool { return drop(c.CellKey) })
	b.notes = slices.DeleteFunc(b.notes, func(n note) bool { return n.cell != nil && drop(*n.cell) })
}

// AddCapacity folds a use case's capacity decision.
func (b *Builder) AddCapacity(c servebench.CapacityResult) {
	b.mu.Lock()
	b.caps = append(b.caps, c)
	b.mu.Unlock()
}

// AddUsers folds a use case's capacity in concurrent users.
func (b *Builder) AddUsers(u servebench.UsersCapacity) {
	b.mu.Lock()
	b.users = append(b.users, u)
	b.mu.Unlock()
}

// AddRateSearch folds what a rate search (--rate auto) found at one context.
func (b *Builder) AddRateSearch(s servebench.RateSearchResult) {
	b.mu.Lock()
	b.searches = append(b.searches, s)
	b.mu.Unlock()
}

// AddOutage folds an outage and the note stating it (OutageNote).
func (b *Builder) AddOutage(o servebench.Outage) {
	b.mu.Lock()
	b.outages = append(b.outages, o)
	b.notes = append(b.notes, note{text: OutageNote(o)})
	b.mu.Unlock()
}

// AddNote folds a run-level note.
func (b *Builder) AddNote(text string) {
	b.mu.Lock()
	b.notes = append(b.notes, note{text: text})
	b.mu.Unlock()
}

// Count counts a finished request of the run (any attempt) among those that stopped short of,
// or ran past, the output length asked for; Results says how many.
func (b *Builder) Count(rec servebench.Record) {
	if rec.OK() && rec.LengthMismatch && !rec.Warmup {
		b.mu.Lock()
		b.short++
		b.mu.Unlock()
	}
}

// Unsearched folds, after a run that stopped early, an interrupted capacity result with no
// levels for every use case of plan p that has none yet, so each still appears in the results
// and the report ("not measured (search interrupted)") instead of vanishing. It reports whether
// it folded any.
func (b *Builder) Unsearched(p servebench.Plan) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	have := map[string]bool{}
	for _, c := range b.caps {
		have[c.UseCase] = true
	}
	added := false
	for _, uc := range p.UseCases {
		if have[uc.Name] {
			continue
		}
		st := uc.Statistic
		if st == "" {
			st = servebench.StatMean
		}
		b.caps = append(b.caps, servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, ContextTokens: int(uc.ContextTokens),
			OutputTokens: int(uc.OutputTokens), Statistic: st, Thresholds: uc.Thresholds, Ceiling: p.Capacity.MaxConcurrency,
			Interrupted: true, Note: "the run stopped before this use case's search measured a level"})
		added = true
	}
	return added
}

// Results returns what has been folded so far as results.json: the cells in order (Sort) with
// their scaling efficiency, the notes (run's first, then in the order folded, then the output
// length's), the capacity decisions and, when there are any, the Capacity Planning sizing.
func (b *Builder) Results(run Run) servebench.Results {
	b.mu.Lock()
	defer b.mu.Unlock()
	cells := slices.Clone(b.cells)
	Sort(cells)
	stats.ScalingEfficiency(cells)
	notes := slices.Clone(run.Notes)
	for _, n := range b.notes {
		notes = append(notes, n.text)
	}
	if n := b.short; n > 0 && !run.Server.ForcesOutputLength {
		notes = append(notes, fmt.Sprintf("The server cannot be forced to produce an exact output length (no ignore_eos): %d request(s) stopped short of the requested output tokens.", n))
	} else if n > 0 {
		notes = append(notes, fmt.Sprintf("%d request(s) returned a different number of output tokens than requested although ignore_eos and min_tokens were sent.", n))
	}
	res := servebench.Results{
		SchemaVersion: servebench.SchemaVersion,
		Run:           run.Info,
		Cells:         cells,
		Capacity:      slices.Clone(b.caps),
		Notes:         notes,
		Outages:       slices.Clone(b.outages),
		RateSearches:  slices.Clone(b.searches),
		Users:         slices.Clone(b.users),
		Workers:       run.Workers,
	}
	if capacity.Sizable(res.Capacity, res.Users) {
		sz := capacity.Size(res.Capacity, capacity.SizingInput{Plan: run.Plan.Sizing, DeclaredGPU: run.Plan.Metadata.GPU, Cells: cells, Users: res.Users})
		res.Sizing = &sz
	}
	return res
}

// Sort orders cells as results.json lists them: by kind, then key (CellKey.Compare), so the
// sweep's cells never interleave with a scenario's or a capacity search's.
func Sort(cells []servebench.CellResult) {
	slices.SortStableFunc(cells, func(a, b servebench.CellResult) int { return a.CellKey.Compare(b.CellKey) })
}

// OutageNote states an outage with its times for the report.
func OutageNote(o servebench.Outage) string {
	if o.Worker != "" {
		return fmt.Sprintf("Worker lost: worker %s dropped out at %s UTC during cell %s (%s). Its %d request(s) in flight are recorded as failed (error class %s); the attempt's %d request(s) stay in requests.jsonl as discarded attempt %d (cell_attempt %d), and the cell was measured again from its start with the workers that remained.",
			o.Worker, o.StartedAt.Format("15:04:05.000"), o.Cell.ID(), clipCause(o.Cause), o.Failed, servebench.ErrWorkerLost, o.Requests, o.Attempt, o.Attempt)
	}
	note := fmt.Sprintf("Outage: the server stopped answering at %s UTC during cell %s (%s)", o.StartedAt.Format("15:04:05.000"), o.Cell.ID(), clipCause(o.Cause))
	if o.Recovered {
		note += fmt.Sprintf(" and answered again at %s UTC, %.1f s later. ", o.EndedAt.Format("15:04:05.000"), o.DownSeconds)
		note += fmt.Sprintf("The %d request(s) of that attempt (%d failed) stay in requests.jsonl as discarded attempt %d (cell_attempt %d); the cell was measured again from its start.", o.Requests, o.Failed, o.Attempt, o.Attempt)
	} else {
		note += fmt.Sprintf(" and did not answer again within %.0f s; the run stopped there (a --resume continues it).", o.DownSeconds)
	}
	return note
}

// clipCause shortens an error's text for a note.
func clipCause(s string) string { return servebench.TerminalText(s, 160, false) }
