package sim

import (
	"container/list"
	"math"
)

// seq is one request inside the engine. Times are on the engine clock (seconds).
type seq struct {
	id           uint64
	promptTokens int
	blockHashes  []uint64 // chained hashes of the prompt's full blocks (prefix cache keys)
	maxTokens    int      // the request's limit
	target       int      // tokens it will generate (== maxTokens unless it "stops" earlier)
	reasoning    int      // the first reasoning generated tokens are reasoning, the rest the answer
	cachedTokens int      // prompt tokens served from the prefix cache at first admission (hits)

	numTokens int // prompt + generated
	computed  int // tokens whose KV is in the cache
	generated int

	private int        // KV blocks owned alone
	shared  []*kvEntry // prefix-cache blocks referenced (the first len(shared) blocks)

	arrival, firstScheduled, firstToken, finished float64
	ready                                         float64 // arrival + the API server's latency (requestOverhead): schedulable from then
	emits                                         int     // steps that emitted tokens (chunks)
	specCarry                                     float64 // fractional speculative tokens carried to the next step
	scheduled, hasFirstToken, done, aborted       bool
	promptCounted                                 bool
	finishReason                                  string

	// Delivery state, written by the server loop at each step's deadline and read by the
	// request's handler, both under Server.mu.
	visibleTokens int
	visibleDone   bool
	notify        chan struct{} // capacity 1
	doneCh        chan struct{} // closed at delivery of the finish
	doneClosed    bool
}

func (s *seq) blocks() int { return s.private + len(s.shared) }

// kvEntry is one prefix-cache block.
type kvEntry struct {
	hash uint64
	ref  int
	lru  *list.Element // in core.evictable while ref == 0
	// owner is the sequence that computed and published the block. A preempted sequence that
	// re-reads its own blocks reuses them (no recompute) but they are not prefix-cache hits:
	// nothing was shared between requests.
	owner uint64
}

// stepCost is the physics of one step (seconds, FLOP, bytes).
type stepCost struct {
	tokens                 int
	flops, bytes           float64
	computeS, memoryS, dur float64
	util                   float64 // 0..1, drives power
	prefill                bool
}

// core is the engine: scheduler, KV-cache accounting and step physics on its own clock. It
// never sleeps and never reads the wall clock: the Server drives it in real time, tests and
// Simulate drive it on virtual time.
type core struct {
	p   Profile
	now float64 // engine clock (s): the start of the next step

	waiting []*seq // FIFO; preempted sequences go back to the front
	running []*seq // in admission order; the newest is last

	totalBlocks int
	used        int // blocks referenced by sequences (private + shared entries with ref > 0)
	cache       map[uint64]*kvEntry
	evictable   list.List // ref-0 cache entries, least recently used at the front

	truth   Truth
	metrics *vllmMetrics
	gpu     gpuState

	sched []chunk // reused across steps

	// touched collects sequences whose visible state changes when the current step ends.
	touched []*seq
	// onFinish is called for each finished sequence at the end of the step that finished it.
	onFinish func(*seq)
}

func newCore(p Profile, modelName string) *core {
	c := &core{p: p, totalBlocks: p.kvBlocks(), cache: make(map[uint64]*kvEntry)}
	c.metrics = newVLLMMetrics(modelName, p)
	c.gpu = gpuState{idleW: p.GPU.IdleWatts, maxW: p.GPU.MaxWatts}
	return c
}

func (c *core) hasWork() bool { return len(c.waiting) > 0 || len(c.running) > 0 }

// add queues s, which arrived at s.arrival (<= c.now is allowed: arrival during a step).
func (c *core) add(s *seq) {
	s.numTokens = s.promptTokens
	s.ready = s.arrival + c.p.Engine.requestOverhead(s.promptTokens)
	c.waiting = append(c.waiting, s)
	c.truth.RequestsArrived++
}

// idleUntil moves the clock to t when the engine has been idle, charging idle power.
func (c *core) idleUntil(t float64) {
	if t <= c.now {
		return
	}
	gap := t - c.now
	c.truth.EnergyJoules += float64(c.p.GPU.Count) * c.p.GPU.IdleWatts * gap
	c.gpu.advance(gap, 0)
	c.now = t
}

// ---- KV-cache blocks ----

