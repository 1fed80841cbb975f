package report

import (
	"fmt"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func (b *builder) sectionQueue() {
	const id, title = "queue-wait", "Queue Wait Times"
	intro := para("Time a request waits at the server for GPU availability before prefill starts, as the server reports it. Queue wait is part of TTFT; breaking it out tells GPU saturation (high queue wait) from context processing (high prefill time).")
	if b.sweep.empty() || !b.sweep.has(valQueue) {
		why := b.unavailable("queue_wait_seconds")
		if why == "" {
			why = "no cell reported it"
		}
		b.add(id, title, 1, intro, missing(fmt.Sprintf("Queue wait was not measured (%s). It needs per-request server timings or the server's Prometheus metrics: pass --metrics-url (e.g. http://HOST:8000/metrics) for vLLM, SGLang, TGI or TensorRT-LLM.", why)))
		return
	}
	g := b.sweep
	ch := g.chart("chart-queue", title, "Average queue wait", "seconds", 3, valQueue)
	var s strings.Builder
	if len(g.concs) > 0 && g.concs[0] == 1 {
		var mx float64
		for _, x := range g.ctxs {
			if c := g.at(x, 1); c != nil && c.QueueWaitSeconds != nil && c.QueueWaitSeconds.Mean > mx {
				mx = c.QueueWaitSeconds.Mean
			}
		}
		where := " regardless of context length"
		if len(g.ctxs) == 1 {
			where = ""
		}
		switch {
		case mx < 0.0005:
			fmt.Fprintf(&s, "At a single request, queue wait is effectively zero (under 1ms)%s. ", where)
		case mx < 0.05:
			fmt.Fprintf(&s, "At a single request, queue wait is effectively zero (at most %s)%s. ", fmtMS(mx), where)
		default:
			fmt.Fprintf(&s, "Even at a single request, queue wait reaches %s. ", fmtDur(mx))
		}
	}
	wc, wv := g.extreme(true, valQueue)
	fmt.Fprintf(&s, "The longest queue wait, %s, occurs at %s with %s context. Rising queue times signal GPU saturation: requests wait for resources instead of being processed at once.", fmtDur(wv), capacity.Requests(wc.Concurrency), ctxLabel(wc.ContextTokens))
	b.add(id, title, 1, intro, chartB(ch), para("%s Source: %s.", s.String(), sources(g, func(c *servebench.CellResult) *servebench.ServerValue { return c.QueueWaitSeconds })),
		note("Interpretation: queue wait and prefill time are measured independently by the server and may not sum exactly to TTFT. Under heavy load, chunked prefill and preemptions make them overlap, so queue wait + prefill can exceed TTFT. Use queue wait for capacity planning and locating bottlenecks; use TTFT for the user's actual wait before streaming begins."))
}

func sources(g grid, f func(*servebench.CellResult) *servebench.ServerValue) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range g.ordered() {
		if v := f(c); v != nil && !seen[v.Source] {
			seen[v.Source] = true
			out = append(out, v.Source)
		}
	}
	return strings.Join(out, ", ")
}
