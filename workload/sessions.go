package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
)

// ScriptedSession is a conversation of a dataset run as a session: Lead (a system message, say)
// opens it, then Turns are its user turns, one per turn, the model's own answers in between.
type ScriptedSession struct {
	// Index is the dataset entry (0-based), kept in each record's dataset_index.
	Index int
	Lead  []servebench.Message
	Turns []string
}

// ScriptTurns is the user-turn count of each scripted session (cells.Inputs.ScriptTurns); nil
// for no script.
func ScriptTurns(script []ScriptedSession) []int {
	if script == nil {
		return nil
	}
	out := make([]int, len(script))
	for i, s := range script {
		out[i] = len(s.Turns)
	}
	return out
}

// Sessions is the state of one level's multi-turn sessions: the conversation each session has
// had so far, and the turn being measured. Turn t of session Active(t)[k] is request k of turn
// t's cell. A turn's messages join the conversations only once its cell is kept (Commit), so an
// attempt that is discarded leaves them as they were.
//
// In a distributed run every session lives on one worker (the coordinator hands session i's
// requests to the same worker at every turn of the level); the worker's Sessions holds the
// conversations of its own sessions only.
type Sessions struct {
	plan    *servebench.SessionPlan
	prompts Prompter
	clock   func() time.Duration

	mu      sync.Mutex
	script  []ScriptedSession // the dataset's conversations; nil: synthetic text
	hist    [][]servebench.Message
	turns   []int     // turns each session has committed
	lastEnd []float64 // run-clock offset (s) at which each session's last answer ended
	pending map[int]*pendingTurn
	turn    int // the turn of the pending messages (0: none)
}

// pendingTurn is one session's turn in flight or finished, not yet committed.
type pendingTurn struct {
	user   string
	answer *strings.Builder
	end    float64
}

// NewSessions starts count sessions of ss: synthetic ones (new text from prompts), or the first
// count of script. clock is the offset from the run origin that records' offsets count from
// (think time waits from a session's last answer's end on it).
func NewSessions(ss *servebench.SessionPlan, count int, script []ScriptedSession, prompts Prompter, clock func() time.Duration) *Sessions {
	if script != nil {
		count = min(count, len(script))
		script = script[:count]
	}
	s := &Sessions{plan: ss, prompts: prompts, clock: clock, script: script, hist: make([][]servebench.Message, count),
		turns: make([]int, count), lastEnd: make([]float64, count), pending: map[int]*pendingTurn{}}
	for i := range script {
		s.hist[i] = slices.Clone(script[i].Lead)
	}
	return s
}

// Scripted reports whether the sessions are a dataset's conversations.
func (s *Sessions) Scripted() bool { return s.script != nil }

// Active lists the sessions that have a turn t, in order: every session, or the dataset's
// conversations with at least t user turns. Request k of turn t's cell is session Active(t)[k].
func (s *Sessions) Active(t int) []int {
	var out []int
	for i := range s.hist {
		if s.script == nil || len(s.script[i].Turns) >= t {
			out = append(out, i)
		}
	}
	return out
}

// Begin starts an attempt at a turn's cell: nothing of an earlier attempt is kept.
func (s *Sessions) Begin() {
	s.mu.Lock()
	s.pending, s.turn = map[int]*pendingTurn{}, 0
	s.mu.Unlock()
}

// Commit appends every session's measured turn (its user text and the model's answer as it
// arrived, whole or partial) to its conversation.
func (s *Sessions) Commit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pending {
		s.hist[i] = append(s.hist[i], servebench.Message{Role: "user", Content: p.user},
			servebench.Message{Role: "assistant", Content: p.answer.String()})
		s.lastEnd[i] = p.end
		s.turns[i]++
	}
	s.pending, s.turn = map[int]*pendingTurn{}, 0
}

// Advance is a worker's Begin and Commit in one, for the cell of turn t it is handed: the turn
// before it was kept (the coordinator moves on only then), so its messages are committed; a
// cell of the same turn again is a new attempt, whose earlier messages are dropped.
func (s *Sessions) Advance(t int) {
	s.mu.Lock()
	keep := t > 1 && s.turn == t-1
	s.mu.Unlock()
	if keep {
		s.Commit()
		return
	}
	s.Begin()
}

// NewTextTokens is the length of the new user text of turn t: the first turn's whole prompt,
// then TurnTokens.
func NewTextTokens(ss *servebench.SessionPlan, t int) int {
	if t == 1 {
		return int(ss.FirstTurnTokens)
	}
	return int(ss.TurnTokens)
}

// Request builds turn key.Turn of session Active(key.Turn)[k] as request seq: the conversation
// so far plus new user text, after the session's think time since its last answer.
func (s *Sessions) Request(ctx context.Context, key servebench.CellKey, seq int64, k int) (*servebench.Request, error) {
	act := s.Active(key.Turn)
	if k < 0 || k >= len(act) {
		return nil, fmt.Errorf("request %d of turn %d: the cell sent more requests than there are sessions (%d)", k, key.Turn, len(act))
	}
	i := act[k]
	s.mu.Lock()
	had := s.turns[i]
	s.mu.Unlock()
	if had != key.Turn-1 {
		return nil, fmt.Errorf("session %d has %d turn(s) here but turn %d needs %d before it: its conversation lives where this process cannot see it (a worker lost during the level); resume the run to measure the level again", i+1, had, key.Turn, key.Turn-1)
	}
	var text string
	if s.script != nil {
		text = s.script[i].Turns[key.Turn-1]
	} else {
		var err error
		if text, err = s.prompts.Prompt(ctx, seq, NewTextTokens(s.plan, key.Turn)); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	msgs := append(slices.Clone(s.hist[i]), servebench.Message{Role: "user", Content: text})
	last := s.lastEnd[i]
	p := &pendingTurn{user: text, answer: new(strings.Builder)}
	s.pending[i], s.turn = p, key.Turn
	s.mu.Unlock()
	if think := time.Duration(s.plan.ThinkTime); think > 0 && key.Turn > 1 {
		wait := time.Duration(last*float64(time.Second)) + think - s.clock()
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
	if s.script != nil {
		idx := s.script[i].Index
		req.DatasetIndex = &idx
	} else if key.Turn == 1 {
		req.ContextTokens = key.ContextTokens // later turns' length is the conversation's, as the server counts it
	}
	return req, nil
}

// Ended notes when the session of request k of turn's cell answered (end: its record's end
// offset, s): the next turn's think time counts from it.
func (s *Sessions) Ended(k, turn int, end float64) {
	act := s.Active(turn)
	if k < 0 || k >= len(act) {
		return
	}
	s.mu.Lock()
	if p := s.pending[act[k]]; p != nil {
		p.end = end
	}
	s.mu.Unlock()
}
