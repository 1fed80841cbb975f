package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
)

// The prefixes of a users.profiles value that names a file instead of a built-in profile: the
// users replay a dataset's conversations, or an agent trace's sessions.
const (
	DatasetUsers = "dataset:"
	TraceUsers   = "trace:"
)

// UserScript is the sessions a population's users replay from a file instead of drawing them
// from distributions: a dataset's real conversations (Kind "dataset") or an agent trace's
// sessions (Kind "trace"). The population's user g replays session g of the file first
// (modulo the file's sessions), joining it at a turn drawn evenly from its turns, then sessions
// drawn evenly from the file, all seeded by the plan's seed and the user alone: a population of
// N + k users is the population of N plus k users, and the same plan sends the same sessions
// wherever the user runs.
type UserScript struct {
	Kind, Path string
	// Format: "sharegpt" or "jsonl" for a dataset, "trace" for a trace.
	Format   string
	sessions []scriptSession
	// shared are the block ids of a trace that more than one of its sessions names (a system
	// prompt, tool definitions, a repository): a session replayed again keeps them and gets
	// fresh content for the rest.
	shared map[int]bool
	// splits counts the trace's sessions cut in two where a turn's input was shorter than the
	// turn before it (the agent compacted or restarted its context).
	splits int
	// err is why the file could not be read (ProfileFor's profile then fails its cells).
	err error
}

type scriptSession struct {
	// index is the dataset entry (0-based) or the trace line (1-based) of the first turn.
	index int
	lead  []servebench.Message
	turns []scriptTurn
}

type scriptTurn struct {
	// text is a dataset turn's user text; answer its recorded answer ("" when none).
	text, answer string
	// newTokens is the new text's length: a dataset's estimate (textTokens), or a trace's new
	// tokens on top of the conversation so far (its input less the turn before's input and
	// output).
	newTokens int
	// output is the answer's length (0: drawn as the chat user's).
	output int
	// think is the trace's delay before the turn; a dataset's is drawn.
	think time.Duration
	// ids are a trace turn's block ids as written; before is the conversation's tokens before
	// the turn as the trace recorded it (the blocks it covers are the history's).
	ids    []int
	before int
}

// textTokens estimates the tokens of a text conservatively, for fitting a conversation into the
// use case's window: a token per 3 bytes of UTF-8 (English runs about 4 bytes per token, CJK 3).
func textTokens(s string) int { return (len(s) + 2) / 3 }

// answerTokens is the length to ask for of an answer recorded as s: a token per 4 bytes of
// UTF-8 (English's rate), at least 1.
func answerTokens(s string) int { return max(1, (len(s)+3)/4) }

// UserFiles are the files a plan's users replay (users.profiles dataset:PATH and trace:PATH),
// each read and parsed once: the run loads them where it starts (LoadUserFiles) and owns the
// value; its populations take their profiles from it (ProfileFor), their conversations
// replayed from the parsed file the profile carries (UserProfile.Script, handed to
// NewPopulation in PopulationConfig.Profile). Read-only once loaded, so safe for concurrent use.
type UserFiles struct {
	// scripts holds each file by its users.profiles value ("trace:agent.jsonl").
	scripts map[string]*UserScript
}

// LoadUserFiles reads every file the plan's users.profiles names (LookupProfile), a file named
// by several use cases once: a run calls it where it starts, a distributed run's worker on
// joining, as they read the plan's dataset and trace. An error names the profile's key, the
// file's line, the cause and the fix.
func LoadUserFiles(up *servebench.UsersPlan) (*UserFiles, error) {
	f := &UserFiles{scripts: map[string]*UserScript{}}
	if up == nil {
		return f, nil
	}
	names := slices.Sorted(maps.Keys(up.Profiles))
	for _, name := range names {
		p := up.Profiles[name]
		kind, path, ok := userFile(p)
		if !ok || f.scripts[p] != nil {
			continue
		}
		s, err := loadScript(kind, path)
		if err != nil {
			return nil, fmt.Errorf("users.profiles.%s: %w", name, err)
		}
		f.scripts[p] = s
	}
	return f, nil
}

