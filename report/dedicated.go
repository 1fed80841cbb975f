package report

import (
	"fmt"
	"sort"
	"strconv"

	servebench "github.com/servebench/servebench"
)

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

func (b *builder) sectionDedicated() {
	const id, title = "dedicated", "Dedicated Capacity per Scenario"
	intro := para("How fast is the model when the GPU is dedicated to our requests? Exactly N requests are released together and the next burst waits for all of them, so no request ever queues behind another of ours: the best-case per-user experience at each concurrency level.")
	var groups []*scenarioGroup
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
			groups = append(groups, g)
		}
		if prev := g.cells[c.Concurrency]; prev == nil || prev.RequestsTotal < c.RequestsTotal {
			g.cells[c.Concurrency] = c
		}
		concSet[c.Concurrency] = true
	}
	if len(groups) == 0 {
		b.add(id, title, 1, intro, missing("No dedicated-mode cells in this run. Add scenarios: to the plan (name, context, output_tokens, concurrency levels) or run the sweep with --mode dedicated to fill this view."))
		return
	}
	var concs []int
	for n := range concSet {
		concs = append(concs, n)
	}
	sort.Ints(concs)
	x := make([]string, len(concs))
	xv := make([]float64, len(concs))
	for i, n := range concs {
		x[i], xv[i] = strconv.Itoa(n), float64(n)
	}
	mk := func(cid, ctitle, caption, yName string, dec int, val func(*servebench.CellResult) (float64, bool)) *Chart {
		ch := &Chart{ID: cid, Title: ctitle, Caption: caption, XName: "concurrent requests", X: x, XValues: xv, XScale: "linear", YName: yName, Decimals: dec}
		for _, g := range groups {
			s := Series{Name: g.name}
			for _, n := range concs {
				var p *float64
				c := g.cells[n]
				if c != nil {
					if v, ok := val(c); ok {
						p = ptr(v)
					}
				}
				s.add(p, c)
			}
			ch.Series = append(ch.Series, s)
		}
		return ch
	}
	type at struct {
		g *scenarioGroup
		c *servebench.CellResult
		v float64
	}
	ext := func(max bool, val func(*servebench.CellResult) (float64, bool), onlyN int) *at {
		var best *at
		for _, g := range groups {
			for _, n := range concs {
				if onlyN > 0 && n != onlyN {
					continue
				}
				c := g.cells[n]
				if c == nil {
					continue
				}
				v, ok := val(c)
				if !ok {
					continue
				}
				if best == nil || (max && v > best.v) || (!max && v < best.v) {
					best = &at{g, c, v}
				}
			}
		}
		return best
	}
	who := func(a *at) string {
		if a.c.Concurrency == 1 {
			return a.g.name + ", single user"
		}
		return fmt.Sprintf("%s, %d concurrent", a.g.name, a.c.Concurrency)
	}
	maxN := concs[len(concs)-1]
	blocks := []Block{intro}

	// decode speed
	blocks = append(blocks, chartB(mk("chart-dedicated-speed", "Decode speed per scenario", "Per-user decode speed (tok/s) at each concurrency level, one line per scenario.", "tok/s per user", 1, valSpeed)))
	if hi, lo := ext(true, valSpeed, 0), ext(false, valSpeed, 0); hi != nil {
		blocks = append(blocks, para("Per-user decode speed ranges from %s (%s) down to %s (%s).", fmtTPS(hi.v), who(hi), fmtTPS(lo.v), who(lo)))
	}

	// the chunk gap (what users see) with the 20 ms and 70 ms perceptual marks
	gap := mk("chart-dedicated-itl", upperFirst(termChunkGap)+" per scenario", "Average "+termChunkGap+" (ms) at each concurrency level: the time between stream events, what users see; "+perceptualMarks+".", "ms", 1, valChunkGapMS)
	gap.Thresholds = perceptualThresholds()
	blocks = append(blocks, chartB(gap))
	if lo, hi := ext(false, valChunkGapMS, 0), ext(true, valChunkGapMS, 0); lo != nil {
		s := fmt.Sprintf("The best %s is %s (%s), rising to %s under the heaviest load (%s), which %s.", termChunkGap, fmtMS(lo.v/1000), who(lo), fmtMS(hi.v/1000), who(hi), perceivedAs(hi.v))
		if lo.c == hi.c {
			s = fmt.Sprintf("The %s is %s (%s), which %s.", termChunkGap, fmtMS(hi.v/1000), who(hi), perceivedAs(hi.v))
		}
		if hi.c.TokensPerChunk > 1.05 {
			s += fmt.Sprintf(" Events carried %.2f tokens each there, so %s was %s.", hi.c.TokensPerChunk, termITL, fmtMS(hi.c.ITLSeconds.Mean))
		}
		blocks = append(blocks, para("%s", s))
	}

	// scaling efficiency
	blocks = append(blocks, chartB(mk("chart-dedicated-scaling", "Scaling efficiency per scenario", "Scaling efficiency (%) at each concurrency level relative to ideal linear scaling.", "%", 0, valEff)))
	if hi, lo := ext(true, valEff, maxN), ext(false, valEff, maxN); hi != nil && maxN > 1 {
		blocks = append(blocks, para("At %d concurrent, scaling efficiency ranges from %.0f%% (%s) to %.0f%% (%s).", maxN, hi.v, hi.g.name, lo.v, lo.g.name))
	} else {
		blocks = append(blocks, missing("Scaling efficiency needs concurrency 1 in each scenario's levels."))
	}

	// per-user speed band and TTFT band across scenarios
	band := func(cid, ctitle, caption, yName string, dec int, val func(*servebench.CellResult) (float64, bool)) *Chart {
		ch := &Chart{ID: cid, Title: ctitle, Caption: caption, XName: "concurrent requests", X: x, XValues: xv, XScale: "linear", YName: yName, Decimals: dec}
		lo, hi := Series{Name: "best", Style: "band"}, Series{Name: "worst", Style: "band"}
		for _, n := range concs {
			var mn, mx *float64
			var mnCell, mxCell *servebench.CellResult // each edge point is marked as the cell it comes from
			for _, g := range groups {
				if c := g.cells[n]; c != nil {
					if v, ok := val(c); ok {
						if mn == nil || v < *mn {
							mn, mnCell = ptr(v), c
						}
						if mx == nil || v > *mx {
							mx, mxCell = ptr(v), c
						}
					}
				}
			}
			lo.add(mn, mnCell)
			hi.add(mx, mxCell)
		}
		lo.Name, hi.Name = "lowest", "highest"
		ch.Series = []Series{hi, lo}
		return ch
	}
	blocks = append(blocks, chartB(band("chart-dedicated-speed-band", "Per-user throughput range", fmt.Sprintf("Per-user decode speed range across %s at each concurrency level.", plural(len(groups), "scenario")), "tok/s per user", 1, valSpeed)))
	if hi := ext(true, valSpeed, 0); hi != nil {
		s := fmt.Sprintf("Peak per-user decode speed is %s (%s).", fmtTPS(hi.v), who(hi))
		if lo, top := ext(false, valSpeed, maxN), ext(true, valSpeed, maxN); lo != nil && maxN > 1 {
			s += fmt.Sprintf(" At %d concurrent, per-user speed ranges from %s to %s across scenarios.", maxN, fmtNum(lo.v, 1), fmtTPS(top.v))
		}
		blocks = append(blocks, para("%s", s))
	}
	blocks = append(blocks, chartB(band("chart-dedicated-ttft-band", "TTFT range", fmt.Sprintf("TTFT range across %s at each concurrency level.", plural(len(groups), "scenario")), "seconds", 3, valTTFT)))
	if lo, hi := ext(false, valTTFT, 0), ext(true, valTTFT, 0); lo != nil {
		blocks = append(blocks, para("Best TTFT is %s (%s), worst case %s (%s).", fmtDur(lo.v), who(lo), fmtDur(hi.v), who(hi)))
	}
	b.add(id, title, 1, blocks...)
}
