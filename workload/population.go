package workload

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// ProfileFor is the profile of use case name's users: the plan's users.profiles (a file's
// from f, as loaded where the run started), or DefaultProfile. A file f does not hold (f nil:
// a run recomputed from disk) is read now. A file that can no longer be read (plan validation
// read it) gives a profile whose populations fail with the cause instead of other users.
func (f *UserFiles) ProfileFor(up *servebench.UsersPlan, name string) UserProfile {
	if up == nil {
		return DefaultProfile(name)
	}
	p, ok := up.Profiles[name]
	if !ok {
		return DefaultProfile(name)
	}
	if f != nil && f.scripts[p] != nil {
		return f.scripts[p].profile()
	}
	prof, err := LookupProfile(p)
	if err == nil {
		return prof
	}
	if _, _, file := userFile(p); file {
		return UserProfile{Name: p, Title: p, ThinkSeconds: ChatUser.ThinkSeconds, Script: &UserScript{err: err}}
	}
	return DefaultProfile(name)
}

// PopulationConfig says which users NewPopulation builds.
type PopulationConfig struct {
	// Users is the plan's users section (seed, think-time scale); Profile the users' profile.
	Users   *servebench.UsersPlan
	Profile UserProfile
	// Window is the longest conversation (tokens, prompt and answer); N the population's size.
	Window, N int
	// Prompts makes the users' new text; MinTokens is the shortest text it can make (0: 1).
	Prompts   Prompter
	MinTokens int
	// This process runs the population's users Slot, Slot + Stride, Slot + 2 × Stride, … (a
	// distributed run's worker; a local run: Slot 0, Stride 1): user u of its load.Population is
	// the population's user Slot + Stride × u (GlobalUser).
	Slot, Stride int
}

// GlobalUser is the population's user (from 0) that this process's user u is.
func (c PopulationConfig) GlobalUser(u int) int { return c.Slot + max(c.Stride, 1)*u }

// Local is how many of the population's users this process runs.
func (c PopulationConfig) Local() int {
	s := max(c.Stride, 1)
	if c.Slot >= c.N {
		return 0
	}
	return (c.N-1-c.Slot)/s + 1
}

// NewPopulation is the load.Population of the users c names: each user's conversations drawn
// from the profile with a generator seeded by the plan's users.seed and the user (the same plan
// sends the same conversations, wherever the user runs). The population's size is not in the
// seed: a population of N + k users is the population of N plus k users, so a larger
// population's load (its histories, the KV cache they need) is never lighter than a smaller
// one's, as a capacity search assumes; near a cliff such as the KV cache's, populations drawn
// afresh at each size passed and failed by the luck of their draws. New text comes from
// the prompt builder, each text unique (its own sequence number), no shorter than the builder
// can make.
func NewPopulation(c PopulationConfig) *load.Population {
	if c.Profile.Script != nil {
		return newReplayPopulation(c)
	}
	up := c.Users
	prof := c.Profile
	stride := max(c.Stride, 1)
	var mu sync.Mutex
	rngs := make([]*rand.Rand, c.Local())
	for u := range rngs {
		rngs[u] = rand.New(rand.NewPCG(uint64(up.Seed), uint64(c.GlobalUser(u))))
	}
	least := max(c.MinTokens, 1)
	conv := func(turns []SessionTurn) []load.UserTurn {
		out := make([]load.UserTurn, len(turns))
		for i, t := range turns {
			out[i] = load.UserTurn{NewTokens: max(t.NewTokens, least), OutputTokens: t.OutputTokens, Think: t.Think}
		}
		return out
	}
	// Texts of a joining user's history take sequence numbers of their own, above any request's
	// and below 2³² − 1 (a prompt's marker codes 32 bits of its number), dealt to processes as
	// the users are, so no two processes make the same text.
	extra := int64(1)<<31 + int64(c.Slot) + 1 - int64(stride)
	return &load.Population{
		Session: func(u int, joining bool) ([]load.UserTurn, int) {
			mu.Lock()
			defer mu.Unlock()
			if joining {
				turns, join := prof.JoinedSession(rngs[u], c.Window, up.ThinkScale)
				return conv(turns), join
			}
			return conv(prof.Session(rngs[u], c.Window, up.ThinkScale)), 0
		},
		Text: func(ctx context.Context, seq int64, key, tokens int) (string, error) {
			if key > 0 {
				mu.Lock()
				extra += int64(stride)
				seq = extra
				mu.Unlock()
			}
			return c.Prompts.Prompt(ctx, seq, max(tokens, least))
		},
		Stagger: max(time.Second, time.Duration(prof.ThinkSeconds.Median*up.ThinkScale*float64(time.Second))),
	}
}