func (c *core) blocksFor(tokens int) int {
	bs := c.p.Engine.BlockSize
	return (tokens + bs - 1) / bs
}

// alloc grows s to hold tokens tokens; false when the free blocks do not suffice.
func (c *core) alloc(s *seq, tokens int) bool {
	k := c.blocksFor(tokens) - s.blocks()
	if k <= 0 {
		return true
	}
	if c.used+k > c.totalBlocks {
		return false
	}
	c.used += k
	s.private += k
	// Evict least recently used cached blocks that the new blocks overwrite.
	for c.used+c.evictable.Len() > c.totalBlocks {
		e := c.evictable.Remove(c.evictable.Front()).(*kvEntry)
		delete(c.cache, e.hash)
	}
	return true
}

// free releases all blocks of s; its cached prompt blocks stay in the prefix cache (evictable).
// They join the eviction queue last block first, as vLLM frees them: eviction takes a history's
// tail before its beginning, so a partly evicted history still hits its surviving prefix (a
// prefix match stops at the first missing block).
func (c *core) free(s *seq) {
	c.used -= s.private
	s.private = 0
	for i := len(s.shared) - 1; i >= 0; i-- {
		e := s.shared[i]
		e.ref--
		if e.ref == 0 {
			c.used--
			e.lru = c.evictable.PushBack(e)
		}
	}
	s.shared = nil
}

// matchPrefix takes the longest run of cached prompt blocks of s. It returns the tokens reused
// (their prefill is skipped) and, of those, the tokens that count as prefix-cache hits: blocks
// published by another request. Blocks s published itself before a preemption are reused but
// are not hits.
func (c *core) matchPrefix(s *seq) (reused, hits int) {
	bs := c.p.Engine.BlockSize
	for _, h := range s.blockHashes {
		if (len(s.shared)+1)*bs > s.numTokens-1 { // at least one token must be computed
			break
		}
		e, ok := c.cache[h]
		if !ok {
			break
		}
		if e.ref == 0 {
			c.evictable.Remove(e.lru)
			e.lru = nil
			c.used++
		}
		e.ref++
		s.shared = append(s.shared, e)
		if e.owner != s.id {
			hits += bs
		}
	}
	return len(s.shared) * bs, hits
}

// register publishes the prompt blocks of s completed by its computed tokens.
func (c *core) register(s *seq) {
	full := min(s.computed/c.p.Engine.BlockSize, len(s.blockHashes))
	for i := len(s.shared); i < full; i++ {
		h := s.blockHashes[i]
		if _, ok := c.cache[h]; ok || s.private == 0 {
			return // computed twice (another sequence published it first): stays private
		}
		e := &kvEntry{hash: h, ref: 1, owner: s.id}
		c.cache[h] = e
		s.private--
		s.shared = append(s.shared, e)
	}
}

// preempt sends s back to the front of the waiting queue to be recomputed.
func (c *core) preempt(s *seq) {
	c.free(s)
	s.computed = 0
	c.truth.Preemptions++
	c.metrics.preemptions++
	c.waiting = append([]*seq{s}, c.waiting...)
}

// ---- the step ----

type chunk struct {
	s   *seq
	pos int // tokens already computed
	n   int // tokens computed in this step
}

