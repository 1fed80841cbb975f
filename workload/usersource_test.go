package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
)

func testdata(name string) string { return filepath.Join("testdata", "users", name) }

// The files a population of users replays map to sessions as docs/plan.md says: a dataset's
// user turns with their recorded answers and lead; a trace's turns with their new tokens (the
// input less the conversation before it), delays or timestamp gaps, cut where the context
// shrank, and the block ids more than one session names.
func TestUserScriptsMapTheirFiles(t *testing.T) {
	type turn struct {
		text, answer      string
		newTokens, output int
		think             time.Duration
		before            int
	}
	cases := []struct {
		value    string
		kind     string
		format   string
		sessions [][]turn
		leads    []int
		shared   []int
		splits   int
	}{
		{value: "dataset:" + testdata("conversations.json"), kind: "dataset", format: "sharegpt", leads: []int{1, 0},
			sessions: [][]turn{
				{{text: "What is the capital of France?", answer: "Paris. It has been the capital since the tenth century, give or take.", newTokens: 10, output: 18},
					{text: "And of Italy?", answer: "Rome.", newTokens: 5, output: 2},
					{text: "Thanks!", newTokens: 3}},
				{{text: "Write a haiku about caches.", answer: "Warm blocks wait in HBM / a prefix returns, and finds / its keys already there", newTokens: 9, output: 20}},
			}},
		{value: "dataset:" + testdata("conversations.jsonl"), kind: "dataset", format: "jsonl", leads: []int{1, 0},
			sessions: [][]turn{
				{{text: "Name a prime.", answer: "Seven.", newTokens: 5, output: 2}, {text: "Another one?", newTokens: 4, output: 12}},
				{{text: "Summarise the plot of Hamlet in one line.", newTokens: 14, output: 40}},
			}},
		{value: "trace:" + testdata("agent_trace.jsonl"), kind: "trace", format: "trace", leads: []int{0, 0, 0, 0, 0}, shared: []int{0, 1, 2}, splits: 1,
			sessions: [][]turn{
				{{newTokens: 256, output: 32}, {newTokens: 64, output: 32, think: 500 * time.Millisecond, before: 288},
					{newTokens: 64, output: 32, think: time.Second, before: 384}, {newTokens: 64, output: 32, think: time.Second, before: 480}},
				{{newTokens: 256, output: 16}, {newTokens: 64, output: 16, think: 200 * time.Millisecond, before: 272}},
				{{newTokens: 200, output: 16}},
				{{newTokens: 128, output: 8}},
				{{newTokens: 256, output: 24}, {newTokens: 60, output: 24, think: 2500 * time.Millisecond, before: 280}},
			}},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			p, err := LookupProfile(c.value)
			if err != nil {
				t.Fatal(err)
			}
			s := p.Script
			if s == nil || s.Kind != c.kind || s.Format != c.format || s.splits != c.splits || len(s.sessions) != len(c.sessions) {
				t.Fatalf("script %+v, want %d %s sessions (%s), %d split", s, len(c.sessions), c.kind, c.format, c.splits)
			}
			for i, want := range c.sessions {
				got := s.sessions[i]
				if len(got.lead) != c.leads[i] || len(got.turns) != len(want) {
					t.Fatalf("session %d: lead %v, %d turns; want %d lead messages, %d turns", i, got.lead, len(got.turns), c.leads[i], len(want))
				}
				for j, w := range want {
					g := got.turns[j]
					gt := turn{g.text, g.answer, g.newTokens, g.output, g.think, g.before}
					if gt != w {
						t.Errorf("session %d turn %d: %+v, want %+v", i, j+1, gt, w)
					}
				}
			}
			if len(s.shared) != len(c.shared) {
				t.Errorf("shared ids %v, want %v", s.shared, c.shared)
			}
			for _, id := range c.shared {
				if !s.shared[id] {
					t.Errorf("id %d is not shared; shared: %v", id, s.shared)
				}
			}
			if p.Name != c.kind+":"+filepath.Base(c.value[len(c.kind)+1:]) || !strings.Contains(p.Text(), "replayed from") {
				t.Errorf("profile %q: %s", p.Name, p.Text())
			}
		})
	}
}

