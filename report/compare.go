package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
)

// Comparison is a side-by-side report of several runs (e.g. one model on B200, H100 and A100),
// computed once by Compare and rendered by CompareMarkdown and CompareHTML.
type Comparison struct {
	Title    string    `json:"title"`
	Subtitle string    `json:"subtitle,omitempty"`
	Banner   string    `json:"banner,omitempty"`
	Labels   []string  `json:"labels"`
	Sections []Section `json:"sections"`
	// Frontier holds each common workload's answers at a target speed (AddFrontier).
	Frontier []CompareFrontier `json:"frontier,omitempty"`
}

// runLabel names a run's column: its label (--label), else the declared GPU, else the model,
// else the run id.
func runLabel(in Input) string {
	md := in.Manifest.Plan.Metadata
	switch {
	case md.Label != "":
		return md.Label
	case md.GPU != "":
		return md.GPU
	case md.ModelName != "":
		return md.ModelName
	case in.Manifest.Plan.Target.Model != "":
		return in.Manifest.Plan.Target.Model
	case in.Manifest.ID != "":
		return in.Manifest.ID
	}
	return in.Results.Run.ID
}

// Compare lines up several runs: a vllm-bench-serve-style table at the headline cell (the
// largest concurrency, then the largest context, measured in every run), throughput and latency
// at every common cell, overlaid charts over concurrency, and the capacity verdicts side by side.
func Compare(ins []Input) *Comparison {
	ins = append([]Input(nil), ins...)
	for i := range ins {
		ins[i] = displayInput(ins[i])
	}
	cmp := &Comparison{Title: "Benchmark comparison"}
	reps := make([]*Report, len(ins))
	idx := make([]map[servebench.CellKey]*servebench.CellResult, len(ins))
	seen := map[string]int{}
	anySim := false
	for i, in := range ins {
		reps[i] = Build(in)
		l := runLabel(in)
		seen[l]++
		if seen[l] > 1 {
			l = fmt.Sprintf("%s (%d)", l, seen[l])
		}
		cmp.Labels = append(cmp.Labels, l)
		anySim = anySim || reps[i].Simulated
		idx[i] = map[servebench.CellKey]*servebench.CellResult{}
		for j := range in.Results.Cells {
			c := &in.Results.Cells[j]
			if measured(c) {
				if prev := idx[i][c.CellKey]; prev == nil || prev.RequestsTotal < c.RequestsTotal {
					idx[i][c.CellKey] = c
				}
			}
		}
	}
	if len(ins) > 0 {
		cmp.Subtitle = fmt.Sprintf("%d runs: %s", len(ins), joinAnd(cmp.Labels))
	}
	if anySim {
		cmp.Banner = "SIMULATED: at least one run in this comparison was produced by servebench's built-in simulated engine, not by real hardware. Its columns are what-if figures, not measurements."
	}
	// runs table
	runs := &Table{Header: []string{"RUN", "MODEL", "GPU", "ENGINE", "STATUS", "SIMULATED", "RUN ID"}}
	for i, r := range reps {
		gpu := "—"
		for _, f := range r.HardwareTable {
			if f.Label == "GPU" {
				gpu = f.Value
			}
		}
		eng := "—"
		for _, f := range r.HardwareTable {
			if f.Label == "Engine" {
				eng = f.Value
			}
		}
		runs.Rows = append(runs.Rows, []string{cmp.Labels[i], r.Title, gpu, eng, r.Run.Status, simulatedWord(r.Simulated), r.Run.ID})
	}
	cmp.Sections = append(cmp.Sections, Section{ID: "runs", Title: "Runs", Level: 1, Blocks: []Block{tableB(runs)}})

	// common cells
	var common []servebench.CellKey
	if len(idx) > 0 {
		for k := range idx[0] {
			all := true
			for _, m := range idx[1:] {
				if m[k] == nil {
					all = false
					break
				}
			}
			if all {
				common = append(common, k)
			}
		}
	}
	slices.SortFunc(common, servebench.CellKey.Compare)
	if len(common) == 0 {
		cmp.Sections = append(cmp.Sections, Section{ID: "headline", Title: "Token Throughput and Latency", Level: 1, Blocks: []Block{
			missing("The runs share no measured cell (same scenario, load mode, context, output length and concurrency). Rerun them with the same --contexts, --concurrency, --output-tokens and --mode to compare them side by side.")}})
	} else {
		// The headline is the heaviest common sweep cell (any common cell when no sweep cell is).
		pool := []servebench.CellKey{}
		for _, k := range common {
			if k.Kind == servebench.KindSweep {
				pool = append(pool, k)
			}
		}
		if len(pool) == 0 {
			pool = common
		}
		head := pool[0]
		for _, k := range pool[1:] {
			if k.Concurrency > head.Concurrency || (k.Concurrency == head.Concurrency && k.ContextTokens > head.ContextTokens) {
				head = k
			}
		}
		cmp.Sections = append(cmp.Sections, compareHeadline(cmp.Labels, idx, head), compareAllCells(cmp.Labels, idx, common))
		cmp.Sections = append(cmp.Sections, compareCharts(cmp.Labels, idx, common, head)...)
	}
	// capacity side by side
	capT := &Table{Header: append([]string{"USE CASE"}, cmp.Labels...)}
	order := []string{}
	titles := map[string]string{}
	limits := map[string][]string{}
	for i, r := range reps {
		for _, v := range r.Capacity {
			k := v.UseCase + "@" + v.Context
			if _, ok := limits[k]; !ok {
				order = append(order, k)
				titles[k] = v.Title + " (" + v.Context + ")"
				limits[k] = make([]string, len(reps))
			}
			limits[k][i] = v.LimitLabel
			if rg := v.LimitRange; rg != nil && rg[0] != rg[1] {
				limits[k][i] += fmt.Sprintf(" (%d–%d)", rg[0], rg[1])
			}
		}
	}
	for _, k := range order {
		row := []string{titles[k]}
		for _, l := range limits[k] {
			if l == "" {
				l = capacity.LabelNotMeasured
			}
			row = append(row, l)
		}
		capT.Rows = append(capT.Rows, row)
	}
	capBlocks := []Block{para("Largest concurrency within each use case's thresholds, per run (\"~\" interpolated, \"+\" the search ceiling still passed; in parentheses the levels the run's data cannot tell apart from its limit at 95%% confidence, where that is more than one).")}
	if len(capT.Rows) > 0 {
		capBlocks = append(capBlocks, tableB(capT))
	} else {
		capBlocks = append(capBlocks, missing("No run has a capacity analysis; run with --use-cases default."))
	}
	cmp.Sections = append(cmp.Sections, Section{ID: "capacity", Title: "Capacity per Use Case", Level: 1, Blocks: capBlocks})
	cmp.Sections = append(cmp.Sections, Section{ID: "methodology", Title: "Definitions", Level: 1, Blocks: compareDefinitions(ins, cmp.Labels)})
	return cmp
}

