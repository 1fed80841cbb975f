package servebench

import "time"

// Timing holds the raw clock readings of one request as offsets from its start (just before
// the request was written). Each reading is taken when the event's bytes were read from the
// socket, before any JSON parsing.
type Timing struct {
	// FirstToken is the first event carrying a non-empty content, reasoning or tool-call delta.
	FirstToken time.Duration
	// FirstContent is the first event carrying a non-empty content delta (after any reasoning).
	FirstContent time.Duration
	// LastToken is the last event carrying a token delta.
	LastToken time.Duration
	// End is the last byte of the response.
	End time.Duration
}

// Derive fills the per-request derived values of rec from t and rec.OutputTokens. These are the
// only definitions of these values in servebench:
//
//	ttft_seconds          = FirstToken                               (s)
//	e2e_latency_seconds   = End                                      (s)
//	decode_seconds        = LastToken − FirstToken                   (s)
//	itl_seconds           = decode_seconds / (output_tokens − 1)     (s per token; vLLM's TPOT)
//	generation_speed_tps  = (output_tokens − 1) / decode_seconds     (tokens/s, per user)
//
// ITL and generation speed need at least two output tokens and a positive decode time; otherwise
// they are left at zero and excluded from statistics (see Measurable). Token counts come from the
// server's usage, so multi-token chunks (speculative decoding) are counted correctly.
//
// A response is not streamed (Record.NotStreamed, see NotStreamed) when its tokens arrived
// together: a buffering proxy delivered the whole answer in one write. Its ITL and generation
// speed are unknown, left at zero and excluded from statistics like those of a one-token answer.
func Derive(rec *Record, t Timing) {
	rec.TTFTSeconds = t.FirstToken.Seconds()
	rec.FirstContentSeconds = t.FirstContent.Seconds()
	rec.E2ELatencySeconds = t.End.Seconds()
	rec.DecodeSeconds = 0
	rec.ITLSeconds = 0
	rec.GenerationSpeedTPS = 0
	if t.LastToken > t.FirstToken {
		rec.DecodeSeconds = (t.LastToken - t.FirstToken).Seconds()
	}
	rec.NotStreamed = NotStreamed(rec)
	if rec.OutputTokens > 1 && rec.DecodeSeconds > 0 && !rec.NotStreamed {
		n := float64(rec.OutputTokens - 1)
		rec.ITLSeconds = rec.DecodeSeconds / n
		rec.GenerationSpeedTPS = n / rec.DecodeSeconds
	}
	if rec.Chunks > 0 {
		rec.TokensPerChunk = float64(rec.OutputTokens) / float64(rec.Chunks)
	}
}

// MeetsSLO reports whether rec met every objective set in slo (nil fields are not checked):
//
//	succeeded, and
//	ttft_seconds          ≤ TTFTSecondsMax
//	first_content_seconds ≤ FirstContentSecondsMax   (ttft_seconds when no content came)
//	e2e_latency_seconds   ≤ E2ELatencySecondsMax
//	itl_seconds           ≤ ITLSecondsMax            } only where defined (Measurable): a
//	generation_speed_tps  ≥ GenerationSpeedTPSMin    } one-token answer has no ITL to miss
//
// A value exactly at its objective meets it.
func MeetsSLO(rec *Record, slo Thresholds) bool {
	if !rec.OK() {
		return false
	}
	le := func(v float64, limit *float64) bool { return limit == nil || v <= *limit }
	first := rec.FirstContentSeconds
	if first == 0 {
		first = rec.TTFTSeconds
	}
	if !le(rec.TTFTSeconds, slo.TTFTSecondsMax) || !le(first, slo.FirstContentSecondsMax) || !le(rec.E2ELatencySeconds, slo.E2ELatencySecondsMax) {
		return false
	}
	if Measurable(rec) {
		if !le(rec.ITLSeconds, slo.ITLSecondsMax) {
			return false
		}
		if slo.GenerationSpeedTPSMin != nil && rec.GenerationSpeedTPS < *slo.GenerationSpeedTPSMin {
			return false
		}
	}
	return true
}

// NotStreamedGapSeconds is the mean gap between token events below which a response was not
// streamed (see NotStreamed): 0.1 ms.
const NotStreamedGapSeconds = 100e-6

// NotStreamed reports whether rec's tokens arrived together instead of streamed:
//
//	output_tokens ≥ 2 and chunks = 1   (every token in one event), or
//	chunks ≥ 2 and decode_seconds < NotStreamedGapSeconds × (chunks − 1)
//
// (a mean gap between token events under 0.1 ms, faster than any engine's decode step). A proxy
// that flushes a held answer in bursts spaced like decode steps cannot be told from a fast
// server this way.
func NotStreamed(rec *Record) bool {
	if rec.Chunks == 1 {
		return rec.OutputTokens >= 2
	}
	return rec.Chunks >= 2 && rec.DecodeSeconds < NotStreamedGapSeconds*float64(rec.Chunks-1)
}

// Measurable reports whether rec's ITL and generation speed are defined (a successful, streamed
// request with at least two output tokens and a positive decode time).
func Measurable(rec *Record) bool {
	return rec.OK() && rec.OutputTokens > 1 && rec.DecodeSeconds > 0 && !rec.NotStreamed
}
