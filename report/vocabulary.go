package report

import (
	"fmt"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// One vocabulary for inter-token timing, in every rendering (report, terminal, compare, CSV
// column names follow results.json: itl_seconds and chunk_gap_seconds):
//
//   - termITL names itl_seconds, decode time / (output tokens − 1) per request: time per
//     generated token, vLLM's TPOT. It is what generation speed is the inverse of.
//   - termChunkGap names chunk_gap_seconds, the gap between consecutive token-carrying stream
//     events: what a user sees. The perceptual marks (20 ms, 70 ms) judge the chunk gap only.
var (
	termITL      = capacity.MetricLabel(capacity.MetricITL, "")
	termChunkGap = "chunk gap"
	// itlVersusChunkGap says what each of the two numbers is and which of vLLM's it matches.
	itlVersusChunkGap = termITL + " is decode time / (output tokens − 1) per request, the formula of vLLM's TPOT; the " +
		termChunkGap + " is the gap between consecutive token-carrying stream events, what vLLM calls ITL and what a user sees."
	// perceptualMarks words the instant / sluggish marks for a sentence.
	perceptualMarks = fmt.Sprintf("under ~%dms streaming feels instant, %d–%dms noticeably slower but acceptable, above %dms sluggish", instantMS, instantMS, sluggishMS, sluggishMS)
)

// Perceptual marks on the chunk gap (ms).
const (
	instantMS  = 20
	sluggishMS = 70
)

// perceptualThresholds are the marks drawn on a chunk-gap chart (ms).
func perceptualThresholds() []Threshold {
	return []Threshold{{Name: fmt.Sprintf("%d ms: instant", instantMS), Value: instantMS}, {Name: fmt.Sprintf("%d ms: sluggish", sluggishMS), Value: sluggishMS}}
}

// perceivedAs says how a chunk gap of ms milliseconds feels: "feels instant", "feels noticeably
// slower but acceptable", "feels sluggish".
func perceivedAs(ms float64) string {
	switch {
	case ms > sluggishMS:
		return "feels sluggish"
	case ms > instantMS:
		return "feels noticeably slower but acceptable"
	}
	return "feels instant"
}

func valChunkGapMS(c *servebench.CellResult) (float64, bool) {
	return c.ChunkGapSeconds.Mean * 1000, c.ChunkGapSeconds.Count > 0
}
