package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/servebench/servebench"
)

// PointReading is what a run's steady levels say about one (context, output, concurrency)
// point: the measured cell's values when that point was measured, otherwise values
// interpolated between the measured cells around it (see Interpolate).
type PointReading struct {
	ContextTokens int                  `json:"context_tokens"`
	OutputTokens  int                  `json:"output_tokens"`
	Concurrency   int                  `json:"concurrency"`
	Statistic     servebench.Statistic `json:"statistic"`
	// Measured is set when one cell measured exactly this point; otherwise the values are
	// interpolated.
	Measured bool `json:"measured"`
	// From lists the ids of the cells the values come from: 1 (measured), 2 or 4.
	From []string `json:"from"`
	// TTFTSeconds and GenerationSpeedTPS are at Statistic; nil when a cell used could not
	// measure them (no qualifying request, or a percentile withheld for a small sample).
	TTFTSeconds        *Value `json:"ttft_seconds"`
	GenerationSpeedTPS *Value `json:"generation_speed_tps"`
	// SystemOutputThroughputTPS is the cells' system output throughput (tokens/s).
	SystemOutputThroughputTPS *Value `json:"system_output_throughput_tps"`
}

// Value is a read value and its 95% interval: the cell's own interval for a measured point;
// for an interpolated one, each end interpolated like the value (an indication of the
// neighbours' uncertainty, not an interval computed for the point). CI95 is nil when a cell
// used has none; an unbounded end stays unbounded. CI95Withheld is set (and CI95 nil) when a
// cell used had the interval but fewer requests behind it than MinIntervalSamples: written
// "n<min".
type Value struct {
	Value        float64              `json:"value"`
	CI95         *servebench.Interval `json:"ci95"`
	CI95Withheld bool                 `json:"ci95_withheld,omitempty"`
}

// shownValue is v with its interval iv, which rests on n requests: iv itself when
// IntervalShown(n), else none and CI95Withheld.
func shownValue(v float64, iv *servebench.Interval, n int) *Value {
	if iv != nil && !IntervalShown(n) {
		return &Value{Value: v, CI95Withheld: true}
	}
	return &Value{Value: v, CI95: iv}
}

// Interpolate reads TTFT and per-user generation speed (at statistic st) and system output
// throughput, each with its 95% interval where the cells have one, at context ctx, output length out and concurrency n from a run's steady levels
// (CellKey.SteadyLevel: the sweep's and the capacity searches' sustained cells),
// bilinearly: within each measured context c0 ≤ ctx ≤ c1 (the nearest measured ones, in
// tokens), linearly in concurrency between the nearest measured levels n0 ≤ n ≤ n1,
//
//	v(c, n) = v(c, n0) + (n − n0)/(n1 − n0) · (v(c, n1) − v(c, n0)),
//
// then linearly in context, v = v(c0, n) + (ctx − c0)/(c1 − c0) · (v(c1, n) − v(c0, n)).
// A measured point returns its cell's values unchanged. Only cells that were run with at least
// one successful request count; a point outside the measured contexts, or outside the measured
// concurrency range of either bracketing context, is an error naming the range.
func Interpolate(cells []servebench.CellResult, ctx, out, n int, st servebench.Statistic) (PointReading, error) {
	if st == "" {
		st = servebench.StatMean
	}
	r := PointReading{ContextTokens: ctx, OutputTokens: out, Concurrency: n, Statistic: st}
	rows := map[int]map[int]servebench.CellResult{} // context → concurrency → cell
	for _, c := range cells {
		if !c.SteadyLevel() || c.OutputTokens != out || c.Skipped || c.RequestsSucceeded == 0 {
			continue
		}
		row := rows[c.ContextTokens]
		if row == nil {
			row = map[int]servebench.CellResult{}
			rows[c.ContextTokens] = row
		}
		if prev, ok := row[c.Concurrency]; !ok || prev.RequestsTotal < c.RequestsTotal {
			row[c.Concurrency] = c
		}
	}
	if len(rows) == 0 {
		return r, fmt.Errorf("no sustained cell with %d output tokens was measured", out)
	}
	c0, c1, err := bracket(keys(rows), ctx, "context")
	if err != nil {
		return r, err
	}
	var vals [2]corner
	for i, c := range []int{c0, c1} {
		row := rows[c]
		n0, n1, err := bracket(keys(row), n, fmt.Sprintf("concurrency at context %d", c))
		if err != nil {
			return r, err
		}
		vals[i] = lerpCorner(pick(row[n0], st), pick(row[n1], st), frac(n, n0, n1))
		r.From = appendUnique(r.From, row[n0].ID(), row[n1].ID())
		if c0 == c1 {
			vals[1] = vals[0]
			break
		}
	}
	v := lerpCorner(vals[0], vals[1], frac(ctx, c0, c1))
	r.Measured = len(r.From) == 1
	r.TTFTSeconds, r.GenerationSpeedTPS, r.SystemOutputThroughputTPS = v.ttft, v.speed, v.tps
	return r, nil
}

