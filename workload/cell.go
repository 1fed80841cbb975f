package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
)

// Prompter makes a prompt of exactly tokens tokens for request seq (*Builder is one).
type Prompter interface {
	Prompt(ctx context.Context, seq int64, tokens int) (string, error)
}

// EntryFiller sets a request from a dataset's entry for request seq (*Replay is one).
type EntryFiller interface {
	Fill(seq int64, req *servebench.Request, defaultOut int)
}

// TraceSource builds a trace's requests (*TraceReplay is one): Schedule is the send times from
// the cell's start, Fill makes entry i (in schedule order) request seq.
type TraceSource interface {
	Schedule() []time.Duration
	Fill(i int, seq int64, req *servebench.Request) error
}

// Sources are a run's sources of prompts; Requests builds one cell's requests from them. A local
// run and every worker of a distributed run hold the same Sources (a worker reads the plan's
// files itself) and so build the same request for the same sequence number.
type Sources struct {
	// Prompts makes synthetic text of exact token counts.
	Prompts Prompter
	// Dataset, when set, supplies the dataset cells' prompts.
	Dataset EntryFiller
	// Trace, when set, supplies the trace cell's requests.
	Trace TraceSource
	// Sessions is the conversations of the level of multi-turn sessions being measured; nil
	// outside one.
	Sessions *Sessions
}

// Requests returns the builder of the cell key's requests (load.Source). first is the cell's
// first sequence number: request seq is the cell's request seq − first, counted from 0 in the
// order the cell's schedule (a trace) or its sessions (a session turn) give them. Where the
// prompts come from is cells.SourceOf(key):
//
//   - synthetic: a prompt of exactly the key's context tokens, unique to seq;
//   - dataset: entry seq mod the entries (in order, cycling run-wide), its own output length
//     or the key's;
//   - trace: entry seq − first of the schedule;
//   - session turn: the conversation so far of session Active(turn)[seq − first] plus new text.
//
// A user population's requests are built by its load.Population (NewPopulation), not here.
func (s *Sources) Requests(key servebench.CellKey, first int64) load.Source {
	base := func(seq int64, warmup bool) *servebench.Request {
		return &servebench.Request{Cell: key, Seq: seq, Warmup: warmup}
	}
	switch cells.SourceOf(key) {
	case cells.Dataset:
		if s.Dataset != nil {
			return func(_ context.Context, seq int64, warmup bool) (*servebench.Request, error) {
				req := base(seq, warmup)
				s.Dataset.Fill(seq, req, key.OutputTokens)
				return req, nil
			}
		}
	case cells.Trace:
		if s.Trace != nil {
			return func(_ context.Context, seq int64, warmup bool) (*servebench.Request, error) {
				req := base(seq, warmup)
				return req, s.Trace.Fill(int(seq-first), seq, req)
			}
		}
	case cells.SessionTurn:
		if s.Sessions != nil {
			return func(ctx context.Context, seq int64, _ bool) (*servebench.Request, error) {
				return s.Sessions.Request(ctx, key, seq, int(seq-first))
			}
		}
	case cells.Population:
		return func(context.Context, int64, bool) (*servebench.Request, error) {
			return nil, fmt.Errorf("cell %s: a population's requests are its users' (load.Population)", key.ID())
		}
	}
	return func(ctx context.Context, seq int64, warmup bool) (*servebench.Request, error) {
		text, err := s.Prompts.Prompt(ctx, seq, key.ContextTokens)
		if err != nil {
			return nil, err
		}
		req := base(seq, warmup)
		req.Prompt, req.ContextTokens, req.MaxOutputTokens = text, key.ContextTokens, key.OutputTokens
		return req, nil
	}
}

// AheadTokens is the length of the prompt worth building before the cell's clock matters (so
// that counting calls to the server, tokenize or calibration, never overlap its measured
// phase): the key's context, a session turn's new text; 0 when the cell builds none of its own
// (a dataset's or trace's own texts, a dataset's conversations, a population).
func (s *Sources) AheadTokens(key servebench.CellKey, ss *servebench.SessionPlan) int {
	switch cells.SourceOf(key) {
	case cells.Dataset, cells.Trace, cells.Population:
		return 0
	case cells.SessionTurn:
		if s.Sessions != nil && s.Sessions.script != nil || ss == nil {
			return 0
		}
		return NewTextTokens(ss, key.Turn)
	}
	return key.ContextTokens
}
