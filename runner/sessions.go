package runner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// conversations is the state of one concurrency level's multi-turn sessions: the conversation
// each session has had so far, and the turn being measured. Turn t of session i is request
// i of turn t's cell (fixed mode sends a cell's requests in sequence order). A turn's messages
// join the conversations only once its cell is kept (commit), so an attempt an outage discards
// leaves them as they were.
type conversations struct {
	mu      sync.Mutex
	script  []ScriptedSession // the dataset's conversations; nil: synthetic text
	hist    [][]servebench.Message
	lastEnd []float64 // run-clock offset (s) at which each session's last answer ended
	pending map[int]*pendingTurn
}

// pendingTurn is one session's turn in flight or finished, not yet committed.
type pendingTurn struct {
	user   string
	answer *strings.Builder
	end    float64
}

// ScriptedSession is a conversation of a dataset run as a session: Lead (a system message, say)
// opens it, then Turns are its user turns, one per turn, the model's own answers in between.
type ScriptedSession struct {
	// Index is the dataset entry (0-based), kept in each record's dataset_index.
	Index int
	Lead  []servebench.Message
	Turns []string
}

// newConversations starts count sessions: synthetic ones, or the first count of script.
func newConversations(count int, script []ScriptedSession) *conversations {
	if script != nil {
		count = min(count, len(script))
		script = script[:count]
	}
	cv := &conversations{script: script, hist: make([][]servebench.Message, count), lastEnd: make([]float64, count), pending: map[int]*pendingTurn{}}
	for i := range script {
		cv.hist[i] = slices.Clone(script[i].Lead)
	}
	return cv
}

// active lists the sessions that have a turn t, in order: every session, or the dataset's
// conversations with at least t user turns. Request k of turn t's cell is session active(t)[k].
func (cv *conversations) active(t int) []int {
	var out []int
	for i := range cv.hist {
		if cv.script == nil || len(cv.script[i].Turns) >= t {
			out = append(out, i)
		}
	}
	return out
}

// turns is how many turns the level measures: sessions.turns, and for a dataset no more than its
// longest conversation (all of them when sessions.turns is 0).
func (cv *conversations) turns(planned int) int {
	if cv.script == nil {
		return planned
	}
	longest := 0
	for _, s := range cv.script {
		longest = max(longest, len(s.Turns))
	}
	if planned <= 0 || planned > longest {
		return longest
	}
	return planned
}

// begin starts an attempt at a turn's cell: nothing of an earlier attempt is kept.
func (cv *conversations) begin() {
	cv.mu.Lock()
	cv.pending = map[int]*pendingTurn{}
	cv.mu.Unlock()
}

// commit appends every session's measured turn (its user text and the model's answer as it
// arrived, whole or partial) to its conversation.
func (cv *conversations) commit() {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	for i, p := range cv.pending {
		cv.hist[i] = append(cv.hist[i], servebench.Message{Role: "user", Content: p.user},
			servebench.Message{Role: "assistant", Content: p.answer.String()})
		cv.lastEnd[i] = p.end
	}
	cv.pending = map[int]*pendingTurn{}
}

// sessionCount is how many sessions run at level n: sessions.count, else max(4, 2n).
func sessionCount(ss *servebench.SessionPlan, n int) int {
	if ss.Count > 0 {
		return ss.Count
	}
	return max(4, 2*n)
}

// sessionContext is the nominal prompt of turn t (tokens): the first turn's prompt plus, for
// every earlier turn, its answer and the next turn's new user text. The server's count adds
// the chat template's tokens per message; records carry that count. A dataset's sessions have
// no nominal length (0).
func sessionContext(ss *servebench.SessionPlan, t int) int {
	if ss.FirstTurnTokens == 0 {
		return 0
	}
	return int(ss.FirstTurnTokens) + (t-1)*(int(ss.OutputTokens)+int(ss.TurnTokens))
}

// sessionKey is the cell of turn t of the sessions at level n.
func sessionKey(ss *servebench.SessionPlan, n, t int) servebench.CellKey {
	return servebench.CellKey{Kind: servebench.KindSession, Scenario: stats.SessionScenario, LoadMode: servebench.ModeFixed, ContextTokens: sessionContext(ss, t),
		OutputTokens: int(ss.OutputTokens), Concurrency: n, Turn: t}
}

// newTextTokens is the length of the new user text of a turn: the first turn's whole prompt,
// then TurnTokens.
func newTextTokens(ss *servebench.SessionPlan, t int) int {
	if t == 1 {
		return int(ss.FirstTurnTokens)
	}
	return int(ss.TurnTokens)
}

