package stats

import (
	"math"

	"github.com/servebench/servebench"
)

// LateTolerance is how much later than scheduled (seconds) an open-loop request may be sent
// before it counts as a late send: 10 ms.
const LateTolerance = 0.010

// LateSend reports whether an open-loop request was sent more than LateTolerance after its
// schedule: StartOffsetSeconds − ScheduledOffsetSeconds > 10 ms, both offsets on the run's
// monotonic clock (s). A request without a schedule (closed loop) or never sent is not late.
func LateSend(r *servebench.Record) bool {
	return r.ScheduledOffsetSeconds > 0 && r.StartOffsetSeconds > 0 && r.StartOffsetSeconds-r.ScheduledOffsetSeconds > LateTolerance
}

// PrefillSpeedTPS is the server-side prefill speed of a cell, per user (tokens/s):
//
//	prefill_speed_tps = mean input tokens / mean prefill seconds
//
// over the requests the prefill time covers; 0 when the prefill time is not positive.
func PrefillSpeedTPS(inputTokensMean, prefillSecondsMean float64) float64 {
	if prefillSecondsMean <= 0 {
		return 0
	}
	return inputTokensMean / prefillSecondsMean
}

// Window is a cell's measured window in seconds from the run origin, on the same monotonic
// offsets as Record.StartOffsetSeconds and Record.EndOffsetSeconds. Warm-up before Start and
// drain after End are outside it.
type Window struct{ Start, End float64 }

// Seconds is the window's length, End − Start (s).
func (w Window) Seconds() float64 { return w.End - w.Start }

// Contains reports whether offset t (s) lies in [Start, End].
func (w Window) Contains(t float64) bool { return t >= w.Start && t <= w.End }

