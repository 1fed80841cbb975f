package report

import (
	"fmt"
	"sort"
	"strconv"

	servebench "github.com/servebench/servebench"
)

// dedicatedView is the dedicated-capacity view's cells: one group per workload (a scenario, or
// the sweep's shape when the sweep ran in dedicated mode), by concurrency.
type dedicatedView struct {
	groups []*scenarioGroup
	concs  []int // every group's levels, ascending
}

// scenarioGroup is one workload of the dedicated-capacity view.
type scenarioGroup struct {
	name  string
	cells map[int]*servebench.CellResult // by concurrency
}

func (b *builder) scenarioTitle(c *servebench.CellResult) string {
	if c.Kind == servebench.KindSweep {
		return fmt.Sprintf("%s in / %d out", ctxLabel(c.ContextTokens), c.OutputTokens)
	}
	for _, s := range b.man.Plan.Scenarios {
		if s.Name == c.Scenario && s.Title != "" {
			return s.Title
		}
	}
	return c.Scenario
}

// dedicatedCells groups the run's measured dedicated-burst cells by workload: the view is of
// how the load was released (N requests together), whichever part of the plan asked for it.
func (b *builder) dedicatedCells() dedicatedView {
	var v dedicatedView
	byName := map[string]*scenarioGroup{}
	concSet := map[int]bool{}
	for i := range b.res.Cells {
		c := &b.res.Cells[i]
		if c.LoadMode != servebench.ModeDedicated || !measured(c) {
			continue
		}
		name := b.scenarioTitle(c)
		g := byName[name]
		if g == nil {
			g = &scenarioGroup{name: name, cells: map[int]*servebench.CellResult{}}
			byName[name] = g
			v.groups = append(v.groups, g)
		}
		if prev := g.cells[c.Concurrency]; prev == nil || prev.RequestsTotal < c.RequestsTotal {
			g.cells[c.Concurrency] = c
		}
		concSet[c.Concurrency] = true
	}
	for n := range concSet {
		v.concs = append(v.concs, n)
	}
	sort.Ints(v.concs)
	return v
}

// cells returns the view's cells by group, then concurrency; only those at concurrency n when
// n > 0.
func (v dedicatedView) cells(n int) []*servebench.CellResult {
	var out []*servebench.CellResult
	for _, g := range v.groups {
		for _, m := range v.concs {
			if c := g.cells[m]; c != nil && (n == 0 || m == n) {
				out = append(out, c)
			}
		}
	}
	return out
}

// chart is a chart with concurrency on the x axis and one series per group.
func (v dedicatedView) chart(id, title, caption, yName string, decimals int) *Chart {
	ch := &Chart{ID: id, Title: title, Caption: caption, XName: "concurrent requests", XScale: "linear", YName: yName, Decimals: decimals}
	for _, n := range v.concs {
		ch.X = append(ch.X, strconv.Itoa(n))
		ch.XValues = append(ch.XValues, float64(n))
	}
	return ch
}

// lines is the chart of val, one line per group.
func (v dedicatedView) lines(id, title, caption, yName string, decimals int, val func(*servebench.CellResult) (float64, bool)) *Chart {
	ch := v.chart(id, title, caption, yName, decimals)
	names := make([]string, len(v.groups))
	for i, g := range v.groups {
		names[i] = g.name
	}
	plot(ch, names, v.concs, func(i, n int) *servebench.CellResult { return v.groups[i].cells[n] }, val, false)
	return ch
}

// band is the chart of val's range across the groups at each level: its highest and lowest,
// each point marked as the cell it comes from.
func (v dedicatedView) band(id, title, caption, yName string, decimals int, val func(*servebench.CellResult) (float64, bool)) *Chart {
	ch := v.chart(id, title, caption, yName, decimals)
	lo, hi := Series{Name: "lowest", Style: "band"}, Series{Name: "highest", Style: "band"}
	for _, n := range v.concs {
		at := v.cells(n)
		mnCell, mn := extreme(at, false, val)
		mxCell, mx := extreme(at, true, val)
		lo.add(ptrIf(mnCell != nil, mn), mnCell)
		hi.add(ptrIf(mxCell != nil, mx), mxCell)
	}
	ch.Series = []Series{hi, lo}
	return ch
}

// ptrIf is &v when ok, else nil.
func ptrIf(ok bool, v float64) *float64 {
	if !ok {
		return nil
	}
	return ptr(v)
}

func (b *builder) sectionDedicated() {
	const id, title = "dedicated", "Dedicated Capacity per Scenario"
	intro := para("How fast is the model when the GPU is dedicated to our requests? Exactly N requests are released together and the next burst waits for all of them, so no request ever queues behind another of ours: the best-case per-user experience at each concurrency level.")
	v := b.dedicatedCells()
	if len(v.groups) == 0 {
		b.add(id, title, 1, intro, missing("No dedicated-mode cells in this run. Add scenarios: to the plan (name, context, output_tokens, concurrency levels) or run the sweep with --mode dedicated to fill this view."))
		return
	}
	blocks := []Block{intro}
	blocks = append(blocks, b.dedicatedSpeed(v)...)
	blocks = append(blocks, b.dedicatedChunkGap(v)...)
	blocks = append(blocks, b.dedicatedScaling(v)...)
	blocks = append(blocks, b.dedicatedRanges(v)...)
	b.add(id, title, 1, blocks...)
}

