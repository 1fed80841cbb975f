package stats_test

import (
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Reasoning: the mean reasoning tokens and the share of output spent reasoning, over successful
// measured requests only.
func TestCellReasoning(t *testing.T) {
	k := servebench.CellKey{Scenario: "s", LoadMode: servebench.ModeSustained, ContextTokens: 100, OutputTokens: 100, Concurrency: 1}
	recs := []servebench.Record{
		{CellKey: k, OutputTokens: 100, ReasoningTokens: 30, TTFTSeconds: 1, FirstContentSeconds: 2, E2ELatencySeconds: 3},
		{CellKey: k, OutputTokens: 100, ReasoningTokens: 10, TTFTSeconds: 1, FirstContentSeconds: 1.5, E2ELatencySeconds: 3},
		{CellKey: k, Warmup: true, OutputTokens: 100, ReasoningTokens: 100},
		{CellKey: k, ReasoningTokens: 50, ErrorClass: servebench.ErrStreamTruncated},
	}
	c := stats.Cell(k, recs, stats.Window{})
	if c.ReasoningTokensMean != 20 || c.ReasoningShare != 0.2 {
		t.Errorf("reasoning mean %v share %v, want 20 and 0.2", c.ReasoningTokensMean, c.ReasoningShare)
	}
	if c.FirstContentSeconds.Mean != 1.75 || c.TTFTSeconds.Mean != 1 {
		t.Errorf("first content mean %v, ttft mean %v; want 1.75 and 1", c.FirstContentSeconds.Mean, c.TTFTSeconds.Mean)
	}
	none := stats.Cell(k, recs[2:3], stats.Window{})
	if none.ReasoningShare != 0 || none.ReasoningTokensMean != 0 {
		t.Errorf("no measured requests: share %v mean %v, want 0", none.ReasoningShare, none.ReasoningTokensMean)
	}
}
