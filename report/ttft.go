package report

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"

	"github.com/servebench/servebench/capacity"
)

// ttftBand names the responsiveness scale band of v seconds.
func ttftBand(v float64) string {
	switch {
	case v < 0.5:
		return "feels instant"
	case v < 2:
		return "feels responsive"
	case v < 5:
		return "noticeable but still acceptable"
	case v <= 10:
		return "feels slow"
	}
	return "can be frustrating"
}

func (b *builder) sectionTTFT() {
	const id, title = "ttft", "Time to First Token"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-ttft", title, "Average time to first token", "seconds", 3, valTTFT)
	scale := &Table{Caption: "How responsive is this?", Header: []string{"TTFT", "USER EXPERIENCE"}, Rows: [][]string{
		{"< 500ms", "Feels instant"},
		{"500ms–2s", "Feels responsive"},
		{"2–5s", "Noticeable but still acceptable"},
		{"5–10s", "Feels slow; generally acceptable at higher context lengths"},
		{"> 10s", "Can be frustrating; users may retry or abandon"},
	}}
	blocks := []Block{
		para("Time from sending the request to the first token (content, reasoning or tool call) arriving: the primary measure of perceived responsiveness. TTFT has two parts: queue wait (waiting for the GPU, grows with concurrency) and prefill (processing the prompt, grows with context length)."),
		chartB(ch), tableB(scale),
	}
	best, bv := g.extreme(false, valTTFT)
	worst, wv := g.extreme(true, valTTFT)
	if best != nil {
		blocks = append(blocks, para("The fastest TTFT was %s (%s context, %s; %s); the slowest was %s (%s context, %s; %s).",
			fmtDur(bv), ctxLabel(best.ContextTokens), capacity.Requests(best.Concurrency), ttftBand(bv),
			fmtDur(wv), ctxLabel(worst.ContextTokens), capacity.Requests(worst.Concurrency), ttftBand(wv)))
	}
	if s := ttftFalls(g); s != "" {
		blocks = append(blocks, note(s))
	}
	if b.imported() != nil {
		blocks = append(blocks, note(b.importedCaching()))
	} else if b.man.Plan.Sweep.SharedPrefix > 0 {
		blocks = append(blocks, note(fmt.Sprintf("About caching: prompts in this run share a %s-token prefix, so the server may serve part of every prompt from its prefix cache; TTFT here is better than for fresh context of the same length.", b.man.Plan.Sweep.SharedPrefix)))
	} else if len(g.ctxs) > 1 {
		small, large := ctxLabel(g.ctxs[0]), ctxLabel(g.ctxs[len(g.ctxs)-1])
		blocks = append(blocks, note(fmt.Sprintf("About caching: %s With prompt caching in production only new tokens need prefill: a %s conversation that adds %s of new context would see a TTFT close to the %s results above, not the %s ones. For workloads that build context incrementally (chatbots, coding assistants, multi-turn agents), cached TTFT is much lower.", b.freshClaim(), large, small, small, large)))
	} else {
		blocks = append(blocks, note(fmt.Sprintf("About caching: %s With prompt caching in production only new tokens need prefill, so a conversation that builds its context incrementally sees a TTFT set by the new tokens of each turn, not by the whole %s context.", b.freshClaim(), ctxLabel(g.ctxs[0]))))
	}
	if n := b.contaminated(); n > 0 {
		blocks = append(blocks, note(fmt.Sprintf("Warning: the server reported prefix-cache hits in %s although caching was not intended; their TTFTs may be optimistic (see Notes).", plural(n, "cell"))))
	}
	b.add(id, title, 1, blocks...)
}

// freshClaim states what the run's data say about prompt caching when every prompt was meant
// to be unique: checked against the server's prefix-cache counters where cells report them.
func (b *builder) freshClaim() string {
	reporting, hits := 0, 0
	for _, c := range b.res.Cells {
		if c.CacheHitTokens != nil && !c.Skipped {
			reporting++
			if *c.CacheHitTokens > 0 {
				hits++
			}
		}
	}
	switch {
	case reporting == 0:
		return "every prompt here was meant to be fresh (a unique marker starts each one), but the server reports no prefix-cache counters, so this could not be checked; read these as worst-case TTFTs."
	case hits == 0:
		return fmt.Sprintf("every prompt here is fresh: a unique marker starts each one, and the server's prefix-cache counters show no hit in any of the %s that report them; these are worst-case TTFTs.", plural(reporting, "cell"))
	}
	return fmt.Sprintf("every prompt here was meant to be fresh (a unique marker starts each one), yet the server's counters show prefix-cache hits in %s of %d (see the warning below); the other cells are worst-case TTFTs.", plural(hits, "cell"), reporting)
}

func (b *builder) contaminated() int {
	n := 0
	for _, c := range b.res.Cells {
		if c.CacheContaminated {
			n++
		}
	}
	return n
}

// ttftFalls calls out mean TTFT that falls as concurrency rises at one context (more load should
// never make the first token come sooner), saying for each such step whether the fall is within
// the noise (the 95% interval of the difference, stats.DifferenceCI95, includes 0: the two cells
// do not tell apart) or not (the data show a real fall: a warm-up or caching effect, or a
// server that batches better under load, worth a look). "" when TTFT never falls.
func ttftFalls(g grid) string {
	var noise, real []string
	for _, x := range g.ctxs {
		var prev *servebench.CellResult
		for _, n := range g.concs {
			c := g.at(x, n)
			if c == nil || c.Skipped || c.TTFTSeconds.Count == 0 {
				continue
			}
			if prev != nil && c.TTFTSeconds.Mean < prev.TTFTSeconds.Mean {
				step := fmt.Sprintf("%s at %s context (%s at %d, %s at %d)", fmtDur(prev.TTFTSeconds.Mean-c.TTFTSeconds.Mean), ctxLabel(x),
					fmtDur(prev.TTFTSeconds.Mean), prev.Concurrency, fmtDur(c.TTFTSeconds.Mean), c.Concurrency)
				iv, ok := stats.DifferenceCI95(prev.TTFTSeconds.Mean, prev.TTFTSeconds.CI95, c.TTFTSeconds.Mean, c.TTFTSeconds.CI95)
				if ok && iv.Low > 0 {
					real = append(real, step)
				} else {
					noise = append(noise, step)
				}
			}
			prev = c
		}
	}
	var out []string
	if len(real) > 0 {
		out = append(out, fmt.Sprintf("TTFT falls as load rises by %s: more than the noise (the 95%% interval of the difference excludes 0), so the server answered sooner under more load there; look for a warm-up or caching effect before reading the lower level's TTFT as its steady state.", joinAnd(real)))
	}
	if len(noise) > 0 {
		out = append(out, fmt.Sprintf("TTFT falls as load rises by %s, within the noise (the 95%% intervals cannot tell the two levels apart, or one has none): read the two levels as alike.", joinAnd(noise)))
	}
	return strings.Join(out, " ")
}
