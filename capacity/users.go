package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/servebench/servebench"
)

// EvictedShare is the prefix-cache hit rate below which a population's limit is put down to
// eviction: users whose every turn re-sends the whole history would have most of each prompt
// cached while their histories stay in the KV cache (a chat turn adds a few hundred tokens to
// thousands, an agent's a few hundred to tens of thousands), so fewer than half the prompt
// tokens served from the cache means histories were evicted before their next turn.
const EvictedShare = 0.5

// QueueBound is the share of the time to first token spent in the server's queue above which a
// population's limit is put down to queueing (requests waiting for a batch slot or KV blocks).
const QueueBound = 0.25

// UsersEvidenceOf is what the server showed at a population of n users (cell c, its verdict
// pass): prefix-cache hit rate (c.CachedShare, from usage or the server's counters), mean queue
// wait, TTFT, per-user speed and mean prompt.
func UsersEvidenceOf(c servebench.CellResult, n int, pass bool) servebench.UsersEvidence {
	e := servebench.UsersEvidence{Users: n, Pass: pass, CachedShare: c.CachedShare, TTFTSeconds: c.TTFTSeconds.Mean,
		GenerationSpeedTPS: c.GenerationSpeedTPS.Mean, InputTokensMean: c.InputTokensMean}
	if q := c.QueueWaitSeconds; q != nil {
		e.QueueWaitSeconds = servebench.Float(q.Mean)
	}
	return e
}

// UsersWhy says what binds a users' limit, from the evidence at the lowest failing population
// (and at the limit, for comparison):
//
//   - "eviction" when the failing population's hit rate is below EvictedShare;
//   - else "queueing" when its mean queue wait is at least QueueBound of its mean TTFT and at
//     most the TTFT (a request's queue wait is part of its TTFT: a larger mean comes from the
//     server's queue-time histogram, which also covers the warm-up's joining turns, cold
//     prompts that queue behind each other, and says nothing of the measured requests');
//   - else "batch": the cache still serves the histories and nothing queues long, so what fails
//     is the speed of a batch shared by that many users (or its prefill of the new text).
//
// A limit decided at a crossing (CapacityResult.Crossing: no population failed) is read the same
// way at its highest passing population, the one within its noise of the threshold, beside the
// largest population below it.
//
// It returns "" for a lower bound (no population failed) and for a failing population with no
// evidence.
func UsersWhy(res servebench.CapacityResult, ev []servebench.UsersEvidence) (why, text string) {
	at := ""
	var fail, pass *servebench.UsersEvidence
	switch {
	case res.FirstFailing != nil:
		for i := range ev {
			if ev[i].Users == *res.FirstFailing {
				fail = &ev[i]
			}
			if res.Limit != nil && ev[i].Users == *res.Limit {
				pass = &ev[i]
			}
		}
		if fail != nil {
			at = fmt.Sprintf("at %d users", fail.Users)
		}
	case res.Crossing != nil && res.Limit != nil:
		for i := range ev {
			e := &ev[i]
			if e.Pass && e.Users <= *res.Limit && (fail == nil || e.Users > fail.Users) {
				fail = e
			}
		}
		if fail != nil {
			for i := range ev {
				if e := &ev[i]; e.Pass && e.Users < fail.Users && (pass == nil || e.Users > pass.Users) {
					pass = e
				}
			}
			at = fmt.Sprintf("at %d users, which pass within their noise of the threshold,", fail.Users)
		}
	}
	if fail == nil {
		return "", ""
	}
	share := func(e *servebench.UsersEvidence) string {
		if e == nil || e.CachedShare == nil {
			return "unknown"
		}
		return fmt.Sprintf("%.0f%%", 100**e.CachedShare)
	}
	than := ""
	if pass != nil && pass.CachedShare != nil {
		than = fmt.Sprintf(" (%s at %d)", share(pass), pass.Users)
	}
	why, text = usersWhy(fail, pass, at, share, than)
	var kv []string
	if fail.KVCacheUsageMax != nil {
		kv = append(kv, fmt.Sprintf("the KV cache was %.0f%% used on average, %.0f%% at its peak", 100**fail.KVCacheUsageMean, 100**fail.KVCacheUsageMax))
	}
	if fail.Preemptions != nil {
		kv = append(kv, fmt.Sprintf("%d requests were preempted", *fail.Preemptions))
	}
	if len(kv) > 0 {
		text += "; " + strings.Join(kv, ", ")
	}
	return why, text
}

