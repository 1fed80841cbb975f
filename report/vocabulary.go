package report

import servebench "github.com/servebench/servebench"

// One vocabulary for inter-token timing, in every rendering (report, terminal, compare, CSV
// column names follow results.json: itl_seconds and chunk_gap_seconds):
//
//   - termITL names itl_seconds, decode time / (output tokens − 1) per request: time per
//     generated token, vLLM's TPOT. It is what generation speed is the inverse of.
//   - termChunkGap names chunk_gap_seconds, the gap between consecutive token-carrying stream
//     events: what a user sees. The perceptual marks (20 ms, 70 ms) judge the chunk gap only.
const (
	termITL      = "ITL (per token)"
	termChunkGap = "chunk gap"
	// perceptualMarks words the 20 / 70 ms marks for a sentence.
	perceptualMarks = "under ~20ms streaming feels instant, 20–70ms noticeably slower but acceptable, above 70ms sluggish"
)

// Perceptual marks on the chunk gap (ms).
const (
	instantMS  = 20
	sluggishMS = 70
)

// perceptualThresholds are the marks drawn on a chunk-gap chart (ms).
func perceptualThresholds() []Threshold {
	return []Threshold{{Name: "20 ms: instant", Value: instantMS}, {Name: "70 ms: sluggish", Value: sluggishMS}}
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
