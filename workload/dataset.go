package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/servebench/servebench"
)

// Entry is one prompt of a dataset, sent as written.
type Entry struct {
	// Index is the entry's position in the file (0-based: the JSONL line among non-blank lines,
	// or the element of a ShareGPT array), kept through filtering and sampling.
	Index int
	// Messages is the conversation to send.
	Messages []servebench.Message
	// OutputTokens is the output length the entry asks for; 0 means the plan's.
	OutputTokens int
	// Turns are the user turns of a ShareGPT conversation, in order (the first is the content
	// of the last message of Messages); a multi-turn session sends them one after the other.
	Turns []string
	// Answers are the recorded answers of a ShareGPT conversation: Answers[i] the assistant's
	// reply to Turns[i] ("" when it has none). A population of users replaying the conversation
	// asks for answers of their lengths (UserScript).
	Answers []string
}

// DatasetOptions filter and sample a dataset as it is loaded.
type DatasetOptions struct {
	// MinOutputTokens and MaxOutputTokens keep entries whose output_tokens lies in the range
	// (0 = no bound; entries without output_tokens always pass).
	MinOutputTokens, MaxOutputTokens int
	// MaxPromptChars drops entries whose messages hold more characters in all (0 = no bound).
	MaxPromptChars int
	// Sample > 0 keeps that many entries, drawn without replacement by a generator seeded with
	// Seed, in their file order.
	Sample int
	Seed   int64
}

// Dataset is a loaded dataset: its entries, in the order they are replayed.
type Dataset struct {
	Path string
	// Format: "jsonl" or "sharegpt".
	Format  string
	Entries []Entry
	// Dropped counts entries the length filters removed.
	Dropped int
}

// LoadDataset reads a dataset file:
//
//   - JSONL, one entry per line: {"messages": [{"role": "user", "content": "…"}, …],
//     "output_tokens": N} or {"prompt": "…", "output_tokens": N} (output_tokens optional, other
//     keys ignored);
//   - ShareGPT JSON: an array of {"conversations": [{"from": "human"|"gpt"|"system", "value":
//     "…"}, …]}; an entry sends the system turn (if any) and the first human turn, and keeps every
//     human turn in Turns.
//
// Errors name the file, the line or element, and what to write instead.
func LoadDataset(path string, opt DatasetOptions) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w (check the --dataset path)", err)
	}
	d := &Dataset{Path: path}
	trim := bytes.TrimSpace(b)
	if len(trim) > 0 && trim[0] == '[' {
		d.Format = "sharegpt"
		d.Entries, err = parseShareGPT(b) // the file as read: a syntax error's offset gives its line
	} else {
		d.Format = "jsonl"
		d.Entries, err = parseJSONL(b)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf("dataset %s holds no entries: write one JSON object per line, e.g. {\"prompt\": \"Hello\", \"output_tokens\": 64}", path)
	}
	kept := d.Entries[:0]
	for _, e := range d.Entries {
		if opt.keep(e) {
			kept = append(kept, e)
		} else {
			d.Dropped++
		}
	}
	d.Entries = kept
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf("dataset %s: the length filters dropped all %d entries: widen them", path, d.Dropped)
	}
	if opt.Sample < 0 {
		return nil, fmt.Errorf("dataset sample %d: give a positive number of entries", opt.Sample)
	}
	if opt.Sample > 0 && opt.Sample < len(d.Entries) {
		rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0xda7a5e7))
		pick := rng.Perm(len(d.Entries))[:opt.Sample]
		slices.Sort(pick)
		sampled := make([]Entry, len(pick))
		for i, j := range pick {
			sampled[i] = d.Entries[j]
		}
		d.Entries = sampled
	}
	return d, nil
}

func (o DatasetOptions) keep(e Entry) bool {
	if e.OutputTokens > 0 {
		if o.MinOutputTokens > 0 && e.OutputTokens < o.MinOutputTokens {
			return false
		}
		if o.MaxOutputTokens > 0 && e.OutputTokens > o.MaxOutputTokens {
			return false
		}
	}
	if o.MaxPromptChars > 0 {
		n := 0
		for _, m := range e.Messages {
			n += len(m.Content)
		}
		if n > o.MaxPromptChars {
			return false
		}
	}
	return true
}

// jsonlEntry is one line of a JSONL dataset.
type jsonlEntry struct {
	Messages     []servebench.Message `json:"messages"`
	Prompt       *string              `json:"prompt"`
	OutputTokens *int                 `json:"output_tokens"`
}

