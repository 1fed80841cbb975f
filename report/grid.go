package report

import (
	"fmt"
	"sort"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// grid indexes measured cells by (context, concurrency).
type grid struct {
	ctxs  []int
	concs []int
	cells map[[2]int]*servebench.CellResult
}

// measured reports whether a cell has statistics to show.
func measured(c *servebench.CellResult) bool { return !c.Skipped && c.RequestsSucceeded > 0 }

// newGrid indexes the cells keep accepts; of two cells at the same point the one with more
// requests wins.
func newGrid(cells []servebench.CellResult, keep func(*servebench.CellResult) bool) grid {
	g := grid{cells: map[[2]int]*servebench.CellResult{}}
	seenCtx, seenConc := map[int]bool{}, map[int]bool{}
	for i := range cells {
		c := &cells[i]
		if !measured(c) || !keep(c) {
			continue
		}
		k := [2]int{c.ContextTokens, c.Concurrency}
		if prev, ok := g.cells[k]; ok && prev.RequestsTotal >= c.RequestsTotal {
			continue
		}
		g.cells[k] = c
		if !seenCtx[c.ContextTokens] {
			seenCtx[c.ContextTokens] = true
			g.ctxs = append(g.ctxs, c.ContextTokens)
		}
		if !seenConc[c.Concurrency] {
			seenConc[c.Concurrency] = true
			g.concs = append(g.concs, c.Concurrency)
		}
	}
	sort.Ints(g.ctxs)
	sort.Ints(g.concs)
	return g
}

func (g grid) empty() bool { return len(g.cells) == 0 }

func (g grid) at(ctx, n int) *servebench.CellResult { return g.cells[[2]int{ctx, n}] }

// ordered returns the cells by context, then concurrency.
func (g grid) ordered() []*servebench.CellResult {
	var out []*servebench.CellResult
	for _, x := range g.ctxs {
		for _, n := range g.concs {
			if c := g.at(x, n); c != nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// extreme returns the cell where val is largest (max) or smallest (!max) among cells where it
// is defined; ties go to the first in (context, concurrency) order.
func (g grid) extreme(max bool, val func(*servebench.CellResult) (float64, bool)) (*servebench.CellResult, float64) {
	return extreme(g.ordered(), max, val)
}

// extreme returns the cell of cells where val is largest (max) or smallest (!max) among those
// where it is defined; ties go to the first.
func extreme(cells []*servebench.CellResult, max bool, val func(*servebench.CellResult) (float64, bool)) (*servebench.CellResult, float64) {
	var best *servebench.CellResult
	var bv float64
	for _, c := range cells {
		v, ok := val(c)
		if !ok {
			continue
		}
		if best == nil || (max && v > bv) || (!max && v < bv) {
			best, bv = c, v
		}
	}
	return best, bv
}

// has reports whether val is defined in at least one cell.
func (g grid) has(val func(*servebench.CellResult) (float64, bool)) bool {
	c, _ := g.extreme(true, val)
	return c != nil
}

func (g grid) ctxRange() string {
	if len(g.ctxs) == 0 {
		return ""
	}
	return rangeLabel(ctxLabel(g.ctxs[0]), ctxLabel(g.ctxs[len(g.ctxs)-1]))
}

func (g grid) concRange() string {
	if len(g.concs) == 0 {
		return ""
	}
	return rangeLabel(fmt.Sprint(g.concs[0]), fmt.Sprint(g.concs[len(g.concs)-1]))
}

// caption is the standard chart caption: "Average X across 1K - 200K tokens context lengths at
// 1 - 4 concurrency levels."
func (g grid) caption(what string) string {
	where := fmt.Sprintf("across %s tokens context lengths", g.ctxRange())
	if len(g.ctxs) == 1 {
		where = "at " + g.ctxRange() + " context"
	}
	load := fmt.Sprintf("at %s concurrency levels", g.concRange())
	if len(g.concs) == 1 {
		load = "at " + capacity.Requests(g.concs[0])
	}
	if len(g.ctxs) == 1 {
		return fmt.Sprintf("%s %s, %s.", what, where, load)
	}
	return fmt.Sprintf("%s %s %s.", what, where, load)
}

// chart builds a chart with contexts on the x axis and one series per concurrency level.
func (g grid) chart(id, title, what, yName string, decimals int, val func(*servebench.CellResult) (float64, bool)) *Chart {
	ch := &Chart{ID: id, Title: title, Caption: g.caption(what), XName: "context (tokens)", YName: yName, Decimals: decimals}
	for _, x := range g.ctxs {
		ch.X = append(ch.X, ctxLabel(x))
		ch.XValues = append(ch.XValues, float64(x))
	}
	ch.XScale = "log"
	names := make([]string, len(g.concs))
	for i, n := range g.concs {
		names[i] = seriesName(n)
	}
	plot(ch, names, g.ctxs, func(i, x int) *servebench.CellResult { return g.at(x, g.concs[i]) }, val, true)
	return ch
}

// plot adds to ch one series per name, with a point at each x: val of the cell at(series, x)
// where it has one, marked with that cell. dropEmpty leaves out a series without any point.
func plot(ch *Chart, names []string, xs []int, at func(series, x int) *servebench.CellResult, val func(*servebench.CellResult) (float64, bool), dropEmpty bool) {
	for i, name := range names {
		s := Series{Name: name}
		any := false
		for _, x := range xs {
			var p *float64
			c := at(i, x)
			if c != nil {
				if v, ok := val(c); ok {
					p, any = ptr(v), true
				}
			}
			s.add(p, c)
		}
		if any || !dropEmpty {
			ch.Series = append(ch.Series, s)
		}
	}
}

// add appends a point to the series, measured in cell c (nil where there is no point), and
// marks it with c's validity verdict when c is not valid: every chart that plots cells marks
// them the same way (see Series.Marks and Chart.MarkNote).
func (s *Series) add(p *float64, c *servebench.CellResult) {
	s.Data = append(s.Data, p)
	if tip := pointTip(p, c); tip != "" || s.Tips != nil {
		if s.Tips == nil {
			s.Tips = make([]string, len(s.Data)-1, cap(s.Data))
		}
		s.Tips = append(s.Tips, tip)
	}
	mark := ""
	if p != nil && c != nil && !c.Validity.Trusted() {
		mark = string(c.Validity.Verdict)
	}
	if mark != "" && s.Marks == nil {
		s.Marks = make([]string, len(s.Data)-1, cap(s.Data))
	}
	if s.Marks != nil {
		s.Marks = append(s.Marks, mark)
	}
}

// pointTip is what a chart's tooltip adds after a point's value: the value's 95% interval where
// the point is one of the cell's intervalled figures (mean TTFT, mean generation speed, output
// throughput; " (n<min)" where withheld) and the cell's validity with its reasons, e.g.
// " ±4% · valid" or " (n<min) · low-confidence: too-few-samples". Empty where there is no point
// or no cell.
func pointTip(p *float64, c *servebench.CellResult) string {
	if p == nil || c == nil {
		return ""
	}
	pm := ""
	switch v := *p; {
	case v == c.TTFTSeconds.Mean:
		pm = meanPlusMinus(c.TTFTSeconds)
	case v == c.GenerationSpeedTPS.Mean:
		pm = meanPlusMinus(c.GenerationSpeedTPS)
	case v == c.SystemOutputThroughputTPS:
		pm = throughputPlusMinus(c)
	}
	verdict := string(c.Validity.Verdict)
	if verdict == "" {
		return pm
	}
	if len(c.Validity.Reasons) > 0 {
		var rs []string
		for _, r := range c.Validity.Reasons {
			rs = append(rs, string(r))
		}
		verdict += ": " + strings.Join(rs, ", ")
	}
	return pm + " · " + verdict
}

// markNote says how the chart draws the points of cells that are not valid, naming only the
// verdicts it has: "Hollow points come from low-confidence cells, crosses from invalid cells;
// the data table names each verdict (…)." Empty when every point is valid.
func markNote(ch *Chart) string {
	var low, invalid bool
	for _, s := range ch.Series {
		for _, m := range s.Marks {
			low = low || m == string(servebench.VerdictLowConfidence)
			invalid = invalid || m == string(servebench.VerdictInvalid)
		}
	}
	var parts []string
	if low {
		parts = append(parts, "hollow points come from low-confidence cells")
	}
	if invalid {
		parts = append(parts, "crosses from invalid cells")
	}
	if len(parts) == 0 {
		return ""
	}
	return upperFirst(strings.Join(parts, ", ")) + "; the data table names each verdict (Validity, under Methodology and Definitions)."
}

func seriesName(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// Value accessors shared by charts and sentences.
func valThroughput(c *servebench.CellResult) (float64, bool) {
	return c.SystemOutputThroughputTPS, true
}
func valSpeed(c *servebench.CellResult) (float64, bool) {
	return c.GenerationSpeedTPS.Mean, c.GenerationSpeedTPS.Count > 0
}
func valTTFT(c *servebench.CellResult) (float64, bool) {
	return c.TTFTSeconds.Mean, c.TTFTSeconds.Count > 0
}
func valITLms(c *servebench.CellResult) (float64, bool) {
	return c.ITLSeconds.Mean * 1000, c.ITLSeconds.Count > 0
}
func valEff(c *servebench.CellResult) (float64, bool) {
	if c.ScalingEfficiency == nil {
		return 0, false
	}
	return *c.ScalingEfficiency * 100, true
}
func valQueue(c *servebench.CellResult) (float64, bool) {
	if c.QueueWaitSeconds == nil {
		return 0, false
	}
	return c.QueueWaitSeconds.Mean, true
}
func valPrefill(c *servebench.CellResult) (float64, bool) {
	if c.PrefillSpeedTPS == nil {
		return 0, false
	}
	return c.PrefillSpeedTPS.Mean, true
}
func valEffPrefill(c *servebench.CellResult) (float64, bool) {
	return c.EffectivePrefillSpeedTPS, c.EffectivePrefillSpeedTPS > 0
}
func valPower(c *servebench.CellResult) (float64, bool) {
	if c.GPUPowerWatts == nil {
		return 0, false
	}
	return c.GPUPowerWatts.MeanWatts, true
}
func valPeakPower(c *servebench.CellResult) (float64, bool) {
	if c.GPUPowerWatts == nil {
		return 0, false
	}
	return c.GPUPowerWatts.PeakWatts, true
}

// condition writes "1K context, 4 requests".
func condition(c *servebench.CellResult) string {
	return fmt.Sprintf("%s context, %s", ctxLabel(c.ContextTokens), reqs(c.Concurrency))
}

func reqs(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}