// step schedules and runs one step starting at c.now, advances c.now to its end and applies its
// effects (tokens, finishes, truth, metrics). It returns the step's cost, or false when nothing
// could be scheduled (no work).
func (c *core) step() (stepCost, bool) {
	c.touched = c.touched[:0]
	if len(c.running) == 0 && len(c.waiting) > 0 && c.waiting[0].ready > c.now {
		c.idleUntil(c.waiting[0].ready) // the API server is still handing the request over
	}
	start := c.now
	budget := c.p.Engine.MaxNumBatchedTokens
	sched := c.sched[:0]
	defer func() { c.sched = sched[:0] }()
	preempted := false

	// Drop aborted sequences.
	c.running = dropAborted(c, c.running)
	c.waiting = dropAborted(c, c.waiting)

	// 1. Running sequences first, oldest first: decodes (1 token) and unfinished prefills.
	for i := 0; i < len(c.running) && budget > 0; i++ {
		s := c.running[i]
		n := min(s.numTokens-s.computed, budget)
		look := 0 // lookahead slots for speculative tokens
		if s.hasFirstToken {
			look = c.p.Engine.SpecTokens
		}
		for !c.alloc(s, s.computed+n+look) {
			victim := c.running[len(c.running)-1]
			c.running = c.running[:len(c.running)-1]
			c.preempt(victim)
			preempted = true
			if victim == s {
				n = 0
				break
			}
		}
		if n == 0 {
			break
		}
		sched = append(sched, chunk{s, s.computed, n})
		budget -= n
	}

	// 2. Waiting sequences, FIFO, while blocks, budget and MaxNumSeqs allow (not in a step
	// that had to preempt, as vLLM).
	for !preempted && len(c.waiting) > 0 && budget > 0 && len(c.running) < c.p.Engine.MaxNumSeqs {
		s := c.waiting[0]
		if s.ready > start {
			break
		}
		reused, hit := c.matchPrefix(s)
		c.truth.PrefixCacheQueries += int64(s.numTokens)
		c.truth.PrefixCacheHits += int64(hit)
		c.truth.PrefixCacheOwnReuse += int64(reused - hit)
		c.metrics.prefixQueries += int64(s.numTokens)
		c.metrics.prefixHits += int64(hit)
		s.computed = reused
		n := min(s.numTokens-s.computed, budget)
		if !c.alloc(s, s.computed+n) {
			c.free(s)
			s.computed = 0
			// Undo the query count: it will be asked again when blocks free up.
			c.truth.PrefixCacheQueries -= int64(s.numTokens)
			c.truth.PrefixCacheHits -= int64(hit)
			c.truth.PrefixCacheOwnReuse -= int64(reused - hit)
			c.metrics.prefixQueries -= int64(s.numTokens)
			c.metrics.prefixHits -= int64(hit)
			break
		}
		c.waiting = c.waiting[1:]
		c.running = append(c.running, s)
		if !s.scheduled {
			s.cachedTokens = hit
			s.scheduled = true
			s.firstScheduled = math.Max(start, s.ready)
		}
		sched = append(sched, chunk{s, s.computed, n})
		budget -= n
	}
	if len(sched) == 0 {
		return stepCost{}, false
	}

	cost := c.cost(sched)
	end := start + cost.dur
	c.now = end
	c.truth.EnergyJoules += float64(c.p.GPU.Count) * c.gpu.power(cost.util) * cost.dur
	c.gpu.advance(cost.dur, cost.util)

	// Apply: computed tokens, sampled tokens, finishes.
	for _, ch := range sched {
		s := ch.s
		s.computed += ch.n
		c.register(s)
		if s.computed < s.numTokens {
			continue // prefill continues next step
		}
		// The step sampled one token, or with speculative decoding several (a decode step).
		g := 1
		if s.hasFirstToken && c.p.Engine.SpecTokens > 0 {
			s.specCarry += c.p.TokensPerStep()
			g = max(1, int(s.specCarry))
			s.specCarry -= float64(g)
			g = min(g, s.target-s.generated)
		}
		s.generated += g
		s.numTokens += g
		s.computed = s.numTokens - 1 // accepted drafts were computed by the verification
		s.emits++
		c.truth.GenerationTokens += int64(g)
		c.metrics.generationTokens += int64(g)
		if !s.hasFirstToken {
			s.hasFirstToken = true
			s.firstToken = end
		}
		if !s.promptCounted {
			s.promptCounted = true
			c.truth.PromptTokens += int64(s.promptTokens)
			c.metrics.promptTokens += int64(s.promptTokens)
		}
		if s.generated >= s.target {
			s.done = true
			s.finished = end
			s.finishReason = "stop"
			if s.generated >= s.maxTokens {
				s.finishReason = "length"
			}
		}
		c.touched = append(c.touched, s)
	}
	kept := c.running[:0]
	for _, s := range c.running {
		if s.done {
			c.free(s)
			c.recordFinish(s)
			continue
		}
		kept = append(kept, s)
	}
	c.running = kept
	c.metrics.running = len(c.running)
	c.metrics.waiting = len(c.waiting)
	c.metrics.kvUsage = float64(c.used) / float64(max(1, c.totalBlocks))
	return cost, true
}

