package runner

import (
	"context"
	"math"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/workload"
)

// ScriptedSession is a conversation of a dataset run as a session (workload.ScriptedSession).
type ScriptedSession = workload.ScriptedSession

// runSessions measures the plan's multi-turn sessions as cells.Expand lists them: at each
// concurrency level, turn 1 to T of every session (one cell per turn), then for each turn ≥ 2 a
// cell of fresh prompts as long as that turn's prompts were (the server's mean count), sent the
// same way. A level that a resumed run did not finish is measured again whole: its
// conversations are not saved.
func (r *Runner) runSessions(ctx context.Context, done map[servebench.CellKey]servebench.CellResult) error {
	ss := r.Plan.Sessions
	if ss == nil {
		return nil
	}
	var list []cells.Cell
	for _, c := range r.expand() {
		if c.Phase == servebench.PhaseSessions {
			list = append(list, c)
		}
	}
	total := len(list)
	r.emit(Event{Kind: EventPhase, Phase: servebench.PhaseSessions, CellCount: total})
	in := r.inputs()
	idx := 0
	for len(list) > 0 {
		n := list[0].Key.Concurrency
		end := 1
		for end < len(list) && list[end].Key.Concurrency == n {
			end++
		}
		level := list[:end]
		list = list[end:]
		nt := 0
		for _, c := range level {
			if c.Skip == "" && !c.Matched {
				nt++
			}
		}
		if r.levelDone(done, n, nt) && nt == cells.SessionTurns(ss, in, n) {
			idx += len(level)
			continue
		}
		r.dropLevel(done, n)
		r.sessions = workload.NewSessions(ss, cells.SessionCount(ss, in, n), r.SessionScript, r.Prompts, func() time.Duration { return time.Since(r.Origin) })
		turns := map[int]servebench.CellResult{}
		for _, c := range level {
			idx++
			key := c.Key
			switch {
			case c.Skip != "":
				if err := r.keep(servebench.CellLog{Event: servebench.LogSkipped, Phase: servebench.PhaseSessions, Cell: key, Note: c.Skip}); err != nil {
					return err
				}
				r.addCell(skippedCell(key, c.Skip))
				r.emit(Event{Kind: EventNote, Phase: servebench.PhaseSessions, Cell: key, Message: key.ID() + " " + c.Skip})
				continue
			case c.Matched:
				s := turns[key.Turn]
				if s.RequestsTotal == 0 {
					continue
				}
				if s.InputTokensMean > 0 {
					key.ContextTokens = int(math.Round(s.InputTokensMean))
				}
				if key.ContextTokens <= 0 {
					continue // nothing succeeded: no length to match
				}
			}
			r.emit(Event{Kind: EventCellStart, Phase: servebench.PhaseSessions, Cell: key, CellIndex: idx, CellCount: total, Planned: c.Requests})
			res, _, err := r.measure(ctx, key, servebench.PhaseSessions, idx, total, nil)
			if err != nil {
				return err
			}
			if !c.Matched {
				r.sessions.Commit()
				turns[key.Turn] = res
			}
			done[key] = res
			r.addCell(res)
		}
	}
	r.sessions = nil
	return nil
}

// levelDone reports whether every session and fresh cell of level n is among the done cells.
func (r *Runner) levelDone(done map[servebench.CellKey]servebench.CellResult, n, turns int) bool {
	have := map[[2]int]bool{}
	for k := range done {
		if k.Concurrency == n && (k.Scenario == stats.SessionScenario || k.Scenario == stats.FreshScenario) {
			sign := 1
			if k.Scenario == stats.FreshScenario {
				sign = -1
			}
			have[[2]int{sign, k.Turn}] = true
		}
	}
	for t := 1; t <= turns; t++ {
		if !have[[2]int{1, t}] || (t > 1 && !have[[2]int{-1, t}]) {
			return false
		}
	}
	return true
}

// dropLevel forgets the cells of level n a resumed run had measured (it is measured again).
func (r *Runner) dropLevel(done map[servebench.CellKey]servebench.CellResult, n int) {
	of := func(k servebench.CellKey) bool {
		return k.Concurrency == n && (k.Scenario == stats.SessionScenario || k.Scenario == stats.FreshScenario)
	}
	for k := range done {
		if of(k) {
			delete(done, k)
		}
	}
	r.res.DropCells(of)
}