// Cell computes one cell from its records (all belonging to key; Group splits a run's records),
// after Sanitize: a value the server claimed that cannot be true never enters a statistic.
// Warm-up records are counted in WarmupRequests and otherwise ignored; "measured" below means
// the non-warm-up records, "successful" the measured ones with an empty error class.
//
// Counts:
//
//	requests_total        = measured records
//	requests_succeeded    = successful records;  requests_failed = total − succeeded
//	errors_by_class       = measured failures per error class (nil when none)
//	success_rate          = requests_succeeded / requests_total  (0 when no measured records)
//	length_mismatches     = successful records with Record.LengthMismatch
//	retries               = Σ Record.Retries over measured records
//	dropped_sends         = measured records of class "canceled" that were never sent
//	                        (StartUnixNano = 0 and StartOffsetSeconds = 0)
//	late_sends            = other measured records with ScheduledOffsetSeconds > 0 and
//	                        StartOffsetSeconds − ScheduledOffsetSeconds > LateTolerance (10 ms)
//
// Tokens, over successful records:
//
//	input_tokens_mean, output_tokens_mean   (tokens)
//	reasoning_tokens_mean = mean Record.ReasoningTokens                     (tokens)
//	reasoning_share       = Σ reasoning_tokens / Σ output_tokens            (fraction of the
//	                        output spent reasoning before the answer; 0 when no output)
//	input_tokens_max_deviation = max |input_tokens − input_tokens_requested|, over records with a
//	                             requested count (tokens)
//	tokens_per_chunk = Σ output_tokens / Σ chunks, over records with chunks > 0 (tokens/chunk)
//	effective_prefill_speed_tps = mean(input_tokens / ttft_seconds) over records with both
//	                             positive (tokens/s; includes queueing, unlike server prefill)
//
// Summaries (Summarize; s or tokens/s as named):
//
//	ttft_seconds, e2e_latency_seconds       over successful records
//	first_content_seconds                   over successful records with a content delta
//	                                        (FirstContentSeconds > 0)
//	itl_seconds, generation_speed_tps       over servebench.Measurable records
//	chunk_gap_seconds                       all ChunkGapsSeconds of successful records, pooled
//
// Throughput over the window w counts the tokens each successful request (warm-up included)
// produced inside [Start, End]: its first token at t₁ = start + ttft, the remaining
// output_tokens − 1 spread evenly over its decode interval [t₁, t₁ + decode_seconds], and its
// input tokens at t₁ (when prefill completed). A request straddling an edge of the window
// counts in proportion, so a short window is not dominated by which requests happened to end
// inside it:
//
//	tokens_in_window(r) = 1[t₁ ∈ w] + (output_tokens − 1) · |[t₁, t₁+decode] ∩ w| / decode
//	                      (all output tokens at t₁ when decode = 0)
//	system_output_throughput_tps = Σ tokens_in_window / (End − Start)                 (tokens/s)
//	total_throughput_tps         = Σ (tokens_in_window + input_tokens·1[t₁ ∈ w]) / (End − Start)
//	request_throughput_rps       = measured successes with EndOffsetSeconds ∈ w / (End − Start)
//
// When w is empty (End ≤ Start), the window is taken from the measured records themselves:
// earliest StartOffsetSeconds to latest EndOffsetSeconds (never-sent records aside). Throughputs are 0 when the window
// still has no length. Server-side and GPU fields (queue wait, prefill, power, energy, cache)
// are left nil and Unavailable nil: the caller attributes them.
func Cell(key servebench.CellKey, recs []servebench.Record, w Window) servebench.CellResult {
	recs = Sanitize(recs)
	c := servebench.CellResult{CellKey: key}
	var (
		ttft, first, e2e, itl, speed, gaps []float64
		inSum, outSum, prefillSum, reaSum  float64
		prefillN                           int
		tokSum, chunkSum                   int
		lo, hi                             float64
		haveSpan                           bool
	)
	for i := range recs {
		r := &recs[i]
		if r.Warmup {
			c.WarmupRequests++
			continue
		}
		c.RequestsTotal++
		c.Retries += r.Retries
		neverSent := r.ErrorClass == servebench.ErrCanceled && r.StartUnixNano == 0 && r.StartOffsetSeconds == 0
		switch {
		case neverSent:
		case !haveSpan:
			lo, hi, haveSpan = r.StartOffsetSeconds, r.EndOffsetSeconds, true
		default:
			lo, hi = min(lo, r.StartOffsetSeconds), max(hi, r.EndOffsetSeconds)
		}
		switch {
		case neverSent:
			c.DroppedSends++
		case LateSend(r):
			c.LateSends++
		}
		if !r.OK() {
			if c.ErrorsByClass == nil {
				c.ErrorsByClass = make(map[servebench.ErrorClass]int)
			}
			c.ErrorsByClass[r.ErrorClass]++
			if r.ErrorClass == servebench.ErrHTTPStatus && r.HTTPStatus > 0 {
				if c.ErrorsByHTTPStatus == nil {
					c.ErrorsByHTTPStatus = make(map[int]int)
				}
				c.ErrorsByHTTPStatus[r.HTTPStatus]++
			}
			if ra := r.RetryAfterSeconds; ra != nil && (c.RetryAfterMaxSeconds == nil || *ra > *c.RetryAfterMaxSeconds) {
				c.RetryAfterMaxSeconds = servebench.Float(*ra)
			}
			continue
		}
		c.RequestsSucceeded++
		if r.LengthMismatch {
			c.LengthMismatches++
		}
		inSum += float64(r.InputTokens)
		outSum += float64(r.OutputTokens)
		reaSum += float64(r.ReasoningTokens)
		if r.InputTokensRequested > 0 {
			c.InputTokensMaxDeviation = max(c.InputTokensMaxDeviation, abs(r.InputTokens-r.InputTokensRequested))
		}
		if r.Chunks > 0 {
			tokSum += r.OutputTokens
			chunkSum += r.Chunks
		}
		if r.InputTokens > 0 && r.TTFTSeconds > 0 {
			prefillSum += float64(r.InputTokens) / r.TTFTSeconds
			prefillN++
		}
		ttft = append(ttft, r.TTFTSeconds)
		e2e = append(e2e, r.E2ELatencySeconds)
		if r.FirstContentSeconds > 0 {
			first = append(first, r.FirstContentSeconds)
		}
		if servebench.Measurable(r) {
			itl = append(itl, r.ITLSeconds)
			speed = append(speed, r.GenerationSpeedTPS)
		}
		gaps = append(gaps, r.ChunkGapsSeconds...)
	}
	c.RequestsFailed = c.RequestsTotal - c.RequestsSucceeded
	if c.RequestsTotal > 0 {
		c.SuccessRate = float64(c.RequestsSucceeded) / float64(c.RequestsTotal)
	}
	if c.RequestsSucceeded > 0 {
		c.InputTokensMean = inSum / float64(c.RequestsSucceeded)
		c.OutputTokensMean = outSum / float64(c.RequestsSucceeded)
		c.ReasoningTokensMean = reaSum / float64(c.RequestsSucceeded)
	}
	if outSum > 0 {
		c.ReasoningShare = reaSum / outSum
	}
	if chunkSum > 0 {
		c.TokensPerChunk = float64(tokSum) / float64(chunkSum)
	}
	if prefillN > 0 {
		c.EffectivePrefillSpeedTPS = prefillSum / float64(prefillN)
	}
	c.TTFTSeconds = Summarize(ttft)
	c.FirstContentSeconds = Summarize(first)
	c.E2ELatencySeconds = Summarize(e2e)
	c.ITLSeconds = Summarize(itl)
	c.GenerationSpeedTPS = Summarize(speed)
	c.ChunkGapSeconds = Summarize(gaps)

	if w.End <= w.Start && haveSpan {
		w = Window{Start: lo, End: hi}
	}
	c.WindowStartSeconds = w.Start
	if secs := w.Seconds(); secs > 0 {
		c.WindowSeconds = secs
		var out, total float64
		var done int
		for i := range recs {
			r := &recs[i]
			if !r.OK() {
				continue
			}
			o, in := tokensInWindow(r, w)
			out += o
			total += o + in
			if !r.Warmup && w.Contains(r.EndOffsetSeconds) {
				done++
			}
		}
		c.SystemOutputThroughputTPS = out / secs
		c.TotalThroughputTPS = total / secs
		c.RequestThroughputRPS = float64(done) / secs
		c.SystemOutputThroughputCI95, c.TotalThroughputCI95 = throughputCI95(recs, w, c.E2ELatencySeconds.Mean)
	}
	return c
}