// sessionRequest builds turn key.Turn of session i as request seq: the conversation so far
// plus new user text, after the session's think time since its last answer.
func (r *Runner) sessionRequest(ctx context.Context, key servebench.CellKey, seq int64, k int) (*servebench.Request, error) {
	ss := r.Plan.Sessions
	cv := r.conv
	act := cv.active(key.Turn)
	if k < 0 || k >= len(act) {
		return nil, fmt.Errorf("request %d of turn %d: the cell sent more requests than there are sessions (%d)", k, key.Turn, len(act))
	}
	i := act[k]
	var text string
	if cv.script != nil {
		text = cv.script[i].Turns[key.Turn-1]
	} else {
		var err error
		if text, err = r.Prompts.Prompt(ctx, seq, newTextTokens(ss, key.Turn)); err != nil {
			return nil, err
		}
	}
	cv.mu.Lock()
	msgs := append(slices.Clone(cv.hist[i]), servebench.Message{Role: "user", Content: text})
	last := cv.lastEnd[i]
	p := &pendingTurn{user: text, answer: new(strings.Builder)}
	cv.pending[i] = p
	cv.mu.Unlock()
	if think := time.Duration(ss.ThinkTime); think > 0 && key.Turn > 1 {
		wait := time.Duration(last*float64(time.Second)) + think - time.Since(r.Origin)
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
	}
	req := &servebench.Request{Cell: key, Seq: seq, Messages: msgs, MaxOutputTokens: key.OutputTokens, Answer: p.answer}
	if cv.script != nil {
		idx := cv.script[i].Index
		req.DatasetIndex = &idx
	} else if key.Turn == 1 {
		req.ContextTokens = key.ContextTokens // later turns' length is the conversation's, as the server counts it
	}
	return req, nil
}

// sessionEnded notes when the session of request k of the turn's cell answered (the next
// turn's think time counts from it).
func (r *Runner) sessionEnded(k int, rec servebench.Record) {
	act := r.conv.active(rec.Turn)
	if k < 0 || k >= len(act) {
		return
	}
	r.conv.mu.Lock()
	if p := r.conv.pending[act[k]]; p != nil {
		p.end = rec.EndOffsetSeconds
	}
	r.conv.mu.Unlock()
}

// sessionRequests is how many requests a session or fresh cell of turn t sends: one per
// session that has turn t.
func (r *Runner) sessionRequests(key servebench.CellKey) int {
	if r.conv != nil {
		return len(r.conv.active(key.Turn))
	}
	return sessionCount(r.Plan.Sessions, key.Concurrency)
}

// runSessions measures the plan's multi-turn sessions: at each concurrency level, turn 1 to T
// of every session (one cell per turn), then for each turn ≥ 2 a cell of fresh prompts as
// long as that turn's prompts were (the server's mean count), sent the same way. A level that a
// resumed run did not finish is measured again whole: its conversations are not saved.
func (r *Runner) runSessions(ctx context.Context, done map[servebench.CellKey]servebench.CellResult) error {
	ss := r.Plan.Sessions
	if ss == nil {
		return nil
	}
	turnsAt := func(n int) int { return newConversations(sessionCount(ss, n), r.SessionScript).turns(ss.Turns) }
	total := 0
	for _, n := range ss.Concurrency {
		total += 2*turnsAt(n) - 1
	}
	r.emit(Event{Kind: EventPhase, Phase: servebench.PhaseSessions, CellCount: total})
	idx := 0
	for _, n := range ss.Concurrency {
		nt := turnsAt(n)
		if r.levelDone(done, n, nt) {
			idx += 2*nt - 1
			continue
		}
		r.dropLevel(done, n)
		r.conv = newConversations(sessionCount(ss, n), r.SessionScript)
		turns := make([]servebench.CellResult, nt+1)
		for t := 1; t <= nt; t++ {
			idx++
			key := sessionKey(ss, n, t)
			if max := r.Server.MaxModelLen; max > 0 && key.ContextTokens > 0 && key.ContextTokens+key.OutputTokens > max {
				note := fmt.Sprintf("skipped: turn %d's conversation (about %d tokens) and its %d-token answer exceed the target's maximum model length of %d tokens", t, key.ContextTokens, key.OutputTokens, max)
				if err := r.keep(servebench.CellLog{Event: servebench.LogSkipped, Phase: servebench.PhaseSessions, Cell: key, Note: note}); err != nil {
					return err
				}
				r.addCell(skippedCell(key, note))
				r.emit(Event{Kind: EventNote, Phase: servebench.PhaseSessions, Cell: key, Message: key.ID() + " " + note})
				break
			}
			r.emit(Event{Kind: EventCellStart, Phase: servebench.PhaseSessions, Cell: key, CellIndex: idx, CellCount: total, Planned: r.planned(key)})
			res, _, err := r.measure(ctx, key, servebench.PhaseSessions, idx, total, nil)
			if err != nil {
				return err
			}
			r.conv.commit()
			turns[t] = res
			done[key] = res
			r.addCell(res)
		}
		for t := 2; t <= nt; t++ {
			idx++
			s := turns[t]
			if s.RequestsTotal == 0 {
				continue
			}
			key := sessionKey(ss, n, t)
			key.Scenario = stats.FreshScenario
			if s.InputTokensMean > 0 {
				key.ContextTokens = int(math.Round(s.InputTokensMean))
			}
			if key.ContextTokens <= 0 {
				continue // nothing succeeded: no length to match
			}
			r.emit(Event{Kind: EventCellStart, Phase: servebench.PhaseSessions, Cell: key, CellIndex: idx, CellCount: total, Planned: r.planned(key)})
			res, _, err := r.measure(ctx, key, servebench.PhaseSessions, idx, total, nil)
			if err != nil {
				return err
			}
			done[key] = res
			r.addCell(res)
		}
	}
	r.conv = nil
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

// sessionCell reports whether key is a session or fresh-prompt cell (sized by the sessions).
func sessionCell(key servebench.CellKey) bool {
	return key.Scenario == stats.SessionScenario || key.Scenario == stats.FreshScenario
}
