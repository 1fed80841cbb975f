package capacity

import (
	"context"
	"errors"
	"fmt"

	"github.com/servebench/servebench"
)

// KnownCells picks, from a run's cells, those that count as measured levels of uc: sustained
// cells with uc's context and output length that were run and sent requests, one per
// concurrency (the one with the most requests when a level appears twice).
func KnownCells(cells []servebench.CellResult, uc servebench.UseCase) map[int]servebench.CellResult {
	known := map[int]servebench.CellResult{}
	for _, c := range cells {
		if c.LoadMode != servebench.ModeSustained || c.ContextTokens != int(uc.ContextTokens) || c.OutputTokens != int(uc.OutputTokens) ||
			c.Skipped || c.RequestsTotal == 0 {
			continue
		}
		if prev, ok := known[c.Concurrency]; !ok || prev.RequestsTotal < c.RequestsTotal {
			known[c.Concurrency] = c
		}
	}
	return known
}

// Reconsidered is the outcome of Reconsider: a capacity result decided from measured cells
// only, or, when those cells do not decide it, the bracket the limit lies in.
type Reconsidered struct {
	servebench.CapacityResult
	// Decided is false when Search would have to measure a level that was not measured.
	Decided bool `json:"decided"`
	// Lo is the highest passing level below Hi, the lowest failing one, and Next the level
	// Search would measure next; set only when not decided.
	Lo   int `json:"lo,omitempty"`
	Hi   int `json:"hi,omitempty"`
	Next int `json:"next,omitempty"`
	// Label, KindWords and Verdict are LimitLabel, KindWords and Verdict of the result when
	// decided; otherwise "Lo–Hi−1", KindUndecidedByLevels and a sentence naming the bracket
	// and the level to measure.
	Label     string `json:"label"`
	KindWords string `json:"kind_words"`
	Verdict   string `json:"verdict"`
}

// errUnmeasured stops Search when it asks for a level no cell measured.
var errUnmeasured = errors.New("level not measured")

// Reconsider decides uc's capacity from cells a run already measured, measuring nothing: the
// what-if of a changed threshold or statistic. It runs Search with the cells of KnownCells as
// known levels and a ceiling of the highest measured level (at most ceiling), so every rule is
// Search's own. When Search asks for a level that was never measured, the outcome is not
// decided and names the bracket: Lo passes, Hi fails, the levels between were not measured;
// its Note then says so (Size reports it as not sized). resolution is the run's search's
// (CapacityResult.Resolution; 0: exact): above 0, a search that ends at a crossing of its highest
// measured level (DecideWithin) is decided as the run's search decided it, under ceiling; one
// out of range (ValidResolution: a hand-edited run folder) is taken as 0.
func Reconsider(uc servebench.UseCase, ceiling int, cells []servebench.CellResult, resolution float64) Reconsidered {
	known := KnownCells(cells, uc)
	top := 0
	for n := range known {
		if n <= ceiling {
			top = max(top, n)
		}
	}
	if top == 0 {
		r := servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens),
			Statistic: uc.Statistic, Thresholds: uc.Thresholds, Ceiling: ceiling}
		return Reconsidered{CapacityResult: r, Label: LimitLabel(r), KindWords: KindUndecidedByLevels,
			Verdict: fmt.Sprintf("Not measured: the run has no sustained cell at %d context and %d output tokens.", uc.ContextTokens, uc.OutputTokens)}
	}
	if !ValidResolution(resolution) {
		resolution = 0 // a run folder's figure out of range (hand-edited, forged): the exact rule
	}
	next := 0
	unmeasured := func(context.Context, int) (servebench.CellResult, int, error) {
		return servebench.CellResult{}, 0, errUnmeasured
	}
	if resolution > 0 {
		// under the run's own ceiling first: a search that ends at a crossing of its highest
		// measured level needs no level above it
		if res, err := Search(context.Background(), uc, SearchConfig{Ceiling: ceiling, Known: known, Resolution: resolution}, unmeasured); err == nil && res.Crossing != nil {
			return Reconsidered{CapacityResult: res, Decided: true, Label: LimitLabel(res), KindWords: KindWords(res.LimitKind), Verdict: Verdict(res)}
		}
	}
	res, err := Search(context.Background(), uc, SearchConfig{Ceiling: top, Known: known, Resolution: resolution}, unmeasured)
	if err == nil {
		return Reconsidered{CapacityResult: res, Decided: true, Label: LimitLabel(res), KindWords: KindWords(res.LimitKind), Verdict: Verdict(res)}
	}
	// not an interruption: the levels were never measured, so there is no limit so far to state
	res.Interrupted, res.LimitKind, res.Limit, res.FirstFailing = false, "", nil, nil
	out := Reconsidered{CapacityResult: res, Label: LabelNotMeasured, KindWords: KindUndecidedByLevels, Verdict: sentence(err.Error())}
	if !errors.Is(err, errUnmeasured) {
		return out
	}
	points := make(map[int]servebench.CapacityPoint, len(res.Points))
	for _, p := range res.Points {
		points[p.Concurrency] = p
	}
	out.Lo, out.Hi = bounds(points)
	// The level Search would measure next, by its own rule.
	next, _ = nextLevel(uc, SearchConfig{Ceiling: top, Start: 1, Resolution: resolution}, points, nil)
	out.Next = next
	out.Note = "the measured levels do not decide the limit for these thresholds"
	if out.Hi == 0 {
		out.Label = LabelNotMeasured
		out.Verdict = fmt.Sprintf("Not decided: every measured level passes, but %s was not measured.", Requests(next))
		return out
	}
	out.LimitingMetric = limitingMetric(uc, points[out.Hi])
	if out.Lo == 0 {
		out.Label = fmt.Sprintf("below %d", out.Hi)
		out.Verdict = fmt.Sprintf("Not decided: at %s, %s; no lower level was measured (measuring %s would decide more).",
			Requests(out.Hi), failingText(uc, points[out.Hi]), Requests(next))
		return out
	}
	lo := out.Lo
	out.Label = fmt.Sprintf("%d–%d", lo, out.Hi-1)
	out.Verdict = fmt.Sprintf("Between %d and %d concurrent requests: %d passes, and at %s, %s. The levels in between were not measured; the search would measure %d next.",
		lo, out.Hi-1, out.Lo, Requests(out.Hi), failingText(uc, points[out.Hi]), next)
	return out
}
