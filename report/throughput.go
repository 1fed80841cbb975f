package report

import (
	"fmt"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func (b *builder) sectionThroughput() {
	const id, title = "system-throughput", "System Throughput"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-throughput", title, "Average system throughput", "output tok/s", 1, valThroughput)
	t := &Table{Header: []string{"CONDITION", "THROUGHPUT"}}
	pk, pv := b.peak()
	t.Rows = append(t.Rows, []string{"Peak (" + condition(pk) + ")", fmtTPS(pv)})
	maxN := g.concs[len(g.concs)-1]
	mid := g.ctxs[len(g.ctxs)/2]
	longest := g.ctxs[len(g.ctxs)-1]
	for _, x := range uniqueInts(mid, longest) {
		if c := g.at(x, maxN); c != nil && c != pk {
			t.Rows = append(t.Rows, []string{condition(c), fmtTPS(c.SystemOutputThroughputTPS)})
		}
	}
	perHour := pv * 3600
	blocks := []Block{
		para("Aggregate token generation across all concurrent requests: output tokens produced inside the measured window divided by the window's length. Input tokens processed during prefill are excluded."),
		chartB(ch), tableB(t),
		para("At peak throughput (%s), this configuration produces approximately %s tokens per hour. This matters for batch workloads such as document processing, synthetic data generation or offline analysis.", condition(pk), fmtLarge(perHour))}
	if c := stats.HigherOffGrid(b.res.Cells); c != nil {
		blocks = append(blocks, para("Peak throughput is the highest of the sweep's cells, which share one output length (%s) so that runs compare like with like. A cell of another shape ran faster: %s %s, with %s per request, measured by the %s; its output length and load were not the sweep's, so it is not the peak.",
			counted(fmt.Sprint(pk.OutputTokens), "token"), fmtTPS(c.SystemOutputThroughputTPS), peakWhere(c, false), counted(fmt.Sprint(c.OutputTokens), "output token"), offGridWhat(c)))
	}
	b.add(id, title, 1, blocks...)
}

// offGridWhat names the part of the plan that measured an off-grid cell.
func offGridWhat(c *servebench.CellResult) string {
	switch c.Kind {
	case servebench.KindCapacity:
		return "capacity search of use case " + c.Scenario
	case servebench.KindScenario:
		return "dedicated scenario " + c.Scenario
	}
	return "plan's " + string(c.Kind) + " cells"
}

func uniqueInts(v ...int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range v {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
