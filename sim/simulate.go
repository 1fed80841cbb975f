package sim

import (
	"errors"
	"fmt"
)

// Workload is a load for Simulate, run on virtual time (no sleeping, no wall clock).
type Workload struct {
	// ContextTokens is each prompt's length; OutputTokens each output's (ignore_eos).
	ContextTokens, OutputTokens int
	// Concurrency is the number of requests in flight.
	Concurrency int
	// Requests is the number of measured completions (default max(10, 3·Concurrency)); the
	// first Concurrency completions before them are a warm-up and are not measured.
	Requests int
	// Dedicated releases Concurrency requests together and the next burst only when all have
	// finished; otherwise the load is sustained (a finished request is replaced at once).
	Dedicated bool
	// ColdStart measures from the first request: the first Concurrency requests arrive
	// together at time 0 and count, as in a benchmark that starts N clients at once and
	// averages every request (vllm bench serve --max-concurrency N; the reference reports).
	// Otherwise the first Concurrency completions are a warm-up.
	ColdStart bool
	// SharedPrefixTokens makes every prompt start with the same tokens (prefix-cache hits).
	SharedPrefixTokens int
}

// Estimate is what Simulate measured: means over measured requests, on the engine clock.
type Estimate struct {
	Requests int
	// Per-request means (s): TTFT = first_token − arrival, queue = first_scheduled − engine
	// arrival (arrival + RequestOverhead), prefill, decode, e2e.
	TTFTSeconds, QueueSeconds, PrefillSeconds, DecodeSeconds, E2ESeconds float64
	// GenerationSpeedTPS is the mean of (output − 1) / decode per request (tok/s per user).
	GenerationSpeedTPS float64
	// ITLSeconds is the mean per request of decode / (output − 1): the time per generated token
	// (servebench's ITL, vLLM's TPOT).
	ITLSeconds float64
	// ChunkGapSeconds is the mean per request of decode / (chunks − 1): the gap between stream
	// events, each carrying several tokens with speculative decoding (what vllm bench serve
	// reports as its ITL; servebench calls it the chunk gap).
	ChunkGapSeconds float64
	// PrefillSpeedTPS is the mean of prompt / prefill per request (tok/s per user).
	PrefillSpeedTPS float64
	// SystemOutputTPS = measured output tokens / WindowSeconds.
	SystemOutputTPS float64
	// WindowSeconds runs from the end of the warm-up to the last completion.
	WindowSeconds float64
	// EnergyJoules over the window and MeanPowerWatts = EnergyJoules / WindowSeconds (all GPUs).
	EnergyJoules, MeanPowerWatts float64
	// Preemptions over the whole simulation; PeakWaiting the longest waiting queue seen.
	Preemptions, PeakWaiting int
	// PrefixCacheHitRate = hit tokens / queried tokens.
	PrefixCacheHitRate float64
}

