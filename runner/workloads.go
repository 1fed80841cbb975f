package runner

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// Replayer hands out dataset entries in order, cycling: FillNext sets a request's conversation,
// output length (defaultOut when the entry names none) and dataset index.
type Replayer interface {
	FillNext(req *servebench.Request, defaultOut int)
}

// DatasetScenario is the scenario name of the cells that replay a dataset.
const DatasetScenario = servebench.DatasetScenario

// TraceScenario is the scenario name of the cell that replays a trace.
const TraceScenario = servebench.TraceScenario

// TraceReplayer builds a trace's requests: Schedule is the send times from the cell's start,
// Fill makes entry i (in schedule order) request seq.
type TraceReplayer interface {
	Schedule() []time.Duration
	Fill(i int, seq int64, req *servebench.Request) error
}

// sweepKeys lists the sweep's cells: contexts × concurrency levels; a dataset replaces the
// contexts (one context 0: the entries' own lengths) and a rate sweep the concurrency levels
// (one open-loop cell per rate, concurrency 0: uncapped).
func (r *Runner) sweepKeys() []servebench.CellKey {
	s := r.Plan.Sweep
	if r.Plan.Sessions != nil || s.AutoRate {
		return nil // the sessions replace the grid (runSessions), as does a rate search (searchRates)
	}
	if r.Trace != nil {
		sched := r.Trace.Schedule()
		rate := 0.0
		if n := len(sched); n > 1 && sched[n-1] > sched[0] {
			rate = float64(n-1) / (sched[n-1] - sched[0]).Seconds() // the trace's mean arrival rate
		}
		return []servebench.CellKey{{Kind: servebench.KindTrace, Scenario: TraceScenario, LoadMode: servebench.ModeRate, RatePerSecond: rate}}
	}
	scenario, kind := SweepScenario, servebench.KindSweep
	if s.Mode == servebench.ModeRate {
		kind = servebench.KindRate
	}
	contexts := make([]int, 0, len(s.Contexts))
	for _, c := range s.Contexts {
		contexts = append(contexts, int(c))
	}
	if r.Dataset != nil {
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
		for _, n := range s.Concurrency {
			levels = append(levels, level{n, r.rateFor()})
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

// openLoopRequests is how many requests an open-loop cell of key sends: sweep.requests, else
// ⌈rate × duration⌉.
func (r *Runner) openLoopRequests(key servebench.CellKey) int {
	s := r.Plan.Sweep
	if r.Trace != nil && key.Scenario == TraceScenario {
		return len(r.Trace.Schedule())
	}
	if r.Plan.Sessions != nil && sessionCell(key) {
		return r.sessionRequests(key)
	}
	if s.Requests > 0 || s.Duration <= 0 || key.RatePerSecond <= 0 {
		return s.Requests
	}
	return int(math.Ceil(key.RatePerSecond * float64(s.Duration) / 1e9))
}

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
