package runner

import (
	"context"
	"errors"
	"fmt"

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

// budgetCut tells the live run's budget that it ended uc's search.
func (d *decider) budgetCut(uc servebench.UseCase) {
	if d.live != nil && d.live.bud != nil {
		d.live.bud.cut = append(d.live.bud.cut, uc.Title)
	}
}

// levelFunc measures one level of a use case's capacity search (the cell key) and returns the
// cell and the requests it sent.
type levelFunc func(ctx context.Context, uc servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error)

// searchCapacity runs each use case's capacity search in the plan's order, reusing every cell
// in done (the sweep's and the earlier searches') and measuring a level with level; the cells
// it measures join done. Run measures the levels; Recompute reads them back from the run folder.
// A search the time budget ended (or, recomputed, one the run did not measure further) is
// decided on the levels it has.
func (d *decider) searchCapacity(ctx context.Context, done map[servebench.CellKey]servebench.CellResult, level levelFunc) error {
	maxLen := d.server.MaxModelLen
	for i, uc := range d.plan.UseCases {
		if err := ctx.Err(); err != nil {
			return err
		}
		ctxTok, outTok := int(uc.ContextTokens), int(uc.OutputTokens)
		d.emit(Event{Kind: EventPhase, Phase: servebench.CapacityPhase(uc.Name), Title: capacityTitle(d.plan, uc)})
		if maxLen > 0 && ctxTok+outTok > maxLen {
			d.addCapacity(servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, ContextTokens: ctxTok,
				OutputTokens: outTok, Statistic: uc.Statistic, Thresholds: uc.Thresholds, LimitKind: servebench.LimitNotViable,
				LimitingMetric: capacity.MetricContextTokens, Ceiling: d.plan.Capacity.MaxConcurrency, Skipped: true,
				Note: fmt.Sprintf("does not fit this target: its maximum model length (%d tokens) is below this use case's %d context + %d output tokens", maxLen, uc.ContextTokens, uc.OutputTokens)})
			d.emit(Event{Kind: EventNote, Phase: servebench.CapacityPhase(uc.Name), Message: fmt.Sprintf("not searched: %d context + %d output tokens exceed the target's maximum model length of %d tokens", uc.ContextTokens, uc.OutputTokens, maxLen)})
			continue
		}
		// Known levels are cells measured for something else at this use case's shape (the
		// sweep's, another use case's search): reused, costing nothing. This use case's own
		// levels from an earlier attempt of the run are not reuse: the search asks for them
		// again and gets them back below, with what they cost.
		measured := make([]servebench.CellResult, 0, len(done))
		for _, c := range done {
			if !ownLevel(c.CellKey, uc) {
				measured = append(measured, c)
			}
		}
		cfg := capacity.SearchConfig{Ceiling: d.plan.Capacity.MaxConcurrency, Known: capacity.KnownCells(measured, uc), RequestsAt: d.levelCost}
		d.searching(searchState{useCasesLeft: len(d.plan.UseCases) - i, points: len(cfg.Known)})
		uc := uc
		res, err := capacity.Search(ctx, uc, cfg, func(ctx context.Context, n int) (servebench.CellResult, int, error) {
			key := servebench.CellKey{Kind: servebench.KindCapacity, Scenario: uc.Name, LoadMode: servebench.ModeSustained, ContextTokens: ctxTok, OutputTokens: outTok, Concurrency: n}
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
		if budgeted := d.plan.Sweep.MaxTime > 0 && (errors.Is(err, errBudget) || errors.Is(err, errNotMeasured)); budgeted {
			// the time budget ended the search (or, recomputed, the run did not measure further):
			// decided on the levels it has
			res = budgetDecide(uc, cfg.Ceiling, res.Points, d.levelCost)
			d.budgetCut(uc)
			err = nil
		}
		d.markResumed(&res)
		if err != nil {
			d.addCapacity(res) // marked Interrupted: the levels so far and the limit so far
			return err
		}
		d.addCapacity(res)
	}
	return nil
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
