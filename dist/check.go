package dist

import (
	"fmt"
	"math"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
)

// What a worker's messages about a cell must respect (the checks below). A worker that breaks
// one is dropped: see cellRun.reject.
const (
	// MaxStreamTPS is the fastest one answer may arrive whole, output_tokens /
	// e2e_latency_seconds (tokens/s): about ten times the fastest single streams served today.
	// (Not per decode second: a proxy that buffers the stream delivers many tokens at once.)
	MaxStreamTPS = 20000
	// slackSeconds is how far (s) beyond the measured clock uncertainty a worker's time may
	// fall outside the span it must lie in: message delays and the clock drift within a cell.
	slackSeconds = 0.25
	// tolSeconds is the rounding allowed between two times a record derives from one clock (s).
	tolSeconds = 1e-3
)

// maxOutputTokens is the most output tokens an answer asked for requested may report:
// 2 × requested + 16. A server that honours max_tokens never exceeds requested; one that
// ignores it is flagged by a local run (length_mismatch), and a worker's record beyond twice
// that is no server's answer.
func maxOutputTokens(requested int) int { return 2*requested + 16 }

// seqIndex is j for a sequence number the order hands out (SeqBase + Slot + Stride × j), or
// false when seq is not one of them.
func (o order) seqIndex(seq int64) (int64, bool) {
	if o.Items != nil {
		for j, it := range o.Items {
			if seq == o.SeqBase+int64(it) {
				return int64(j), true
			}
		}
		return 0, false
	}
	d := seq - o.SeqBase - int64(o.Slot)
	stride := int64(max(o.Stride, 1))
	if d < 0 || d%stride != 0 {
		return 0, false
	}
	return d / stride, true
}

// requestLimit is how many requests the order allows (its prompts, its schedule, its bursts'
// slots), −1 when the cell's own rule ends it (sustained).
func (o order) requestLimit(bursts int) int {
	switch o.Key.LoadMode {
	case servebench.ModeSustained, servebench.ModeUsers, "":
		return -1
	case servebench.ModeDedicated:
		return o.Share * (bursts + 1)
	}
	return max(o.Requests, len(o.Offsets))
}

// inFlightLimit is how many of the order's requests may be in flight at once, −1 for no cap
// (an open loop).
func (o order) inFlightLimit() int {
	if o.Key.LoadMode == servebench.ModeRate {
		return -1
	}
	return o.Share
}

// span is the interval [lo, hi] (s, the coordinator's axis) a worker's time must lie in: from
// the cell's start to now, widened by the clock's uncertainty and slackSeconds.
type span struct{ lo, hi float64 }

func (s span) has(t float64) bool { return t >= s.lo && t <= s.hi }

// checkStart checks a "started": its seq is one the order hands this worker, not used before,
// within the order's count and in-flight cap, and its time within the span.
func checkStart(o order, bursts int, p *part, m msg, at float64, sp span) string {
	j, ok := o.seqIndex(m.Seq)
	if !ok {
		return fmt.Sprintf("seq %d is not one of the sequence numbers handed to it", m.Seq)
	}
	if lim := o.requestLimit(bursts); lim >= 0 && j >= int64(lim) {
		return fmt.Sprintf("seq %d is its request %d, but its order allows %d", m.Seq, j+1, lim)
	}
	if p.seen[m.Seq] {
		return fmt.Sprintf("seq %d was started twice", m.Seq)
	}
	if lim := o.inFlightLimit(); lim >= 0 && len(p.inflight) >= lim {
		return fmt.Sprintf("seq %d would be its request %d in flight, but its share is %d", m.Seq, len(p.inflight)+1, lim)
	}
	if !sp.has(at) {
		return fmt.Sprintf("seq %d started at %.3f s, outside the cell's span %.3f–%.3f s", m.Seq, at, sp.lo, sp.hi)
	}
	return ""
}