// Simulate runs w against profile p on virtual time and returns the measured means. It is the
// same engine the Server runs, without HTTP and without waiting: a what-if tool and the basis
// of the physics tests.
func Simulate(p Profile, w Workload) (Estimate, error) {
	if err := p.Validate(); err != nil {
		return Estimate{}, err
	}
	if w.Concurrency < 1 || w.ContextTokens < 1 || w.OutputTokens < 1 {
		return Estimate{}, errors.New("sim: Simulate needs Concurrency, ContextTokens and OutputTokens >= 1")
	}
	maxLen := min(p.Engine.MaxModelLen, p.KVCapacityTokens())
	if w.ContextTokens+w.OutputTokens > maxLen {
		return Estimate{}, fmt.Errorf("sim: %d context + %d output tokens exceed the maximum model length %d of profile %q",
			w.ContextTokens, w.OutputTokens, maxLen, p.Name)
	}
	measured := w.Requests
	if measured <= 0 {
		measured = max(10, 3*w.Concurrency)
	}
	warm := w.Concurrency
	if w.ColdStart {
		warm = 0
	}
	total := warm + measured

	c := newCore(p, p.Model.Name)
	bs := p.Engine.BlockSize
	shared := min(w.SharedPrefixTokens, w.ContextTokens) / bs
	var issued, inFlight, done int
	perSeq := w.ContextTokens + w.OutputTokens + bs*(2+p.Engine.SpecTokens)
	mayPreempt := w.Concurrency*perSeq > p.KVCapacityTokens()
	newSeq := func() {
		issued++
		inFlight++
		q := &seq{id: uint64(issued), promptTokens: w.ContextTokens, maxTokens: w.OutputTokens, target: w.OutputTokens}
		// Unique prompt blocks are keyed only when preemption is possible (a preempted request
		// re-reads its own cached blocks); otherwise no other request could hit them, and
		// keying them would only cost a map entry per block.
		nb := shared
		if mayPreempt {
			nb = w.ContextTokens / bs
		}
		q.blockHashes = make([]uint64, nb)
		for j := range nb {
			if j < shared {
				q.blockHashes[j] = mix64(0x5eed ^ uint64(j)<<1)
			} else {
				q.blockHashes[j] = mix64(uint64(issued)<<32 ^ uint64(j))
			}
		}
		q.arrival = c.now
		c.add(q)
	}
	var e Estimate
	var winStart, energyStart float64
	var outTokens int
	c.onFinish = func(q *seq) {
		done++
		inFlight--
		if done == warm {
			winStart, energyStart = q.finished, c.truth.EnergyJoules
		}
		if done > warm { // with a cold start the window and energy start at 0
			e.Requests++
			e.TTFTSeconds += q.firstToken - q.arrival
			e.QueueSeconds += q.firstScheduled - q.ready
			e.PrefillSeconds += q.firstToken - q.firstScheduled
			e.DecodeSeconds += q.finished - q.firstToken
			e.E2ESeconds += q.finished - q.arrival
			if q.finished > q.firstToken && q.generated > 1 {
				e.GenerationSpeedTPS += float64(q.generated-1) / (q.finished - q.firstToken)
			}
			if q.finished > q.firstToken && q.generated > 1 {
				e.ITLSeconds += (q.finished - q.firstToken) / float64(q.generated-1)
			}
			if q.emits > 1 {
				e.ChunkGapSeconds += (q.finished - q.firstToken) / float64(q.emits-1)
			}
			if q.firstToken > q.firstScheduled {
				e.PrefillSpeedTPS += float64(q.promptTokens) / (q.firstToken - q.firstScheduled)
			}
			outTokens += q.generated
			e.WindowSeconds = q.finished - winStart
		}
		if w.Dedicated {
			if inFlight == 0 {
				for i := 0; i < w.Concurrency && issued < total; i++ {
					newSeq()
				}
			}
		} else if issued < total {
			newSeq()
		}
	}
	for i := 0; i < w.Concurrency; i++ {
		newSeq()
	}
	for done < total {
		e.PeakWaiting = max(e.PeakWaiting, len(c.waiting))
		if _, ok := c.step(); !ok {
			return Estimate{}, errors.New("sim: engine made no progress (a prompt larger than the KV cache?)")
		}
	}
	n := float64(max(1, e.Requests))
	e.TTFTSeconds /= n
	e.QueueSeconds /= n
	e.PrefillSeconds /= n
	e.DecodeSeconds /= n
	e.E2ESeconds /= n
	e.GenerationSpeedTPS /= n
	e.ITLSeconds /= n
	e.ChunkGapSeconds /= n
	e.PrefillSpeedTPS /= n
	if e.WindowSeconds > 0 {
		e.SystemOutputTPS = float64(outTokens) / e.WindowSeconds
		e.EnergyJoules = c.truth.EnergyJoules - energyStart
		e.MeanPowerWatts = e.EnergyJoules / e.WindowSeconds
	}
	e.Preemptions = c.truth.Preemptions
	if c.truth.PrefixCacheQueries > 0 {
		e.PrefixCacheHitRate = float64(c.truth.PrefixCacheHits) / float64(c.truth.PrefixCacheQueries)
	}
	return e, nil
}
