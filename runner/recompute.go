package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/results"
)

// errNotMeasured ends a recomputed capacity search at a level the run never finished measuring
// (it was interrupted there).
var errNotMeasured = errors.New("level not measured")

// Recompute computes a run's results again from what its folder keeps: the manifest (plan and
// server), every record (requests.jsonl) and the cell logs (cells.jsonl), by the path that
// computed them while the run measured: each cell by results.Cell from its records and its log,
// folded into a results.Builder, the searches decided again by a decider whose levels are read
// back instead of measured. A run that was interrupted gives the cells and searches it finished.
//
// A resumed run is recomputed as one run: cells an earlier attempt measured count as
// measured by the search that asked for them (its requests are counted), where the resumed
// attempt had reused them.
func Recompute(man servebench.Manifest, recs []servebench.Record, logs []servebench.CellLog) (servebench.Results, error) {
	var res results.Builder
	d := &decider{plan: man.Plan, server: man.Server, res: &res}
	run := results.Run{Plan: man.Plan, Server: man.Server}
	sessions := 0
	var ended []string // the last run command's notes at its end (LogNote)
	for _, l := range logs {
		switch l.Event {
		case servebench.LogSession:
			sessions++
			run.Notes, ended = l.Notes, nil
			if l.Run != nil {
				run.Info = *l.Run
			}
		case servebench.LogNote:
			ended = append(ended, l.Notes...)
		}
	}
	if sessions == 0 {
		return servebench.Results{}, fmt.Errorf("the run keeps no cell logs (cells.jsonl): it was recorded before servebench kept them, so its results cannot be recomputed; its results.json is all there is")
	}
	run.Info.FinishedAt = man.FinishedAt
	if run.Info.FinishedAt.IsZero() {
		run.Info.FinishedAt = man.StartedAt
	}
	if run.Info.FinishedAt.IsZero() {
		run.Info.FinishedAt = time.Now().UTC()
	}
	for _, rec := range recs {
		res.Count(rec)
	}
	// the records of one cell attempt, in the order they were written (by number: on disk a
	// record's own output_tokens hides its cell's)
	recordsOf := func(l servebench.CellLog) []servebench.Record {
		var out []servebench.Record
		for _, rec := range recs {
			if rec.CellAttempt == l.Attempt && rec.Seq >= l.FirstSeq && rec.Seq < l.EndSeq {
				out = append(out, rec)
			}
		}
		return out
	}

	// the sweep and the sessions, in the order they were measured (a cell measured again, as a
	// resumed run does with an unfinished session level, replaces the earlier one); the
	// capacity levels are read when their search asks for them
	done := map[servebench.CellKey]servebench.CellResult{}
	skipped := map[servebench.CellKey]bool{}
	levels := map[servebench.CellKey]servebench.CellLog{}
	outages := map[servebench.CellKey][]servebench.Outage{}
	for _, l := range logs {
		sweep := !servebench.IsCapacityPhase(l.Phase)
		switch {
		case l.Event == servebench.LogOutage && l.Outage != nil && sweep:
			res.AddOutage(*l.Outage)
		case l.Event == servebench.LogOutage && l.Outage != nil:
			outages[l.Cell] = append(outages[l.Cell], *l.Outage)
		case l.Event == servebench.LogSkipped && !skipped[l.Cell]:
			skipped[l.Cell] = true
			res.AddCell(skippedCell(l.Cell, l.Note))
		case l.Event == servebench.LogCell && sweep:
			if _, again := done[l.Cell]; again {
				res.DropCells(func(k servebench.CellKey) bool { return k == l.Cell })
			}
			c := results.Cell(man.Plan, l, recordsOf(l))
			done[l.Cell] = c
			res.AddCell(c)
		case l.Event == servebench.LogCell:
			levels[l.Cell] = l
		}
	}
	// the levels a resumed run's earlier attempts measured (numbered below the last attempt's
	// first request)
	if n := len(man.Attempts); n > 1 {
		d.earlier = map[string]bool{}
		for k, l := range levels {
			if l.FirstSeq < man.Attempts[n-1].FirstSeq {
				d.earlier[k.ID()] = true
			}
		}
	}
	// the rate searches decide again over the cells they measured
	if err := d.searchRates(context.Background(), done, func(context.Context, servebench.CellKey) (servebench.CellResult, error) {
		return servebench.CellResult{}, errNotMeasured
	}); err != nil {
		return servebench.Results{}, err
	}
	err := d.searchCapacity(context.Background(), done, func(_ context.Context, _ servebench.UseCase, key servebench.CellKey) (servebench.CellResult, int, error) {
		for _, o := range outages[key] {
			res.AddOutage(o)
		}
		l, ok := levels[key]
		if !ok {
			return servebench.CellResult{}, 0, errNotMeasured
		}
		return results.Cell(man.Plan, l, recordsOf(l)), l.RequestsSent, nil
	})
	if err != nil && !errors.Is(err, errNotMeasured) {
		return servebench.Results{}, err
	}
	// the users' searches decide again over the populations they measured (read back with the
	// sweep's cells; the server's KV-cache usage while they ran is not kept in the run folder)
	if err == nil {
		if err := d.searchUsers(context.Background(), done); err != nil && !errors.Is(err, errNotMeasured) {
			return servebench.Results{}, err
		}
	} else { // an interrupted run: the searches it never reached are said, not lost
		res.Unsearched(man.Plan)
	}
	for _, n := range ended {
		res.AddNote(n)
	}
	return res.Results(run), nil
}