// corner holds a point's three values; nil means not measured.
type corner struct{ ttft, speed, tps *Value }

func pick(c servebench.CellResult, st servebench.Statistic) corner {
	return corner{
		ttft:  pickSummary(c.TTFTSeconds, st),
		speed: pickSummary(c.GenerationSpeedTPS, st),
		tps:   shownValue(c.SystemOutputThroughputTPS, c.SystemOutputThroughputCI95, c.RequestsSucceeded),
	}
}

func pickSummary(s servebench.Summary, st servebench.Statistic) *Value {
	v, ok := s.Pick(st)
	if !ok {
		return nil
	}
	iv := s.PickCI95(st)
	if iv != nil && iv == s.CI95 { // the mean's interval; a percentile's has its own minimum (MinSamples)
		return shownValue(v, iv, s.Count)
	}
	return &Value{Value: v, CI95: iv}
}

func lerpCorner(a, b corner, t float64) corner {
	return corner{lerp(a.ttft, b.ttft, t), lerp(a.speed, b.speed, t), lerp(a.tps, b.tps, t)}
}

// lerp is a + t·(b − a), for the value and each end of its interval; nil when either is
// missing (an exact end, t = 0 or 1, needs only that end).
func lerp(a, b *Value, t float64) *Value {
	switch {
	case t == 0:
		return a
	case t == 1:
		return b
	case a == nil || b == nil:
		return nil
	}
	v := &Value{Value: a.Value + t*(b.Value-a.Value), CI95Withheld: a.CI95Withheld || b.CI95Withheld}
	if a.CI95 != nil && b.CI95 != nil {
		v.CI95 = &servebench.Interval{Low: lerpEnd(a.CI95.Low, b.CI95.Low, t), High: lerpEnd(a.CI95.High, b.CI95.High, t)}
	}
	return v
}

// lerpEnd interpolates an interval end; an unbounded end on either side stays unbounded.
func lerpEnd(a, b, t float64) float64 {
	if math.IsInf(a, 0) {
		return a
	}
	if math.IsInf(b, 0) {
		return b
	}
	return a + t*(b-a)
}

// frac is (x − lo)/(hi − lo), 0 when lo = hi.
func frac(x, lo, hi int) float64 {
	if hi == lo {
		return 0
	}
	return float64(x-lo) / float64(hi-lo)
}

// bracket returns the nearest measured values lo ≤ x ≤ hi of sorted, or an error naming the
// measured range.
func bracket(sorted []int, x int, what string) (lo, hi int, err error) {
	if x < sorted[0] || x > sorted[len(sorted)-1] {
		return 0, 0, fmt.Errorf("%s %d is outside the measured range %d–%d", what, x, sorted[0], sorted[len(sorted)-1])
	}
	i, found := slices.BinarySearch(sorted, x)
	if found {
		return x, x, nil
	}
	return sorted[i-1], sorted[i], nil
}

func keys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func appendUnique(list []string, ids ...string) []string {
	for _, id := range ids {
		if !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}
