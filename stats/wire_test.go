package stats_test

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// streamed is a successful record of a sustained cell as the client writes it: 16 tokens in 16
// events of 4 bytes, start at start, first token after 0.1 s, 10 ms between tokens.
func streamed(seq int64, start float64) servebench.Record {
	r := servebench.Record{Seq: seq, StartOffsetSeconds: start, EndOffsetSeconds: start + 0.26,
		InputTokens: 100, InputTokensRequested: 100, InputTokensSource: servebench.SourceUsage, PromptBytes: 400,
		OutputTokens: 16, OutputTokensRequested: 16, OutputTokensCap: 16, OutputTokensSource: servebench.SourceUsage,
		Chunks: 16, OutputTextBytes: 64}
	servebench.Derive(&r, servebench.Timing{FirstToken: 100e6, LastToken: 250e6, End: 260e6})
	return r
}

// TestImpossibleValuesNeverEnterAStatistic: records whose server claims could not be true (as
// a run folder written before the client checked them holds them) are judged again when the
// cell is computed: no statistic takes the claim, and the cell's validity says how many and
// which.
func TestImpossibleValuesNeverEnterAStatistic(t *testing.T) {
	var recs []servebench.Record
	for i := range 20 {
		recs = append(recs, streamed(int64(i), float64(i)*0.3))
	}
	honest := stats.Cell(servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 1}, recs, stats.Window{})

	lying := append([]servebench.Record(nil), recs...)
	lying[3].OutputTokens = 1_000_000_000_000_000_000 // the bug report's 1.49e19 tok/s
	servebench.Derive(&lying[3], servebench.Timing{FirstToken: 100e6, LastToken: 250e6, End: 260e6})
	lying[5].OutputTokens = -5
	lying[7].InputTokens = 1_000_000_000_000_000_000
	q := -123456.0
	lying[9].Server = &servebench.ServerTimings{Source: "vllm-request-metrics", QueueSeconds: &q}
	before := lying[3]

	c := stats.Cell(servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 1}, lying, stats.Window{})
	if lying[3].OutputTokens != before.OutputTokens || len(lying[3].Violations) != 0 {
		t.Errorf("Cell modified the caller's records")
	}
	for name, pair := range map[string][2]float64{
		"output throughput": {c.SystemOutputThroughputTPS, honest.SystemOutputThroughputTPS},
		"output tokens":     {c.OutputTokensMean, honest.OutputTokensMean},
		"input tokens":      {c.InputTokensMean, honest.InputTokensMean},
		"speed max":         {*c.GenerationSpeedTPS.Max, *honest.GenerationSpeedTPS.Max},
		"total throughput":  {c.TotalThroughputTPS, honest.TotalThroughputTPS},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-9*math.Abs(pair[1]) {
			t.Errorf("%s %g with the lies, %g without: a claim entered it", name, pair[0], pair[1])
		}
	}
	s := stats.Sanitize(lying)
	if s[9].Server.QueueSeconds != nil || lying[9].Server.QueueSeconds == nil {
		t.Errorf("queue wait %v after Sanitize (the caller's %v): an impossible timing must be dropped from the copy only", s[9].Server.QueueSeconds, lying[9].Server.QueueSeconds)
	}
	stats.Assess(&c, lying, stats.Window{}, 0)
	note := c.Validity.Notes[servebench.ReasonServerInconsistent]
	if !c.Validity.Has(servebench.ReasonServerInconsistent) || c.Validity.Trusted() {
		t.Fatalf("validity %+v lacks server-inconsistent", c.Validity)
	}
	for _, want := range []string{"4 of 20 responses", "usage-over-max-tokens 1", "usage-negative 1", "prompt-tokens-implausible 1", "server-timing-out-of-span 1"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if stats.Sanitize(recs)[0].OutputTokens != 16 || &stats.Sanitize(recs)[0] != &recs[0] {
		t.Errorf("Sanitize copied records with nothing to correct")
	}
}

// TestNotStreamedIsUnknownNotZero: a cell whose responses arrived in one piece has no ITL and
// no generation speed (count 0, never a measured 0), and its validity says why.
func TestNotStreamedIsUnknownNotZero(t *testing.T) {
	var recs []servebench.Record
	for i := range 10 {
		r := streamed(int64(i), float64(i)*0.3)
		servebench.Derive(&r, servebench.Timing{FirstToken: 250e6, LastToken: 250e6, End: 250e6})
		recs = append(recs, r)
	}
	if !recs[0].NotStreamed {
		t.Fatal("16 token events in one read not marked not_streamed")
	}
	c := stats.Cell(servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 1}, recs, stats.Window{})
	if c.GenerationSpeedTPS.Count != 0 || c.ITLSeconds.Count != 0 {
		t.Errorf("speed %+v ITL %+v from responses that were not streamed", c.GenerationSpeedTPS, c.ITLSeconds)
	}
	if c.TTFTSeconds.Count != 10 || c.SystemOutputThroughputTPS <= 0 {
		t.Errorf("TTFT count %d, throughput %g: both are still known", c.TTFTSeconds.Count, c.SystemOutputThroughputTPS)
	}
	stats.Assess(&c, recs, stats.Window{}, 0)
	if !c.Validity.Has(servebench.ReasonNotStreamed) || !strings.Contains(c.Validity.Notes[servebench.ReasonNotStreamed], "10 of 10") {
		t.Errorf("validity %+v", c.Validity)
	}
}
