package runner

import (
	"context"
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
// precision at its share of the time left (share below). The run measures, in this order: the
// sweep's cells that are also a use case's capacity level (levelsFirst), within the time the
// capacity reserve leaves; the capacity searches, interleaved one level at a time, the first
// levels first, then by least cost with a level that can bracket a limit first at up to twice
// the cost and a lower bound raised again counted at more (decider.searchInterleaved, valueWeight), a search ending, decided on the levels it measured,
// when its next level's expected cost (levelCost) does not fit the time left (fits); then the
// other sweep and scenario cells (deferSweep, sweepLater) with what the searches left. What it
// did is written in the run's notes (Notes).
//
//	share of a sweep cell     = (time left − capacity reserve) × w(cell) / Σ w(remaining sweep cells)
//	time left                 = the budget's end less budgetReserve × budget, less now
//	capacity reserve          = capacityShare × budget while any use case is left to search,
//	                            never more than the time left
//	cost of a capacity level  = levelCost: minLevelCost of its expected latency × the overrun
//	                            of the levels measured so far (their wall time over their least
//	                            cost, summed); measured when it ends before the budget's end
//	                            less its tail (fits: 2%, at least 3 s), a sweep cell before the
//	                            searches when it ends before the capacity reserve too; with no
//	                            estimate yet, when any time is left
//	share of a capacity level = time left / searches still running / 2
//	w(cell)                   = its expected mean end-to-end latency (estimateCell's e2e; 1 s
//	                            when nothing measured can tell)
//
// A cell's precision window is capped at its share less one expected end-to-end latency (the
// warm-up), never below 0: the floors of the window rule still hold, so a cell past its share
// overruns it and the later shares shrink.
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
	// its expected latency) and its start; tookSum and estSum add up, over the levels measured,
	// their wall times and their least costs (seconds): their ratio is the calibration of the
	// estimate (overrun)
	levelEst        time.Duration
	levelStart      time.Time
	tookSum, estSum float64
}

// overrun is how far the levels measured so far took longer than their least cost, all
// together: their wall time over their least cost (minLevelCost of the latency expected before
// each was measured), summed, at least 1. Summed rather than the largest single ratio: on
// GLM-4.7-Flash / H200 a cheap level far above the one below it (Code Completion's 108 after
// 27, 16.6 s for 8.8 s expected) made the largest ratio 1.9, and every level after was counted
// at almost twice its cost, so Coding Assistant's level 2 (102.6 s) was counted at ~141 s and
// refused with 103 s left; summed, the long levels (the ones whose estimate matters) weigh in
// by their length.
func (b *budget) overrun() float64 {
	if b.estSum <= 0 {
		return 1
	}
	return max(b.tookSum/b.estSum, 1)
}

// levelCost is what the budget counts on a capacity level of concurrency n and expected mean
// end-to-end latency e2e to cost: minLevelCost, times the overrun of the levels measured so
// far.
func (b *budget) levelCost(e2e float64, n int) time.Duration {
	return time.Duration(float64(minLevelCost(e2e, n)) * b.overrun())
}

// budgetTail is the part of a time budget no level or cell is started into: the results and the
// report are written after the last one (a few seconds at most), and the last level's cost is an
// estimate. 2% of the budget, at least 3 s.
func (b *budget) tail() time.Duration {
	return max(b.total/50, 3*time.Second)
}