// compareDefinitions is the comparison's Definitions section: servebench's definitions for the
// runs it measured, and for each tool an imported run came from, that tool's own (its figures
// are the tool's, under its definitions, which differ from servebench's: TTFT on a role-only
// chunk, ITL with or without the first token, throughput over the whole benchmark).
func compareDefinitions(ins []Input, labels []string) []Block {
	var measured []string
	imported := map[string][]string{} // labels of the runs imported from each format
	var formats []string
	tools := map[string]*servebench.ImportSource{}
	for i, in := range ins {
		im := in.Manifest.Imported
		if im == nil {
			measured = append(measured, labels[i])
			continue
		}
		if _, ok := imported[im.Format]; !ok {
			formats = append(formats, im.Format)
			tools[im.Format] = im
		}
		imported[im.Format] = append(imported[im.Format], labels[i])
	}
	if len(formats) == 0 {
		return []Block{note(itlVersusChunkGap), tableB(definitionsTable())}
	}
	var blocks []Block
	var from []string
	for _, f := range formats {
		from = append(from, fmt.Sprintf("%s %s imported from %s", joinAnd(imported[f]), map[bool]string{true: "was", false: "were"}[len(imported[f]) == 1], importedTool(tools[f])))
	}
	blocks = append(blocks, note(fmt.Sprintf("Not every column was measured by servebench: %s. An imported run's figures are its tool's own, under that tool's definitions (below), not servebench's. Where the definitions differ (TTFT ending at a role-only chunk, ITL with or without the first token, throughput over the whole benchmark instead of a steady-state window), a difference between columns may be the definitions', not the servers'; docs/exchange.md says by how much.",
		joinAnd(from))))
	t := definitionsTable()
	if len(measured) > 0 {
		t.Caption = "servebench's definitions: " + joinAnd(measured)
	} else {
		t.Caption = "servebench's definitions, for reference (no run here was measured by servebench)"
	}
	blocks = append(blocks, note(itlVersusChunkGap), tableB(t))
	for _, f := range formats {
		im := tools[f]
		rows, ok := importDefinitions[f]
		if !ok {
			blocks = append(blocks, missing(fmt.Sprintf("%s: imported from %s, whose definitions servebench does not list (format %q); docs/exchange.md lists the formats it reads.", joinAnd(imported[f]), im.Tool, f)))
			continue
		}
		it := &Table{Caption: fmt.Sprintf("%s's definitions: %s (imported)", im.Tool, joinAnd(imported[f])), Header: []string{"FIELD", strings.ToUpper(im.Tool + "'s definition")}}
		for _, r := range rows {
			it.Rows = append(it.Rows, []string{r.Label, r.Value})
		}
		blocks = append(blocks, tableB(it))
	}
	return blocks
}

