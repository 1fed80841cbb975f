package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/results"
)

// decider decides a run's searches over its cells (the rate searches of --rate auto, the
// capacity searches, the users' searches) and folds the cells and the decisions into res. Run
// and Recompute each make one, so a recomputed decision is the live one by construction: Run's
// measures the levels its searches ask for (live is the run, whose live view, results.json and
// time budget it keeps up to date); Recompute's reads them back from the run folder (live is
// nil, and a level the run never finished ends its search with errNotMeasured).
type decider struct {
	plan   servebench.Plan
	server servebench.ServerInfo
	res    *results.Builder
	// earlier holds the IDs of the cells an earlier attempt of the run measured (a resumed
	// run): a search's own levels among them are marked resumed.
	earlier map[string]bool
	// live is the run measuring the levels; nil when recomputing.
	live *Runner
	// cold is each use case's capacity limit in cold prompts, once decided (addCapacity): the
	// level its users' search starts at.
	cold map[string]int
}

// decider is the run's decider: its levels measured by r, the cells r.Done holds counted as
// an earlier attempt's.
func (r *Runner) decider() *decider {
	earlier := map[string]bool{}
	for _, c := range r.Done {
		earlier[c.ID()] = true
	}
	return &decider{plan: r.Plan, server: r.Server, res: &r.res, earlier: earlier, live: r}
}

func (d *decider) emit(e Event) {
	if d.live != nil {
		d.live.emit(e)
	}
}

// flush writes the results so far to the run folder (a live run's results.json).
func (d *decider) flush() {
	if d.live != nil {
		d.live.flush()
	}
}

func (d *decider) addCell(c servebench.CellResult) {
	d.res.AddCell(c)
	d.flush()
}

func (d *decider) addCapacity(c servebench.CapacityResult) {
	if c.Limit != nil && *c.Limit > 0 {
		if d.cold == nil {
			d.cold = map[string]int{}
		}
		d.cold[c.UseCase] = *c.Limit
	}
	d.res.AddCapacity(c)
	d.flush()
}

// levelCost is the fewest requests a sustained sweep level of concurrency n costs: the live
// run's (Runner.levelCost), else the plan's (cells.LevelCost, the same rule).
func (d *decider) levelCost(n int) int {
	if d.live != nil {
		return d.live.levelCost(n)
	}
	return cells.LevelCost(d.plan.Sweep, n)
}

// searching tells the live run's budget and view which capacity search is under way;
// searched, that it measured one more level.
func (d *decider) searching(s searchState) {
	if d.live != nil {
		d.live.search = s
	}
}

func (d *decider) searched() {
	if d.live != nil {
		d.live.search.points++
	}
}

// budgetCut tells the live run's budget that it ended uc's search before its level next (0:
// unknown), and what that level was expected to cost.
func (d *decider) budgetCut(uc servebench.UseCase, next int) {
	r := d.live
	if r == nil || r.bud == nil {
		return
	}
	c := budgetCutName(uc.Title, next, 0)
	if next > 0 {
		key := capacityKey(uc, next)
		if e := r.expected(key); e > 0 {
			c = budgetCutName(uc.Title, next, r.bud.levelCost(e, next))
		}
	}
	r.bud.cut = append(r.bud.cut, c)
}

// levelFunc measures one level of a use case's capacity search (the cell key) and returns the
// cell and the requests it sent.
type levelFunc func(ctx context.Context, uc servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error)

