package main

import (
	"fmt"
	"github.com/servebench/servebench"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/runner"
)

// progress is the live view. It only listens to the runner's events: on a terminal it redraws
// one status line; otherwise it prints a plain line per finished cell.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool

	mu        sync.Mutex
	last      time.Time
	lastLen   int
	phase     string
	sweepDone int
	sweepN    int
	sweepReqs int
	sweepPlan int
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb" {
			p.tty = true
		}
	}
	return p
}

func (p *progress) handle(ev runner.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case runner.EventPhase:
		p.phase = ev.Phase
		if ev.Phase == servebench.PhaseSweep {
			p.sweepN = ev.CellCount
		}
		p.clear()
		fmt.Fprintf(p.w, "— %s\n", servebench.TerminalText(ev.Phase, termLine, false))
	case runner.EventNote:
		p.clear()
		fmt.Fprintf(p.w, "  note: %s\n", servebench.TerminalText(ev.Message, 0, true))
	case runner.EventCellStart:
		if ev.Phase == servebench.PhaseSweep {
			p.sweepPlan += ev.Planned
		}
	case runner.EventRequest:
		if ev.Phase == servebench.PhaseSweep {
			p.sweepReqs++
		}
		if p.tty && time.Since(p.last) > 100*time.Millisecond {
			p.last = time.Now()
			p.draw(ev)
		}
	case runner.EventCellDone:
		if ev.Phase == servebench.PhaseSweep {
			p.sweepDone++
		}
		p.clear()
		r := ev.Result
		cell := ""
		if ev.CellCount > 0 {
			cell = fmt.Sprintf("cell %d/%d ", ev.CellIndex, ev.CellCount)
		}
		fmt.Fprintf(p.w, "  %sctx=%-6s %-5s %4d req  TTFT %7s  speed %7.1f tok/s  system %8.1f tok/s  ok %5.1f%%  [%s]\n",
			cell, tokens(ev.Cell.ContextTokens), level(ev.Cell), ev.Requests, seconds(r.TTFTSeconds.Mean),
			r.GenerationSpeedTPS.Mean, r.SystemOutputThroughputTPS, 100*r.SuccessRate, round(ev.Elapsed))
	}
}

func (p *progress) draw(ev runner.Event) {
	cell := ""
	if ev.CellCount > 0 {
		cell = fmt.Sprintf("cell %d/%d ", ev.CellIndex, ev.CellCount)
	}
	left := ""
	if ev.Phase == servebench.PhaseSweep && p.sweepReqs > 0 && p.sweepPlan > 0 {
		// estimate from the sweep's pace: time per request × requests still planned
		per := ev.Elapsed / time.Duration(p.sweepReqs)
		remaining := p.sweepPlan - p.sweepReqs
		cellsLeft := p.sweepN - p.sweepDone - 1
		if cellsLeft > 0 && p.sweepDone+1 > 0 {
			remaining += cellsLeft * (p.sweepPlan / (p.sweepDone + 1))
		}
		if remaining > 0 {
			left = fmt.Sprintf("  sweep left ~%s", round(per*time.Duration(remaining)))
		}
	}
	line := fmt.Sprintf("  %s %sctx=%s %s  requests %d/%d  total %d  elapsed %s%s",
		servebench.TerminalText(ev.Phase, 40, false), cell, tokens(ev.Cell.ContextTokens), level(ev.Cell), ev.Requests, ev.Planned, ev.Total, round(ev.Elapsed), left)
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
