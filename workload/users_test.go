package workload

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// requestStats is the mean and 5th/95th percentiles of the prompts (the history plus new text)
// and the median and p95 of the answers over every turn of count sessions.
func requestStats(p UserProfile, count, maxTokens int) (meanIn, p5, p95 float64, outMedian, outP95 int, turns []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ins []float64
	var outs []int
	sum := 0.0
	for range count {
		s := p.Session(rng, maxTokens, 1)
		turns = append(turns, len(s))
		ctx := 0
		for _, t := range s {
			ctx += t.NewTokens
			ins = append(ins, float64(ctx))
			sum += float64(ctx)
			outs = append(outs, t.OutputTokens)
			ctx += t.OutputTokens
		}
	}
	slices.Sort(ins)
	slices.Sort(outs)
	return sum / float64(len(ins)), ins[len(ins)/20], ins[len(ins)*19/20], outs[len(outs)/2], outs[len(outs)*95/100], turns
}

// The coding agent reproduces AA-AgentPerf's published distributions: prompts about 5K–131K
// tokens with a mean near 27K, answers of median ~150 and p95 ~2K, sessions up to ~200 turns.
func TestCodingAgentMatchesPublishedDistributions(t *testing.T) {
	meanIn, p5, p95, outMed, outP95, turns := requestStats(CodingAgent, 20000, 131072)
	t.Logf("agent prompts: mean %.0f, p5 %.0f, p95 %.0f; answers median %d, p95 %d; longest session %d turns", meanIn, p5, p95, outMed, outP95, slices.Max(turns))
	if meanIn < 22000 || meanIn > 34000 {
		t.Errorf("mean prompt %.0f tokens, want about 27K (22K–34K)", meanIn)
	}
	if p5 < 4000 || p95 > 131072 {
		t.Errorf("prompts p5 %.0f, p95 %.0f: want within about 5K–131K", p5, p95)
	}
	if outMed < 120 || outMed > 180 || outP95 < 1500 || outP95 > 2600 {
		t.Errorf("answers median %d, p95 %d: want about 150 and 2K", outMed, outP95)
	}
	if m := slices.Max(turns); m < 100 || m > 200 {
		t.Errorf("longest session %d turns, want up to about 200", m)
	}
}

// A session never passes the use case's window, and the same seed draws the same sessions.
func TestSessionsFitAndRepeat(t *testing.T) {
	for _, p := range Profiles() {
		a := rand.New(rand.NewPCG(7, 7))
		b := rand.New(rand.NewPCG(7, 7))
		for range 2000 {
			s := p.Session(a, 32768, 1)
			if !slices.Equal(s, p.Session(b, 32768, 1)) {
				t.Fatalf("%s: the same seed drew different sessions", p.Name)
			}
			ctx := 0
			for i, turn := range s {
				ctx += turn.NewTokens + turn.OutputTokens
				if ctx > 32768 {
					t.Fatalf("%s: turn %d reaches %d tokens, past the 32K window", p.Name, i+1, ctx)
				}
				if (i == 0) != (turn.Think == 0) {
					t.Fatalf("%s: turn %d thinks %v", p.Name, i+1, turn.Think)
				}
			}
		}
	}
}

// Users joining a population find conversations in progress: longer than fresh ones on average
// (length-biased), at every depth.
func TestJoinedSessionsAreLengthBiased(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	fresh, joined := 0, 0
	depths := map[int]bool{}
	for range 4000 {
		fresh += len(ChatUser.Session(rng, 32768, 1))
		s, j := ChatUser.JoinedSession(rng, 32768, 1)
		if j < 0 || j >= len(s) {
			t.Fatalf("join %d outside a %d-turn session", j, len(s))
		}
		joined += len(s)
		depths[j] = true
	}
	if joined <= fresh*11/10 {
		t.Errorf("joined sessions have %d turns in all against %d fresh: not length-biased", joined, fresh)
	}
	if len(depths) < 5 {
		t.Errorf("users join at %d different depths, want many", len(depths))
	}
}
