package runner

import (
	"context"
	"errors"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/workload"
)

// Replayer supplies the dataset cells' prompts: Fill sets request seq from entry seq mod the
// entries (workload.Replay).
type Replayer = workload.EntryFiller

// DatasetScenario is the scenario name of the cells that replay a dataset.
const DatasetScenario = servebench.DatasetScenario

// TraceScenario is the scenario name of the cell that replays a trace.
const TraceScenario = servebench.TraceScenario

// TraceReplayer builds a trace's requests: Schedule is the send times from the cell's start,
// Fill makes entry i (in schedule order) request seq (workload.TraceReplay).
type TraceReplayer = workload.TraceSource

// searchRates runs --rate auto: at each context, open-loop cells at the rates capacity.NextRate
// picks, until the highest rate whose goodput stays at or above the target is bracketed
// (capacity.DecideRate). Cells already in done (a resumed run's) are reused; level measures the
// others (Recompute reads them back instead). A level that reports errNotMeasured ends that
// context's search where the run stopped.
func (d *decider) searchRates(ctx context.Context, done map[servebench.CellKey]servebench.CellResult,
	level func(context.Context, servebench.CellKey) (servebench.CellResult, error)) error {
	s := d.plan.Sweep
	if !s.AutoRate {
		return nil
	}
	for _, c := range s.Contexts {
		points := map[float64]bool{}
		var order []float64
		for {
			rate, stop := capacity.NextRate(points, s.Rate, s.MaxRate)
			if stop {
				break
			}
			key := servebench.CellKey{Kind: servebench.KindRate, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeRate,
				ContextTokens: int(c), OutputTokens: int(s.OutputTokens), RatePerSecond: rate}
			res, ok := done[key]
			if !ok {
				var err error
				if res, err = level(ctx, key); errors.Is(err, errNotMeasured) {
					return nil
				} else if err != nil {
					return err
				}
				done[key] = res
			}
			points[rate] = capacity.RatePasses(res, s.GoodputTarget)
			order = append(order, rate)
		}
		res := capacity.DecideRate(points, order, s.GoodputTarget, s.MaxRate, int(c), int(s.OutputTokens))
		d.res.AddRateSearch(res)
		d.flush()
	}
	return nil
}

// measureRate measures one level of a rate search as part of the sweep.
func (r *Runner) measureRate(ctx context.Context, key servebench.CellKey) (servebench.CellResult, error) {
	r.emit(Event{Kind: EventCellStart, Phase: servebench.PhaseSweep, Cell: key, Planned: r.planned(key)})
	res, _, err := r.measure(ctx, key, servebench.PhaseSweep, 0, 0, nil)
	if err == nil {
		r.addCell(res)
	}
	return res, err
}