// who names a cell of the dedicated view: "long documents, single user", "chat, 4 concurrent".
func (b *builder) who(c *servebench.CellResult) string {
	if c.Concurrency == 1 {
		return b.scenarioTitle(c) + ", single user"
	}
	return fmt.Sprintf("%s, %d concurrent", b.scenarioTitle(c), c.Concurrency)
}

// dedicatedSpeed is the per-user decode speed of each workload at each level.
func (b *builder) dedicatedSpeed(v dedicatedView) []Block {
	blocks := []Block{chartB(v.lines("chart-dedicated-speed", "Decode speed per scenario", "Per-user decode speed (tok/s) at each concurrency level, one line per scenario.", "tok/s per user", 1, valSpeed))}
	if hi, hv := extreme(v.cells(0), true, valSpeed); hi != nil {
		lo, lv := extreme(v.cells(0), false, valSpeed)
		blocks = append(blocks, para("Per-user decode speed ranges from %s (%s) down to %s (%s).", fmtTPS(hv), b.who(hi), fmtTPS(lv), b.who(lo)))
	}
	return blocks
}

// dedicatedChunkGap is the chunk gap (what users see) with the 20 ms and 70 ms perceptual marks.
func (b *builder) dedicatedChunkGap(v dedicatedView) []Block {
	gap := v.lines("chart-dedicated-itl", upperFirst(termChunkGap)+" per scenario", "Average "+termChunkGap+" (ms) at each concurrency level: the time between stream events, what users see; "+perceptualMarks+".", "ms", 1, valChunkGapMS)
	gap.Thresholds = perceptualThresholds()
	blocks := []Block{chartB(gap)}
	lo, lv := extreme(v.cells(0), false, valChunkGapMS)
	hi, hv := extreme(v.cells(0), true, valChunkGapMS)
	if lo == nil {
		return blocks
	}
	s := fmt.Sprintf("The best %s is %s (%s), rising to %s under the heaviest load (%s), which %s.", termChunkGap, fmtMS(lv/1000), b.who(lo), fmtMS(hv/1000), b.who(hi), perceivedAs(hv))
	if lo == hi {
		s = fmt.Sprintf("The %s is %s (%s), which %s.", termChunkGap, fmtMS(hv/1000), b.who(hi), perceivedAs(hv))
	}
	if hi.TokensPerChunk > 1.05 {
		s += fmt.Sprintf(" Events carried %.2f tokens each there, so %s was %s.", hi.TokensPerChunk, termITL, fmtMS(hi.ITLSeconds.Mean))
	}
	return append(blocks, para("%s", s))
}

// dedicatedScaling is each workload's scaling efficiency, compared at the highest level.
func (b *builder) dedicatedScaling(v dedicatedView) []Block {
	blocks := []Block{chartB(v.lines("chart-dedicated-scaling", "Scaling efficiency per scenario", "Scaling efficiency (%) at each concurrency level relative to ideal linear scaling.", "%", 0, valEff))}
	maxN := v.concs[len(v.concs)-1]
	hi, hv := extreme(v.cells(maxN), true, valEff)
	lo, lv := extreme(v.cells(maxN), false, valEff)
	if hi != nil && maxN > 1 {
		return append(blocks, para("At %d concurrent, scaling efficiency ranges from %.0f%% (%s) to %.0f%% (%s).", maxN, hv, b.scenarioTitle(hi), lv, b.scenarioTitle(lo)))
	}
	return append(blocks, missing("Scaling efficiency needs concurrency 1 in each scenario's levels."))
}

// dedicatedRanges are the per-user speed and TTFT ranges across the workloads.
func (b *builder) dedicatedRanges(v dedicatedView) []Block {
	var blocks []Block
	maxN := v.concs[len(v.concs)-1]
	blocks = append(blocks, chartB(v.band("chart-dedicated-speed-band", "Per-user throughput range", fmt.Sprintf("Per-user decode speed range across %s at each concurrency level.", plural(len(v.groups), "scenario")), "tok/s per user", 1, valSpeed)))
	if hi, hv := extreme(v.cells(0), true, valSpeed); hi != nil {
		s := fmt.Sprintf("Peak per-user decode speed is %s (%s).", fmtTPS(hv), b.who(hi))
		lo, lv := extreme(v.cells(maxN), false, valSpeed)
		if _, tv := extreme(v.cells(maxN), true, valSpeed); lo != nil && maxN > 1 {
			s += fmt.Sprintf(" At %d concurrent, per-user speed ranges from %s to %s across scenarios.", maxN, fmtNum(lv, 1), fmtTPS(tv))
		}
		blocks = append(blocks, para("%s", s))
	}
	blocks = append(blocks, chartB(v.band("chart-dedicated-ttft-band", "TTFT range", fmt.Sprintf("TTFT range across %s at each concurrency level.", plural(len(v.groups), "scenario")), "seconds", 3, valTTFT)))
	if lo, lv := extreme(v.cells(0), false, valTTFT); lo != nil {
		hi, hv := extreme(v.cells(0), true, valTTFT)
		blocks = append(blocks, para("Best TTFT is %s (%s), worst case %s (%s).", fmtDur(lv), b.who(lo), fmtDur(hv), b.who(hi)))
	}
	return blocks
}