func definitionsTable() *Table {
	t := &Table{Header: []string{"METRIC", "DEFINITION"}}
	for _, d := range Definitions {
		t.Rows = append(t.Rows, []string{d.Label, d.Value})
	}
	return t
}

func describeKey(k servebench.CellKey) string {
	return fmt.Sprintf("%s in / %d out tokens at %s (scenario %s, %s mode)", ctxLabel(k.ContextTokens), k.OutputTokens, capacity.Requests(k.Concurrency), k.Scenario, k.LoadMode)
}

func compareHeadline(labels []string, idx []map[servebench.CellKey]*servebench.CellResult, k servebench.CellKey) Section {
	tp := &Table{Caption: "Token throughput (± the 95% interval)", Header: append([]string{"METRIC"}, labels...)}
	lat := &Table{Caption: "Latency (mean ± its 95% interval / p99, ms)", Header: append([]string{"METRIC"}, labels...)}
	row := func(t *Table, name string, f func(*servebench.CellResult) string) {
		r := []string{name}
		for _, m := range idx {
			r = append(r, f(m[k]))
		}
		t.Rows = append(t.Rows, r)
	}
	row(tp, "Output generation (tok/s)", func(c *servebench.CellResult) string {
		return fmtInt(int(c.SystemOutputThroughputTPS+0.5)) + throughputPlusMinus(c)
	})
	row(tp, "Total, input & output (tok/s)", func(c *servebench.CellResult) string {
		return fmtInt(int(c.TotalThroughputTPS+0.5)) + plusMinusN(c.TotalThroughputCI95, c.TotalThroughputTPS, c.RequestsSucceeded)
	})
	row(tp, "Per-user generation (tok/s)", func(c *servebench.CellResult) string {
		return fmtMean(c.GenerationSpeedTPS, func(v float64) string { return fmtNum(v, 1) }) + meanPlusMinus(c.GenerationSpeedTPS)
	})
	row(tp, "Success rate", func(c *servebench.CellResult) string { return fmtPct(c.SuccessRate) })
	row(tp, "Validity", func(c *servebench.CellResult) string { return ValidityLabel(c) })
	pair := func(c *servebench.CellResult, field string, s servebench.Summary) string {
		return fmtMean(s, ms) + meanPlusMinus(s) + " / " + fmtPctl(c, field+".p99", s, s.P99, ms)
	}
	row(lat, "Time to first token", func(c *servebench.CellResult) string { return pair(c, "ttft_seconds", c.TTFTSeconds) })
	row(lat, "ITL (per token; vLLM's TPOT)", func(c *servebench.CellResult) string { return pair(c, "itl_seconds", c.ITLSeconds) })
	row(lat, upperFirst(termChunkGap)+" (vLLM's ITL)", func(c *servebench.CellResult) string { return pair(c, "chunk_gap_seconds", c.ChunkGapSeconds) })
	row(lat, "End-to-end latency", func(c *servebench.CellResult) string { return pair(c, "e2e_latency_seconds", c.E2ELatencySeconds) })
	blocks := []Block{para("Workload: %s, the heaviest cell measured in every run.", describeKey(k)), tableB(tp), tableB(lat)}
	if s := throughputVerdict(labels, idx, k); s != "" {
		blocks = append(blocks, para("%s", s))
	}
	return Section{ID: "headline", Title: "Token Throughput and Latency", Level: 1, Blocks: blocks}
}