// MaxBatches caps the number of batches of ThroughputBatches: 10 (with 20 the interval covered
// the truth only 89% of the time in TestThroughputIntervalCovers).
const MaxBatches = 10

// BatchLifetimes is the fewest mean end-to-end latencies a batch of ThroughputBatches lasts.
const BatchLifetimes = 2

// ThroughputBatches is how many equal batches the batch-means interval splits a window of
// windowSeconds into, for a cell whose mean end-to-end latency is e2eSeconds:
//
//	batches = min(MaxBatches, ⌊window / (2 × mean e2e)⌋)
//
// so that every batch lasts at least two request lifetimes and consecutive batches share few
// requests (batch means are then close to independent; with one lifetime per batch the interval
// covered the truth only 86% of the time in TestThroughputIntervalCovers). Fewer than 2
// batches give no interval.
func ThroughputBatches(windowSeconds, e2eSeconds float64) int {
	if windowSeconds <= 0 {
		return 0
	}
	if e2eSeconds <= 0 {
		return MaxBatches
	}
	return int(min(MaxBatches, math.Floor(windowSeconds/(BatchLifetimes*e2eSeconds)+1e-9)))
}

// throughputCI95 is the 95% interval of the output and total throughput over w by batch means:
// w is cut into k = ThroughputBatches equal batches, each batch's throughput is computed with
// the window rule of Cell (tokens inside the batch / batch length, requests straddling an edge
// in proportion), and the interval is Student t over the k batch values:
//
//	mean(batch) ± t(0.975, k − 1) · sd(batch) / √k      (tokens/s)
//
// The mean of equal batches equals the window's throughput, so the interval is centred on the
// reported value; a lower end below 0 (few batches) is cut at 0, no throughput being negative.
// Nil when k < 2 (the window is shorter than two request lifetimes).
func throughputCI95(recs []servebench.Record, w Window, e2e float64) (out, total *servebench.Interval) {
	k := ThroughputBatches(w.Seconds(), e2e)
	if k < 2 {
		return nil, nil
	}
	bo, bt := batchThroughputs(recs, w, k)
	io, _ := MeanCI95(bo)
	it, _ := MeanCI95(bt)
	io.Low, it.Low = max(io.Low, 0), max(it.Low, 0)
	return &io, &it
}

// BatchOutputThroughputs is the output throughput (tokens/s) of each of k equal batches of w,
// the values the batch-means interval of a cell's throughput is computed from (throughputCI95).
func BatchOutputThroughputs(recs []servebench.Record, w Window, k int) []float64 {
	if k < 1 || w.Seconds() <= 0 {
		return nil
	}
	bo, _ := batchThroughputs(recs, w, k)
	return bo
}

// batchThroughputs is the output and total throughput of each of k equal batches of w.
func batchThroughputs(recs []servebench.Record, w Window, k int) (bo, bt []float64) {
	bo = make([]float64, k)
	bt = make([]float64, k)
	step := w.Seconds() / float64(k)
	for b := range k {
		bw := Window{Start: w.Start + float64(b)*step, End: w.Start + float64(b+1)*step}
		if b == k-1 {
			bw.End = w.End
		}
		for i := range recs {
			r := &recs[i]
			if !r.OK() {
				continue
			}
			o, in := tokensInBatch(r, bw, b == 0)
			bo[b] += o
			bt[b] += o + in
		}
		bo[b] /= bw.Seconds()
		bt[b] /= bw.Seconds()
	}
	return bo, bt
}

// tokensInBatch is tokensInWindow for one batch of a window: a first token exactly on the
// boundary between two batches counts in the earlier one only (first is set for the first
// batch, whose start boundary is the window's), so the batches add up to the window.
func tokensInBatch(r *servebench.Record, b Window, first bool) (out, in float64) {
	t1 := r.StartOffsetSeconds + r.TTFTSeconds
	if !first && t1 == b.Start {
		b.Start = math.Nextafter(b.Start, math.Inf(1))
	}
	return tokensInWindow(r, b)
}

// tokensInWindow returns the output and input tokens r produced inside w (see Cell).
func tokensInWindow(r *servebench.Record, w Window) (out, in float64) {
	if r.OutputTokens <= 0 {
		return 0, 0
	}
	t1 := r.StartOffsetSeconds + r.TTFTSeconds
	if w.Contains(t1) {
		in = float64(r.InputTokens)
		out = 1
	}
	rest := float64(r.OutputTokens - 1)
	if rest <= 0 {
		return out, in
	}
	if r.DecodeSeconds <= 0 {
		if w.Contains(t1) {
			out += rest
		}
		return out, in
	}
	t2 := t1 + r.DecodeSeconds
	overlap := min(t2, w.End) - max(t1, w.Start)
	if overlap > 0 {
		out += rest * overlap / r.DecodeSeconds
	}
	return out, in
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
