package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
)

// openLoop reports whether c is an uncapped open-loop cell (a request-rate sweep's or a trace's):
// it has an arrival rate, not a concurrency, and stays out of the context × concurrency grid.
func openLoop(c *servebench.CellResult) bool {
	return c.Kind == servebench.KindRate || c.Kind == servebench.KindTrace
}

// sectionWorkloads renders the cells that are not on the context × concurrency grid: the
// request-rate sweep (requested vs achieved rate, goodput, saturation) and the dataset replay.
func (b *builder) sectionWorkloads() {
	var rate, data []*servebench.CellResult
	for i := range b.res.Cells {
		c := &b.res.Cells[i]
		switch {
		case c.Skipped:
		case openLoop(c):
			rate = append(rate, c)
		case c.Kind == servebench.KindDataset:
			data = append(data, c)
		}
	}
	slo := b.man.Plan.SLO
	if len(rate) > 0 {
		t := &Table{Header: []string{"CONTEXT", "REQUESTED", "SENT AT", "COMPLETED", "LATE SENDS", "TTFT MEAN", "TTFT P99", "E2E MEAN", "GOODPUT", "GOOD REQ/S", "STATE"}}
		saturated := 0
		for _, c := range rate {
			state := "kept pace"
			if c.Saturated {
				state, saturated = "past saturation", saturated+1
			}
			t.Rows = append(t.Rows, []string{ctxLabel(c.ContextTokens), fmtRate(c.RatePerSecond), fmtRate(c.AchievedRatePerSecond),
				fmtRate(c.RequestThroughputRPS), fmt.Sprint(c.LateSends), fmtMean(c.TTFTSeconds, fmtDur), fmtPctl(c, "ttft_seconds.p99", c.TTFTSeconds, c.TTFTSeconds.P99, fmtDur),
				fmtMean(c.E2ELatencySeconds, fmtDur), fmtOpt(c.Goodput, fmtPct), fmtOpt(c.GoodputRPS, fmtRate), state})
		}
		blocks := []Block{para("Open-loop cells: requests arrive on a schedule at the requested rate whatever is in flight, as users of a public service do. \"Sent at\" is the rate the requests really left at, \"completed\" the rate they finished inside the measured window.%s", sloSentence(slo)), tableB(t)}
		for _, rs := range b.res.RateSearches {
			blocks = append(blocks, para("%s", rateSearchSentence(rs)))
		}
		if saturated > 0 {
			blocks = append(blocks, note(fmt.Sprintf("%d of %d rates were past saturation: the server finished requests more slowly than they arrived, so the queue grew for as long as the cell ran. Their latencies measure queue growth, not a steady state; the highest rate that kept pace is the usable one.", saturated, len(rate))))
		}
		b.add("rate-sweep", "Request-Rate Sweep", 1, blocks...)
	}
	if len(data) > 0 {
		t := &Table{Header: []string{"LOAD", "REQUESTS", "INPUT TOK MEAN", "OUTPUT TOK MEAN", "TTFT MEAN", "SPEED/USER", "SYSTEM TOK/S", "GOODPUT", "SUCCESS"}}
		for _, c := range data {
			t.Rows = append(t.Rows, []string{loadLabel(c), fmt.Sprint(c.RequestsTotal), fmtNum(c.InputTokensMean, 0), fmtNum(c.OutputTokensMean, 0),
				fmtMean(c.TTFTSeconds, fmtDur), fmtMean(c.GenerationSpeedTPS, fmtTPS), fmtTPS(c.SystemOutputThroughputTPS), fmtOpt(c.Goodput, fmtPct), fmtPct(c.SuccessRate)})
		}
		src := "a dataset"
		if d := b.man.Plan.Dataset; d != nil {
			src = "the dataset " + d.Path
		}
		b.add("dataset", "Dataset Replay", 1, para("Prompts replayed as written from %s, in order, with the output lengths its entries ask for; input tokens are the server's count.%s", src, sloSentence(slo)), tableB(t))
	}
}

// loadLabel writes how a cell loads the target: "4 concurrent" or "2 req/s".
func loadLabel(c *servebench.CellResult) string {
	if openLoop(c) {
		return fmtRate(c.RatePerSecond)
	}
	return fmt.Sprintf("%d concurrent", c.Concurrency)
}

func fmtRate(v float64) string { return strings.TrimSuffix(fmtNum(v, 2), ".00") + " req/s" }

