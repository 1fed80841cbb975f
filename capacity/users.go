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
//   - else "queueing" when its mean queue wait is at least QueueBound of its mean TTFT;
//   - else "batch": the cache still serves the histories and nothing queues long, so what fails
//     is the speed of a batch shared by that many users (or its prefill of the new text).
//
// It returns "" for a lower bound (no population failed) and for a failing population with no
// evidence.
func UsersWhy(res servebench.CapacityResult, ev []servebench.UsersEvidence) (why, text string) {
	if res.FirstFailing == nil {
		return "", ""
	}
	var fail, pass *servebench.UsersEvidence
	for i := range ev {
		if ev[i].Users == *res.FirstFailing {
			fail = &ev[i]
		}
		if res.Limit != nil && ev[i].Users == *res.Limit {
			pass = &ev[i]
		}
	}
	if fail == nil {
		return "", ""
	}
	at := fmt.Sprintf("at %d users", fail.Users)
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
	case fail.QueueWaitSeconds != nil && fail.TTFTSeconds > 0 && *fail.QueueWaitSeconds >= QueueBound*fail.TTFTSeconds:
		return "queueing", fmt.Sprintf("queueing: %s requests waited %s on average in the server's queue (of a %s TTFT) for a batch slot or KV blocks; the prefix cache served %s of the prompt tokens",
			at, secs(*fail.QueueWaitSeconds), secs(fail.TTFTSeconds), share(fail))
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