// A malformed file is refused with the line, the cause and the fix; absurd lengths and delays
// are refused.
func TestUserTraceMalformedLines(t *testing.T) {
	good := `{"session_id": "a", "input_length": 100, "output_length": 10}` + "\n"
	for _, c := range []struct{ body, want string }{
		{"nope\n", `line 1 is not a JSON object of a trace's turn`},
		{good + "\n" + `{"session_id": "a", "input_length": 100, "output_length": 10` + "\n", "line 3 is not a JSON object"},
		{good + `{"session_id": "a", "output_length": 10}`, "line 2 has no input_length: give the turn's input in tokens"},
		{`{"input_length": 0, "output_length": 10}`, "line 1: input_length 0 must be at least 1 token"},
		{`{"input_length": 10, "output_length": -1}`, "line 1: output_length -1 must be at least 1 token"},
		{`{"input_length": 20000000000, "output_length": 10}`, "line 1: input_length 20000000000 tokens is more than any model's context (at most 10000000): check the field holds tokens"},
		{`{"input_length": 10, "output_length": 99999999}`, "output_length 99999999 tokens is more than any model's context"},
		{good + `{"session_id": "a", "input_length": 120, "output_length": 10, "delay": -5}`, "line 2: delay -5 ms is not a think time"},
		{good + `{"session_id": "a", "input_length": 120, "output_length": 10, "delay": 1e12}`, "line 2: delay 1e+12 ms is not a think time"},
		{`{"session_id": 1, "timestamp": 500, "input_length": 10, "output_length": 1}` + "\n" + `{"session_id": 1, "timestamp": 100, "input_length": 20, "output_length": 1}`, "line 2: timestamp 100 ms is before the timestamp 500 ms of line 1, the turn before it in session 1: give a session's turns in order"},
		{`{"input_length": 2, "output_length": 1, "hash_ids": [1, 2, 3]}`, "line 1 names 3 hash_ids for an input_length of 2 tokens"},
		{`{"input_length": 2, "output_length": 1, "hash_ids": [1.5]}`, "line 1 is not a JSON object"},
		{"\n\n", "holds no turns: write one turn per line"},
	} {
		p := writeFile(t, "t.jsonl", c.body)
		_, err := LookupProfile("trace:" + p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want the file and %q", c.body, err, c.want)
		}
	}
	for _, c := range []struct{ value, want string }{
		{"trace:", "names no file: write trace:PATH"},
		{"dataset:" + filepath.Join(t.TempDir(), "none.json"), "no such file"},
		{"dataset:" + t.TempDir(), "is a folder"},
		{"dataset:" + writeFile(t, "d.json", `[{"conversations": [{"from": "gpt", "value": "hi"}]}]`), "no conversation has a human turn"},
		{"dataset:" + writeFile(t, "d.jsonl", `{"messages": [{"role": "user", "content": "hi"}]}`+"\n"+`{"messages": [{"content": "x"}]}`), "line 2: messages[0] has no role"},
		{"dataset:" + writeFile(t, "d.jsonl", `{"messages": [{"role": "system", "content": "only a system prompt"}]}`), "no conversation with a user turn"},
		{"dataset:" + writeFile(t, "d.json", "\n[\n  {\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]},\n  {\"conversations\": [{\"from\": \"human\" \"value\": \"x\"}]}\n]\n"), "line 4: not a ShareGPT array (invalid character"},
		{"dataset:" + writeFile(t, "d.json", "[\n  {\"conversations\": [{\"from\": \"human\", \"value\": 7}]}\n]\n"), "line 2: not a ShareGPT array (json: cannot unmarshal number"},
		{"robot", `unknown user profile "robot": use chat or agent, or dataset:PATH (real conversations) or trace:PATH (an agent trace)`},
	} {
		if _, err := LookupProfile(c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.value, err, c.want)
		}
	}
}