func usersWhy(fail, pass *servebench.UsersEvidence, at string, share func(*servebench.UsersEvidence) string, than string) (why, text string) {
	switch {
	case fail.CachedShare != nil && *fail.CachedShare < EvictedShare:
		return "eviction", fmt.Sprintf("eviction: %s the prefix cache served %s of the prompt tokens%s; the users' histories no longer fit in the KV cache and are evicted before their next turn, so turns prefill their whole history again (TTFT %s)",
			at, share(fail), than, secs(fail.TTFTSeconds))
	case fail.QueueWaitSeconds != nil && fail.TTFTSeconds > 0 && *fail.QueueWaitSeconds >= QueueBound*fail.TTFTSeconds &&
		*fail.QueueWaitSeconds <= fail.TTFTSeconds:
		return "queueing", fmt.Sprintf("queueing: %s requests waited %s on average in the server's queue (of a %s TTFT) for a batch slot or KV blocks; the prefix cache served %s of the prompt tokens",
			at, secs(*fail.QueueWaitSeconds), secs(fail.TTFTSeconds), share(fail))
	case fail.QueueWaitSeconds != nil && *fail.QueueWaitSeconds > fail.TTFTSeconds:
		return "batch", fmt.Sprintf("the batch: %s the prefix cache still served %s of the prompt tokens, and %d users sharing the GPU get %.1f tok/s each with a %s TTFT; the server's mean queue wait, %s, is above that TTFT, so it comes from its queue-time histogram, which also covers the warm-up's joining turns, and does not say whether the measured requests queued (per-request timings would)",
			at, share(fail), fail.Users, fail.GenerationSpeedTPS, secs(fail.TTFTSeconds), secs(*fail.QueueWaitSeconds))
	default:
		return "batch", fmt.Sprintf("the batch: %s the prefix cache still served %s of the prompt tokens and requests did not queue long, but %d users sharing the GPU get %.1f tok/s each with a %s TTFT",
			at, share(fail), fail.Users, fail.GenerationSpeedTPS, secs(fail.TTFTSeconds))
	}
}

// UsersRatio = users' limit / cold-prompt limit (×): how many more users than concurrent fresh
// prompts of the use case's full context the server holds to the same thresholds. ok is false
// when either limit is missing or the cold limit is 0.
func UsersRatio(users, cold servebench.CapacityResult) (ratio float64, ok bool) {
	if users.Limit == nil || cold.Limit == nil || *cold.Limit <= 0 {
		return 0, false
	}
	return float64(*users.Limit) / float64(*cold.Limit), true
}

func secs(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", 1000*s)
	}
	return fmt.Sprintf("%.*f s", map[bool]int{true: 1, false: 0}[s < 100], math.Round(s*10)/10)
}

// UsersCells picks, from a run's cells, the populations measured for use case name: cells of
// kind users whose scenario is name, run and with requests sent, one per population (the one
// with the most requests when a population appears twice).
func UsersCells(cells []servebench.CellResult, name string) map[int]servebench.CellResult {
	known := map[int]servebench.CellResult{}
	for _, c := range cells {
		if c.Kind != servebench.KindUsers || c.Scenario != name || c.Skipped || c.RequestsTotal == 0 || c.Concurrency < 1 {
			continue
		}
		if prev, ok := known[c.Concurrency]; !ok || prev.RequestsTotal < c.RequestsTotal {
			known[c.Concurrency] = c
		}
	}
	return known
}

// KindUpperBound is the kind of a users' limit whose smallest measured population already
// fails above 1 user: the limit is below it, by how much the run cannot say.
const KindUpperBound = "upper bound: the smallest population measured fails"

