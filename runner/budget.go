package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/stats"
)

// errBudget ends a capacity search whose next level does not fit the time the run's budget
// leaves it; the search is then decided on the levels it measured (a lower bound, or a limit
// between two of them).
var errBudget = errors.New("the run's time budget leaves no time for this level")

// capacityShare is the part of a time budget the sweep leaves to the capacity searches when
// the plan has use cases: the sweep's cells share the rest. Three quarters: on GLM-4.7-Flash /
// H200 (the reference report's grid, --max-time 10m, on virtual time) half left the long-context
// searches one level each (Long Document 1+, Coding Assistant 1+); three quarters, with the
// sweep's search levels first (levelsFirst) and the level costs calibrated (budget.overrun),
// brackets Coding Assistant (1: 2 fails) and takes Long Document to 2+ (TestBudgetKeepsMaxTime).
const capacityShare = 0.75

// budget is the plan's total time budget (sweep.max_time) and how the run keeps it. It measures
// less precisely rather than less: every sustained cell drops the plan's count floors
// (min_requests, rounds) to the window rule's (a window of 2 × the mean end-to-end latency and
// 2 × N requests after a warm-up of N), which no budget cuts, and stops aiming for its
// precision at its share of the time left (share below); a capacity search stops before a level
// whose least cost (minLevelCost) does not fit its use case's share, and is decided on the
// levels it measured. What it did is written in the run's notes (Notes).
//
//	share of a sweep cell     = (time left − capacity reserve) × w(cell) / Σ w(remaining sweep cells)
//	time left                 = the budget's end less budgetReserve × budget, less now
//	capacity reserve          = capacityShare × budget while any use case is left to search,
//	                            never more than the time left
//	share of a use case       = time left / use cases left to search (itself included)
//	share of a capacity level = share of its use case / 2; a level whose expected cost
//	                            (levelCost: minLevelCost × the largest overrun of it seen so
//	                            far) is more than its use case's share is not measured
//	w(cell)                   = its expected mean end-to-end latency (estimateCell's e2e; 1 s
//	                            when nothing measured can tell)
//
// A cell's precision window is capped at its share less one expected end-to-end latency (the
// warm-up), never below 0: the floors of the window rule still hold, so a cell past its share
// overruns it and the later shares shrink. The sweep measures first its cells that are also a
// use case's capacity level (levelsFirst), so the cells the budget leaves out are the ones no
// search reuses.
type budget struct {
	total    time.Duration
	deadline time.Time // the shares' end: end less budgetReserve × total
	end      time.Time // the run's start + total
	// cap is the current cell's precision window cap (0: none)
	cap time.Duration
	// capped counts cells stopped at their share before their precision; cut names the use cases
	// whose search the budget ended; skipped counts sweep cells the budget left unmeasured
	capped  int
	cut     []string
	skipped int
	// levelEst and levelStart are the capacity level in progress's least cost (minLevelCost of
	// its expected latency) and its start; overrun is the largest ratio of a measured level's
	// wall time to its least cost so far (at least 1): a level's expected latency comes from the
	// levels below it, and a level's latency grows with its concurrency
	levelEst   time.Duration
	levelStart time.Time
	overrun    float64
}

// levelCost is what the budget counts on a capacity level of expected mean end-to-end latency
// e2e to cost: minLevelCost, times the largest overrun of that estimate seen so far.
func (b *budget) levelCost(e2e float64) time.Duration {
	return time.Duration(float64(minLevelCost(e2e)) * max(b.overrun, 1))
}

// budgetReserve is the part of a time budget kept back from the shares: cells overrun their
// share by up to a warm-up (the window rule's floors are never cut), and the results and report
// are written after the last cell.
const budgetReserve = 0.05

func newBudget(total time.Duration, start time.Time) *budget {
	if total <= 0 {
		return nil
	}
	return &budget{total: total, end: start.Add(total), deadline: start.Add(time.Duration((1 - budgetReserve) * float64(total)))}
}

