package report

import (
	servebench "github.com/servebench/servebench"
)

func (b *builder) sectionScaling() {
	const id, title = "scaling-efficiency", "Scaling Efficiency"
	intro := para("Share of ideal linear scaling achieved: throughput(N) / (N × throughput(1)) at the same context. 100%% means N requests get N times the single-request throughput, with no per-user slowdown.")
	if b.sweep.empty() || !b.sweep.has(valEff) {
		b.add(id, title, 1, intro, missing("Scaling efficiency was not computed: it needs concurrency 1 measured at the same context (add 1 to --concurrency)."))
		return
	}
	g := b.sweep
	ch := g.chart("chart-scaling", title, "Scaling efficiency (%)", "%", 0, valEff)
	maxN := g.concs[len(g.concs)-1]
	var lo, hi *servebench.CellResult
	for _, x := range g.ctxs {
		if c := g.at(x, maxN); c != nil && c.ScalingEfficiency != nil {
			if lo == nil || *c.ScalingEfficiency < *lo.ScalingEfficiency {
				lo = c
			}
			if hi == nil || *c.ScalingEfficiency > *hi.ScalingEfficiency {
				hi = c
			}
		}
	}
	blocks := []Block{intro, chartB(ch)}
	if lo != nil && lo == hi {
		blocks = append(blocks, para("At %d concurrent requests, scaling efficiency is %s (%s context). High efficiency at a target concurrency means headroom; sharply dropping efficiency signals diminishing returns.",
			maxN, fmtPct0(*lo.ScalingEfficiency), ctxLabel(lo.ContextTokens)))
	} else if lo != nil {
		blocks = append(blocks, para("At %d concurrent requests, scaling efficiency ranges from %s (%s context) down to %s (%s context). High efficiency at a target concurrency means headroom; sharply dropping efficiency signals diminishing returns.",
			maxN, fmtPct0(*hi.ScalingEfficiency), ctxLabel(hi.ContextTokens), fmtPct0(*lo.ScalingEfficiency), ctxLabel(lo.ContextTokens)))
	}
	b.add(id, title, 1, blocks...)
}
