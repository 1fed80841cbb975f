package stats

import (
	"sort"

	"github.com/servebench/servebench"
)

// Scenario names of the multi-turn session cells and of the fresh-prompt cells measured beside
// them (same turn, concurrency and prompt length, no shared prefix).
const (
	SessionScenario = servebench.SessionScenario
	FreshScenario   = servebench.FreshScenario
)

// recordCached is the prompt tokens a record says the server served from its prefix cache:
// usage.prompt_tokens_details.cached_tokens, else the server's own timing object; ok is false
// when the record says neither.
func recordCached(r *servebench.Record) (int, bool) {
	if r.CachedTokens != nil {
		return *r.CachedTokens, true
	}
	if r.Server != nil && r.Server.CachedTokens != nil {
		return *r.Server.CachedTokens, true
	}
	return 0, false
}

// CachedTokens sets a cell's prompt-cache figures from its records, over the successful measured
// records that report a cached count (Record.CachedTokens, else Record.Server.CachedTokens):
//
//	cached_tokens_mean = Σ cached / n                       (tokens per request)
//	cached_share       = Σ cached / Σ input_tokens          (fraction of the prompt, 0…1)
//
// Both stay nil when no record reports a count (see CachedFromCounter).
func CachedTokens(c *servebench.CellResult, recs []servebench.Record) {
	var sum, in float64
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.Warmup || !r.OK() {
			continue
		}
		v, ok := recordCached(r)
		if !ok {
			continue
		}
		sum += float64(v)
		in += float64(r.InputTokens)
		n++
	}
	if n == 0 {
		return
	}
	c.CachedTokensMean = servebench.Float(sum / float64(n))
	if in > 0 {
		c.CachedShare = servebench.Float(sum / in)
	}
}

// CachedFromCounter sets a cell's prompt-cache figures from the server's prefix-cache hit
// counter when no record reported them: hits is the counter's increase over the cell (tokens),
// spread over its successful requests:
//
//	cached_tokens_mean = hits / requests_succeeded          (tokens per request)
//	cached_share       = cached_tokens_mean / input_tokens_mean
//
// It does nothing when the records already set them or nothing succeeded.
func CachedFromCounter(c *servebench.CellResult, hits float64) {
	if c.CachedTokensMean != nil || c.RequestsSucceeded == 0 {
		return
	}
	m := hits / float64(c.RequestsSucceeded)
	c.CachedTokensMean = servebench.Float(m)
	if c.InputTokensMean > 0 {
		c.CachedShare = servebench.Float(m / c.InputTokensMean)
	}
}

// CachingRow compares turn Turn of multi-turn sessions at Concurrency with fresh prompts of
// the same length measured in the same run.
type CachingRow struct {
	Concurrency, Turn int
	// Session is the session cell of this turn; Fresh the fresh-prompt cell beside it (nil for
	// turn 1, whose prompts are themselves fresh, or when it was not measured).
	Session, Fresh *servebench.CellResult
	// Speedup = fresh mean TTFT / session mean TTFT (×; above 1: the cache made the first token
	// come sooner); nil without a fresh cell or a session TTFT.
	Speedup *float64
}

// PromptCaching pairs every measured session cell with its fresh-prompt cell (same concurrency
// and turn), ordered by concurrency then turn.
func PromptCaching(cells []servebench.CellResult) []CachingRow {
	type k struct{ n, t int }
	fresh := map[k]*servebench.CellResult{}
	for i := range cells {
		c := &cells[i]
		if c.Scenario == FreshScenario && !c.Skipped {
			fresh[k{c.Concurrency, c.Turn}] = c
		}
	}
	var rows []CachingRow
	for i := range cells {
		c := &cells[i]
		if c.Scenario != SessionScenario || c.Skipped {
			continue
		}
		row := CachingRow{Concurrency: c.Concurrency, Turn: c.Turn, Session: c, Fresh: fresh[k{c.Concurrency, c.Turn}]}
		if f := row.Fresh; f != nil && c.TTFTSeconds.Mean > 0 && f.RequestsSucceeded > 0 {
			row.Speedup = servebench.Float(f.TTFTSeconds.Mean / c.TTFTSeconds.Mean)
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Concurrency != rows[j].Concurrency {
			return rows[i].Concurrency < rows[j].Concurrency
		}
		return rows[i].Turn < rows[j].Turn
	})
	return rows
}

// CacheHitRate is the share of the later turns' prompt tokens the server served from its
// prefix cache, over the session cells of turn ≥ 2 that report cached tokens:
//
//	cache_hit_rate = Σ cached_tokens_mean·requests_succeeded / Σ input_tokens_mean·requests_succeeded
//
// (fraction, 0…1); nil when no such cell reports them. Turn 1 is left out: nothing can be
// cached before a session's first answer.
func CacheHitRate(rows []CachingRow) *float64 {
	var cached, in float64
	seen := false
	for _, r := range rows {
		c := r.Session
		if r.Turn < 2 || c.CachedTokensMean == nil || c.RequestsSucceeded == 0 {
			continue
		}
		seen = true
		cached += *c.CachedTokensMean * float64(c.RequestsSucceeded)
		in += c.InputTokensMean * float64(c.RequestsSucceeded)
	}
	if !seen || in == 0 {
		return nil
	}
	return servebench.Float(cached / in)
}
