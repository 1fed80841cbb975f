package runner

import (
	"math"
	"sync"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// judgeRecords is a sustained cell at n streams of 64-token requests, rounds of them one after
// another: the shape of a cell the load driver judges while it runs.
func judgeRecords(n, rounds int) []servebench.Record {
	const tokens = 64
	var recs []servebench.Record
	for k := range rounds {
		for i := range n {
			start := float64(k)*0.7 + float64(i)*0.0001
			ttft := 0.02 + float64(i%17)*0.001
			decode := 0.63 + float64(i%5)*0.002
			gaps := make([]float64, tokens-1)
			for j := range gaps {
				gaps[j] = decode / float64(tokens-1)
			}
			recs = append(recs, servebench.Record{
				Seq: int64(k*n + i), Warmup: k == 0, StartOffsetSeconds: start, EndOffsetSeconds: start + ttft + decode,
				TTFTSeconds: ttft, DecodeSeconds: decode, E2ELatencySeconds: ttft + decode,
				InputTokens: 100, OutputTokens: tokens, Chunks: tokens, ChunkGapsSeconds: gaps,
				ITLSeconds: decode / (tokens - 1), GenerationSpeedTPS: (tokens - 1) / decode,
			})
		}
	}
	return recs
}

// TestJudgeLeavesRecordsAlone: what the judge reports is what stats.Cell says of the records,
// and the records it judged keep their chunk gaps (it drops them from its own copy only).
func TestJudgeLeavesRecordsAlone(t *testing.T) {
	recs := judgeRecords(64, 6)
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 64, ContextTokens: 100}
	var mu sync.Mutex
	ws, now := 0.7, 4.2
	p := judge(key, &mu, &recs, nil, 0.05, nil)(ws, now)
	c := stats.Cell(key, recs, stats.Window{Start: ws, End: now})
	if got, want := p.TTFTRelHalfWidth, c.TTFTSeconds.CI95RelHalfWidth(); got != want || math.IsNaN(got) || got <= 0 {
		t.Errorf("TTFT half-width %v, stats.Cell says %v", got, want)
	}
	var longest float64 // the longest measured request: the finished part of the window ends that long before now
	for _, r := range recs {
		if !r.Warmup {
			longest = max(longest, r.E2ELatencySeconds)
		}
	}
	part := stats.Cell(key, recs, stats.Window{Start: ws, End: now - longest})
	if part.SystemOutputThroughputCI95 == nil {
		t.Fatal("no throughput interval over the finished part of the window")
	}
	if got, want := p.ThroughputRelHalfWidth, part.SystemOutputThroughputCI95.RelHalfWidth(part.SystemOutputThroughputTPS); got != want {
		t.Errorf("throughput half-width %v, stats.Cell says %v", got, want)
	}
	for i := range recs {
		if len(recs[i].ChunkGapsSeconds) != 63 {
			t.Fatalf("record %d lost its chunk gaps (%d left)", i, len(recs[i].ChunkGapsSeconds))
		}
	}
}

// BenchmarkJudge is one recompute of a 256-stream cell's progress, five rounds of 64-token
// requests in: the CPU the load driver spends between two requests of one slot.
func BenchmarkJudge(b *testing.B) {
	recs := judgeRecords(256, 6)
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 256, ContextTokens: 100}
	var mu sync.Mutex
	b.ReportAllocs()
	for b.Loop() {
		judge(key, &mu, &recs, nil, 0.05, nil)(0.7, 4.2)
	}
}
