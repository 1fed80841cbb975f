package capacity

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// The why of a users' limit comes from the first failing population: eviction when its hit
// rate fell below half, queueing when the queue took a quarter of its TTFT, else the batch.
func TestUsersWhy(t *testing.T) {
	lim, fail := 20, 22
	res := servebench.CapacityResult{Limit: &lim, FirstFailing: &fail, LimitKind: servebench.LimitInterpolated}
	ev := func(share, queue, ttft float64) []servebench.UsersEvidence {
		return []servebench.UsersEvidence{
			{Users: 20, Pass: true, CachedShare: servebench.Float(0.9), QueueWaitSeconds: servebench.Float(0.1), TTFTSeconds: 1},
			{Users: 22, CachedShare: servebench.Float(share), QueueWaitSeconds: servebench.Float(queue), TTFTSeconds: ttft, GenerationSpeedTPS: 14},
		}
	}
	for _, c := range []struct {
		share, queue, ttft float64
		want, says         string
	}{
		{0.3, 5, 20, "eviction", "30% of the prompt tokens (90% at 20)"},
		{0.8, 5, 10, "queueing", "waited 5.0 s"},
		{0.8, 0.5, 10, "batch", "14.0 tok/s"},
		// a mean queue wait above the TTFT is the histogram's, warm-up included: not queueing
		{0.8, 12, 10, "batch", "does not say whether the measured requests queued"},
	} {
		why, text := UsersWhy(res, ev(c.share, c.queue, c.ttft))
		if why != c.want || !strings.Contains(text, c.says) {
			t.Errorf("share %.1f, queue %.1f s of %.0f s: %q, %q; want %q saying %q", c.share, c.queue, c.ttft, why, text, c.want, c.says)
		}
	}
	e := ev(0.3, 0, 1)
	e[1].KVCacheUsageMean, e[1].KVCacheUsageMax, e[1].Preemptions = servebench.Float(0.8), servebench.Float(1), new(int64)
	*e[1].Preemptions = 3
	if _, text := UsersWhy(res, e); !strings.Contains(text, "80% used on average, 100% at its peak") || !strings.Contains(text, "3 requests were preempted") {
		t.Errorf("the why %q does not give the KV cache's usage and the preemptions", text)
	}
	lower := servebench.CapacityResult{Limit: &lim, LimitKind: servebench.LimitLowerBound}
	if why, _ := UsersWhy(lower, ev(0.1, 0, 1)); why != "" {
		t.Errorf("a lower bound has the why %q, want none", why)
	}
	// A limit at a crossing (no failing population) is read at its highest passing population,
	// beside the one below it.
	x := 21.4
	crossing := servebench.CapacityResult{Limit: &lim, Crossing: &x, LimitKind: servebench.LimitInterpolated}
	e = []servebench.UsersEvidence{
		{Users: 16, Pass: true, CachedShare: servebench.Float(0.95), TTFTSeconds: 0.5, GenerationSpeedTPS: 30},
		{Users: 20, Pass: true, CachedShare: servebench.Float(0.3), TTFTSeconds: 2, GenerationSpeedTPS: 15.2},
	}
	if why, text := UsersWhy(crossing, e); why != "eviction" || !strings.Contains(text, "at 20 users, which pass within their noise") || !strings.Contains(text, "(95% at 16)") {
		t.Errorf("a crossing: %q, %q", why, text)
	}
	cold := 4
	if r, ok := UsersRatio(res, servebench.CapacityResult{Limit: &cold}); !ok || r != 5 {
		t.Errorf("ratio %g %v, want 5", r, ok)
	}
}