// checkRecord checks a record, already moved onto the coordinator's clock, against its order
// and its "started" (st):
//
//   - it names the connection's worker and the current cell; its seq is in flight, with the
//     same warm-up flag;
//   - start ≥ its started time and within the span, start ≤ end ≤ the span's end, a scheduled
//     time within the span;
//   - times and counts are finite and non-negative; ttft, first content and decode_seconds ≤
//     e2e ≤ end − start; ttft + decode_seconds ≤ e2e; the chunk gaps number fewer than the
//     chunks and sum to at most e2e;
//   - it asked for the cell's lengths (a cell whose prompts have their own, cells.SourceOf: an
//     answer of at least 1 token); reasoning ≤ output tokens ≤ maxOutputTokens(asked);
//     cached ≤ input tokens; at most one retry;
//   - a measurable answer's ITL and speed are Derive's of its tokens and decode time;
//   - output_tokens / e2e at most MaxStreamTPS.
func checkRecord(key servebench.CellKey, name string, rec *servebench.Record, st started, sp span) string {
	got, want := rec.CellKey, key
	got.OutputTokens, want.OutputTokens = 0, 0 // not on the wire: Record.OutputTokens shadows it
	if key.LoadMode == servebench.ModeUsers {
		got.Turn = 0 // a user's request names its turn's depth
	}
	// Synthetic prompts ask for the cell's lengths; a dataset's, a trace's, a conversation's and
	// a user's ask for their own (an answer's length at least 1 token either way).
	asked := rec.OutputTokensRequested
	ownLengths := cells.SourceOf(key) != cells.Synthetic
	switch {
	case rec.Worker != name:
		return fmt.Sprintf("seq %d names worker %q, not the connection's %q", rec.Seq, servebench.TerminalText(rec.Worker, 40, false), servebench.TerminalText(name, 40, false))
	case got != want:
		return fmt.Sprintf("seq %d names cell %s, not the current %s", rec.Seq, servebench.TerminalText(got.ID(), 80, false), want.ID())
	case rec.Warmup != st.warm:
		return fmt.Sprintf("seq %d changed its warm-up flag", rec.Seq)
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"start", rec.StartOffsetSeconds}, {"end", rec.EndOffsetSeconds}, {"scheduled", rec.ScheduledOffsetSeconds},
		{"ttft", rec.TTFTSeconds}, {"first content", rec.FirstContentSeconds}, {"itl", rec.ITLSeconds}, {"e2e", rec.E2ELatencySeconds},
		{"decode", rec.DecodeSeconds}, {"speed", rec.GenerationSpeedTPS}, {"tokens per chunk", rec.TokensPerChunk}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || (v.v < 0 && v.name != "start" && v.name != "end" && v.name != "scheduled") {
			return fmt.Sprintf("seq %d has %s %g", rec.Seq, v.name, v.v)
		}
	}
	switch {
	case rec.StartOffsetSeconds < st.at-tolSeconds || !sp.has(rec.StartOffsetSeconds):
		return fmt.Sprintf("seq %d starts at %.3f s, outside its send %.3f s – %.3f s", rec.Seq, rec.StartOffsetSeconds, st.at, sp.hi)
	case rec.EndOffsetSeconds < rec.StartOffsetSeconds || rec.EndOffsetSeconds > sp.hi:
		return fmt.Sprintf("seq %d ends at %.3f s, outside %.3f–%.3f s", rec.Seq, rec.EndOffsetSeconds, rec.StartOffsetSeconds, sp.hi)
	case rec.ScheduledOffsetSeconds != 0 && !sp.has(rec.ScheduledOffsetSeconds):
		return fmt.Sprintf("seq %d was scheduled at %.3f s, outside the cell's span", rec.Seq, rec.ScheduledOffsetSeconds)
	}
	e2e := rec.E2ELatencySeconds
	switch {
	case e2e > rec.EndOffsetSeconds-rec.StartOffsetSeconds+tolSeconds:
		return fmt.Sprintf("seq %d has e2e %.6f s, longer than its end − start %.6f s", rec.Seq, e2e, rec.EndOffsetSeconds-rec.StartOffsetSeconds)
	case rec.TTFTSeconds > e2e+tolSeconds || rec.FirstContentSeconds > e2e+tolSeconds || rec.DecodeSeconds > e2e+tolSeconds:
		return fmt.Sprintf("seq %d has ttft %.6f s, first content %.6f s or decode %.6f s beyond its e2e %.6f s", rec.Seq, rec.TTFTSeconds, rec.FirstContentSeconds, rec.DecodeSeconds, e2e)
	case rec.TTFTSeconds+rec.DecodeSeconds > e2e+tolSeconds:
		return fmt.Sprintf("seq %d has ttft + decode %.6f s beyond its e2e %.6f s", rec.Seq, rec.TTFTSeconds+rec.DecodeSeconds, e2e)
	}
	gaps := 0.0
	for _, g := range rec.ChunkGapsSeconds {
		if math.IsNaN(g) || g < 0 {
			return fmt.Sprintf("seq %d has a chunk gap of %g s", rec.Seq, g)
		}
		gaps += g
	}
	if gaps > e2e+tolSeconds || (len(rec.ChunkGapsSeconds) > 0 && len(rec.ChunkGapsSeconds) >= rec.Chunks) {
		return fmt.Sprintf("seq %d has %d chunk gaps summing to %.6f s for %d chunks and e2e %.6f s", rec.Seq, len(rec.ChunkGapsSeconds), gaps, rec.Chunks, e2e)
	}
	switch {
	case rec.InputTokens < 0 || rec.OutputTokens < 0 || rec.Chunks < 0 || rec.ReasoningTokens < 0 || rec.Retries < 0 || rec.Retries > 1:
		return fmt.Sprintf("seq %d has negative counts (input %d, output %d, chunks %d, reasoning %d) or %d retries", rec.Seq, rec.InputTokens, rec.OutputTokens, rec.Chunks, rec.ReasoningTokens, rec.Retries)
	case !ownLengths && (asked != key.OutputTokens || rec.InputTokensRequested != key.ContextTokens):
		return fmt.Sprintf("seq %d asked for %d input and %d output tokens, the cell %d and %d", rec.Seq, rec.InputTokensRequested, asked, key.ContextTokens, key.OutputTokens)
	case ownLengths && (asked < 1 || rec.InputTokensRequested < 0):
		return fmt.Sprintf("seq %d asked for %d input and %d output tokens", rec.Seq, rec.InputTokensRequested, asked)
	case rec.OutputTokens > maxOutputTokens(asked):
		return fmt.Sprintf("seq %d has %d output tokens for max_tokens %d (at most %d are plausible)", rec.Seq, rec.OutputTokens, asked, maxOutputTokens(asked))
	case rec.ReasoningTokens > rec.OutputTokens:
		return fmt.Sprintf("seq %d has %d reasoning tokens of %d output tokens", rec.Seq, rec.ReasoningTokens, rec.OutputTokens)
	case rec.CachedTokens != nil && (*rec.CachedTokens < 0 || *rec.CachedTokens > rec.InputTokens):
		return fmt.Sprintf("seq %d has %d cached of %d input tokens", rec.Seq, *rec.CachedTokens, rec.InputTokens)
	}
	if servebench.Measurable(rec) {
		n := float64(rec.OutputTokens - 1)
		speed := n / rec.DecodeSeconds
		if !near(rec.GenerationSpeedTPS, speed) || !near(rec.ITLSeconds, rec.DecodeSeconds/n) {
			return fmt.Sprintf("seq %d has speed %g tok/s and ITL %g s, not those of its %d tokens in %g s", rec.Seq, rec.GenerationSpeedTPS, rec.ITLSeconds, rec.OutputTokens, rec.DecodeSeconds)
		}
	}
	if e2e > 0 && float64(rec.OutputTokens)/e2e > MaxStreamTPS {
		return fmt.Sprintf("seq %d has %d output tokens in %.6f s (%.0f tok/s; at most %d are plausible)", rec.Seq, rec.OutputTokens, e2e, float64(rec.OutputTokens)/e2e, MaxStreamTPS)
	}
	return ""
}