func parseJSONL(b []byte) ([]Entry, error) {
	var out []Entry
	err := jsonLines(b, func(line int, t []byte) error {
		var j jsonlEntry
		if err := json.Unmarshal(t, &j); err != nil {
			return fmt.Errorf("line %d is not a JSON object of the dataset shape (%v): write {\"messages\": [...], \"output_tokens\": N} or {\"prompt\": \"...\", \"output_tokens\": N}", line, err)
		}
		e := Entry{Index: len(out)}
		switch {
		case j.Prompt != nil && j.Messages != nil:
			return fmt.Errorf("line %d has both prompt and messages: keep one", line)
		case j.Prompt != nil:
			if *j.Prompt == "" {
				return fmt.Errorf("line %d: prompt is empty", line)
			}
			e.Messages = []servebench.Message{{Role: "user", Content: *j.Prompt}}
		case len(j.Messages) > 0:
			for i, m := range j.Messages {
				if m.Role == "" {
					return fmt.Errorf("line %d: messages[%d] has no role: write {\"role\": \"user\", \"content\": \"...\"}", line, i)
				}
			}
			e.Messages = j.Messages
		default:
			return fmt.Errorf("line %d has neither messages nor prompt", line)
		}
		if j.OutputTokens != nil {
			if *j.OutputTokens < 1 {
				return fmt.Errorf("line %d: output_tokens %d must be at least 1", line, *j.OutputTokens)
			}
			e.OutputTokens = *j.OutputTokens
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type shareGPTEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

func parseShareGPT(b []byte) ([]Entry, error) {
	var raw []shareGPTEntry
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%snot a ShareGPT array (%v): write [{\"conversations\": [{\"from\": \"human\", \"value\": \"...\"}, ...]}, ...]", jsonErrorLine(b, err), err)
	}
	var out []Entry
	for i, r := range raw {
		e := Entry{Index: i}
		var system string
		for _, c := range r.Conversations {
			switch strings.ToLower(c.From) {
			case "human", "user":
				e.Turns = append(e.Turns, c.Value)
				e.Answers = append(e.Answers, "")
			case "system":
				if len(e.Turns) == 0 {
					system = c.Value
				}
			default: // gpt, chatgpt, bard, assistant, …: the answer to the last human turn
				if n := len(e.Answers); n > 0 && e.Answers[n-1] == "" {
					e.Answers[n-1] = c.Value
				}
			}
		}
		if len(e.Turns) == 0 {
			continue // no human turn: nothing to ask
		}
		if system != "" {
			e.Messages = append(e.Messages, servebench.Message{Role: "system", Content: system})
		}
		e.Messages = append(e.Messages, servebench.Message{Role: "user", Content: e.Turns[0]})
		out = append(out, e)
	}
	if len(out) == 0 && len(raw) > 0 {
		return nil, errors.New("no conversation has a human turn (from: \"human\")")
	}
	return out, nil
}

// Replay hands out a dataset's entries in order, cycling, to any number of goroutines.
type Replay struct {
	d    *Dataset
	next atomic.Int64
}

// NewReplay starts at the first entry.
func NewReplay(d *Dataset) *Replay { return &Replay{d: d} }

// Next returns the next entry (after the last, the first again).
func (r *Replay) Next() Entry {
	i := r.next.Add(1) - 1
	return r.d.Entries[int(i%int64(len(r.d.Entries)))]
}

// FillNext fills req from the next entry (see Entry.Fill).
func (r *Replay) FillNext(req *servebench.Request, defaultOut int) { r.Next().Fill(req, defaultOut) }

// Fill fills req from entry seq mod the entries (see Entry.Fill): requests are numbered run-wide,
// so a run replays the entries in order, cycling, and the workers of a distributed run each
// send the entries of the sequence numbers handed to them.
func (r *Replay) Fill(seq int64, req *servebench.Request, defaultOut int) {
	n := int64(len(r.d.Entries))
	r.d.Entries[int((seq%n+n)%n)].Fill(req, defaultOut)
}

// Fill sets req's conversation, output length and dataset index from e; output tokens fall back
// to defaultOut when the entry names none.
func (e Entry) Fill(req *servebench.Request, defaultOut int) {
	req.Messages = e.Messages
	req.Prompt = ""
	req.ContextTokens = 0
	req.MaxOutputTokens = defaultOut
	if e.OutputTokens > 0 {
		req.MaxOutputTokens = e.OutputTokens
	}
	idx := e.Index
	req.DatasetIndex = &idx
}

// jsonErrorLine is "line N: " for a JSON error that says where in b it is (a syntax error, a
// value of the wrong type), "" for one that does not (the input ended early).
func jsonErrorLine(b []byte, err error) string {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return ""
	}
	off = min(off, int64(len(b)))
	return fmt.Sprintf("line %d: ", bytes.Count(b[:off], []byte("\n"))+1)
}