// searchCapacity runs each use case's capacity search, reusing every cell in done (the
// sweep's and the earlier searches') and measuring a level with level; the cells it measures
// join done. Run measures the levels; Recompute reads them back from the run folder. Without a
// time budget the searches run one after the other in the plan's order; under one they are
// interleaved (searchInterleaved). A search the time budget ended (or, recomputed, one the run
// did not measure further) is decided on the levels it has.
func (d *decider) searchCapacity(ctx context.Context, done map[servebench.CellKey]servebench.CellResult, level levelFunc) error {
	if d.plan.Sweep.MaxTime > 0 {
		return d.searchInterleaved(ctx, done, level)
	}
	for i, uc := range d.plan.UseCases {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.emit(Event{Kind: EventPhase, Phase: servebench.CapacityPhase(uc.Name), Title: capacityTitle(d.plan, uc)})
		if d.notViable(uc) {
			continue
		}
		cfg := d.searchConfig(uc, done)
		d.searching(searchState{useCasesLeft: len(d.plan.UseCases) - i, points: len(cfg.Known)})
		uc := uc
		res, err := capacity.Search(ctx, uc, cfg, func(ctx context.Context, n int) (servebench.CellResult, int, error) {
			key := capacityKey(uc, n)
			if c, ok := done[key]; ok {
				// measured by an earlier attempt of this run: it cost what it sent then
				return c, c.RequestsTotal + c.WarmupRequests, nil
			}
			c, sent, err := level(ctx, uc, key)
			if err != nil {
				return c, sent, err
			}
			done[key] = c
			d.addCell(c)
			d.searched()
			return c, sent, nil
		})
		res, _, err = d.ended(uc, cfg, res, err, 0)
		d.addCapacity(res) // when err is set, marked Interrupted: the levels so far and the limit so far
		if err != nil {
			return err
		}
	}
	return nil
}

// notViable adds, for a use case whose context and output do not fit the target's maximum model
// length, its result saying so (not searched), and reports whether it did.
func (d *decider) notViable(uc servebench.UseCase) bool {
	maxLen := d.server.MaxModelLen
	ctxTok, outTok := int(uc.ContextTokens), int(uc.OutputTokens)
	if maxLen <= 0 || ctxTok+outTok <= maxLen {
		return false
	}
	d.addCapacity(servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, ContextTokens: ctxTok,
		OutputTokens: outTok, Statistic: uc.Statistic, Thresholds: uc.Thresholds, LimitKind: servebench.LimitNotViable,
		LimitingMetric: capacity.MetricContextTokens, Ceiling: d.plan.Capacity.MaxConcurrency, Skipped: true,
		Note: fmt.Sprintf("does not fit this target: its maximum model length (%d tokens) is below this use case's %d context + %d output tokens", maxLen, uc.ContextTokens, uc.OutputTokens)})
	d.emit(Event{Kind: EventNote, Phase: servebench.CapacityPhase(uc.Name), Message: fmt.Sprintf("not searched: %d context + %d output tokens exceed the target's maximum model length of %d tokens", uc.ContextTokens, uc.OutputTokens, maxLen)})
	return true
}

// searchConfig is uc's search over the cells in done. Known levels are cells measured for
// something else at this use case's shape (the sweep's, another use case's search): reused,
// costing nothing. This use case's own levels from an earlier attempt of the run are not
// reuse: the search asks for them again and gets them back, with what they cost.
func (d *decider) searchConfig(uc servebench.UseCase, done map[servebench.CellKey]servebench.CellResult) capacity.SearchConfig {
	measured := make([]servebench.CellResult, 0, len(done))
	for _, c := range done {
		if !ownLevel(c.CellKey, uc) {
			measured = append(measured, c)
		}
	}
	return capacity.SearchConfig{Ceiling: d.plan.Capacity.MaxConcurrency, Known: capacity.KnownCells(measured, uc), RequestsAt: d.levelCost,
		Resolution: d.plan.Capacity.Resolution}
}

// capacityKey is the cell of uc's capacity search at concurrency n.
func capacityKey(uc servebench.UseCase, n int) servebench.CellKey {
	return servebench.CellKey{Kind: servebench.KindCapacity, Scenario: uc.Name, LoadMode: servebench.ModeSustained,
		ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens), Concurrency: n}
}

// ended is uc's search result once capacity.Search returned res and err: a search the time
// budget ended (errBudget) or, recomputed, one the run did not measure further (errNotMeasured)
// is decided on the levels it has (budgetDecide; next is the level it did not measure, 0 when
// not known), err cleared and cut set; the points an earlier attempt measured are marked
// resumed.
func (d *decider) ended(uc servebench.UseCase, cfg capacity.SearchConfig, res servebench.CapacityResult, err error, next int) (_ servebench.CapacityResult, cut bool, _ error) {
	if d.plan.Sweep.MaxTime > 0 && (errors.Is(err, errBudget) || errors.Is(err, errNotMeasured)) {
		res = budgetDecide(uc, cfg.Ceiling, res.Points, d.levelCost, next, cfg.Resolution)
		cut, err = true, nil
	}
	d.markResumed(&res)
	return res, cut, err
}