// left is the time until the deadline (negative when past it).
func (b *budget) left() time.Duration { return time.Until(b.deadline) }

// minLevelCost is the least wall time a sustained cell with mean end-to-end latency e2e (s) can
// be counted on to take under the window rule: a warm-up of one latency, a window of two, and
// one more for the requests still running when the window closes and the first round's
// longer latencies (all N prompts arrive together).
func minLevelCost(e2e float64) time.Duration { return seconds(4 * e2e) }

// expected is the mean end-to-end latency the runner expects of k from the cells measured so
// far, 0 when nothing measured can tell.
func (r *Runner) expected(k servebench.CellKey) float64 {
	var usable []cellCost
	for _, d := range r.family(k) {
		if d.e2e > 0 && d.wall > 0 {
			usable = append(usable, d)
		}
	}
	if len(usable) == 0 {
		return 0
	}
	return expectedE2E(k, usable)
}

// sweepCell sets the cap of the sweep cell key, rest being the sweep cells after it, and says
// whether any time is left for it at all.
func (r *Runner) budgetSweepCell(key servebench.CellKey, rest []cells.Cell, useCasesLeft int) bool {
	b := r.bud
	if b == nil {
		return true
	}
	left := b.left()
	if useCasesLeft > 0 {
		left -= min(time.Duration(capacityShare*float64(b.total)), max(left, 0))
	}
	if left <= 0 {
		b.skipped++
		return false
	}
	w := func(k servebench.CellKey) float64 {
		if e := r.expected(k); e > 0 {
			return e
		}
		return 1
	}
	sum := w(key)
	for _, k := range rest {
		sum += w(k.Key)
	}
	share := time.Duration(float64(left) * w(key) / sum)
	b.cap = max(share-seconds(r.expected(key)), time.Millisecond)
	return true
}

// budgetLevel decides whether the capacity level key of a search that already has points (or
// not) fits the budget and sets its cap; useCasesLeft counts the use cases still to search,
// this one included.
func (r *Runner) budgetLevel(key servebench.CellKey, hasPoints bool, useCasesLeft int) error {
	b := r.bud
	if b == nil {
		return nil
	}
	share := b.left() / time.Duration(max(useCasesLeft, 1))
	e := r.expected(key)
	if hasPoints && (share <= 0 || (e > 0 && b.levelCost(e) > share)) {
		return errBudget
	}
	if !hasPoints && b.left() <= 0 {
		return errBudget
	}
	b.levelEst, b.levelStart = minLevelCost(e), time.Now()
	b.cap = max(share/2-seconds(e), time.Millisecond)
	return nil
}

// cellStopped counts a finished sustained cell that stopped at its budget cap before its
// precision (its validity then carries too-few-samples).
func (b *budget) cellStopped(c servebench.CellResult) {
	if b == nil {
		return
	}
	if c.WindowSeconds >= b.cap.Seconds()*0.99 && hasReason(c.Validity, servebench.ReasonTooFewSamples) {
		b.capped++
	}
	if b.levelEst > 0 {
		b.overrun = max(b.overrun, float64(time.Since(b.levelStart))/float64(b.levelEst))
	}
	b.cap, b.levelEst = 0, 0
}

func hasReason(v servebench.Validity, r servebench.Reason) bool {
	for _, x := range v.Reasons {
		if x == r {
			return true
		}
	}
	return false
}

