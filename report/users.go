package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// usersLimit is a users' (or cold) limit as a label: "24", "~24", "256+", "not viable", "—".
func usersLimit(r servebench.CapacityResult) string {
	switch {
	case r.LimitKind == servebench.LimitNotViable:
		return "not viable"
	case r.Limit == nil:
		return "—"
	case r.LimitKind == servebench.LimitLowerBound:
		return fmt.Sprintf("%d+", *r.Limit)
	case r.LimitKind == servebench.LimitInterpolated:
		return fmt.Sprintf("~%d", *r.Limit)
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
			if c.Limit != nil && *c.Limit == 1 && c.LimitKind == servebench.LimitMeasured {
				coldLabel = "1 request"
			}
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
		bind := "—"
		if u.LimitingMetric != "" {
			bind = capacity.MetricLabel(u.LimitingMetric, u.Statistic)
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
					orDash(e.CachedShare, fmtPct0), orDash(e.QueueWaitSeconds, fmtDur), kvLabel(e), preLabel(e)})
			}
			blocks = append(blocks, tableB(et))
		}
	}
	blocks = append(blocks, b.usersTiers()...)
	blocks = append(blocks, note("Capacity Planning above sizes each use case from its users' limit where one was decided here, and from its cold-prompt limit elsewhere (its SIZED FROM column says which). Cache hit rate: the share of the measured requests' prompt tokens the server served from its prefix cache (usage cached_tokens, or its prefix-cache counters). Queue wait: the server's per-request timings where it reports them; from its queue-time histogram otherwise, which covers the warm-up's requests too (the joining users' cold prompts), so it can exceed the measured TTFT. KV cache: the server's KV-cache usage gauge, scraped every second while the population ran (warm-up included); preemptions: its counter's increase meanwhile."))
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

// tiersOf returns u's SLO tiers: results' own, or for results recorded without them, decided
// now from the plan's users.tiers and the run's populations (capacity.UsersTiers).
func (b *builder) tiersOf(u servebench.UsersCapacity) []servebench.UsersTier {
	if len(u.Tiers) > 0 {
		return u.Tiers
	}
	up := b.man.Plan.Users
	if up == nil || up.Tiers == nil {
		return nil
	}
	uc := servebench.UseCase{Name: u.UseCase, Title: u.Title, Statistic: u.Statistic, ContextTokens: servebench.Tokens(u.ContextTokens), OutputTokens: servebench.Tokens(u.OutputTokens)}
	for _, c := range b.man.Plan.UseCases {
		if c.Name == u.UseCase {
			uc = c
		}
	}
	return capacity.UsersTiers(up.Tiers, uc, max(up.MaxUsers, u.Ceiling), b.res.Cells, u.Points)
}

// usersTiers renders the SLO tiers (users.tiers): per use case and speed floor, the users'
// limit under the one TTFT ceiling, its 95% range, its binding constraint and why; nothing
// when the plan has none.
func (b *builder) usersTiers() []Block {
	t := &Table{Header: []string{"USE CASE", "TIER", "USERS' LIMIT", "95% RANGE", "BINDING", "WHY"}}
	var verdicts []string
	ceiling := ""
	for _, u := range b.res.Users {
		for _, tr := range b.tiersOf(u) {
			tier := fmt.Sprintf("%s ≥ %s, %s ≤ %s", capacity.MetricLabel(capacity.MetricGenerationSpeed, tr.Statistic), capacity.ThresholdValue(capacity.MetricGenerationSpeed, tr.GenerationSpeedTPSMin),
				capacity.MetricLabel(capacity.MetricTTFT, tr.Statistic), capacity.ThresholdValue(capacity.MetricTTFT, tr.TTFTSecondsMax))
			ceiling = capacity.ThresholdValue(capacity.MetricTTFT, tr.TTFTSecondsMax)
			rng := "—"
			if tr.LimitRange != nil {
				rng = usersRange(servebench.CapacityResult{LimitRange: tr.LimitRange})
			}
			bind, why := "—", "—"
			if tr.LimitingMetric != "" {
				bind = capacity.MetricLabel(tr.LimitingMetric, tr.Statistic)
			}
			if tr.Why != "" {
				why = tr.Why
			}
			t.Rows = append(t.Rows, []string{useCaseTitle(u.CapacityResult), tier, tr.Label, rng, bind, why})
			verdicts = append(verdicts, fmt.Sprintf("%s at %s: %s", useCaseTitle(u.CapacityResult), tier, tr.Verdict))
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	blocks := []Block{
		para("SLO tiers (users.tiers): each tier is a floor of generation speed per user under one TTFT ceiling of %s, the way AA-AgentPerf states its maximum concurrent agents per tier. Each tier's limit is decided from the populations measured above, judged by that tier's two thresholds alone (and the success rate), with the same verdict and 95%% range as the users' search; nothing is measured for a tier. So a tier whose limit the measured populations do not bracket says so: N+ when every population passes (at least N, the largest measured), below N when the smallest population measured already fails.", ceiling),
		tableB(t),
	}
	for _, v := range verdicts {
		blocks = append(blocks, para("%s", v))
	}
	return blocks
}

// orDash writes an optional figure the server may not report: "—" when it did not.
func orDash(p *float64, f func(float64) string) string {
	if p == nil {
		return "—"
	}
	return f(*p)
}