// levelAsk is a search's request for one level (key), answered on reply.
type levelAsk struct {
	search int // the use case's index in the plan
	key    servebench.CellKey
	reply  chan levelReply
}

type levelReply struct {
	cell servebench.CellResult
	sent int
	err  error
}

// searchEnd is a search's outcome (capacity.Search's result and error).
type searchEnd struct {
	search int
	cfg    capacity.SearchConfig
	res    servebench.CapacityResult
	err    error
}

// searchInterleaved runs a time-budgeted run's capacity searches together, one level at a time:
// each search proposes its next level (capacity.Search's rule, unchanged), and of the levels
// proposed the run measures next
//
//  1. a level of a search that has no point yet (every use case gets decided on at least one
//     level before any search goes further), then
//  2. the cheapest: the least expected mean end-to-end latency (levelOrder: estimateCell's
//     e2e over the cells measured so far; a level's cost is 4 × that, times the budget's
//     calibrated overrun, the same factor for every level), ties in the plan's order,
//
// so a cheap search is never starved by an expensive one's equal share, and an expensive level
// is measured only once the cheaper questions are answered. The budget (budgetLevel) refuses a
// level whose expected cost does not fit the time left; as every other proposed level is
// expected to cost at least as much, every search still running is then ended, each decided on
// the levels it measured (budgetDecide; the run's notes name them).
//
// The order is a function of the cells measured (their results in done) only, never of the
// wall clock: Recompute, whose level reads a level back from the run folder (errNotMeasured
// for one the run did not measure), walks the same levels in the same order, and a search the
// budget ended is recomputed to the same decision. Each search's Known cells are those in done
// before any search starts (the sweep's, an earlier attempt's): one search never reuses
// another's levels, so no decision depends on the order either. Results are added in the
// plan's order (each as soon as those before it are decided).
func (d *decider) searchInterleaved(ctx context.Context, done map[servebench.CellKey]servebench.CellResult, level levelFunc) error {
	ucs := d.plan.UseCases
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	asks := make(chan levelAsk)
	ends := make(chan searchEnd, len(ucs))
	results := make([]*servebench.CapacityResult, len(ucs))
	points := make([]int, len(ucs))
	cut := make([]bool, len(ucs))
	refused := make([]int, len(ucs)) // the level the budget refused a search, when it did
	running := 0
	for i, uc := range ucs {
		if d.notViable(uc) {
			results[i] = &servebench.CapacityResult{} // added by notViable
			continue
		}
		cfg := d.searchConfig(uc, done)
		points[i] = len(cfg.Known)
		running++
		go func() {
			res, err := capacity.Search(sctx, uc, cfg, func(ctx context.Context, n int) (servebench.CellResult, int, error) {
				reply := make(chan levelReply, 1)
				select {
				case asks <- levelAsk{search: i, key: capacityKey(uc, n), reply: reply}:
				case <-ctx.Done():
					return servebench.CellResult{}, 0, ctx.Err()
				}
				r := <-reply
				return r.cell, r.sent, r.err
			})
			ends <- searchEnd{search: i, cfg: cfg, res: res, err: err}
		}()
	}
	added := 0
	addReady := func() {
		for ; added < len(ucs) && results[added] != nil; added++ {
			if cut[added] {
				d.budgetCut(ucs[added], refused[added])
			}
			if results[added].UseCase != "" {
				d.addCapacity(*results[added])
			}
		}
	}
	addReady()
	var firstErr error
	waiting := map[int]levelAsk{}
	answerAll := func(err error) {
		for i, a := range waiting {
			if errors.Is(err, errBudget) {
				refused[i] = a.key.Concurrency
			}
			a.reply <- levelReply{err: err}
			delete(waiting, i)
		}
	}
	phase := -1
	for running > 0 {
		// wait until every search still running has proposed its next level (or ended): the
		// choice below then sees all of them, whatever the goroutines' timing
		for len(waiting) < running {
			select {
			case a := <-asks:
				if c, ok := done[a.key]; ok {
					// measured by an earlier attempt of this run: it cost what it sent then
					a.reply <- levelReply{cell: c, sent: c.RequestsTotal + c.WarmupRequests}
					continue
				}
				if firstErr != nil {
					a.reply <- levelReply{err: firstErr}
					continue
				}
				waiting[a.search] = a
			case e := <-ends:
				running--
				res, c, err := d.ended(ucs[e.search], e.cfg, e.res, e.err, refused[e.search])
				results[e.search], cut[e.search] = &res, c
				if err != nil && firstErr == nil {
					firstErr = err
					answerAll(err)
				}
				addReady()
			}
		}
		if running == 0 {
			break
		}
		a := d.nextAsk(waiting, points, done)
		delete(waiting, a.search)
		uc := ucs[a.search]
		if a.search != phase {
			phase = a.search
			d.emit(Event{Kind: EventPhase, Phase: servebench.CapacityPhase(uc.Name), Title: capacityTitle(d.plan, uc)})
		}
		d.searching(searchState{useCasesLeft: running, points: points[a.search]})
		c, sent, err := level(sctx, uc, a.key)
		if err == nil {
			done[a.key] = c
			d.addCell(c)
			points[a.search]++
		}
		if errors.Is(err, errBudget) || errors.Is(err, errNotMeasured) {
			// this search's level does not fit the time left (or, recomputed, was not
			// measured): it ends, decided on its levels; the others go on, a cheaper level
			// of theirs may still fit
			refused[a.search] = a.key.Concurrency
		}
		a.reply <- levelReply{cell: c, sent: sent, err: err}
	}
	addReady()
	return firstErr
}

