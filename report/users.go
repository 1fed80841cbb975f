package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// usersLimit is a users' (or cold) limit as a label: "24", "256+", "not viable", "—".
func usersLimit(r servebench.CapacityResult) string {
	switch {
	case r.LimitKind == servebench.LimitNotViable:
		return "not viable"
	case r.Limit == nil:
		return "—"
	case r.LimitKind == servebench.LimitLowerBound:
		return fmt.Sprintf("%d+", *r.Limit)
	}
	return fmt.Sprint(*r.Limit)
}

// usersRange is the limit's 95% range ("22–26"; the limit alone when the range is that point).
func usersRange(r servebench.CapacityResult) string {
	if r.LimitRange == nil {
		return "—"
	}
	lo, hi := r.LimitRange[0], r.LimitRange[1]
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// sectionUsers renders the capacity in concurrent users (the plan's users:): per use case the
// users' limit with its 95% range beside the cold-prompt limit, their ratio, the binding
// constraint and why, then what the server showed at each population. A run without a
// population has no such section.
func (b *builder) sectionUsers() {
	if len(b.res.Users) == 0 {
		return
	}
	cold := map[string]servebench.CapacityResult{}
	for _, c := range b.res.Capacity {
		cold[c.UseCase] = c
	}
	t := &Table{Header: []string{"USE CASE", "USERS", "USERS' LIMIT", "95% RANGE", "COLD-PROMPT LIMIT", "RATIO", "BINDING", "WHY"}}
	for _, u := range b.res.Users {
		c, ok := cold[u.UseCase]
		coldLabel, ratio := "not searched", "—"
		if ok {
			coldLabel = usersLimit(c) + " requests"
			if x, ok := capacity.UsersRatio(u.CapacityResult, c); ok {
				ratio = fmt.Sprintf("%.1f×", x)
				// a lower bound on either side bounds the ratio on that side only
				uLow, cLow := u.LimitKind == servebench.LimitLowerBound, c.LimitKind == servebench.LimitLowerBound
				switch {
				case uLow && cLow:
					ratio = "—"
				case uLow:
					ratio = "≥ " + ratio
				case cLow:
					ratio = "≤ " + ratio
				}
			}
		}
		bind := u.LimitingMetric
		if bind == "" {
			bind = "—"
		}
		why := u.Why
		if why == "" {
			why = "—"
		}
		t.Rows = append(t.Rows, []string{useCaseTitle(u.CapacityResult), u.Profile, usersLimit(u.CapacityResult), usersRange(u.CapacityResult), coldLabel, ratio, bind, why})
	}
	blocks := []Block{
		para("%s", "How many people (or agents) can this configuration serve at once? Each user runs its own conversation: it sends a turn with the whole history, waits for the answer, thinks (or runs a tool), and sends the next turn; a new conversation takes the place of one that ends, so the population stays steady, with its users at mixed turn depths. A server with a prefix cache prefills only each turn's new text while the users' histories fit in its KV cache. The users' limit is the largest population whose requests meet the use case's thresholds, found by the same sequential search as the capacity in concurrent requests, with its 95% range; the cold-prompt limit beside it is that capacity (every request a fresh prompt of the use case's full context, the reference method). The ratio is users' limit / cold-prompt limit."),
		tableB(t),
	}
	for _, u := range b.res.Users {
		var lines []string
		if u.WhyText != "" {
			lines = append(lines, "Why: "+u.WhyText+".")
		}
		if u.Note != "" {
			lines = append(lines, u.Note)
		}
		blocks = append(blocks, para("%s — %s. Conversations up to %s tokens.%s", useCaseTitle(u.CapacityResult), u.ProfileText, ctxLabel(u.ContextTokens), prefixed(" ", strings.Join(lines, " "))))
		if len(u.Points) > 0 {
			et := &Table{Header: []string{"USERS", "VERDICT", "TTFT MEAN", "SPEED/USER", "PROMPT MEAN", "CACHE HIT RATE", "QUEUE WAIT", "KV CACHE MEAN / PEAK", "PREEMPTIONS"}}
			for _, e := range u.Points {
				v := "fails"
				if e.Pass {
					v = "passes"
				}
				et.Rows = append(et.Rows, []string{fmt.Sprint(e.Users), v, fmtDur(e.TTFTSeconds), fmtTPS(e.GenerationSpeedTPS), fmtNum(e.InputTokensMean, 0),
					fmtOpt(e.CachedShare, fmtPct0), fmtOpt(e.QueueWaitSeconds, fmtDur), kvLabel(e), preLabel(e)})
			}
			blocks = append(blocks, tableB(et))
		}
	}
	blocks = append(blocks, note("Capacity Planning above sizes from the cold-prompt limits. Cache hit rate: the share of the measured requests' prompt tokens the server served from its prefix cache (usage cached_tokens, or its prefix-cache counters). Queue wait: the server's per-request timings where it reports them; from its queue-time histogram otherwise, which covers the warm-up's requests too (the joining users' cold prompts), so it can exceed the measured TTFT. KV cache: the server's KV-cache usage gauge, scraped every second while the population ran (warm-up included); preemptions: its counter's increase meanwhile."))
	b.add("users", "Capacity in Users", 1, blocks...)
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func kvLabel(e servebench.UsersEvidence) string {
	if e.KVCacheUsageMean == nil || e.KVCacheUsageMax == nil {
		return "—"
	}
	return fmtPct0(*e.KVCacheUsageMean) + " / " + fmtPct0(*e.KVCacheUsageMax)
}

func preLabel(e servebench.UsersEvidence) string {
	if e.Preemptions == nil {
		return "—"
	}
	return fmt.Sprint(*e.Preemptions)
}