// userFile says whether a users.profiles value names a file, and which (kind "dataset" or
// "trace", the path as written).
func userFile(value string) (kind, path string, ok bool) {
	for _, k := range []string{DatasetUsers, TraceUsers} {
		if p, found := strings.CutPrefix(value, k); found {
			return strings.TrimSuffix(k, ":"), strings.TrimSpace(p), true
		}
	}
	return "", "", false
}

// loadScript reads and parses the file a users.profiles value names (kind "dataset" or
// "trace").
func loadScript(kind, path string) (*UserScript, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: names no file: write %sPATH", kind, kind+":")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (the file is read at the plan's path, relative to the working directory, by servebench and by every worker of a distributed run)", kind, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s %s is a folder: name the file", kind, path)
	}
	if kind == "trace" {
		return LoadUserTrace(path)
	}
	return LoadUserDataset(path)
}

// LoadUserDataset reads a dataset's conversations for a population of users to replay. Every
// format LoadDataset reads is accepted:
//
//   - ShareGPT JSON: each conversation's human turns are its user turns, the reply after each
//     (from gpt or any other speaker but human and system) its recorded answer, a system turn
//     before the first human turn its lead (a system message);
//   - JSONL {"messages": [...]}: each user message is a turn, the assistant message after it
//     its recorded answer, system messages before the first user message the lead (other
//     messages are left out); output_tokens, when given, is the last turn's answer length when
//     that turn has no recorded answer;
//   - JSONL {"prompt": "...", "output_tokens": N}: a conversation of one turn.
//
// A conversation with no user turn is skipped; a text longer than cells.MaxUserTokens (by the
// estimate of 3 bytes a token) is refused with its entry and turn.
func LoadUserDataset(path string) (*UserScript, error) {
	d, err := LoadDataset(path, DatasetOptions{})
	if err != nil {
		return nil, err
	}
	s := &UserScript{Kind: "dataset", Path: path, Format: d.Format}
	for _, e := range d.Entries {
		var ss scriptSession
		switch {
		case d.Format == "sharegpt":
			ss = scriptSession{index: e.Index, lead: e.Messages[:len(e.Messages)-1]}
			for i, t := range e.Turns {
				st := scriptTurn{text: t, answer: e.Answers[i]}
				if st.answer != "" {
					st.output = answerTokens(st.answer)
				}
				ss.turns = append(ss.turns, st)
			}
		default:
			ss = scriptSession{index: e.Index}
			for _, m := range e.Messages {
				switch m.Role {
				case "system":
					if len(ss.turns) == 0 {
						ss.lead = append(ss.lead, m)
					}
				case "user":
					ss.turns = append(ss.turns, scriptTurn{text: m.Content})
				case "assistant":
					if n := len(ss.turns); n > 0 && ss.turns[n-1].answer == "" {
						ss.turns[n-1].answer = m.Content
						ss.turns[n-1].output = answerTokens(m.Content)
					}
				}
			}
			if n := len(ss.turns); n > 0 && ss.turns[n-1].answer == "" && e.OutputTokens > 0 {
				ss.turns[n-1].output = e.OutputTokens
			}
		}
		if len(ss.turns) == 0 {
			continue
		}
		for i := range ss.turns {
			t := &ss.turns[i]
			t.newTokens = textTokens(t.text)
			if t.newTokens > cells.MaxUserTokens || t.output > cells.MaxUserTokens {
				return nil, fmt.Errorf("dataset %s: %s, turn %d holds about %d tokens of text or answer, more than any model's context (%d): cut it or drop the conversation", path, entryName(d.Format, e.Index), i+1, max(t.newTokens, t.output), cells.MaxUserTokens)
			}
		}
		s.sessions = append(s.sessions, ss)
	}
	if len(s.sessions) == 0 {
		return nil, fmt.Errorf("dataset %s has no conversation with a user turn: write {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}, ...]} per line, or a ShareGPT array with \"from\": \"human\" turns", path)
	}
	return s, nil
}

