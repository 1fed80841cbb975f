package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// sessionCell reports whether c is a multi-turn session cell or the fresh-prompt cell beside
// one: they stay off the context × concurrency grid.
func sessionCell(c *servebench.CellResult) bool { return c.Kind == servebench.KindSession }

// sessionLabel names a session or fresh cell in tables: "session turn 3" or "fresh, turn 3".
func sessionLabel(c *servebench.CellResult) string {
	if c.Scenario == stats.FreshScenario {
		return fmt.Sprintf("fresh, turn %d", c.Turn)
	}
	return fmt.Sprintf("session turn %d", c.Turn)
}

// sectionPromptCaching compares every turn of the multi-turn sessions with fresh prompts of
// the same length (stats.PromptCaching): TTFT of both, the tokens served from the cache.
func (b *builder) sectionPromptCaching() {
	rows := stats.PromptCaching(b.res.Cells)
	if len(rows) == 0 {
		return
	}
	ss := b.man.Plan.Sessions
	t := &Table{Header: []string{"SESSIONS", "TURN", "PROMPT TOK", "CACHED TOK", "CACHED", "TTFT CACHED", "TTFT FRESH", "FASTER", "E2E CACHED", "E2E FRESH"}}
	for _, r := range rows {
		s := r.Session
		freshTTFT, freshE2E := "—", "—"
		if f := r.Fresh; f != nil && f.RequestsSucceeded > 0 {
			freshTTFT, freshE2E = fmtDur(f.TTFTSeconds.Mean), fmtDur(f.E2ELatencySeconds.Mean)
		} else if r.Turn == 1 {
			freshTTFT, freshE2E = "(turn 1 is fresh)", ""
		}
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%d concurrent", r.Concurrency), fmt.Sprint(r.Turn), fmtNum(s.InputTokensMean, 0),
			fmtOpt(s.CachedTokensMean, func(v float64) string { return fmtNum(v, 0) }), fmtOpt(s.CachedShare, fmtPct0),
			fmtDur(s.TTFTSeconds.Mean), freshTTFT, speedup(r.Speedup),
			fmtDur(s.E2ELatencySeconds.Mean), freshE2E})
	}
	intro := "Each session is a real conversation: turn 1 sends a new prompt, and every later turn sends the whole conversation so far (the model's own answers included) plus new user text. A server with a prefix cache only prefills what it has not seen. Beside each later turn, prompts of the same length with nothing in common were measured in the same run, sent the same way: the difference between the two TTFT columns is what the cache is worth."
	if d := b.man.Plan.Dataset; ss != nil && d != nil && d.Sessions {
		intro += fmt.Sprintf(" Sessions here are the conversations of the dataset %s, their human turns as written, each answered by the model in %s tokens; a conversation with fewer turns leaves the later ones.", d.Path, ss.OutputTokens)
	} else if ss != nil {
		intro += fmt.Sprintf(" Sessions here start with %s tokens and add %s tokens of user text and a %s-token answer per turn, over %s.", ss.FirstTurnTokens, ss.TurnTokens, ss.OutputTokens, plural(ss.Turns, "turn"))
		if ss.ThinkTime > 0 {
			intro += fmt.Sprintf(" Each session waits at least %s between an answer and its next turn.", fmtDur(float64(ss.ThinkTime)/1e9))
		}
	}
	blocks := []Block{para("%s", intro), tableB(t)}
	if hr := stats.CacheHitRate(rows); hr != nil {
		blocks = append(blocks, para("Over the later turns, the server served %s of the input tokens from its prefix cache (cached tokens as the server reported them). For a use case whose context grows turn by turn (a chatbot, a coding assistant, an agent), the TTFT to plan with is the cached column, and its capacity limit on TTFT is reached later than the fresh-prompt measurements of the grid suggest; a use case whose prompts are new every time gets the fresh column.", fmtPct(*hr)))
	} else {
		blocks = append(blocks, missing("The server reported no cached tokens (no usage.prompt_tokens_details.cached_tokens and no prefix-cache counters), so the cache hit rate is unknown; compare the TTFT columns."))
	}
	b.add("prompt-caching", "Prompt Caching", 1, blocks...)
}

// speedup writes fresh TTFT / cached TTFT as "2.4×", "—" when there is no fresh cell.
func speedup(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmtNum(*v, 1) + "×"
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
