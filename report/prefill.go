package report

import (
	"fmt"

	servebench "github.com/servebench/servebench"
)

func (b *builder) sectionPrefill() {
	const id, title = "prefill-speed", "Per-User Prefill Speed"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	val, label := valPrefill, "Average per-user prefill speed"
	blocks := []Block{para("Rate at which the server processes a request's prompt before generating: mean input tokens / mean server-side prefill time. It sets the non-queue part of TTFT.")}
	if !g.has(valPrefill) {
		val, label = valEffPrefill, "Effective prefill speed (includes queueing)"
		why := b.unavailable("prefill_speed_tps")
		if why == "" {
			why = "the server reported no prefill timings"
		}
		blocks = append(blocks, missing(fmt.Sprintf("Server-side prefill speed is unavailable (%s); pass --metrics-url or use a server that reports per-request timings. Shown instead: the effective prefill speed, mean(input tokens / TTFT), which includes queueing and so understates the GPU's prefill rate under load.", why)))
	}
	ch := g.chart("chart-prefill", title, label, "tok/s", 0, val)
	t := &Table{Header: []string{"CONCURRENT REQUESTS", "PEAKS AT", "PEAK SPEED"}}
	declines := 0
	for _, n := range g.concs {
		var best *servebench.CellResult
		var bv float64
		for _, x := range g.ctxs {
			if c := g.at(x, n); c != nil {
				if v, ok := val(c); ok && (best == nil || v > bv) {
					best, bv = c, v
				}
			}
		}
		if best == nil {
			continue
		}
		longest := 0
		for _, x := range g.ctxs {
			if c := g.at(x, n); c != nil {
				if _, ok := val(c); ok {
					longest = x
				}
			}
		}
		if best.ContextTokens != longest {
			declines++
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(n), ctxLabel(best.ContextTokens) + " context", fmtInt(int(bv+0.5)) + " tok/s"})
	}
	blocks = append(blocks, chartB(ch), tableB(t))
	switch {
	case len(g.ctxs) == 1:
		blocks = append(blocks, para("With one context length measured (%s), this run cannot show how prefill speed changes with context; measure several (--contexts 1k,8k,32k) to see where it peaks.", ctxLabel(g.ctxs[0])))
	case declines > 0:
		blocks = append(blocks, para("At %d of %d concurrency levels, prefill speed peaks before the longest measured context and then declines as attention over more context adds work. Such a peak reflects GPU saturation (compute or memory bandwidth) or engine settings such as chunked-prefill limits, which cap the tokens processed per forward pass.", declines, len(t.Rows)))
	default:
		at := "at every concurrency level"
		if len(t.Rows) == 1 {
			at = "at the one concurrency level measured"
		}
		blocks = append(blocks, para("Prefill speed still rises at the longest measured context %s: the GPU is not yet saturated by prefill in this range.", at))
	}
	b.add(id, title, 1, blocks...)
}