func entryName(format string, i int) string {
	if format == "sharegpt" {
		return fmt.Sprintf("conversation %d (element %d of the array)", i+1, i)
	}
	return fmt.Sprintf("entry %d (the %d. non-blank line)", i+1, i+1)
}

// userTraceLine is one turn of an agent trace.
type userTraceLine struct {
	SessionID    json.RawMessage `json:"session_id"`
	Timestamp    *float64        `json:"timestamp"`
	Delay        *float64        `json:"delay"`
	InputLength  *int64          `json:"input_length"`
	OutputLength *int64          `json:"output_length"`
	HashIDs      []int           `json:"hash_ids"`
}

const traceExample = `{"session_id": "s1", "input_length": 6000, "output_length": 150, "hash_ids": [0, 1, 2], "delay": 1500}`

// LoadUserTrace reads an agent trace for a population of users to replay: JSONL, one turn per
// line, in the Mooncake trace format with sessions (as AIPerf's mooncake_trace):
//
//	{"session_id": "s1", "input_length": 6000, "output_length": 150, "hash_ids": [0, 1, 2], "delay": 1500}
//
// input_length is the turn's whole prompt (tokens), output_length its answer, hash_ids the
// prompt's blocks in order (equal ids are equal content, shared between the sessions that name
// them; optional), delay the think or tool time before the turn in ms (optional; without it the
// gap between the turn's timestamp and the previous turn's, in ms, when both are given; else
// none). Lines of one session_id are its turns, in file order; a line without session_id is a
// session of one turn (a plain Mooncake trace). Other keys are ignored.
//
// A turn's new text is its input less the conversation before it (the previous turn's input
// and output); where a session's input shrinks from one turn to the next, the agent compacted
// or restarted its context, and the session is cut in two there. Errors name the line, the
// cause and the fix; lengths past cells.MaxUserTokens and delays past cells.MaxUserDelay are
// refused.
func LoadUserTrace(path string) (*UserScript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace %w", err)
	}
	s := &UserScript{Kind: "trace", Path: path, Format: "trace"}
	type open struct {
		sess       int // index in s.sessions
		in, out    int
		ts         *float64
		line       int
		hasSession bool
	}
	bySession := map[string]*open{}
	err = jsonLines(b, func(line int, t []byte) error {
		var l userTraceLine
		if err := json.Unmarshal(t, &l); err != nil {
			return fmt.Errorf("line %d is not a JSON object of a trace's turn (%v): write %s", line, err, traceExample)
		}
		in, err := traceLength(line, "input_length", l.InputLength)
		if err != nil {
			return err
		}
		out, err := traceLength(line, "output_length", l.OutputLength)
		if err != nil {
			return err
		}
		if len(l.HashIDs) > in {
			return fmt.Errorf("line %d names %d hash_ids for an input_length of %d tokens: a block holds at least one token; give the prompt's blocks in order (one id per block of the trace's block size)", line, len(l.HashIDs), in)
		}
		var think time.Duration
		if l.Delay != nil {
			if *l.Delay < 0 || *l.Delay > float64(cells.MaxUserDelay/time.Millisecond) {
				return fmt.Errorf("line %d: delay %g ms is not a think time: give the milliseconds between the previous turn's answer and this turn, from 0 to %d (%s)", line, *l.Delay, cells.MaxUserDelay/time.Millisecond, cells.MaxUserDelay)
			}
			think = time.Duration(*l.Delay * float64(time.Millisecond))
		}
		id := strings.TrimSpace(string(l.SessionID))
		if id == "null" || id == `""` {
			id = ""
		}
		o := bySession[id]
		if id == "" || o == nil || in < o.in {
			if o != nil && in < o.in {
				s.splits++
			}
			s.sessions = append(s.sessions, scriptSession{index: line})
			o = &open{sess: len(s.sessions) - 1}
			if id != "" {
				bySession[id] = o
			}
			s.sessions[o.sess].turns = append(s.sessions[o.sess].turns, scriptTurn{newTokens: in, output: out, ids: l.HashIDs})
		} else {
			if l.Delay == nil && l.Timestamp != nil && o.ts != nil {
				gap := *l.Timestamp - *o.ts
				if gap < 0 {
					return fmt.Errorf("line %d: timestamp %g ms is before the timestamp %g ms of line %d, the turn before it in session %s: give a session's turns in order", line, *l.Timestamp, *o.ts, o.line, id)
				}
				if gap > float64(cells.MaxUserDelay/time.Millisecond) {
					return fmt.Errorf("line %d: %g ms after line %d, the turn before it in session %s, is not a think time (at most %s): check the timestamps are in ms, or give delay", line, gap, o.line, id, cells.MaxUserDelay)
				}
				think = time.Duration(gap * float64(time.Millisecond))
			}
			before := o.in + o.out
			s.sessions[o.sess].turns = append(s.sessions[o.sess].turns, scriptTurn{newTokens: max(0, in-before), output: out, ids: l.HashIDs, before: before, think: think})
		}
		o.in, o.out, o.ts, o.line = in, out, l.Timestamp, line
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	if len(s.sessions) == 0 {
		return nil, fmt.Errorf("trace %s holds no turns: write one turn per line, e.g. %s", path, traceExample)
	}
	// the ids named by more than one session
	count := map[int]int{}
	for _, ss := range s.sessions {
		seen := map[int]bool{}
		for _, t := range ss.turns {
			for _, id := range t.ids {
				if !seen[id] {
					seen[id] = true
					count[id]++
				}
			}
		}
	}
	s.shared = map[int]bool{}
	for id, n := range count {
		if n > 1 {
			s.shared[id] = true
		}
	}
	return s, nil
}

// traceLength judges a trace line's length field.
func traceLength(line int, name string, v *int64) (int, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("line %d has no %s: give the turn's %s in tokens, e.g. %s", line, name, strings.TrimSuffix(name, "_length"), traceExample)
	case *v < 1:
		return 0, fmt.Errorf("line %d: %s %d must be at least 1 token", line, name, *v)
	case *v > cells.MaxUserTokens:
		return 0, fmt.Errorf("line %d: %s %d tokens is more than any model's context (at most %d): check the field holds tokens, not bytes or characters", line, name, *v, cells.MaxUserTokens)
	}
	return int(*v), nil
}

