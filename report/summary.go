package report

import (
	"fmt"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/stats"
)

// peak is the run's peak throughput and its cell (stats.Peak: the sweep grid's highest
// system output throughput): the one every "peak throughput" of the report names.
func (b *builder) peak() (*servebench.CellResult, float64) {
	c := stats.Peak(b.res.Cells)
	if c == nil {
		return nil, 0
	}
	return c, c.SystemOutputThroughputTPS
}

// totals is the run's measured requests over every cell and its success rate (stats.RunSuccess).
func (b *builder) totals() (total int, rate float64) {
	_, total, rate = stats.RunSuccess(b.res.Cells)
	return total, rate
}

// headline is the verdict the summary leads with: the plan's capacity.headline use case, else
// the first analysed one; nil when no use case was analysed.
func (b *builder) headline() *CapacityVerdict {
	name := b.man.Plan.Capacity.Headline
	if name == "" { // a run folder from before the plan named its headline
		name = plan.Defaults(false).Capacity.Headline
	}
	for i := range b.rep.Capacity {
		if b.rep.Capacity[i].UseCase == name {
			return &b.rep.Capacity[i]
		}
	}
	if len(b.rep.Capacity) > 0 {
		return &b.rep.Capacity[0]
	}
	return nil
}

// noCapacityWhy says why a run has no capacity result: the plan named no use case, or the run
// stopped before its searches (then how to finish them).
func (b *builder) noCapacityWhy() string {
	if len(b.man.Plan.UseCases) > 0 && b.man.Status != "completed" {
		return fmt.Sprintf("the run stopped before its capacity searches (%s planned; servebench run --resume RUN_DIR runs them)", plural(len(b.man.Plan.UseCases), "use case"))
	}
	return "no use case was analysed (pass --use-cases default to search the built-in ones)"
}

// measuredAny reports whether any cell of the sweep (its grid or its request rates) sent
// requests (succeeded or not).
func (b *builder) measuredAny() bool {
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; (c.Kind == servebench.KindSweep || c.Kind == servebench.KindRate) && !c.Skipped && c.RequestsTotal > 0 {
			return true
		}
	}
	return false
}

// measuredAtOne reports whether any sweep cell at concurrency 1 was run (succeeded or not).
func (b *builder) measuredAtOne() bool {
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; c.Kind == servebench.KindSweep && c.Concurrency == 1 && !c.Skipped && c.RequestsTotal > 0 {
			return true
		}
	}
	return false
}

// openLoopOnly reports whether the run measured only off-grid cells (request rates, a dataset):
// nothing at a concurrency level.
func (b *builder) openLoopOnly() bool {
	return b.sweep.empty() && b.man.Plan.Sessions == nil && len(b.workloadCells()) > 0
}

func (b *builder) highlights() {
	r := b.rep
	if c, v := b.peak(); c != nil {
		r.Highlights = append(r.Highlights, Highlight{Value: fmtNum(v, 1), Label: "Tok/s Peak Throughput",
			Condition: peakCondition(c) + after(caveat(c))})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Tok/s Peak Throughput", Condition: "no cell completed a request"})
	}
	total, rate := b.totals()
	if total > 0 {
		r.Highlights = append(r.Highlights, Highlight{Value: fmtPct(rate), Label: "Success Rate",
			Condition: fmt.Sprintf("Across All Scenarios (%s)", counted(fmtCount(total), "measured request"))})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Success Rate", Condition: "no requests measured"})
	}
	if v := b.headline(); v != nil {
		cond := "@ " + v.Context + " Context (" + v.Title + ")"
		if v.Interrupted {
			cond += ", At Least This So Far (Search Interrupted)"
		}
		if u := b.sizingOf(v.UseCase); u != nil && u.UsersPerReplica != nil && b.res.Sizing != nil {
			if u.Basis == capacity.SizeBasisUsers {
				cond += fmt.Sprintf("; %s with the prompt cache (measured)", counted(usersLabel(*u), "user"))
			} else {
				cond += fmt.Sprintf(" ≈ %s at %s per request slot", counted(usersLabel(*u), "user"), fmtUsers(b.res.Sizing.UsersPerSlot))
			}
		}
		label := "Concurrent Requests"
		if v.LimitLabel == "1" {
			label = "Concurrent Request"
		}
		r.Highlights = append(r.Highlights, Highlight{Value: v.LimitLabel, Label: label, Condition: cond})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Concurrent Requests",
			Condition: "capacity not measured: " + b.noCapacityWhy()})
	}
}

func (b *builder) summaryTable() {
	t := Table{Caption: "Sweep summary (means unless noted; ± is the 95% interval)", Header: []string{"CONTEXT", "CONC", "TTFT MEAN", "TTFT P99", "SPEED/USER", "SYSTEM TOK/S", "SUCCESS", "VALIDITY"}}
	for _, c := range b.sweep.ordered() {
		t.Rows = append(t.Rows, []string{ctxLabel(c.ContextTokens), fmt.Sprint(c.Concurrency), fmtMean(c.TTFTSeconds, fmtDur) + meanPlusMinus(c.TTFTSeconds), fmtPctl(c, "ttft_seconds.p99", c.TTFTSeconds, c.TTFTSeconds.P99, fmtDur),
			fmtMean(c.GenerationSpeedTPS, fmtTPS), fmtTPS(c.SystemOutputThroughputTPS) + throughputPlusMinus(c), fmtPct(c.SuccessRate), ValidityLabel(c)})
	}
	b.workloadSummaryRows(&t)
	b.rep.Summary = t
}
