package stats

import (
	"testing"

	"github.com/servebench/servebench"
)

func TestCachedTokens(t *testing.T) {
	ok := func(in, cached int) servebench.Record {
		return servebench.Record{InputTokens: in, CachedTokens: servebench.Int(cached)}
	}
	timed := servebench.Record{InputTokens: 1000, Server: &servebench.ServerTimings{CachedTokens: servebench.Int(500)}}
	tests := []struct {
		name        string
		recs        []servebench.Record
		mean, share *float64
	}{
		{"usage", []servebench.Record{ok(1000, 800), ok(1000, 600)}, servebench.Float(700), servebench.Float(0.7)},
		{"server timings when usage lacks it", []servebench.Record{ok(1000, 900), timed}, servebench.Float(700), servebench.Float(0.7)},
		{"warm-up, failures and silent records left out", []servebench.Record{ok(1000, 1000), {Warmup: true, InputTokens: 10, CachedTokens: servebench.Int(0)},
			{ErrorClass: servebench.ErrConnect, CachedTokens: servebench.Int(0)}, {InputTokens: 5000}}, servebench.Float(1000), servebench.Float(1)},
		{"nothing reported", []servebench.Record{{InputTokens: 1000}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c servebench.CellResult
			CachedTokens(&c, tt.recs)
			if !eqPtr(c.CachedTokensMean, tt.mean) || !eqPtr(c.CachedShare, tt.share) {
				t.Errorf("mean %v share %v, want %v %v", deref(c.CachedTokensMean), deref(c.CachedShare), deref(tt.mean), deref(tt.share))
			}
		})
	}
	c := servebench.CellResult{RequestsSucceeded: 4, InputTokensMean: 2000}
	CachedFromCounter(&c, 4000)
	if deref(c.CachedTokensMean) != 1000 || deref(c.CachedShare) != 0.5 {
		t.Errorf("from the counter: mean %v share %v, want 1000 and 0.5", deref(c.CachedTokensMean), deref(c.CachedShare))
	}
	CachedFromCounter(&c, 0) // the records' (here: the first call's) figures win
	if deref(c.CachedTokensMean) != 1000 {
		t.Errorf("a second source replaced the first: %v", deref(c.CachedTokensMean))
	}
}

func TestPromptCaching(t *testing.T) {
	cell := func(scen string, n, turn int, ttft float64, cached *float64, in float64) servebench.CellResult {
		return servebench.CellResult{CellKey: servebench.CellKey{Scenario: scen, Concurrency: n, Turn: turn}, RequestsSucceeded: 2,
			TTFTSeconds: servebench.Summary{Mean: ttft}, CachedTokensMean: cached, InputTokensMean: in}
	}
	cells := []servebench.CellResult{
		cell(FreshScenario, 4, 2, 0.3, servebench.Float(0), 3000),
		cell(SessionScenario, 4, 2, 0.1, servebench.Float(2000), 3000),
		cell(SessionScenario, 1, 2, 0.05, servebench.Float(1000), 3000),
		cell(SessionScenario, 4, 1, 0.2, servebench.Float(0), 2000),
		cell("sweep", 4, 0, 1, nil, 3000),
	}
	rows := PromptCaching(cells)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if rows[0].Concurrency != 1 || rows[0].Fresh != nil || rows[0].Speedup != nil {
		t.Errorf("row 0 %+v: c=1 turn 2 without a fresh cell", rows[0])
	}
	if rows[1].Turn != 1 || rows[2].Turn != 2 || rows[2].Fresh == nil || deref(rows[2].Speedup) < 2.99 || deref(rows[2].Speedup) > 3.01 {
		t.Errorf("rows %+v %+v: want turn 1 then turn 2 with a 3× speed-up", rows[1], rows[2])
	}
	// turn 1 left out: (1000 + 2000) × 2 / (3000 × 2 × 2)
	if hr := CacheHitRate(rows); hr == nil || *hr != 0.5 {
		t.Errorf("hit rate %v, want 0.5", deref(hr))
	}
	if hr := CacheHitRate(rows[1:2]); hr != nil {
		t.Errorf("hit rate of turn 1 alone %v, want none", *hr)
	}
}

func eqPtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
