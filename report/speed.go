package report

import (
	"fmt"

	"github.com/servebench/servebench/capacity"
)

// speedBand names the speed experience scale band of v tok/s.
func speedBand(v float64) string {
	switch {
	case v < 15:
		return "slow"
	case v < 25:
		return "acceptable"
	case v <= 50:
		return "fast"
	}
	return "very fast"
}

func (b *builder) sectionSpeed() {
	const id, title = "generation-speed", "Per-User Generation Speed"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-speed", title, "Average per-user generation speed", "tok/s per user", 1, valSpeed)
	scale := &Table{Caption: "How fast is this?", Header: []string{"SPEED", "USER EXPERIENCE"}, Rows: [][]string{
		{"< 15 tok/s", "Slow; may be slower than reading speed"},
		{"15–25 tok/s", "Acceptable; keeps pace with reading"},
		{"25–50 tok/s", "Fast; exceeds reading speed"},
		{"> 50 tok/s", "Very fast; text appears nearly instantly"},
	}}
	blocks := []Block{
		para("Token generation rate experienced by each user, also called decode speed: (output tokens − 1) / (last token time − first token time). As concurrency grows, per-user speed falls because the GPU is shared."),
		chartB(ch), tableB(scale),
	}
	lowC, lowV := g.extreme(false, valSpeed)
	if lowC != nil {
		var verdict string
		switch speedBand(lowV) {
		case "very fast":
			verdict = "this configuration stays very fast across all tested scenarios"
		case "fast":
			verdict = "this configuration stays above reading speed across all tested scenarios"
		case "acceptable":
			verdict = "this configuration stays at acceptable speeds across all tested scenarios"
		default:
			verdict = "this configuration slows below reading speed (under 15 tok/s) in the most demanding scenarios"
		}
		s := fmt.Sprintf("At %s (the lowest measured point: %s context, %s), %s.", fmtTPS(lowV), ctxLabel(lowC.ContextTokens), capacity.Requests(lowC.Concurrency), verdict)
		if lo, _ := b.singleEnds(); lo != nil {
			s += fmt.Sprintf(" Single-user performance at %s context reaches %s.", ctxLabel(lo.ContextTokens), fmtSpeed(lo))
		}
		blocks = append(blocks, para("%s", s))
	} else {
		blocks = append(blocks, missing("No cell had a measurable generation speed (it needs successful requests with at least two output tokens)."))
	}
	b.add(id, title, 1, blocks...)
}