// near: equal within a relative 1e-6 (JSON keeps 17 digits; this forgives rounding only).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

// checkOutcome checks a worker's "done": it sent what it announced, no more than its order
// allows, and its window (fixed and rate modes, on the coordinator's axis) lies in the span.
func checkOutcome(o order, bursts int, p *part, out load.Outcome, sp span) string {
	switch {
	case out.Sent != p.sent:
		return fmt.Sprintf("it reported %d requests sent, but announced %d", out.Sent, p.sent)
	case out.Dropped < 0 || out.Warmup < 0 || out.Warmup > out.Sent:
		return fmt.Sprintf("it reported %d dropped and %d warm-up of %d requests", out.Dropped, out.Warmup, out.Sent)
	}
	if lim := o.requestLimit(bursts); lim >= 0 && out.Sent+out.Dropped > lim {
		return fmt.Sprintf("it reported %d sent and %d dropped, but its order had %d", out.Sent, out.Dropped, lim)
	}
	switch o.Key.LoadMode {
	case servebench.ModeFixed, servebench.ModeRate:
		if out.Sent > 0 {
			ws, we := out.WindowStart+p.shift, out.WindowEnd+p.shift
			if !sp.has(ws) || !sp.has(we) || we < ws || ws > p.firstStart+tolSeconds || we < p.lastEnd-tolSeconds {
				return fmt.Sprintf("its window %.3f–%.3f s is not the span of its requests %.3f–%.3f s", ws, we, p.firstStart, p.lastEnd)
			}
		}
	}
	return ""
}
