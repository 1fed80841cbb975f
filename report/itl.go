package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench/capacity"
)

func (b *builder) sectionITL() {
	const id, title = "itl", "Inter-Token Latency"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	blocks := []Block{para("Two numbers describe streaming. %s is the time per generated token: decode time / (output tokens − 1), vLLM's TPOT; it sets generation speed. The %s is the time between consecutive stream events, which is what a user sees: %s. The two are equal when every event carries one token; with speculative decoding or multi-token chunks the %s is the longer one.", termITL, termChunkGap, perceptualMarks, termChunkGap),
		chartB(g.chart("chart-itl", termITL, "Average "+termITL, "ms", 1, valITLms))}
	lo, _ := b.singleEnds()
	if wc, wv := g.extreme(true, valITLms); wc != nil {
		s := ""
		switch bc, bv := g.extreme(false, valITLms); {
		case lo != nil:
			itl := fmtMS(lo.ITLSeconds.Mean)
			if lo.ITLSeconds.Count == 0 {
				itl = unknownWhy(lo)
			}
			s = fmt.Sprintf("At a single request and %s context, %s is %s. ", ctxLabel(lo.ContextTokens), termITL, itl)
			if lo != wc {
				s += fmt.Sprintf("The highest was %s at %s context with %s.", fmtMS(wv/1000), ctxLabel(wc.ContextTokens), capacity.Requests(wc.Concurrency))
			}
		case bc != wc:
			s = fmt.Sprintf("%s ranges from %s (%s) to %s (%s).", termITL, fmtMS(bv/1000), condition(bc), fmtMS(wv/1000), condition(wc))
		default:
			s = fmt.Sprintf("%s is %s (%s).", termITL, fmtMS(wv/1000), condition(wc))
		}
		blocks = append(blocks, para("%s", strings.TrimSpace(s)))
	}
	if g.has(valChunkGapMS) {
		gaps := g.chart("chart-chunk-gap", upperFirst(termChunkGap), "Average "+termChunkGap+" (the time between stream events, what users see)", "ms", 1, valChunkGapMS)
		gaps.Thresholds = perceptualThresholds()
		blocks = append(blocks, chartB(gaps))
		bc, bv := g.extreme(false, valChunkGapMS)
		wc, wv := g.extreme(true, valChunkGapMS)
		if bc == wc {
			blocks = append(blocks, para("The %s is %s (%s), which %s.", termChunkGap, fmtMS(wv/1000), condition(wc), perceivedAs(wv)))
		} else {
			blocks = append(blocks, para("The %s users see ranges from %s (%s) to %s (%s); at its longest, streaming %s.", termChunkGap, fmtMS(bv/1000), condition(bc), fmtMS(wv/1000), condition(wc), perceivedAs(wv)))
		}
	}
	var tpc float64
	for _, c := range g.ordered() {
		if c.TokensPerChunk > tpc {
			tpc = c.TokensPerChunk
		}
	}
	if tpc > 1.05 {
		blocks = append(blocks, note(fmt.Sprintf("Stream events carried up to %.2f tokens each (speculative decoding or multi-token chunks): %s is lower than the %s, so judge smoothness by the %s.", tpc, termITL, termChunkGap, termChunkGap)))
	}
	b.add(id, title, 1, blocks...)
}
