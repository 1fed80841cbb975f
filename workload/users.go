package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Dist is a seeded draw of a positive quantity: log-normal with median Median and shape Sigma
// (the standard deviation of its logarithm; p95 = Median·e^(1.645·Sigma)), clamped to
// [Min, Max]. Sigma 0 always gives Median.
type Dist struct {
	Median, Sigma, Min, Max float64
}

// Draw returns one value: Median·e^(Sigma·z), z standard normal, clamped to [Min, Max].
func (d Dist) Draw(rng *rand.Rand) float64 {
	v := d.Median * math.Exp(d.Sigma*rng.NormFloat64())
	return math.Min(d.Max, math.Max(d.Min, v))
}

// P95 is the distribution's 95th percentile before clamping (Median·e^(1.645·Sigma)).
func (d Dist) P95() float64 { return d.Median * math.Exp(1.645*d.Sigma) }

func (d Dist) text(unit string) string {
	return fmt.Sprintf("median %s, p95 %s, %s–%s%s", short(d.Median), short(math.Min(d.Max, d.P95())), short(d.Min), short(d.Max), unit)
}

func short(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fK", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fK", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

// UserProfile is who a population's users are: how their conversations go. A conversation
// (session) has Turns turns; its first turn sends FirstTokens of new text (system prompt,
// tools, documents, the first question), each later turn TurnTokens (a question typed, a tool's
// output) on top of the whole history; every answer is OutputTokens long; ThinkSeconds passes
// between an answer and the next turn (reading and typing, or running a tool).
type UserProfile struct {
	Name, Title                                                string
	FirstTokens, TurnTokens, OutputTokens, Turns, ThinkSeconds Dist
	// Source says where the distributions come from.
	Source string
	// Script, when set, is the file the users replay instead of drawing their sessions (a
	// dataset's conversations, an agent trace's sessions); ThinkSeconds then only staggers the
	// users' first sends.
	Script *UserScript
}

// ChatUser is a person chatting with an assistant: a short system prompt and question, a few
// follow-ups of a sentence or two, answers of a few hundred tokens, and time to read and type in
// between. Shaped after public chat logs (ShareGPT-like conversations: about 4 turns, questions
// of ~150 tokens, answers of ~350), with think times of human reading and typing.
var ChatUser = UserProfile{
	Name: "chat", Title: "chat user",
	FirstTokens:  Dist{Median: 800, Sigma: 1.0, Min: 50, Max: 16000},
	TurnTokens:   Dist{Median: 150, Sigma: 1.0, Min: 5, Max: 4000},
	OutputTokens: Dist{Median: 350, Sigma: 0.8, Min: 20, Max: 4096},
	Turns:        Dist{Median: 4, Sigma: 0.9, Min: 1, Max: 60},
	ThinkSeconds: Dist{Median: 15, Sigma: 0.8, Min: 2, Max: 300},
	Source:       "shaped after public multi-turn chat logs (ShareGPT-like); think time: human reading and typing",
}

// CodingAgent is an automated coding agent: a large system prompt with tool definitions, then
// turn after turn a tool's output added to the history and a short answer (usually a tool
// call), with the tool's run time in between. Its prompts (the whole history) span about
// 5K–131K tokens with a mean near 27K–29K, its answers a median of 150 and a p95 of 2K tokens,
// sessions up to ~200 turns: the distributions Artificial Analysis publishes for AA-AgentPerf.
var CodingAgent = UserProfile{
	Name: "agent", Title: "coding agent",
	FirstTokens:  Dist{Median: 6000, Sigma: 0.4, Min: 3000, Max: 20000},
	TurnTokens:   Dist{Median: 200, Sigma: 1.3, Min: 20, Max: 20000},
	OutputTokens: Dist{Median: 150, Sigma: 1.575, Min: 1, Max: 8192},
	Turns:        Dist{Median: 14, Sigma: 1.0, Min: 2, Max: 200},
	ThinkSeconds: Dist{Median: 1.5, Sigma: 1.0, Min: 0.05, Max: 60},
	Source:       "AA-AgentPerf's published distributions (inputs ≈ 5K–131K, mean ≈ 27K; outputs median ≈ 150, p95 ≈ 2K; up to ~200 turns); tool time assumed",
}

// Profiles lists the built-in user profiles.
func Profiles() []UserProfile { return []UserProfile{ChatUser, CodingAgent} }

// LookupProfile returns the profile a users.profiles value names: a built-in profile by its
// name, or users who replay a file, "dataset:PATH" (real conversations, LoadUserDataset) or
// "trace:PATH" (an agent trace's sessions, LoadUserTrace), the file read at each call (a run
// reads its files once, LoadUserFiles). A file that cannot be read or is malformed gives an
// error naming the line, the cause and the fix.
func LookupProfile(name string) (UserProfile, error) {
	if kind, path, ok := userFile(name); ok {
		s, err := loadScript(kind, path)
		if err != nil {
			return UserProfile{}, err
		}
		return s.profile(), nil
	}
	var names []string
	for _, p := range Profiles() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return UserProfile{}, fmt.Errorf("unknown user profile %q: use %s, or %sPATH (real conversations) or %sPATH (an agent trace)", name, strings.Join(names, " or "), DatasetUsers, TraceUsers)
}

// DefaultProfile is the profile of a use case's users when the plan names none: the coding agent
// for a use case whose name says coding or agent, the chat user otherwise.
func DefaultProfile(useCase string) UserProfile {
	n := strings.ToLower(useCase)
	if strings.Contains(n, "coding") || strings.Contains(n, "agent") {
		return CodingAgent
	}
	return ChatUser
}

// Text describes the profile's distributions in one line.
func (p UserProfile) Text() string {
	if p.Script != nil {
		if p.Script.err != nil {
			return p.Title + ": " + p.Script.err.Error()
		}
		return p.Script.text(1)
	}
	return fmt.Sprintf("%s: first turn %s tokens; each later turn %s; answers %s; %s turns; %s between turns (%s)",
		p.Title, p.FirstTokens.text(""), p.TurnTokens.text(""), p.OutputTokens.text(""), p.Turns.text(""), p.ThinkSeconds.text(" s"), p.Source)
}

// SessionTurn is one turn of a drawn session: the new text it adds (tokens), the answer it asks
// for (tokens), and the think time before it (zero for the first).
type SessionTurn struct {
	NewTokens, OutputTokens int
	Think                   time.Duration
}

// Session draws one conversation: its turns, ending early where the next prompt and its answer
// would pass maxTokens (the use case's context window; 0: no bound). Token counts are rounded
// to a coarse grid (Grid) so that a run builds prompts of few distinct lengths. think scales
// every think time. The first turn always fits: its text is cut to fit when it alone would not.
func (p UserProfile) Session(rng *rand.Rand, maxTokens int, think float64) []SessionTurn {
	n := int(math.Round(p.Turns.Draw(rng)))
	n = max(1, n)
	var out []SessionTurn
	ctx := 0
	for t := range n {
		st := SessionTurn{OutputTokens: max(1, Grid(p.OutputTokens.Draw(rng)))}
		if t == 0 {
			st.NewTokens = Grid(p.FirstTokens.Draw(rng))
		} else {
			st.NewTokens = Grid(p.TurnTokens.Draw(rng))
			st.Think = time.Duration(p.ThinkSeconds.Draw(rng) * think * float64(time.Second))
		}
		if maxTokens > 0 && ctx+st.NewTokens+st.OutputTokens > maxTokens {
			if t > 0 {
				break
			}
			st.OutputTokens = min(st.OutputTokens, maxTokens/4)
			st.NewTokens = maxTokens - st.OutputTokens
		}
		out = append(out, st)
		ctx += st.NewTokens + st.OutputTokens
	}
	return out
}

// JoinedSession draws the session a user is in when a population starts: conversations in
// progress are longer than conversations drawn afresh (a long one is in progress for longer), so
// a session is kept with probability proportional to its turns (a draw of at most 64 tries),
// and the user joins it at a turn drawn evenly from its turns. Turns before join are history:
// the population sends them as one prompt (the conversation so far, answers included, cold to
// the server's cache) with the turn at join.
func (p UserProfile) JoinedSession(rng *rand.Rand, maxTokens int, think float64) (turns []SessionTurn, join int) {
	longest := max(1, int(math.Round(p.Turns.Max)))
	for range 64 {
		turns = p.Session(rng, maxTokens, think)
		if rng.IntN(longest) < len(turns) {
			break
		}
	}
	return turns, rng.IntN(len(turns))
}

// Grid rounds a token count to the grid prompts are built on: multiples of 8 up to 256, of 64
// up to 4,096, of 512 above (at least 1).
func Grid(v float64) int {
	step := 512.0
	switch {
	case v <= 256:
		step = 8
	case v <= 4096:
		step = 64
	}
	return max(1, int(math.Round(v/step)*step))
}
