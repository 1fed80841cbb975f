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
	recs := judgeRecords(64, 9)
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 64, ContextTokens: 100}
	var mu sync.Mutex
	ws, now := 0.7, 6.3
	p := judge(key, &mu, &recs, nil, 0.05, nil)(ws, now)
	c := stats.Cell(key, recs, stats.Window{Start: ws, End: now})
	if got, want := p.TTFTRelHalfWidth, c.TTFTSeconds.CI95RelHalfWidth(); got != want || math.IsNaN(got) || got <= 0 {
		t.Errorf("TTFT half-width %v, stats.Cell says %v", got, want)
	}
	var longest float64 // the longest measured request: batches that ended that long before now are complete
	for _, r := range recs {
		if !r.Warmup {
			longest = max(longest, r.E2ELatencySeconds)
		}
	}
	want := throughputForecast(recs, ws, now, longest, c.E2ELatencySeconds.Mean)
	if math.IsInf(want, 0) || math.IsNaN(want) {
		t.Fatalf("no throughput forecast over [%v, %v]", ws, now)
	}
	if got := p.ThroughputRelHalfWidth; got != want {
		t.Errorf("throughput half-width %v, the forecast says %v", got, want)
	}
	for i := range recs {
		if len(recs[i].ChunkGapsSeconds) != 63 {
			t.Fatalf("record %d lost its chunk gaps (%d left)", i, len(recs[i].ChunkGapsSeconds))
		}
	}
}

// The stopping rule and the validity rule judge the same throughput interval: once every batch
// of the window is complete (nothing in flight), the forecast the driver stops on is the
// relative half-width stats.Cell gives the closed window, which stats.Assess compares with the
// target. Before, the driver judged the finished part of the window on its own grid of batches,
// and the demo's 1K cells stopped at ±15% that the closed window read as ±20% and ±26%.
func TestThroughputForecastIsTheFinalInterval(t *testing.T) {
	recs := judgeRecords(8, 14)
	// uneven batches: every third round's requests decode more slowly
	for i := range recs {
		if (i/8)%3 == 0 {
			recs[i].DecodeSeconds *= 1.3
		}
	}
	key := servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 8, ContextTokens: 100}
	for _, w := range []stats.Window{{Start: 0.7, End: 7.7}, {Start: 0.7, End: 9.1}} {
		c := stats.Cell(key, recs, w)
		if c.SystemOutputThroughputCI95 == nil {
			t.Fatalf("%v: no throughput interval", w)
		}
		final := c.SystemOutputThroughputCI95.RelHalfWidth(c.SystemOutputThroughputTPS)
		got := throughputForecast(recs, w.Start, w.End, 0, c.E2ELatencySeconds.Mean)
		if math.Abs(got-final) > 1e-9*final {
			t.Errorf("%v: forecast ±%.4f, the closed window's interval ±%.4f", w, got, final)
		}
		// with requests in flight (the last batch open) it still forecasts on the same grid
		if k := stats.ThroughputBatches(w.Seconds(), c.E2ELatencySeconds.Mean); k >= 3 {
			if f := throughputForecast(recs, w.Start, w.End, w.Seconds()/float64(k), c.E2ELatencySeconds.Mean); math.IsInf(f, 0) {
				t.Errorf("%v: no forecast with one batch of %d open", w, k)
			}
		}
	}
	if f := throughputForecast(recs, 0.7, 3.5, 2.0, 0.7); !math.IsInf(f, 1) {
		t.Errorf("forecast ±%v with fewer than 2 complete batches, want +Inf", f)
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