// sloSentence states the objectives goodput counts against.
func sloSentence(slo *servebench.Thresholds) string {
	if slo == nil {
		return ""
	}
	var parts []string
	if v := slo.TTFTSecondsMax; v != nil {
		parts = append(parts, "TTFT ≤ "+fmtDur(*v))
	}
	if v := slo.FirstContentSecondsMax; v != nil {
		parts = append(parts, "time to first answer ≤ "+fmtDur(*v))
	}
	if v := slo.ITLSecondsMax; v != nil {
		parts = append(parts, termITL+" ≤ "+fmtDur(*v))
	}
	if v := slo.E2ELatencySecondsMax; v != nil {
		parts = append(parts, "end-to-end ≤ "+fmtDur(*v))
	}
	if v := slo.GenerationSpeedTPSMin; v != nil {
		parts = append(parts, "speed ≥ "+fmtTPS(*v))
	}
	return " Goodput is the share of measured requests that succeeded and met every objective (" + strings.Join(parts, ", ") + "); good req/s counts them per second of the window."
}

// workloadCells are the measured cells off the context × concurrency grid (rate sweep, dataset).
func (b *builder) workloadCells() []*servebench.CellResult {
	var out []*servebench.CellResult
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; !c.Skipped && (openLoop(c) || c.Kind == servebench.KindDataset || sessionCell(c)) {
			out = append(out, c)
		}
	}
	return out
}

// workloadSummaryRows adds the off-grid cells to the summary table, whose CONC column then
// becomes LOAD (a concurrency or a rate).
func (b *builder) workloadSummaryRows(t *Table) {
	cells := b.workloadCells()
	if len(cells) == 0 {
		return
	}
	t.Header[1] = "LOAD"
	for _, c := range cells {
		ctx := ctxLabel(c.ContextTokens)
		if c.Kind == servebench.KindDataset {
			ctx = "dataset"
		}
		if sessionCell(c) {
			ctx = sessionLabel(c) + ", " + fmtNum(c.InputTokensMean, 0)
		}
		t.Rows = append(t.Rows, []string{ctx, loadLabel(c), fmtMean(c.TTFTSeconds, fmtDur) + meanPlusMinus(c.TTFTSeconds), fmtPctl(c, "ttft_seconds.p99", c.TTFTSeconds, c.TTFTSeconds.P99, fmtDur),
			fmtMean(c.GenerationSpeedTPS, fmtTPS), fmtTPS(c.SystemOutputThroughputTPS) + throughputPlusMinus(c), fmtPct(c.SuccessRate), ValidityLabel(c)})
	}
}

// peakCondition says where the peak throughput was measured, in a highlight's title case.
func peakCondition(c *servebench.CellResult) string { return peakWhere(c, true) }

// peakWhere says where a cell was measured: "@ 4 concurrent requests, 1K context", "@ 2 req/s,
// 1K context", "@ 4 concurrent, dataset prompts"; title capitalises the words of a highlight.
func peakWhere(c *servebench.CellResult, title bool) string {
	if c.Kind == servebench.KindDataset {
		return "@ " + loadLabel(c) + ", dataset prompts"
	}
	if sessionCell(c) {
		return fmt.Sprintf("@ %s, %s", loadLabel(c), sessionLabel(c))
	}
	reqs, ctx := "concurrent requests", "context"
	if title {
		reqs, ctx = "Concurrent Requests", "Context"
	}
	if openLoop(c) {
		return fmt.Sprintf("@ %s, %s %s", loadLabel(c), ctxLabel(c.ContextTokens), ctx)
	}
	return fmt.Sprintf("@ %d %s, %s %s", c.Concurrency, reqs, ctxLabel(c.ContextTokens), ctx)
}

// rateSearchSentence states what a rate search (--rate auto) found at one context.
func rateSearchSentence(rs servebench.RateSearchResult) string {
	s := fmt.Sprintf("Rate search at %s context (%d output tokens): ", ctxLabel(rs.ContextTokens), rs.OutputTokens)
	target := fmtPct0(rs.GoodputTarget)
	switch {
	case rs.RatePerSecond == 0:
		s += fmt.Sprintf("no measured rate kept goodput at %s or above", target)
	case rs.FailingRatePerSecond == 0:
		s += fmt.Sprintf("goodput stayed at %s or above at every measured rate, up to %s", target, fmtRate(rs.RatePerSecond))
	default:
		s += fmt.Sprintf("the highest rate whose goodput stayed at %s or above, with the server keeping pace, is %s; at %s it did not", target, fmtRate(rs.RatePerSecond), fmtRate(rs.FailingRatePerSecond))
	}
	if rs.Note != "" {
		s += " (" + rs.Note + ")"
	}
	return s + fmt.Sprintf(". %d rates measured.", len(rs.Rates))
}