// profile is the UserProfile of the script: value is the users.profiles value.
func (s *UserScript) profile() UserProfile {
	p := UserProfile{Script: s, Name: s.Kind + ":" + filepath.Base(s.Path)}
	if s.Kind == "trace" {
		p.Title = "agent trace " + filepath.Base(s.Path)
		var thinks []float64
		for _, ss := range s.sessions {
			for _, t := range ss.turns[1:] {
				thinks = append(thinks, t.think.Seconds())
			}
		}
		m := median(thinks)
		p.ThinkSeconds = Dist{Median: m, Min: m, Max: m}
		p.Source = "replayed from " + s.Path
		return p
	}
	p.Title = "conversations of " + filepath.Base(s.Path)
	p.ThinkSeconds = ChatUser.ThinkSeconds
	p.Source = "replayed from " + s.Path
	return p
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// text describes the script in one line.
func (s *UserScript) text(scale float64) string {
	var turns []float64
	n := 0
	for _, ss := range s.sessions {
		turns = append(turns, float64(len(ss.turns)))
		n += len(ss.turns)
	}
	longest := slices.Max(turns)
	if s.Kind == "dataset" {
		return fmt.Sprintf("real conversations replayed from %s (%s): %d conversations, %d user turns (median %s, up to %s per conversation); answers as long as recorded (a token per 4 bytes), else drawn as the chat user's (%s); think time drawn as the chat user's (%s s)",
			s.Path, s.Format, len(s.sessions), n, short(median(turns)), short(longest), ChatUser.OutputTokens.text(""), ChatUser.ThinkSeconds.text(""))
	}
	var ins, outs, thinks []float64
	for _, ss := range s.sessions {
		ctx := 0
		for i, t := range ss.turns {
			ctx = max(ctx, t.before) + t.newTokens
			ins = append(ins, float64(ctx))
			outs = append(outs, float64(t.output))
			if i > 0 {
				thinks = append(thinks, t.think.Seconds()*scale)
			}
			ctx += t.output
		}
	}
	split := ""
	if s.splits > 0 {
		split = fmt.Sprintf(" (%d cut where the context shrank)", s.splits)
	}
	return fmt.Sprintf("agent trace replayed from %s: %d sessions%s, %d turns (median %s, up to %s per session); prompts median %s tokens (up to %s), answers median %s (up to %s); think/tool time median %s s; %d block ids shared between sessions",
		s.Path, len(s.sessions), split, n, short(median(turns)), short(longest), short(median(ins)), short(slices.Max(ins)), short(median(outs)), short(slices.Max(outs)), short(median(thinks)), len(s.shared))
}

// BlockPrompter builds a prompt of exactly tokens tokens from a trace's blocks (*Builder is
// one; see Builder.BlockPrompt).
type BlockPrompter interface {
	BlockPrompt(seq int64, hashIDs []int, blockTokens, tokens int) (string, error)
}

// replaySession is user g's k-th session (from 0): for its first, session g mod the sessions,
// sent as written when g is below the number of sessions (the file's first pass); for a later
// one, a session drawn evenly from the file with rng (the user's own). Every other replay is
// fresh: it must not find an earlier replay of the same session in the server's cache. Turns stop
// where the next prompt and its answer would pass window (0: no bound); a first turn that alone
// would not fit is cut to fit. Turns carry their texts: a dataset's as written (a fresh replay
// opens the first user turn with a line naming the conversation, the user and the session), a
// trace's built from its blocks (bp) of blockTokens tokens, the blocks only one session names
// made fresh in a fresh replay.
func (s *UserScript) replaySession(g, k int, rng *rand.Rand, window int, scale float64, least, blockTokens int, bp BlockPrompter) ([]load.UserTurn, error) {
	if s.err != nil {
		return nil, s.err
	}
	idx := g % len(s.sessions)
	if k > 0 {
		idx = rng.IntN(len(s.sessions))
	}
	ss := s.sessions[idx]
	fresh := k > 0 || g >= len(s.sessions)
	replay := uint64(k)<<32 | uint64(g) // one number per (user, session): g for the first pass
	out := make([]load.UserTurn, 0, len(ss.turns))
	ctx := 0
	if s.Kind == "dataset" {
		for _, m := range ss.lead {
			ctx += textTokens(m.Content)
		}
	}
	for i, st := range ss.turns {
		ut := load.UserTurn{NewTokens: max(st.newTokens, least), OutputTokens: st.output, Answer: st.answer}
		if i == 0 {
			ut.Lead = ss.lead
		}
		text := st.text
		if s.Kind == "dataset" {
			if i == 0 && fresh {
				text = fmt.Sprintf("(conversation %d, user %d's session %d)\n\n", ss.index+1, g+1, k+1) + text
				ut.NewTokens = max(textTokens(text), least)
			}
			if ut.OutputTokens == 0 {
				ut.OutputTokens = max(1, Grid(ChatUser.OutputTokens.Draw(rng)))
			}
			if i > 0 {
				ut.Think = time.Duration(ChatUser.ThinkSeconds.Draw(rng) * scale * float64(time.Second))
			}
		} else if i > 0 {
			ut.Think = time.Duration(float64(st.think) * scale)
		}
		if window > 0 && ctx+ut.NewTokens+ut.OutputTokens > window {
			if i > 0 {
				break
			}
			ut.OutputTokens = max(1, min(ut.OutputTokens, window/4))
			ut.NewTokens = max(least, window-ctx-ut.OutputTokens)
			if s.Kind == "dataset" {
				text = cutText(text, 3*ut.NewTokens)
			}
		}
		if s.Kind == "dataset" {
			ut.Text = text
		} else {
			if bp == nil {
				return nil, errors.New("replaying a trace's shared blocks needs servebench's prompt builder")
			}
			ids := st.ids
			if i > 0 {
				ids = ids[min(len(ids), st.before/max(blockTokens, 1)):]
			}
			if fresh {
				ids = slices.Clone(ids)
				for j, id := range ids {
					if !s.shared[id] {
						ids[j] = int(mix(uint64(id)^0x5e55, replay+1) >> 1)
					}
				}
			}
			// a number of its own for the text's filler: negative, never a request's
			t, err := bp.BlockPrompt(-1-int64(mix(replay, uint64(i))>>1), ids, blockTokens, ut.NewTokens)
			if err != nil {
				return nil, fmt.Errorf("trace %s, session of line %d, turn %d: %w", s.Path, ss.index, i+1, err)
			}
			ut.Text = t
		}
		out = append(out, ut)
		ctx += ut.NewTokens + ut.OutputTokens
	}
	return out, nil
}

// cutText returns s's first n bytes at most, cut at a character's start.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// newReplayPopulation is NewPopulation for a profile that replays a file (c.Profile.Script).
func newReplayPopulation(c PopulationConfig) *load.Population {
	up := c.Users
	sc := c.Profile.Script
	stride := max(c.Stride, 1)
	rngs := make([]*rand.Rand, c.Local())
	started := make([]int, len(rngs)) // sessions each user has begun
	for u := range rngs {
		rngs[u] = rand.New(rand.NewPCG(uint64(up.Seed), uint64(c.GlobalUser(u)))) // not the population's size: populations nest
	}
	least := max(c.MinTokens, 1)
	block := cells.DefaultTraceBlockTokens
	if up.BlockTokens > 0 {
		block = up.BlockTokens
	}
	bp, _ := c.Prompts.(BlockPrompter)
	var mu sync.Mutex
	var failed error // why a session could not be built: the cell fails with it
	extra := int64(1)<<31 + int64(c.Slot) + 1 - int64(stride)
	return &load.Population{
		Session: func(u int, joining bool) ([]load.UserTurn, int) {
			mu.Lock()
			k := started[u]
			started[u]++
			mu.Unlock()
			// rngs[u] is user u's alone, and a user draws one session at a time
			turns, err := sc.replaySession(c.GlobalUser(u), k, rngs[u], c.Window, up.ThinkScale, least, block, bp)
			if err != nil || len(turns) == 0 {
				if err == nil {
					err = fmt.Errorf("%s %s: a session has no turn that fits %d tokens", sc.Kind, sc.Path, c.Window)
				}
				mu.Lock()
				failed = cmpOr(failed, err)
				mu.Unlock()
				// no text: the driver asks Text, which fails the cell with the cause
				return []load.UserTurn{{NewTokens: least, OutputTokens: 1}}, 0
			}
			join := 0
			if joining {
				join = rngs[u].IntN(len(turns))
			}
			return turns, join
		},
		Text: func(ctx context.Context, seq int64, key, tokens int) (string, error) {
			mu.Lock()
			err := failed
			if key > 0 {
				extra += int64(stride)
				seq = extra
			}
			mu.Unlock()
			if err != nil {
				return "", err
			}
			return c.Prompts.Prompt(ctx, seq, max(tokens, least))
		},
		Stagger: max(time.Second, time.Duration(c.Profile.ThinkSeconds.Median*up.ThinkScale*float64(time.Second))),
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