// throughputVerdict says which run leads on output throughput at cell k, by how much, and
// whether the runs' 95% intervals show that difference (stats.DifferenceCI95 of the highest
// and the lowest run): a ratio between two runs the data cannot tell apart is not a finding.
func throughputVerdict(labels []string, idx []map[servebench.CellKey]*servebench.CellResult, k servebench.CellKey) string {
	best, worst := 0, 0
	for i, m := range idx {
		if m[k].SystemOutputThroughputTPS > idx[best][k].SystemOutputThroughputTPS {
			best = i
		}
		if m[k].SystemOutputThroughputTPS < idx[worst][k].SystemOutputThroughputTPS {
			worst = i
		}
	}
	hi, lo := idx[best][k], idx[worst][k]
	if best == worst || lo.SystemOutputThroughputTPS <= 0 {
		return ""
	}
	d := hi.SystemOutputThroughputTPS - lo.SystemOutputThroughputTPS
	values := fmt.Sprintf("%s vs %s", fmtTPS(hi.SystemOutputThroughputTPS), fmtTPS(lo.SystemOutputThroughputTPS))
	iv, ok := stats.DifferenceCI95(hi.SystemOutputThroughputTPS, hi.SystemOutputThroughputCI95, lo.SystemOutputThroughputTPS, lo.SystemOutputThroughputCI95)
	ratio := hi.SystemOutputThroughputTPS / lo.SystemOutputThroughputTPS
	if few := min(hi.RequestsSucceeded, lo.RequestsSucceeded); ok && !stats.IntervalShown(few) {
		return fmt.Sprintf("%s generates %.2f× the output throughput of %s at this workload (%s); one of the two rests on %s, fewer than the %d an interval needs, so whether the difference is more than noise is not known.",
			labels[best], ratio, labels[worst], values, plural(few, "successful request"), stats.MinIntervalSamples)
	}
	if !ok {
		return fmt.Sprintf("%s generates %.2f× the output throughput of %s at this workload (%s); at least one of the two has no 95%% interval for it (a window shorter than two request lifetimes, or a run folder from before servebench reported intervals), so whether the difference is more than noise is not known.",
			labels[best], ratio, labels[worst], values)
	}
	diff := fmtNum(d, 1) + " ± " + fmtNum((iv.High-iv.Low)/2, 1) + " tok/s at 95%"
	if iv.Low > 0 {
		return fmt.Sprintf("%s generates %.2f× the output throughput of %s at this workload (%s; the difference, %s, is more than the two runs' uncertainty).",
			labels[best], ratio, labels[worst], values, diff)
	}
	return fmt.Sprintf("%s and %s do not differ measurably in output throughput at this workload (%s: the difference, %s, includes zero).",
		labels[best], labels[worst], values, diff)
}