// The run owns the files its users replay: LoadUserFiles reads each once (two use cases naming
// one file share its parse), and the run's profiles come from that value, not from a cache of
// the package: a file changed after the run loaded it does not change the run's users, while a
// fresh load (another run) reads the new version. A file that cannot be read is an error naming
// the profile's key.
func TestUserFilesOwnedByTheRun(t *testing.T) {
	p := writeFile(t, "t.jsonl", `{"input_length": 100, "output_length": 10}`)
	up := &servebench.UsersPlan{Profiles: map[string]string{"a": "trace:" + p, "b": "trace:" + p, "c": "chat"}}
	files, err := LoadUserFiles(up)
	if err != nil {
		t.Fatal(err)
	}
	a, b := files.ProfileFor(up, "a"), files.ProfileFor(up, "b")
	if a.Script == nil || a.Script != b.Script || len(a.Script.sessions) != 1 {
		t.Fatalf("a %+v, b %+v: want one parse of the trace, shared", a.Script, b.Script)
	}
	if c, d := files.ProfileFor(up, "c"), files.ProfileFor(up, "d"); c.Name != ChatUser.Name || d.Name != ChatUser.Name {
		t.Errorf("built-in %q and default %q, want the chat user", c.Name, d.Name)
	}
	if err := os.WriteFile(p, []byte("{\"input_length\": 100, \"output_length\": 10}\n{\"input_length\": 50, \"output_length\": 10}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := files.ProfileFor(up, "a"); again.Script != a.Script {
		t.Error("the run's users changed with the file after it was loaded")
	}
	other, err := LoadUserFiles(up)
	if err != nil || len(other.ProfileFor(up, "a").Script.sessions) != 2 {
		t.Fatalf("a new load: %v, want the file's 2 sessions", err)
	}
	// without loaded files (a run recomputed from disk), the file is read when asked
	if n := (*UserFiles)(nil).ProfileFor(up, "a"); n.Script == nil || len(n.Script.sessions) != 2 {
		t.Errorf("nil files: %+v, want the file read now", n.Script)
	}
	up.Profiles["a"] = "trace:" + filepath.Join(t.TempDir(), "gone.jsonl")
	if _, err := LoadUserFiles(up); err == nil || !strings.Contains(err.Error(), "users.profiles.a: trace:") {
		t.Errorf("missing file: %v, want an error naming users.profiles.a", err)
	}
}

// population builds the users' sessions of a replaying profile for users of a population of n
// (slot and stride as a distributed worker's): each user's first (joining) session and next.
func replaySessions(t *testing.T, prof UserProfile, n, slot, stride, window int, prompts Prompter) [][2][]load.UserTurn {
	t.Helper()
	c := PopulationConfig{Users: &servebench.UsersPlan{Seed: 3, ThinkScale: 1, BlockTokens: 64}, Profile: prof, Window: window, N: n,
		Prompts: prompts, MinTokens: 4, Slot: slot, Stride: stride}
	pop := NewPopulation(c)
	out := make([][2][]load.UserTurn, c.Local())
	for u := range out {
		first, join := pop.Session(u, true)
		if join < 0 || join >= len(first) {
			t.Fatalf("user %d joins at %d of %d turns", u, join, len(first))
		}
		next, _ := pop.Session(u, false)
		out[u] = [2][]load.UserTurn{first, next}
	}
	if _, err := pop.Text(context.Background(), 1, 0, 8); err != nil {
		t.Fatalf("text: %v", err)
	}
	return out
}

func textsOf(turns []load.UserTurn) []string {
	var s []string
	for _, t := range turns {
		s = append(s, t.Text)
	}
	return s
}

// Dataset users replay the conversations as written, user g session g first, then sessions drawn
// from the file; a replay other than the file's first pass names itself (conversation, user,
// session) so the server's cache cannot answer it from an earlier one; a
// small window ends conversations early; and the users of a distributed run's workers get the
// sessions the same users get in a local run.
func TestDatasetUsersReplayConversations(t *testing.T) {
	prof, err := LookupProfile("dataset:" + testdata("conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	local := replaySessions(t, prof, 3, 0, 1, 0, fakePrompter{})
	// user 0: conversation 1, then one drawn from the file, named; user 2: conversation 1 again, named
	if got := textsOf(local[0][0]); strings.Join(got, "|") != "What is the capital of France?|And of Italy?|Thanks!" {
		t.Errorf("user 0's first session %q", got)
	}
	if l := local[0][0][0].Lead; len(l) != 1 || l[0].Role != "system" {
		t.Errorf("user 0's lead %v, want the system prompt", l)
	}
	if got := local[0][0][0].OutputTokens; got != 18 {
		t.Errorf("first answer asks for %d tokens, want the recorded answer's 18", got)
	}
	if got := local[0][1][0].Text; got != "(conversation 2, user 1's session 2)\n\nWrite a haiku about caches." &&
		got != "(conversation 1, user 1's session 2)\n\nWhat is the capital of France?" {
		t.Errorf("user 0's second session opens %q, want a conversation of the file with the replay named", got)
	}
	if got := local[2][0][0].Text; got != "(conversation 1, user 3's session 1)\n\nWhat is the capital of France?" {
		t.Errorf("user 2's first session (the file's second pass) opens %q, want the replay named", got)
	}
	if got := local[1][0][0].Text; got != "Write a haiku about caches." {
		t.Errorf("user 1's first session opens %q", got)
	}
	if t3 := local[0][0][2]; t3.OutputTokens < 1 || t3.Think <= 0 || local[0][0][0].Think != 0 {
		t.Errorf("an answer with no record asks for %d tokens, think %v: want drawn as the chat user's", t3.OutputTokens, t3.Think)
	}
	// two workers: worker 1 runs users 1 (and 3, …)
	w1 := replaySessions(t, prof, 3, 1, 2, 0, fakePrompter{})
	if len(w1) != 1 || fmt.Sprint(w1[0]) != fmt.Sprint(local[1]) {
		t.Errorf("worker 1's user 1 %v, want the local run's %v", w1, local[1])
	}
	// a window of 40 tokens holds the system prompt (9), the first turn and its answer (10 + 18)
	// but not the second (5 + 2 more)
	small := replaySessions(t, prof, 1, 0, 1, 40, fakePrompter{})
	if len(small[0][0]) != 1 {
		t.Errorf("a 40-token window keeps %d turns, want 1", len(small[0][0]))
	}
	// a window smaller than the first turn cuts its text
	tiny := replaySessions(t, prof, 1, 0, 1, 12, fakePrompter{})
	if ut := tiny[0][0][0]; len(ut.Text) > 3*ut.NewTokens || ut.OutputTokens != 3 {
		t.Errorf("a 12-token window: text %q for %d tokens, answer %d", ut.Text, ut.NewTokens, ut.OutputTokens)
	}
}

type fakePrompter struct{}

func (fakePrompter) Prompt(_ context.Context, seq int64, tokens int) (string, error) {
	return fmt.Sprintf("text %d of %d", seq, tokens), nil
}

// Trace users build each turn from its blocks: sessions that share block ids share the text of
// those blocks; a later turn's text is its new blocks only; a session replayed again keeps the
// shared blocks and gets fresh ones for the rest; the think times are the trace's.
func TestTraceUsersBuildBlocks(t *testing.T) {
	prof, err := LookupProfile("trace:" + testdata("agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	count := simCounter(7)
	b, err := NewBuilderWithCounter(context.Background(), Config{RunID: "r"}, count, "test")
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(s string) int { n, _ := count(context.Background(), s); return n }
	// 6 users: user g's first session is session g of the 5, user 5's session a again (fresh)
	us := replaySessions(t, prof, 6, 0, 1, 0, b)
	a, bs, c := us[0][0], us[1][0], us[4][0]
	if len(a) != 4 || len(bs) != 2 || len(c) != 2 {
		t.Fatalf("sessions of %d, %d, %d turns", len(a), len(bs), len(c))
	}
	for i, ut := range a {
		if n := tokens(ut.Text); n != ut.NewTokens {
			t.Errorf("session a turn %d: text of %d tokens, want %d", i+1, n, ut.NewTokens)
		}
	}
	if a[1].Think != 500*time.Millisecond || c[1].Think != 2500*time.Millisecond {
		t.Errorf("think times %v, %v: want the trace's delay and timestamp gap", a[1].Think, c[1].Think)
	}
	lead := tokens(a[0].Text[:commonPrefix(a[0].Text, bs[0].Text)])
	if lead < 7+3*64 || lead >= 7+4*64 {
		t.Errorf("sessions sharing blocks 0–2 share %d tokens of their first turn, want the lead and 3 blocks", lead)
	}
	again := us[5][0] // session a, second pass
	if again[0].Text == a[0].Text {
		t.Fatal("a session replayed again sends the same first turn: the cache would answer it from the first replay")
	}
	if shared := tokens(a[0].Text[:commonPrefix(a[0].Text, again[0].Text)]); shared < 7+3*64 || shared >= 7+4*64 {
		t.Errorf("a replay shares %d tokens with the first, want the shared blocks only", shared)
	}
	// turn 2 of a is its new text (64 tokens), not the whole prompt again
	if tokens(a[1].Text) != 64 {
		t.Errorf("turn 2 is %d tokens, want its 64 new", tokens(a[1].Text))
	}
	// a distributed run's worker 1 of 2 runs users 1 and 3 with the local run's sessions
	w1 := replaySessions(t, prof, 6, 1, 2, 0, b)
	if len(w1) != 3 || fmt.Sprint(w1[0]) != fmt.Sprint(us[1]) || fmt.Sprint(w1[1]) != fmt.Sprint(us[3]) {
		t.Error("worker 1's users 1 and 3 replay other sessions than in a local run")
	}
	// without a block builder the population fails with the cause instead of other text
	pop := NewPopulation(PopulationConfig{Users: &servebench.UsersPlan{ThinkScale: 1}, Profile: prof, N: 1, Prompts: fakePrompter{}, Stride: 1})
	turns, _ := pop.Session(0, true)
	if _, err := pop.Text(context.Background(), 1, 0, turns[0].NewTokens); err == nil || !strings.Contains(err.Error(), "prompt builder") {
		t.Errorf("trace users without a block builder: %v", err)
	}
}

// The sessions drawn are the same for the same seed and user, whatever the population's size:
// a population of N + k users replaying a file is the population of N plus k users, as a
// capacity search assumes (a larger population never lighter), for a dataset and a trace.
func TestReplayDeterministic(t *testing.T) {
	prof, _ := LookupProfile("dataset:" + testdata("conversations.jsonl"))
	x := replaySessions(t, prof, 4, 0, 1, 0, fakePrompter{})
	y := replaySessions(t, prof, 4, 0, 1, 0, fakePrompter{})
	if fmt.Sprint(x) != fmt.Sprint(y) {
		t.Error("the same plan drew other sessions")
	}
	trace, err := LookupProfile("trace:" + testdata("agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilderWithCounter(context.Background(), Config{RunID: "r"}, simCounter(7), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		prof    UserProfile
		prompts Prompter
	}{{"dataset", prof, fakePrompter{}}, {"trace", trace, b}} {
		small := replaySessions(t, c.prof, 3, 0, 1, 0, c.prompts)
		large := replaySessions(t, c.prof, 7, 0, 1, 0, c.prompts)
		for u := range small {
			// users' first and next sessions: the same turns, texts and think times
			if fmt.Sprint(small[u]) != fmt.Sprint(large[u]) {
				t.Errorf("%s: user %d of 3 replays other sessions than user %d of 7", c.name, u, u)
			}
		}
	}
}

// Whatever a trace file holds, reading it never panics, and what it accepts is bounded: every
// session has a turn, no length past cells.MaxUserTokens, no think time past MaxUserDelay.
func FuzzUserTrace(f *testing.F) {
	for _, s := range []string{
		`{"session_id": "a", "input_length": 100, "output_length": 10, "hash_ids": [1, 2]}` + "\n" + `{"session_id": "a", "input_length": 50, "output_length": 10, "delay": 5}`,
		`{"session_id": 1, "timestamp": 500, "input_length": 10, "output_length": 1}` + "\n" + `{"session_id": 1, "timestamp": 100, "input_length": 20, "output_length": 1}`,
		`{"input_length": 20000000000, "output_length": 10}`,
		"nope\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadUserTrace(p)
		if err != nil {
			return
		}
		for _, ss := range s.sessions {
			if len(ss.turns) == 0 {
				t.Fatal("a session without turns")
			}
			for _, tr := range ss.turns {
				if tr.newTokens < 0 || tr.newTokens > cells.MaxUserTokens || tr.output < 1 || tr.output > cells.MaxUserTokens || tr.think < 0 || tr.think > cells.MaxUserDelay {
					t.Fatalf("accepted turn %+v", tr)
				}
			}
		}
		_ = s.text(1)
	})
}
