package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/stats"
)

// progress is the live view. It only listens to the runner's events: a header per phase, a line
// per finished cell, and inside a cell a status line (requests done of the planned minimum, the
// window, the current estimates with how sure they are, the time in the cell and the time left).
// On a terminal the status line is redrawn every second; otherwise it is printed as a plain line
// every plainEvery, so a long cell (minutes at 64K) is never silent.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	// plainEvery is the period of the status line off a terminal.
	plainEvery time.Duration

	mu      sync.Mutex
	lastLen int
	last    time.Time // last redraw on a terminal
	cur     *runner.Event
	seenAt  time.Time // when cur arrived (the view's clock)
	printed time.Time // last plain status line
	stop    chan struct{}
	done    chan struct{}
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet, plainEvery: 30 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb" {
			p.tty = true
		}
	}
	return p
}

// start runs the view's own clock: it redraws (terminal) or prints (otherwise) the status line
// of the cell in progress between the runner's events. finish stops it.
func (p *progress) start() {
	if p.quiet || p.stop != nil {
		return
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return
	}
	if p.tty {
		p.draw()
		return
	}
	if time.Since(p.printed) >= p.plainEvery {
		p.printed = time.Now()
		fmt.Fprintf(p.w, "%s\n", p.status())
	}
}

func (p *progress) handle(ev runner.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case runner.EventPhase:
		p.clear()
		p.cur = nil
		title := ev.Title
		if title == "" {
			title = ev.Phase
		}
		fmt.Fprintf(p.w, "— %s\n", servebench.TerminalText(title, 0, false))
	case runner.EventNote:
		p.clear()
		fmt.Fprintf(p.w, "  note: %s\n", servebench.TerminalText(ev.Message, 0, true))
	case runner.EventCellStart, runner.EventRequest:
		if ev.Kind == runner.EventRequest && p.cur != nil && ev.Progress == nil {
			ev.Progress = p.cur.Progress // a failed request carries no new estimate
		}
		p.cur, p.seenAt = &ev, time.Now()
		if ev.Kind == runner.EventCellStart {
			p.printed = time.Now()
		}
		if p.tty && time.Since(p.last) > 100*time.Millisecond {
			p.draw()
		}
	case runner.EventCellDone:
		p.clear()
		p.cur = nil
		r := ev.Result
		cell := ""
		if ev.CellCount > 0 {
			cell = fmt.Sprintf("cell %d/%d ", ev.CellIndex, ev.CellCount)
		}
		if r.RequestsSucceeded == 0 {
			fmt.Fprintf(p.w, "  %sctx=%-6s %-5s %4d req  no request succeeded (%s)  [%s]\n", cell, tokens(ev.Cell.ContextTokens), level(ev.Cell), ev.Requests, failureClasses(r), round(ev.Elapsed))
			return
		}
		fmt.Fprintf(p.w, "  %sctx=%-6s %-5s %4d req  TTFT %7s  speed %7.1f tok/s  system %8.1f tok/s  ok %5.1f%%  [%s]\n",
			cell, tokens(ev.Cell.ContextTokens), level(ev.Cell), ev.Requests, seconds(r.TTFTSeconds.Mean),
			r.GenerationSpeedTPS.Mean, r.SystemOutputThroughputTPS, 100*r.SuccessRate, round(ev.Elapsed))
	}
}