// nextAsk is the proposed level searchInterleaved measures next: of a search with no point yet
// first (the cheapest of them), else the one of least weighted cost (levelValueCost), ties in
// the plan's order.
func (d *decider) nextAsk(waiting map[int]levelAsk, points []int, done map[servebench.CellKey]servebench.CellResult) levelAsk {
	costs := doneCosts(done)
	var best levelAsk
	var bestE float64
	found := false
	for i := range points {
		a, ok := waiting[i]
		if !ok {
			continue
		}
		e := levelValueCost(d.plan.UseCases[i], a.key, costs, done)
		better := !found
		if found {
			if fresh, bestFresh := points[i] == 0, points[best.search] == 0; fresh != bestFresh {
				better = fresh
			} else {
				better = e < bestE
			}
		}
		if better {
			best, bestE, found = a, e, true
		}
	}
	return best
}

// openingWeight is how many times its least cost a capacity level that only raises a lower
// bound counts against one that can bracket a limit (closes): a level that decides where a
// limit lies is worth two that only say "at least". On GLM-4.7-Flash / H200 with --max-time 10m
// that measures Coding Assistant's level 2 (~100 s, predicted to fail: 96K's TTFT of 9.6 s
// at 1 grows as 64K's did from 1 to 2, past 12 s) before General Chatbot's 8 (~105 s) and
// Long Document's 2 (~66 s), which only raise lower bounds; Code Completion's levels, a few
// seconds each, still come first.
const openingWeight = 2

// levelValueCost is what orders the proposed levels of the interleaved searches after their
// first levels: the level's least cost (minLevelCost of its expected latency, levelOrder) —
// unless it closes uc's search (closes), × openingWeight × the passing levels uc's search has
// beyond its first (at least 1): a lower bound raised again is worth less than one raised the
// first time. On GLM-4.7-Flash / H200 with --max-time 10m, counted at openingWeight only,
// Short-form Chatbot's level 32 (90 s, after 1, 2 and 8 passed) went before General Chatbot's
// 8 (82 s, after 1 and 2), which then did not fit: Short-form 32+ and General 2+, where the
// same time gives 8+ and 8+ (the published 125+ and 12+). A function of the cells measured only.
func levelValueCost(uc servebench.UseCase, k servebench.CellKey, costs []cellCost, done map[servebench.CellKey]servebench.CellResult) float64 {
	return minLevelCost(levelOrder(k, costs), k.Concurrency).Seconds() * valueWeight(uc, k.Concurrency, done)
}

// valueWeight is how many times its least cost level n of uc's capacity search counts in the
// interleaved order (levelValueCost): 1 when it closes the search, else openingWeight × the
// passing levels the search has beyond its first (at least 1).
func valueWeight(uc servebench.UseCase, n int, done map[servebench.CellKey]servebench.CellResult) float64 {
	if closes(uc, n, done) {
		return 1
	}
	_, pts := searchPoints(uc, done)
	passed := 0
	for _, p := range pts {
		if p.Pass {
			passed++
		}
	}
	return openingWeight * float64(max(passed-1, 1))
}