func dropAborted(c *core, q []*seq) []*seq {
	out := q[:0]
	for _, s := range q {
		if s.aborted {
			c.free(s)
			c.metrics.success["abort"]++
			continue
		}
		out = append(out, s)
	}
	for i := len(out); i < len(q); i++ {
		q[i] = nil
	}
	return out
}

// recordFinish adds a finished sequence's times to Truth and the histograms, the same float
// values in the same order, so a histogram's _sum equals the Truth sum exactly.
func (c *core) recordFinish(s *seq) {
	queue := s.firstScheduled - s.ready // from engine arrival, as vLLM
	prefill := s.firstToken - s.firstScheduled
	decode := s.finished - s.firstToken
	c.truth.RequestsFinished++
	c.truth.QueueSecondsSum += queue
	c.truth.PrefillSecondsSum += prefill
	c.truth.DecodeSecondsSum += decode
	c.metrics.finish(s, queue, prefill, decode)
	if c.onFinish != nil {
		c.onFinish(s)
	}
}

// cost is the step-time model (seconds, FLOP, bytes; N = GPU.Count):
//
//	T        = Σ tokens computed: a prefill chunk its c tokens, a decode 1 + SpecTokens (verification)
//	GEMM     = 2·ActiveParams·T                                     at peak(Format)·ComputeEfficiency
//	attn     = Σ_chunks a·c·(L_full·(p + c/2) + L_sliding·min(p + c/2, SlidingWindow))
//	           with a = 4·Heads·HeadDim (or 4·Hidden)                at PeakFLOPS·AttentionEfficiency
//	bytes    = weights + Σ_chunks ((p + c)·KVBytesPerToken + min(p + c, W)·SlidingKVBytesPerToken + StateBytesPerSeq)
//	weights  = BytesPerParam·((Total − ExpertParams) + ExpertParams·s·(1 − (1 − k/(E·s))^T))
//	           (E = Experts, k = ExpertsPerToken, s = ExpertSpread: the share of experts in use)
//	           (no Experts: BytesPerParam·Total·(1 − (1 − Active/Total)^T); = Active for T = 1)
//	compute  = GEMM/(N·peak(Format)·ComputeEfficiency) + attn/(N·PeakFLOPS·AttentionEfficiency)
//	memory   = weights/(N·MemBandwidth·BandwidthEfficiency) + (bytes − weights)/(N·MemBandwidth·kvEff)
//	kvEff    = min(max(KVBandwidthEfficiency, BandwidthEfficiency), B·KVBandwidthEfficiency)   (B = sequences in the step)
//	comm     = 2·Layers·(LinkLatency + 2·(N−1)/N · T·Hidden·2 B / LinkBandwidth)   (N > 1: two all-reduces per layer)
//	draft    = SpecTokens·(DraftParams·BytesPerParam/(N·MemBandwidth·BandwidthEfficiency) + DraftOverhead)   (steps with decodes)
//	duration = max(compute, memory) + comm + draft + StepOverhead + PerSeqOverhead·sequences
//	           + LayerOverhead·Layers + PrefillOverhead (if any chunk is a prefill)
//	util     = min(1, (compute + MemoryPowerWeight·memory) / duration)   (power = Idle + (Max − Idle)·util)
func (c *core) cost(sched []chunk) stepCost {
	m, g, e := c.p.Model, c.p.GPU, c.p.Engine
	var sc stepCost
	perPair := 4 * float64(m.Hidden)
	if m.Heads > 0 && m.HeadDim > 0 {
		perPair = 4 * float64(m.Heads) * float64(m.HeadDim)
	}
	full := float64(m.Layers - m.SlidingLayers - m.LinearLayers)
	slide, win := float64(m.SlidingLayers), float64(m.SlidingWindow)
	var attnFLOPs, kvBytes float64
	var decodes, computed int
	for _, ch := range sched {
		n, p := float64(ch.n), float64(ch.pos)
		sc.tokens += ch.n
		computed += ch.n
		isPrefill := ch.pos+ch.n < ch.s.numTokens || ch.n > 1 || !ch.s.hasFirstToken
		q := n // query tokens
		if !isPrefill && e.SpecTokens > 0 {
			q += float64(e.SpecTokens)
			computed += e.SpecTokens
			decodes++
		}
		attnFLOPs += perPair * q * full * (p + q/2)
		if slide > 0 {
			attnFLOPs += perPair * q * slide * math.Min(p+q/2, win)
		}
		kvBytes += (p+n)*m.KVBytesPerToken + math.Min(p+n, win)*m.SlidingKVBytesPerToken + m.StateBytesPerSeq
		if ch.pos+ch.n < ch.s.numTokens || ch.n > 1 {
			sc.prefill = true
		}
	}
	T := float64(computed)
	gemm := 2 * m.ActiveParams * T
	sc.flops = gemm + attnFLOPs
	var weights float64
	if m.Experts > 0 {
		spread := m.ExpertSpread
		if spread <= 0 || spread > 1 {
			spread = 1
		}
		eff := math.Max(float64(m.ExpertsPerToken), spread*float64(m.Experts)) // experts in use
		used := eff * (1 - math.Pow(1-float64(m.ExpertsPerToken)/eff, T))      // touched by T tokens
		weights = m.BytesPerParam * ((m.TotalParams - m.ExpertParams) + m.ExpertParams*used/float64(m.Experts))
	} else {
		frac := m.ActiveParams / m.TotalParams
		weights = m.BytesPerParam * m.TotalParams * (1 - math.Pow(1-frac, T))
	}
	sc.bytes = weights + kvBytes
	n := float64(g.Count)
	attnEff := e.AttentionEfficiency
	if attnEff <= 0 {
		attnEff = e.ComputeEfficiency
	}
	if peak := g.peak(m.Format); peak == g.PeakFLOPS && attnEff == e.ComputeEfficiency {
		sc.computeS = sc.flops / (n * g.PeakFLOPS * e.ComputeEfficiency) // one rate for all FLOPs
	} else {
		sc.computeS = gemm/(n*peak*e.ComputeEfficiency) + attnFLOPs/(n*g.PeakFLOPS*attnEff)
	}
	bw := n * g.MemBandwidth * e.BandwidthEfficiency
	if kvEff := e.KVBandwidthEfficiency; kvEff > 0 && kvEff != e.BandwidthEfficiency {
		// One sequence's attention and state kernels reach kvEff; B sequences give the
		// kernels B times the parallel work, up to the best streaming rate of the engine.
		kvEff = math.Min(math.Max(kvEff, e.BandwidthEfficiency), kvEff*float64(len(sched)))
		sc.memoryS = weights/bw + kvBytes/(n*g.MemBandwidth*kvEff)
	} else {
		sc.memoryS = sc.bytes / bw
	}
	sc.dur = math.Max(sc.computeS, sc.memoryS) + e.StepOverhead.Seconds() +
		e.PerSeqOverhead.Seconds()*float64(len(sched)) + e.LayerOverhead.Seconds()*float64(m.Layers)
	if g.Count > 1 {
		perReduce := g.LinkLatency.Seconds() + 2*(n-1)/n*T*float64(m.Hidden)*2/g.LinkBandwidth
		sc.dur += 2 * float64(m.Layers) * perReduce
	}
	if decodes > 0 && e.SpecTokens > 0 {
		sc.dur += float64(e.SpecTokens) * (m.DraftParams*m.BytesPerParam/bw + e.DraftOverhead.Seconds())
	}
	if sc.prefill {
		sc.dur += e.PrefillOverhead.Seconds()
	}
	if sc.dur > 0 {
		sc.util = math.Min(1, (sc.computeS+e.MemoryPowerWeight*sc.memoryS)/sc.dur)
	}
	return sc
}

// gpuState smooths utilisation and power the way a sampling exporter sees them: exponential
// moving averages with time constant gpuTau.
type gpuState struct {
	idleW, maxW float64
	util        float64 // EWMA of busy utilisation, 0..1
	watts       float64 // EWMA of power, W
	init        bool
}

const gpuTau = 0.5 // s

func (g *gpuState) power(util float64) float64 { return g.idleW + (g.maxW-g.idleW)*util }

// advance folds dt seconds at utilisation util into the averages.
func (g *gpuState) advance(dt, util float64) {
	if !g.init {
		g.init, g.watts = true, g.idleW
	}
	a := 1 - math.Exp(-dt/gpuTau)
	g.util += (util - g.util) * a
	g.watts += (g.power(util) - g.watts) * a
}