// fits reports whether a level or cell expected to cost cost, started now, ends before the
// budget's end less its tail.
func (b *budget) fits(cost time.Duration) bool {
	return cost <= time.Until(b.end)-b.tail()
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

// minLevelCost is the least wall time a sustained cell of concurrency n with mean end-to-end
// latency e2e (s) can be counted on to take under the window rule: a warm-up of one latency, a
// window of two, and one more for the requests still running when the window closes and the
// first round's longer latencies (all N prompts arrive together); at one request in flight
// there is neither (the warm-up request and the two measured ones, one after another: 3 × e2e,
// as every level at 1 took on GLM-4.7-Flash, TestBudgetKeepsMaxTime's log).
func minLevelCost(e2e float64, n int) time.Duration {
	if n == 1 {
		return seconds(3 * e2e)
	}
	return seconds(4 * e2e)
}

// expected is the mean end-to-end latency the runner expects of k from the cells measured so
// far, 0 when nothing measured can tell.
func (r *Runner) expected(k servebench.CellKey) float64 { return levelOrder(k, r.costs) }

// jumpMargin is how many times its expected cost (levelCost) a capacity level is counted when the
// budget tests whether it fits: jumpFactor for a level more than twice the highest concurrency
// measured at its context and output length, whose latency is extrapolated from levels far
// below it (or from another context's or output length's growth), else 1. Only the fit test:
// the order of the levels (levelValueCost) is unchanged.
func (r *Runner) jumpMargin(k servebench.CellKey) float64 {
	top := 0
	for _, c := range r.costs {
		if c.key.ContextTokens == k.ContextTokens && c.key.OutputTokens == k.OutputTokens {
			top = max(top, c.key.Concurrency)
		}
	}
	if top > 0 && k.Concurrency > 2*top {
		return jumpFactor
	}
	return 1
}

// jumpFactor is jumpMargin's margin for a level far above those measured. On GLM-4.7-Flash /
// H200 (a real --max-time 10m run on a 2-core machine at load ~10), Short-form Chatbot's level
// 32, after 8, was expected at ~56 s (× the overrun, ~64 s), started with 71 s left and took
// 90 s (its latency 21.5 s, not the ~14 s expected): the run ended at 607.8 s of its 600.
// Counted at 1.5 × it does not fit; General Chatbot's 8 after 2 (~82 s expected, 105 s taken)
// still fits where it started (137 s left, TestBudgetKeepsMaxTime).
const jumpFactor = 1.5

// sweepCell sets the cap of the sweep cell key, rest being the sweep cells after it, and says
// whether any time is left for it at all.
func (r *Runner) budgetSweepCell(key servebench.CellKey, rest []cells.Cell, useCasesLeft int) bool {
	b := r.bud
	if b == nil {
		return true
	}
	left := b.left()
	var reserve time.Duration
	if useCasesLeft > 0 {
		reserve = min(time.Duration(capacityShare*float64(b.total)), max(left, 0))
		left -= reserve
	}
	// a cell whose least cost does not fit before the reserve (or the budget's end) is not
	// started: the window rule's floors are never cut, so it would overrun
	if e := r.expected(key); left <= 0 || e > 0 && !b.fits(b.levelCost(e, key.Concurrency)+reserve) {
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
// not) fits the budget and sets its cap; useCasesLeft counts the searches still running, this
// one included. A level fits when its expected cost (levelCost) is within the time left; a
// search's first level, when any time is left at all. Its precision window is capped at half
// an equal share of the time left less its expected latency (the window rule's floors are
// never cut: a level near its threshold does not hold the others' time to be more precise).
func (r *Runner) budgetLevel(key servebench.CellKey, hasPoints bool, useCasesLeft int) error {
	b := r.bud
	if b == nil {
		return nil
	}
	left := b.left()
	e := r.expected(key)
	if e > 0 && !b.fits(time.Duration(float64(b.levelCost(e, key.Concurrency))*r.jumpMargin(key))) || e <= 0 && left <= 0 {
		return errBudget
	}
	share := left / time.Duration(max(useCasesLeft, 1))
	b.levelEst, b.levelStart = minLevelCost(e, key.Concurrency), time.Now()
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
		b.tookSum += time.Since(b.levelStart).Seconds()
		b.estSum += b.levelEst.Seconds()
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
		fmt.Fprintf(&s, " %d sweep cell(s) were not measured: the budget had no time left for them (the run measured first the cells that are also a use case's capacity level, then the capacity searches, then the others with the time left).", b.skipped)
	}
	if len(b.cut) > 0 {
		fmt.Fprintf(&s, " The budget ended the capacity search of %s before its limit was bracketed (the searches were measured together, level by level: every use case's first level, then the cheapest level, one that could bracket a limit counted at half its cost and one that would raise a lower bound already raised at more, each only when its expected cost fitted the time left): each is decided on the levels it measured (a lower bound where every level passed); a longer --max-time measures further.", strings.Join(b.cut, ", "))
	}
	return s.String()
}

// budgetCutName is how the budget's note names a search it ended: its title, with the level it
// did not measure and that level's expected cost when known ("Long Document Processing (next: 4
// in flight, ~2m)").
func budgetCutName(title string, next int, cost time.Duration) string {
	switch {
	case next > 0 && cost > 0:
		return fmt.Sprintf("%s (next: %d in flight, ~%s)", title, next, shortDur(cost))
	case next > 0:
		return fmt.Sprintf("%s (next: %d in flight)", title, next)
	}
	return title
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
// levelCost is the dense grid's cost of a level (capacity.Decide); next is the level the budget
// had no time for (0: not known), named in the note; resolution is the search's
// (capacity.DecideWithin).
func budgetDecide(uc servebench.UseCase, ceiling int, points []servebench.CapacityPoint, levelCost func(int) int, next int, resolution float64) servebench.CapacityResult {
	res := capacity.DecideWithin(uc, ceiling, points, levelCost, resolution)
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
		res.Note = "not searched: the run's time budget (--max-time) had no time left for this use case's first level; a longer budget searches it"
	} else {
		res.Note = fmt.Sprintf("the run's time budget (--max-time) ended this search after level %d, before its limit was bracketed; a longer budget measures further", top)
		if next > 0 {
			res.Note = fmt.Sprintf("the run's time budget (--max-time) ended this search after level %d, before its limit was bracketed: its next level, %d in flight, did not fit the time left; a longer budget measures further", top, next)
		}
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
	rank := func(c cells.Cell) int {
		switch {
		case isLevel(c.Key, ucs):
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

// isLevel reports whether the sweep cell k is also a capacity level of one of ucs (sustained,
// at its context and output length: the search reuses it).
func isLevel(k servebench.CellKey, ucs []servebench.UseCase) bool {
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

// deferSweep reports whether a budgeted run with use cases measures the sweep (or dedicated
// scenario) cell c after its capacity searches instead of before (sweepLater): a cell no search
// reuses, not yet measured and not skipped for another reason. The searches' levels come first,
// then these cells with the time the searches left.
func (r *Runner) deferSweep(c cells.Cell, done map[servebench.CellKey]servebench.CellResult) bool {
	if r.bud == nil || len(r.Plan.UseCases) == 0 || c.Skip != "" || isLevel(c.Key, r.Plan.UseCases) {
		return false
	}
	_, measured := done[c.Key]
	return !measured
}

// sweepLater measures, after a budgeted run's capacity searches, the sweep cells it deferred
// (deferSweep), in order, each within its share of the time left (budgetSweepCell, no capacity
// reserve any more) and only when its expected cost fits the time left (levelCost, as a
// capacity level's: the window rule's floors are never cut, so a cell started with less time
// left runs past the budget); a cell the budget has no time for is skipped and said so, as in
// the sweep.
// They are no use case's level, so no search's decision depends on whether they were measured
// before it or after (Recompute reads them with the sweep).
func (r *Runner) sweepLater(ctx context.Context, later []cells.Cell, done map[servebench.CellKey]servebench.CellResult) error {
	phase := ""
	for i, c := range later {
		key := c.Key
		rest := later[i+1:]
		if !r.fitsLater(key) || !r.budgetSweepCell(key, rest, 0) {
			if err := r.skipSweepCell(key, budgetSkipNote); err != nil {
				return err
			}
			continue
		}
		if p := sweepPhase(key); p != phase {
			phase = p
			title := r.sweepTitle([]servebench.CellKey{key})
			if key.Kind == servebench.KindScenario {
				title = r.scenarioTitle(key.Scenario)
			}
			r.emit(Event{Kind: EventPhase, Phase: p, Title: title, CellCount: len(later)})
		}
		if err := r.measureSweepCell(ctx, c, rest, i, len(later), done); err != nil {
			return err
		}
	}
	return nil
}

// fitsLater reports whether a deferred sweep cell's expected cost (levelCost of its expected
// latency; any cost when nothing measured can tell) fits the time left, and counts it skipped
// when not.
func (r *Runner) fitsLater(key servebench.CellKey) bool {
	if e := r.expected(key); e > 0 && !r.bud.fits(r.bud.levelCost(e, key.Concurrency)) {
		r.bud.skipped++
		return false
	}
	return true
}

// sweepPhase is the live view's phase of a sweep or dedicated scenario cell.
func sweepPhase(k servebench.CellKey) string {
	if k.Kind == servebench.KindScenario {
		return "scenario " + k.Scenario
	}
	return servebench.PhaseSweep
}