// ReconsiderUsers decides uc's users' limit from the populations a run measured (UsersCells,
// up to ceiling), measuring nothing: the page's what-if of changed thresholds and the SLO
// tiers. Every population is judged by Evaluate and the verdict and its 95% range are Decide's,
// as the users' search's own: a limit between two adjacent populations is measured, one inside
// a wider gap interpolated ("~N", its range the gap), every population passing a lower bound
// ("N+": at least N, the largest measured). When the smallest population measured fails and is
// larger than 1 user, the limit is not bracketed: the result is not decided (Decided false, Hi
// that population, Label "below N", KindUpperBound). Labels and verdicts count users.
func ReconsiderUsers(uc servebench.UseCase, ceiling int, cells []servebench.CellResult) Reconsidered {
	if uc.Statistic == "" {
		uc.Statistic = servebench.StatMean
	}
	var pts []servebench.CapacityPoint
	window := 0
	for n, c := range UsersCells(cells, uc.Name) {
		if ceiling > 0 && n > ceiling {
			continue
		}
		p := Evaluate(uc, c)
		p.Concurrency, p.Reused = n, true
		pts = append(pts, p)
		window = c.ContextTokens
	}
	res := DecideWithin(uc, ceiling, pts, nil, UsersResolution)
	res.DenseGridRequests, res.DenseGridServerSeconds = 0, 0
	if window > 0 {
		res.ContextTokens = window
	}
	if len(pts) == 0 {
		res.LimitKind, res.Limit = "", nil
		return Reconsidered{CapacityResult: res, Label: LabelNotMeasured, KindWords: KindUndecidedByLevels,
			Verdict: fmt.Sprintf("Not measured: the run measured no population of users for %s.", uc.Name)}
	}
	byN := map[int]servebench.CapacityPoint{}
	for _, p := range res.Points {
		byN[p.Concurrency] = p
	}
	lo, hi := bounds(byN)
	if hi > 1 && lo == 0 {
		// Decide would interpolate from an unmeasured 0: the limit is below hi, no more is known.
		res.LimitKind, res.Limit, res.LimitRange = "", nil, nil
		res.Note = "the populations measured do not bracket the limit for these thresholds"
		return Reconsidered{CapacityResult: res, Hi: hi, Label: fmt.Sprintf("below %d", hi), KindWords: KindUpperBound,
			Verdict: fmt.Sprintf("Fewer than %s: the smallest population measured, %d, fails (%s); no smaller one was measured.",
				usersCount(hi), hi, failingText(uc, byN[hi]))}
	}
	out := Reconsidered{CapacityResult: res, Decided: true, Label: LimitLabel(res), KindWords: KindWordsOf(res)}
	out.Verdict = usersVerdict(uc, res, byN, lo, hi)
	return out
}

// usersVerdict says a decided users' limit in a sentence, in users.
func usersVerdict(uc servebench.UseCase, r servebench.CapacityResult, byN map[int]servebench.CapacityPoint, lo, hi int) string {
	rng := ""
	if r.LimitRange != nil && r.LimitRange[0] != r.LimitRange[1] {
		rng = fmt.Sprintf(" (95%% range %d–%d)", r.LimitRange[0], r.LimitRange[1])
	}
	switch {
	case r.Skipped:
		return sentence(r.Note)
	case r.LimitKind == servebench.LimitNotViable:
		return fmt.Sprintf("Not viable: at 1 user, %s.", failingText(uc, byN[1]))
	case r.LimitKind == servebench.LimitLowerBound:
		if r.Ceiling > 0 && lo >= r.Ceiling {
			return fmt.Sprintf("At least %s: every population measured passes, up to the search's ceiling of %d.", usersCount(lo), r.Ceiling)
		}
		return fmt.Sprintf("At least %s: every population measured passes, the largest %d; no larger one was measured.", usersCount(lo), lo)
	case r.LimitKind == servebench.LimitMeasured:
		return fmt.Sprintf("%s%s: %d passes, and at %d, %s.", usersCount(*r.Limit), rng, lo, hi, failingText(uc, byN[hi]))
	case r.LimitKind == servebench.LimitInterpolated && r.Crossing != nil:
		return fmt.Sprintf("About %s%s, where the model crosses the threshold: %d passes, but its verdict did not settle (%s within its noise of the threshold), and the model through the two largest passing populations crosses at %.1f users, before the next population the search's resolution would measure; no failing population was measured.",
			usersCount(*r.Limit), rng, lo, metricAt(uc, byN[lo], r.LimitingMetric), *r.Crossing)
	case r.LimitKind == servebench.LimitInterpolated:
		v := fmt.Sprintf("About %s%s, interpolated between %d, which passes, and %d, where %s; the populations between were not measured",
			usersCount(*r.Limit), rng, lo, hi, failingText(uc, byN[hi]))
		if noisy := unsettled(byN, lo, hi); len(noisy) > 0 {
			// the users' search ended on its resolution (SearchConfig.Resolution)
			v += fmt.Sprintf(": at %s the verdict did not settle (the metric within its noise of the threshold), so they would not settle either", joinInts(noisy))
		}
		if r.LimitRange != nil && r.Ceiling > 0 && r.LimitRange[1] == r.Ceiling {
			v += fmt.Sprintf("; the range runs to the search's ceiling of %d because no failing population's verdict settled", r.Ceiling)
		}
		return v + "."
	}
	return "Not decided."
}

