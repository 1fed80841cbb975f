package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// TraceEntry is one request of a trace (the Mooncake trace format).
type TraceEntry struct {
	// At is the send time from the trace's start (its timestamp minus the first one).
	At time.Duration
	// ContextTokens and OutputTokens are the lengths the request asks for (the trace's
	// input_length and output_length).
	ContextTokens, OutputTokens int
	// HashIDs name the prompt's blocks in order; equal ids are equal blocks, shared between the
	// requests that name them (nil: a prompt of its own).
	HashIDs []int
}

// Trace is a loaded trace, in send order.
type Trace struct {
	Path    string
	Entries []TraceEntry
}

type traceLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int    `json:"hash_ids"`
}

// LoadTrace reads a JSONL trace: one {"timestamp": ms, "input_length": N, "output_length": M,
// "hash_ids": [...]} per line (hash_ids optional, other keys ignored). Entries are sorted by
// timestamp; send times are relative to the first.
func LoadTrace(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w (check the --trace path)", err)
	}
	tr := &Trace{Path: path}
	var ts []float64
	err = jsonLines(b, func(line int, t []byte) error {
		var l traceLine
		if err := json.Unmarshal(t, &l); err != nil {
			return fmt.Errorf("line %d is not a JSON object (%v): write {\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 128, \"hash_ids\": [1, 2]}", line, err)
		}
		var miss []string
		if l.Timestamp == nil {
			miss = append(miss, "timestamp")
		}
		if l.InputLength == nil || *l.InputLength < 1 {
			miss = append(miss, "input_length")
		}
		if l.OutputLength == nil || *l.OutputLength < 1 {
			miss = append(miss, "output_length")
		}
		if len(miss) > 0 {
			return fmt.Errorf("line %d lacks a valid %s (timestamps in ms, lengths of at least 1 token)", line, strings.Join(miss, ", "))
		}
		ts = append(ts, *l.Timestamp)
		tr.Entries = append(tr.Entries, TraceEntry{ContextTokens: *l.InputLength, OutputTokens: *l.OutputLength, HashIDs: l.HashIDs})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace %s %w", path, err)
	}
	if len(tr.Entries) == 0 {
		return nil, errors.New("trace " + path + " holds no requests")
	}
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ts[idx[a]] < ts[idx[b]] })
	sorted := make([]TraceEntry, len(idx))
	for i, j := range idx {
		sorted[i] = tr.Entries[j]
		sorted[i].At = time.Duration((ts[j] - ts[idx[0]]) * float64(time.Millisecond))
	}
	tr.Entries = sorted
	if last := sorted[len(sorted)-1].At; last <= 0 {
		// one instant is no schedule: its arrival rate, (n − 1) / (last − first), is undefined
		return nil, fmt.Errorf("trace %s: its %d request(s) all have the timestamp %g ms, so it has no schedule to replay and no arrival rate; give each line its send time in ms, or send the requests together with --mode fixed --requests %d --concurrency %d", path, len(sorted), ts[idx[0]], len(sorted), len(sorted))
	}
	return tr, nil
}

// Schedule returns the send offsets at speed (2 = twice as fast as recorded).
func (t *Trace) Schedule(speed float64) []time.Duration {
	out := make([]time.Duration, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = time.Duration(float64(e.At) / speed)
	}
	return out
}

// BlockPrompt returns request seq's prompt of exactly tokens tokens (by the linear model, as
// Prompt) whose text after the lead word is the blocks named by hashIDs, blockTokens tokens
// each, then filler unique to seq up to the length; blocks that do not fit are cut. A block's
// text depends only on the run and its id, so requests naming the same ids share those tokens
// exactly and a server's prefix cache sees what it would see in production. It needs an
// additive tokenizer (not Strict).
func (b *Builder) BlockPrompt(seq int64, hashIDs []int, blockTokens, tokens int) (string, error) {
	if b.Strict() {
		return "", errors.New("the target's tokenizer does not add up word by word, so shared trace blocks cannot be made exact; replay the trace against a server with /tokenize of an ordinary vocabulary")
	}
	if tokens < b.base {
		return "", fmt.Errorf("a prompt of %d tokens is shorter than the %d tokens every prompt to this target needs", tokens, b.base)
	}
	if blockTokens < 1 {
		return "", fmt.Errorf("block size %d: give a positive number of tokens", blockTokens)
	}
	l := b.v.unitTokens
	budget := tokens - b.base
	var sb strings.Builder
	sb.WriteString(leadWord)
	for _, id := range hashIDs {
		if budget <= 0 {
			break
		}
		n := min(blockTokens, budget)
		r := rng{s: mix(b.runHash^0xb10c, uint64(id))}
		b.v.appendWords(&sb, &r, n/l)
		for range n % l {
			sb.WriteString(b.v.pad)
		}
		budget -= n
	}
	r := rng{s: mix(b.runHash^0x7a11, uint64(seq))}
	b.v.appendWords(&sb, &r, budget/l)
	for range budget % l {
		sb.WriteString(b.v.pad)
	}
	return sb.String(), nil
}

// TraceReplay builds a trace's requests: entry i's prompt from its hash ids (BlockPrompt) and
// its output length.
type TraceReplay struct {
	T           *Trace
	B           *Builder
	Speed       float64 // 1 = as recorded
	BlockTokens int     // tokens per hash id (512 in the Mooncake traces)
}

// Schedule is the trace's send times at the replay speed.
func (r *TraceReplay) Schedule() []time.Duration { return r.T.Schedule(r.Speed) }

// Fill makes req entry i of the trace, as request seq.
func (r *TraceReplay) Fill(i int, seq int64, req *servebench.Request) error {
	if i < 0 || i >= len(r.T.Entries) {
		return fmt.Errorf("trace entry %d does not exist (the trace has %d)", i, len(r.T.Entries))
	}
	e := r.T.Entries[i]
	text, err := r.B.BlockPrompt(seq, e.HashIDs, r.BlockTokens, e.ContextTokens)
	if err != nil {
		return err
	}
	req.Prompt, req.ContextTokens, req.MaxOutputTokens = text, e.ContextTokens, e.OutputTokens
	idx := i
	req.DatasetIndex = &idx
	return nil
}