// searchPoints is every cell measured (done, in ID order) and the points of uc's capacity
// search they hold (capacity.KnownCells: its own levels and the sweep cells it reuses), by
// concurrency.
func searchPoints(uc servebench.UseCase, done map[servebench.CellKey]servebench.CellResult) ([]servebench.CellResult, []servebench.CapacityPoint) {
	all := make([]servebench.CellResult, 0, len(done))
	for _, c := range done {
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b servebench.CellResult) int { return strings.Compare(a.ID(), b.ID()) })
	var pts []servebench.CapacityPoint
	for m, c := range capacity.KnownCells(all, uc) {
		p := capacity.Evaluate(uc, c)
		p.Concurrency = m
		pts = append(pts, p)
	}
	slices.SortFunc(pts, func(a, b servebench.CapacityPoint) int { return a.Concurrency - b.Concurrency })
	return all, pts
}

// closes reports whether measuring level n of uc's capacity search is expected to bracket its
// limit, from the cells measured (done): the search already has a failing level (a level it
// proposes then lies inside the bracket and narrows it), or n is predicted to fail — by
// capacity.Predict through the search's two highest passing levels, or, with one passing
// level m only, by each thresholded metric's value at m scaled as it grew from m to n in
// flight at the context nearest to uc's (log scale) where both were measured, of uc's output
// length when one is. A prediction only orders the levels; every verdict is measured.
func closes(uc servebench.UseCase, n int, done map[servebench.CellKey]servebench.CellResult) bool {
	all, pts := searchPoints(uc, done)
	lo, hi := 0, 0
	for _, p := range pts {
		if !p.Pass && (hi == 0 || p.Concurrency < hi) {
			hi = p.Concurrency
		}
	}
	if hi > 0 {
		return true
	}
	for _, p := range pts {
		lo = max(lo, p.Concurrency)
	}
	switch {
	case lo == 0 || n <= lo:
		return false
	case len(pts) >= 2:
		x := capacity.Predict(uc, pts, lo, 0)
		return !math.IsNaN(x) && float64(n) > x
	}
	// one level: the growth from lo to n at the nearest context measured at both
	var at, to *servebench.CellResult
	best := math.Inf(1)
	for i := range all {
		c := &all[i]
		if c.LoadMode != servebench.ModeSustained || c.Concurrency != lo || c.Skipped || c.RequestsSucceeded == 0 {
			continue
		}
		for j := range all {
			o := &all[j]
			if o.LoadMode != servebench.ModeSustained || o.Concurrency != n || o.ContextTokens != c.ContextTokens || o.OutputTokens != c.OutputTokens ||
				o.Skipped || o.RequestsSucceeded == 0 {
				continue
			}
			dist := math.Abs(math.Log(float64(max(c.ContextTokens, 1)) / float64(max(int(uc.ContextTokens), 1))))
			if c.OutputTokens != int(uc.OutputTokens) {
				dist += 100 // another output length only when none of uc's shows it
			}
			if dist < best {
				best, at, to = dist, c, o
			}
			break
		}
	}
	if at == nil {
		return false
	}
	from, grown, base := pts[0], capacity.Evaluate(uc, *to), capacity.Evaluate(uc, *at)
	for _, k := range capacity.Checks(uc.Thresholds) {
		v, ok1 := from.Values[k.Metric]
		a, ok2 := base.Values[k.Metric]
		b, ok3 := grown.Values[k.Metric]
		if ok1 && ok2 && ok3 && a > 0 && !k.Holds(v*b/a) {
			return true
		}
	}
	return false
}

// ownLevel reports whether cell k is a level of uc's own capacity search.
func ownLevel(k servebench.CellKey, uc servebench.UseCase) bool {
	k.FillKind()
	return k.Kind == servebench.KindCapacity && k.Scenario == uc.Name
}

// markResumed sets Resumed on the points of res that an earlier attempt of the run measured.
func (d *decider) markResumed(res *servebench.CapacityResult) {
	for i := range res.Points {
		if p := &res.Points[i]; !p.Reused && d.earlier[p.CellID] {
			p.Resumed = true
		}
	}
}