func compareAllCells(labels []string, idx []map[servebench.CellKey]*servebench.CellResult, common []servebench.CellKey) Section {
	hdr := []string{"CELL"}
	for _, l := range labels {
		hdr = append(hdr, l+" OUTPUT TOK/S", l+" TTFT MEAN")
	}
	t := &Table{Header: hdr}
	for _, k := range common {
		r := []string{fmt.Sprintf("%s %s/%d c=%d", k.Scenario, ctxLabel(k.ContextTokens), k.OutputTokens, k.Concurrency)}
		for _, m := range idx {
			c := m[k]
			r = append(r, fmtNum(c.SystemOutputThroughputTPS, 1)+throughputPlusMinus(c)+after(caveat(c)),
				fmtDur(c.TTFTSeconds.Mean)+meanPlusMinus(c.TTFTSeconds))
		}
		t.Rows = append(t.Rows, r)
	}
	return Section{ID: "common-cells", Title: "Every Common Cell", Level: 1, Blocks: []Block{
		para("Output throughput and mean TTFT at each of the %s measured in every run (± the 95%% interval; a cell that is not valid says so beside its throughput).", plural(len(common), "cell")), tableB(t)}}
}

// compareCharts overlays the runs over concurrency at the headline cell's scenario, context and
// output length.
func compareCharts(labels []string, idx []map[servebench.CellKey]*servebench.CellResult, common []servebench.CellKey, head servebench.CellKey) []Section {
	var concs []int
	for _, k := range common {
		if k.Kind == head.Kind && k.Scenario == head.Scenario && k.LoadMode == head.LoadMode && k.ContextTokens == head.ContextTokens && k.OutputTokens == head.OutputTokens {
			concs = append(concs, k.Concurrency)
		}
	}
	x := make([]string, len(concs))
	xv := make([]float64, len(concs))
	for i, n := range concs {
		x[i], xv[i] = strconv.Itoa(n), float64(n)
	}
	mk := func(id, title, yName string, dec int, val func(*servebench.CellResult) (float64, bool)) *Chart {
		ch := &Chart{ID: id, Title: title, Caption: fmt.Sprintf("%s vs concurrency at %s in / %d out tokens, one line per run.", title, ctxLabel(head.ContextTokens), head.OutputTokens),
			XName: "concurrent requests", X: x, XValues: xv, XScale: "linear", YName: yName, Decimals: dec}
		for i, m := range idx {
			s := Series{Name: labels[i]}
			for _, n := range concs {
				k := head
				k.Concurrency = n
				var p *float64
				c := m[k]
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
	// the chunk gap is what users see: the perceptual marks judge it
	gap := mk("cmp-chunk-gap", "Mean chunk gap", "ms", 1, valChunkGapMS)
	gap.Thresholds = perceptualThresholds()
	return []Section{{ID: "overlay", Title: "Side by Side over Concurrency", Level: 1, Blocks: []Block{
		chartB(mk("cmp-throughput", "System output throughput", "output tok/s", 1, valThroughput)),
		chartB(mk("cmp-speed", "Per-user generation speed", "tok/s per user", 1, valSpeed)),
		chartB(mk("cmp-ttft", "Mean TTFT", "seconds", 3, valTTFT)),
		chartB(mk("cmp-itl", "Mean "+termITL, "ms", 1, valITLms)),
		chartB(gap),
	}}}
}

// simulatedWord fills the runs table's SIMULATED column.
func simulatedWord(sim bool) string {
	if sim {
		return "SIMULATED"
	}
	return "no (real target)"
}