func usersCount(n int) string { return plural(n, "user") }

// metricAt is metric m at point p against its threshold, "generation speed 15.2 tok/s against
// 15 tok/s" (the metric's label alone when p lacks it).
func metricAt(uc servebench.UseCase, p servebench.CapacityPoint, m string) string {
	k, ok := checkFor(uc, m)
	v, has := p.Values[m]
	if !ok || !has {
		return MetricLabel(m, uc.Statistic)
	}
	return fmt.Sprintf("%s %s against %s", MetricLabel(m, uc.Statistic), formatPrec(m, v, k.Limit, 1), formatThreshold(m, k.Limit))
}

// unsettled lists lo and hi where their verdicts did not settle (CapacityPoint.Settled).
func unsettled(byN map[int]servebench.CapacityPoint, lo, hi int) []int {
	var out []int
	for _, n := range []int{lo, hi} {
		if p, ok := byN[n]; ok && !p.Settled {
			out = append(out, n)
		}
	}
	return out
}

// joinInts writes 244, "244 and 260".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, " and ")
}

// TierUseCase is uc judged by one SLO tier: TTFT at most the tiers' ceiling and generation
// speed at least floor, read at the tiers' statistic (uc's when they name none); uc's other
// thresholds do not apply.
func TierUseCase(t servebench.UsersTiers, uc servebench.UseCase, floor float64) servebench.UseCase {
	st := t.Statistic
	if st == "" {
		st = uc.Statistic
	}
	return servebench.UseCase{Name: uc.Name, Title: uc.Title, ContextTokens: uc.ContextTokens, OutputTokens: uc.OutputTokens, Statistic: st,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(t.TTFTSecondsMax), GenerationSpeedTPSMin: servebench.Float(floor)}}
}

// UsersTiers decides one users' limit per SLO tier of t (nil: none) for use case uc from the
// populations the run measured (cells; ceiling is the users' search's), by ReconsiderUsers
// with each tier's thresholds (TierUseCase): nothing is measured for a tier, so a tier the
// measured populations do not bracket says so (a lower bound "N+", or "below N"). Each tier
// names its binding constraint (the limiting metric at its first failing population) and, from
// ev, what the server showed there (UsersWhy).
func UsersTiers(t *servebench.UsersTiers, uc servebench.UseCase, ceiling int, cells []servebench.CellResult, ev []servebench.UsersEvidence) []servebench.UsersTier {
	if t == nil {
		return nil
	}
	var out []servebench.UsersTier
	for _, floor := range t.SpeedsTPSMin {
		tuc := TierUseCase(*t, uc, floor)
		r := ReconsiderUsers(tuc, ceiling, cells)
		tier := servebench.UsersTier{GenerationSpeedTPSMin: floor, TTFTSecondsMax: t.TTFTSecondsMax, Statistic: tuc.Statistic,
			Limit: r.Limit, LimitKind: r.LimitKind, LimitRange: r.LimitRange, FirstFailing: r.FirstFailing,
			LimitingMetric: r.LimitingMetric, Label: r.Label, Verdict: r.Verdict}
		if !r.Decided && r.Hi > 0 {
			tier.Below = servebench.Int(r.Hi)
		}
		tier.Why, tier.WhyText = UsersWhy(r.CapacityResult, ev)
		out = append(out, tier)
	}
	return out
}