// note is the run note saying how the budget was kept ("" without a budget).
func (b *budget) note(plan servebench.Sweep) string {
	if b == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "Time budget %s (--max-time): every sustained cell measured only the window rule's minimum (a warm-up of N requests, then at least %d × N requests over at least %d × the mean end-to-end latency) instead of the plan's floors",
		shortDur(b.total), stats.MinRequestsPerSlot, stats.MinWindowLifetimes)
	if plan.MinRequests > 0 || plan.Rounds > 0 {
		fmt.Fprintf(&s, " (min_requests %d, rounds %d)", plan.MinRequests, plan.Rounds)
	}
	fmt.Fprintf(&s, ", and aimed for ±%.0f%% only within its share of the time left", 100*precisionOr(plan.Precision))
	switch b.capped {
	case 0:
		s.WriteString(".")
	case 1:
		s.WriteString("; 1 cell stopped at its share before it was that precise (marked low-confidence: too-few-samples).")
	default:
		fmt.Fprintf(&s, "; %d cells stopped at their share before they were that precise (marked low-confidence: too-few-samples).", b.capped)
	}
	if b.skipped > 0 {
		fmt.Fprintf(&s, " %d sweep cell(s) were not measured: the budget had no time left for them (the sweep measured first the cells that are also a use case's capacity level).", b.skipped)
	}
	if len(b.cut) > 0 {
		fmt.Fprintf(&s, " The budget ended the capacity search of %s before its limit was bracketed: each is decided on the levels it measured (a lower bound where every level passed); a longer --max-time measures further.", strings.Join(b.cut, ", "))
	}
	return s.String()
}

// precisionOr is the precision p aimed for (cells.Precision: stats.DefaultRelHalfWidth when p is
// unset).
func precisionOr(p float64) float64 { return cells.Precision(servebench.Sweep{Precision: p}) }

// shortDur writes 10m0s as "10m", 90s as "1m30s".
func shortDur(d time.Duration) string {
	s := d.Round(time.Second).String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	if s == "" {
		return "0s"
	}
	return s
}

// budgetDecide decides the capacity search of uc that the time budget ended, on the levels it
// measured (capacity.Decide: a lower bound at the highest passing level when none failed, else
// a limit between the highest passing and the lowest failing level), with a note saying so;
// levelCost is the dense grid's cost of a level (capacity.Decide).
func budgetDecide(uc servebench.UseCase, ceiling int, points []servebench.CapacityPoint, levelCost func(int) int) servebench.CapacityResult {
	res := capacity.Decide(uc, ceiling, points, levelCost)
	for _, p := range res.Points {
		res.RequestsSpent += p.RequestsSpent
		res.ServerSecondsSpent += p.ServerSeconds
	}
	top := 0
	for _, p := range res.Points {
		top = max(top, p.Concurrency)
	}
	if len(res.Points) == 0 {
		res.Skipped = true
		res.Note = "not searched: the run's time budget (--max-time) ran out before this use case; a longer budget searches it"
	} else {
		res.Note = fmt.Sprintf("the run's time budget (--max-time) ended this search after level %d, before its limit was bracketed; a longer budget measures further", top)
	}
	return res
}

// levelsFirst orders a budgeted run's sweep so that the cells that are also a use case's
// capacity level (sustained, at its context and output length: its search reuses them) come
// first, by concurrency (the levels every search starts with, 1 and 2, before the ones it may
// jump over), then the other sweep cells and the dedicated scenarios' cells in the plan's order:
// when the budget leaves no time for every cell, the ones it leaves out decide no use case, and
// the time a search level costs buys a sweep cell too.
func levelsFirst(sweep []cells.Cell, ucs []servebench.UseCase) []cells.Cell {
	level := func(k servebench.CellKey) bool {
		if k.Kind != servebench.KindSweep || k.LoadMode != servebench.ModeSustained {
			return false
		}
		for _, uc := range ucs {
			if k.ContextTokens == int(uc.ContextTokens) && k.OutputTokens == int(uc.OutputTokens) {
				return true
			}
		}
		return false
	}
	rank := func(c cells.Cell) int {
		switch {
		case level(c.Key):
			return 0
		case c.Key.Kind == servebench.KindSweep:
			return 1
		}
		return 2
	}
	out := slices.Clone(sweep)
	slices.SortStableFunc(out, func(a, b cells.Cell) int {
		if ra, rb := rank(a), rank(b); ra != rb || ra != 0 {
			return ra - rb
		}
		return a.Key.Concurrency - b.Key.Concurrency
	})
	return out
}
