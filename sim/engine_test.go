package sim

import (
	"math"
	"strings"
	"testing"
)

func simulate(t *testing.T, p Profile, w Workload) Estimate {
	t.Helper()
	e, err := Simulate(p, w)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustProfile(t *testing.T, name string) Profile {
	t.Helper()
	p, err := LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TTFT at one user grows with the context (linear FLOPs plus quadratic attention).
func TestTTFTRisesWithContext(t *testing.T) {
	for _, name := range []string{"fast", "h100-llama8b", "b200-qwen30b-moe"} {
		p := mustProfile(t, name)
		prev := 0.0
		for _, ctx := range []int{1024, 8192, 16384, 32768} {
			e := simulate(t, p, Workload{ContextTokens: ctx, OutputTokens: 64, Concurrency: 1, Requests: 2})
			if e.TTFTSeconds <= prev {
				t.Errorf("%s: TTFT at %d tokens = %.4fs, not above the shorter context's %.4fs", name, ctx, e.TTFTSeconds, prev)
			}
			if e.QueueSeconds != 0 {
				t.Errorf("%s: one user at %d tokens queued %.4fs", name, ctx, e.QueueSeconds)
			}
			prev = e.TTFTSeconds
		}
	}
}

// The fast profile's targets from doc.go: what the README demo relies on.
func TestFastProfileTargets(t *testing.T) {
	p := FastProfile
	rows := []struct {
		ctx            int
		ttftLo, ttftHi float64
	}{
		{1024, 0, 0.1},   // short prompts answer at once
		{8192, 0.1, 0.5}, // a visible but short wait
		{32768, 3, 6},    // long context is seconds
	}
	for _, r := range rows {
		e := simulate(t, p, Workload{ContextTokens: r.ctx, OutputTokens: 256, Concurrency: 1, Requests: 2})
		if e.TTFTSeconds < r.ttftLo || e.TTFTSeconds > r.ttftHi {
			t.Errorf("fast: TTFT at %d = %.3fs, want [%.2f, %.2f]", r.ctx, e.TTFTSeconds, r.ttftLo, r.ttftHi)
		}
	}
	// decoding is quick, so a 1024-token answer takes well under a second and cells settle fast
	e := simulate(t, p, Workload{ContextTokens: 1024, OutputTokens: 1024, Concurrency: 1, Requests: 2})
	if e.GenerationSpeedTPS < 2000 || e.E2ESeconds > 0.5 {
		t.Errorf("fast: single-user speed at 1K = %.0f tok/s, end-to-end %.3fs; want ≥ 2,000 tok/s and ≤ 0.5 s", e.GenerationSpeedTPS, e.E2ESeconds)
	}
	// The KV cache holds one 32K request with its 1024 output tokens, but not that and the first
	// prefill chunk of a second one: 32K requests run strictly one at a time, no preemption.
	if c := p.KVCapacityTokens(); c < 32768+1024+64 || c >= 32768+p.Engine.MaxNumBatchedTokens {
		t.Errorf("fast: KV capacity %d tokens, want room for one 32K request but not for a second one's first chunk", c)
	}
	// So General Chatbot (32K, time to first token at most 8 s) passes at one user and fails
	// at two, both clearly: the demo's measured limit, found in two levels.
	one := simulate(t, p, Workload{ContextTokens: 32768, OutputTokens: 1024, Concurrency: 1})
	two := simulate(t, p, Workload{ContextTokens: 32768, OutputTokens: 1024, Concurrency: 2})
	if one.TTFTSeconds > 6 || two.TTFTSeconds < 8.4 || two.Preemptions != 0 {
		t.Errorf("fast: 32K TTFT %.3fs at 1 user, %.3fs at 2 (%d preemptions); want ≤ 6 s, ≥ 8.4 s and none", one.TTFTSeconds, two.TTFTSeconds, two.Preemptions)
	}
}

// Per-user generation speed falls as concurrency rises (more KV read per step, prefill stalls).
func TestGenerationSpeedFallsWithConcurrency(t *testing.T) {
	p := FastProfile
	prev := math.Inf(1)
	var first float64
	for _, n := range []int{1, 2, 4, 8, 16} {
		e := simulate(t, p, Workload{ContextTokens: 8192, OutputTokens: 256, Concurrency: n, Requests: n})
		if e.GenerationSpeedTPS >= prev {
			t.Errorf("speed at %d users = %.1f tok/s, not below %.1f", n, e.GenerationSpeedTPS, prev)
		}
		if n == 1 {
			first = e.GenerationSpeedTPS
		}
		prev = e.GenerationSpeedTPS
	}
	if prev > first/2 {
		t.Errorf("speed at 16 users %.1f is more than half of one user's %.1f", prev, first)
	}
}

// Below the KV capacity nothing queues; past it requests wait and running ones are preempted.
func TestQueueAppearsPastKVCapacity(t *testing.T) {
	p := FastProfile // ~35K tokens of KV
	fits := simulate(t, p, Workload{ContextTokens: 8192, OutputTokens: 1024, Concurrency: 2, Requests: 8})
	if fits.QueueSeconds != 0 || fits.Preemptions != 0 {
		t.Errorf("2×8K fits the KV cache but queued %.3fs with %d preemptions", fits.QueueSeconds, fits.Preemptions)
	}
	over := simulate(t, p, Workload{ContextTokens: 8192, OutputTokens: 1024, Concurrency: 8, Requests: 8})
	if over.QueueSeconds <= 0 {
		t.Errorf("8×8K exceeds the KV cache but nothing queued")
	}
	if over.Preemptions == 0 {
		t.Errorf("8×8K exceeds the KV cache but nothing was preempted")
	}
	if over.TTFTSeconds <= fits.TTFTSeconds {
		t.Errorf("TTFT past capacity %.3fs not above %.3fs", over.TTFTSeconds, fits.TTFTSeconds)
	}
}

// Power rises with load, and the mean stays between idle and max.
func TestPowerRisesWithLoad(t *testing.T) {
	p := FastProfile
	var all []Estimate
	prev := 0.0
	for _, n := range []int{1, 4, 16} {
		e := simulate(t, p, Workload{ContextTokens: 1024, OutputTokens: 256, Concurrency: n, Requests: n})
		if e.MeanPowerWatts <= prev {
			t.Errorf("power at %d users %.1f W not above %.1f W", n, e.MeanPowerWatts, prev)
		}
		prev = e.MeanPowerWatts
		all = append(all, e)
	}
	for _, e := range all {
		if e.MeanPowerWatts <= p.GPU.IdleWatts || e.MeanPowerWatts > p.GPU.MaxWatts {
			t.Errorf("mean power %.1f W outside (%v, %v]", e.MeanPowerWatts, p.GPU.IdleWatts, p.GPU.MaxWatts)
		}
	}
	// Idle time is charged at idle power exactly.
	c := newCore(p, "m")
	c.idleUntil(10)
	if want := 10 * p.GPU.IdleWatts; math.Abs(c.truth.EnergyJoules-want) > 1e-9 {
		t.Errorf("10 s idle = %.3f J, want %.3f", c.truth.EnergyJoules, want)
	}
}

// Per-user prefill speed peaks at a middle context: short prompts pay the fixed step costs,
// long ones the quadratic attention.
func TestPrefillSpeedPeaksInTheMiddle(t *testing.T) {
	for _, name := range []string{"fast", "h100-llama8b", "h200-qwen30b-moe"} {
		p := mustProfile(t, name)
		speed := map[int]float64{}
		for _, ctx := range []int{1024, 4096, 8192, 32768} {
			speed[ctx] = simulate(t, p, Workload{ContextTokens: ctx, OutputTokens: 16, Concurrency: 1, Requests: 2}).PrefillSpeedTPS
		}
		mid := math.Max(speed[4096], speed[8192])
		if mid <= speed[1024] || mid <= speed[32768] {
			t.Errorf("%s: prefill speed 1K %.0f, 4K %.0f, 8K %.0f, 32K %.0f: no peak in the middle",
				name, speed[1024], speed[4096], speed[8192], speed[32768])
		}
	}
}

// Shared prefixes hit the prefix cache and skip prefill compute; unique prompts never hit.
func TestPrefixCache(t *testing.T) {
	p := FastProfile
	unique := simulate(t, p, Workload{ContextTokens: 8192, OutputTokens: 32, Concurrency: 2, Requests: 6})
	if unique.PrefixCacheHitRate != 0 {
		t.Errorf("unique prompts hit the prefix cache: rate %.3f", unique.PrefixCacheHitRate)
	}
	shared := simulate(t, p, Workload{ContextTokens: 8192, OutputTokens: 32, Concurrency: 2, Requests: 6, SharedPrefixTokens: 6144})
	if shared.PrefixCacheHitRate < 0.5 {
		t.Errorf("6K of 8K shared: hit rate %.3f, want > 0.5", shared.PrefixCacheHitRate)
	}
	if shared.PrefillSeconds >= unique.PrefillSeconds {
		t.Errorf("cached prefill %.3fs not faster than uncached %.3fs", shared.PrefillSeconds, unique.PrefillSeconds)
	}
}

// The step-time formula, row by row.
func TestStepCost(t *testing.T) {
	p := FastProfile
	m, g, e := p.Model, p.GPU, p.Engine
	F := g.PeakFLOPS * e.ComputeEfficiency
	A := g.PeakFLOPS * e.AttentionEfficiency // attention FLOPs run at their own rate
	B := g.MemBandwidth * e.BandwidthEfficiency
	W := m.TotalParams * m.BytesPerParam
	attn := 4 * float64(m.Layers) * float64(m.Hidden)
	over := e.StepOverhead.Seconds()
	rows := []struct {
		name   string
		chunks []chunk
		want   float64
	}{
		// one decode at context 1000: bandwidth bound (weights + 1000 tokens of KV)
		{"decode", []chunk{{&seq{numTokens: 1000}, 999, 1}}, (W+1000*m.KVBytesPerToken)/B + over},
		// a 4096-token prefill from 0: compute bound, plus the prefill overhead
		{"prefill", []chunk{{&seq{numTokens: 4096}, 0, 4096}},
			2*m.ActiveParams*4096/F + attn*4096*2048/A + over + e.PrefillOverhead.Seconds()},
		// a second chunk at position 4096 pays attention over the first
		{"chunk2", []chunk{{&seq{numTokens: 8192}, 4096, 4096}},
			2*m.ActiveParams*4096/F + attn*4096*(4096+2048)/A + over + e.PrefillOverhead.Seconds()},
	}
	c := newCore(p, "m")
	for _, r := range rows {
		got := c.cost(r.chunks).dur
		if math.Abs(got-r.want) > 1e-12 {
			t.Errorf("%s: step = %.9fs, want %.9fs", r.name, got, r.want)
		}
	}
	// MoE: one token reads the active weights, a large batch nearly all of them.
	q := mustProfile(t, "h100-qwen30b-moe")
	cq := newCore(q, "m")
	one := cq.cost([]chunk{{&seq{numTokens: 2}, 1, 1}}).bytes - 2*q.Model.KVBytesPerToken
	if math.Abs(one-q.Model.ActiveParams*q.Model.BytesPerParam) > 1 {
		t.Errorf("MoE 1 token reads %.3g B of weights, want the active %.3g", one, q.Model.ActiveParams*2)
	}
	big := cq.cost([]chunk{{&seq{numTokens: 4096}, 0, 4096}}).bytes - 4096*q.Model.KVBytesPerToken
	if big < 0.999*q.WeightBytes() {
		t.Errorf("MoE 4096 tokens read %.3g B of weights, want ~all %.3g", big, q.WeightBytes())
	}
}

// Preemption recomputes: a tiny KV cache forces preemptions, yet every request completes with
// exactly its tokens and all blocks are returned.
func TestPreemptionRecomputes(t *testing.T) {
	p := FastProfile
	p.GPU.MemoryBytes = (p.WeightBytes() + 20000*p.Model.KVBytesPerToken) / p.Engine.GPUMemoryUtilization
	p.Engine.MaxModelLen = 8192
	c := newCore(p, "m")
	var finished []*seq
	c.onFinish = func(s *seq) { finished = append(finished, s) }
	for i := range 6 {
		c.add(&seq{id: uint64(i + 1), promptTokens: 4000, maxTokens: 3000, target: 3000})
	}
	for steps := 0; c.hasWork(); steps++ {
		if _, ok := c.step(); !ok {
			t.Fatalf("no progress after %d steps", steps)
		}
		if c.used > c.totalBlocks || c.used < 0 {
			t.Fatalf("used blocks %d outside [0, %d]", c.used, c.totalBlocks)
		}
	}
	if c.truth.Preemptions == 0 {
		t.Error("6×7000 tokens in a 20K cache: no preemption")
	}
	if len(finished) != 6 {
		t.Fatalf("%d of 6 finished", len(finished))
	}
	for _, s := range finished {
		if s.generated != 3000 || s.finishReason != "length" {
			t.Errorf("seq %d: %d tokens, reason %q", s.id, s.generated, s.finishReason)
		}
	}
	if c.used != 0 {
		t.Errorf("%d blocks still used after all finished", c.used)
	}
	if c.truth.GenerationTokens != 6*3000 || c.truth.PromptTokens != 6*4000 {
		t.Errorf("truth tokens: %d generated, %d prompt", c.truth.GenerationTokens, c.truth.PromptTokens)
	}
}

// Every built-in profile is valid and findable; unknown names list the valid ones.
func TestProfiles(t *testing.T) {
	for _, p := range Profiles() {
		if err := p.Validate(); err != nil {
			t.Error(err)
		}
		if _, err := LookupProfile(p.Name); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupProfile("h100-llama8b"); err != nil {
		t.Error(err)
	}
	_, err := LookupProfile("nope")
	if err == nil || !strings.Contains(err.Error(), "fast") || !strings.Contains(err.Error(), "h200-qwen30b-moe") {
		t.Errorf("unknown profile error %v does not list the valid names", err)
	}
}

// BenchmarkStep measures the engine's CPU cost per step with 64 running decodes.
func BenchmarkStep(b *testing.B) {
	p := FastProfile
	fresh := func() *core {
		c := newCore(p, "m")
		for i := range 64 {
			c.add(&seq{id: uint64(i + 1), promptTokens: 512, maxTokens: 1 << 30, target: 1 << 30})
		}
		for range 20 {
			c.step()
		}
		return c
	}
	c := fresh()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%1000 == 999 { // keep contexts short of the KV capacity
			b.StopTimer()
			c = fresh()
			b.StartTimer()
		}
		c.step()
	}
}

// An aborted request (client gone) leaves the engine at the next step and returns its blocks.
func TestAbortFreesBlocks(t *testing.T) {
	c := newCore(FastProfile, "m")
	a := &seq{id: 1, promptTokens: 3000, maxTokens: 100, target: 100}
	b := &seq{id: 2, promptTokens: 3000, maxTokens: 100, target: 100}
	c.add(a)
	c.add(b)
	for range 3 {
		c.step()
	}
	a.aborted = true
	b.aborted = true
	c.step()
	if c.hasWork() || c.used != 0 {
		t.Errorf("after abort: work %v, %d blocks used", c.hasWork(), c.used)
	}
	if c.metrics.success["abort"] != 2 || c.truth.RequestsFinished != 0 {
		t.Errorf("abort count %d, finished %d", c.metrics.success["abort"], c.truth.RequestsFinished)
	}
}

// A preempted request that re-reads its own published prompt blocks reuses them without
// recompute, yet they are not prefix-cache hits: unique prompts show no hits however much
// preemption there is; shared blocks of another request still count.
func TestPreemptedOwnBlocksAreNotHits(t *testing.T) {
	p := FastProfile
	p.GPU.MemoryBytes = (p.WeightBytes() + 20000*p.Model.KVBytesPerToken) / p.Engine.GPUMemoryUtilization
	p.Engine.MaxModelLen = 8192
	c := newCore(p, "m")
	bs := p.Engine.BlockSize
	unique := func(id uint64, shared int) *seq {
		q := &seq{id: id, promptTokens: 4000, maxTokens: 3000, target: 3000}
		for j := range 4000 / bs {
			h := mix64(id<<32 ^ uint64(j))
			if j < shared {
				h = mix64(0x5eed ^ uint64(j))
			}
			q.blockHashes = append(q.blockHashes, h)
		}
		return q
	}
	for i := range 6 {
		c.add(unique(uint64(i+1), 0))
	}
	for steps := 0; c.hasWork(); steps++ {
		if _, ok := c.step(); !ok {
			t.Fatalf("no progress after %d steps", steps)
		}
	}
	if c.truth.Preemptions == 0 {
		t.Fatal("no preemption: the test needs some")
	}
	if c.truth.PrefixCacheOwnReuse == 0 {
		t.Error("no preempted request re-read its own blocks: the case under test did not happen")
	}
	if c.truth.PrefixCacheHits != 0 || c.metrics.prefixHits != 0 {
		t.Errorf("unique prompts: %d hit tokens (metrics %d), want 0", c.truth.PrefixCacheHits, c.metrics.prefixHits)
	}
	// Two requests sharing 100 blocks, one after the other: the second hits them.
	c2 := newCore(FastProfile, "m")
	c2.add(unique(1, 100))
	for c2.hasWork() {
		c2.step()
	}
	c2.add(unique(2, 100))
	for c2.hasWork() {
		c2.step()
	}
	if got := c2.truth.PrefixCacheHits; got != int64(100*bs) {
		t.Errorf("shared 100 blocks: %d hit tokens, want %d", got, 100*bs)
	}
}