// status is the cell in progress in one line, e.g.
//
//	sweep cell 9/18 32K c=4 · 11 of ≥20 requests · window 38s · TTFT 9.50s ±12% · 373 tok/s ±8% (aiming ±5%) · in cell 41s of ~1m10s · sweep ~3m left
func (p *progress) status() string {
	ev := p.cur
	since := time.Since(p.seenAt)
	var b strings.Builder
	b.WriteString("  " + servebench.TerminalText(ev.Phase, 40, false) + " ")
	if ev.CellCount > 0 {
		fmt.Fprintf(&b, "cell %d/%d ", ev.CellIndex, ev.CellCount)
	}
	fmt.Fprintf(&b, "%s %s · %d of ≥%d requests", tokens(ev.Cell.ContextTokens), level(ev.Cell), ev.Requests, ev.Planned)
	if pr := ev.Progress; pr != nil {
		fmt.Fprintf(&b, " · window %s", round(time.Duration(pr.WindowSeconds*float64(time.Second))))
		if pr.TTFTMean > 0 {
			fmt.Fprintf(&b, " · TTFT %s%s", seconds(pr.TTFTMean), sure(pr.TTFTRelHalfWidth, ev.Requests))
		}
		if pr.Throughput > 0 {
			fmt.Fprintf(&b, " · %.0f tok/s%s", pr.Throughput, sure(pr.ThroughputRelHalfWidth, ev.Requests))
		}
		if pr.Settled {
			// the verdict is known; the window rule (2 × latency, 2 × N requests) still runs
			b.WriteString(" (verdict settled, completing the window)")
		} else {
			fmt.Fprintf(&b, " (aiming ±%.0f%%)", 100*pr.Target)
		}
	}
	in := ev.CellElapsed + since
	fmt.Fprintf(&b, " · in cell %s", round(in))
	switch {
	case ev.CellEstimate > 0 && in <= ev.CellEstimate:
		fmt.Fprintf(&b, " of ~%s", round(ev.CellEstimate))
	case ev.CellEstimate > 0:
		// the overrun is said, not left to the reader's subtraction: a cell whose window rule
		// outlasts its estimate (a settled capacity level completing its window) takes the time
		// from the cells after it
		fmt.Fprintf(&b, " (estimated ~%s, over by %s)", round(ev.CellEstimate), round(in-ev.CellEstimate))
	}
	if ev.Left > 0 {
		left := max(ev.Left-since, 0)
		what := "cell"
		if ev.CellCount > 0 {
			what = "sweep"
		}
		switch saidAbove := what == "cell" && ev.CellEstimate > 0 && in > ev.CellEstimate; {
		case left >= time.Second:
			fmt.Fprintf(&b, " · %s ~%s left", what, round(left))
		case !saidAbove:
			fmt.Fprintf(&b, " · %s overrunning its estimate", what)
		}
	}
	b.WriteString(rest(ev, since))
	return b.String()
}

// failureClasses writes a cell's failures by class: "timeout-first-token: 3".
func failureClasses(r *servebench.CellResult) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.ErrorsByClass)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, r.ErrorsByClass[k]))
	}
	if len(parts) == 0 {
		return "no error class recorded"
	}
	return strings.Join(parts, ", ")
}

// sure writes an estimate's precision as the reports do (report.PlusMinusRel: never ±0%), or
// " (n<min)" while the cell has measured fewer requests than an interval is shown from
// (stats.MinIntervalSamples; n counts the requests sent, the most the interval can rest on);
// "" while there is none (0: a judge that does not track it).
func sure(rel float64, n int) string {
	if math.IsInf(rel, 0) || math.IsNaN(rel) || rel <= 0 {
		return ""
	}
	if !stats.IntervalShown(n) {
		return " (n<min)"
	}
	return report.PlusMinusRel(rel)
}

func (p *progress) draw() {
	p.last = time.Now()
	line := p.status()
	pad := ""
	if n := p.lastLen - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lastLen = len(line)
}

func (p *progress) clear() {
	if p.tty && p.lastLen > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lastLen))
		p.lastLen = 0
	}
}

func (p *progress) finish() {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

func tokens(n int) string {
	if n > 0 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}

func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0fms", s*1000)
	}
	return fmt.Sprintf("%.2fs", s)
}

// rest is what the status line says about the run after the current phase: the capacity
// searches still to come, whose time is not known until their levels are measured, and with a
// time budget what is left of it, which bounds everything. Under a budget the searches run
// together, one level at a time, each only while its next level fits (runner's
// searchInterleaved): during one search's level the others are still open, not to come after.
func rest(ev *runner.Event, since time.Duration) string {
	var b strings.Builder
	searching := strings.HasPrefix(ev.Phase, "capacity ")
	switch n := ev.SearchesAfter; {
	case ev.Interleaved && searching && n > 0:
		fmt.Fprintf(&b, " · %d other capacity search%s open: level by level, the cheapest next, while the budget lasts", n, pluralEs(n))
	case ev.Interleaved && n > 0:
		fmt.Fprintf(&b, ", then %d capacity search%s together, level by level while the budget lasts", n, pluralEs(n))
	case n == 1:
		b.WriteString(", then 1 capacity search (time not known until measured)")
	case n > 1:
		fmt.Fprintf(&b, ", then %d capacity searches (time not known until measured)", n)
	}
	if ev.Budget > 0 {
		fmt.Fprintf(&b, " · run ends within its %s budget, %s left", round(ev.Budget), round(max(ev.BudgetLeft-since, 0)))
	}
	return b.String()
}

// pluralEs is "es" unless n is 1 ("search", "searches").
func pluralEs(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
