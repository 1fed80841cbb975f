package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// ErrServerGone ends a run whose server stopped answering for longer than the outage timeout
// (or kept going down during one cell). The run folder can be resumed.
var ErrServerGone = errors.New("the server stopped answering")

// maxCellAttempts bounds how often one cell is measured: a server that goes down again and
// again during the same cell stops the run rather than loop.
const maxCellAttempts = 4

// outageError ends a cell attempt the server's outage interrupted.
type outageError struct {
	at     time.Time
	cause  string
	failed int
}

func (e *outageError) Error() string { return "the server stopped answering (" + e.cause + ")" }

// outageWatch tells an outage from ordinary request failures: a connection that cannot be made
// (refused, reset before any response byte) is one at once; streams that break are one when
// max(4, 2 × concurrency) break in a row with no success in between.
type outageWatch struct {
	concurrency int
	broken      int
}

func (w *outageWatch) see(rec servebench.Record) bool {
	switch rec.ErrorClass {
	case servebench.ErrConnect:
		return true
	case servebench.ErrStreamTruncated:
		w.broken++
		return w.broken >= max(4, 2*w.concurrency)
	case servebench.ErrNone:
		w.broken = 0
	}
	return false
}

// measure runs one cell and returns its result and how many requests it sent (over every
// attempt; settled as in measureOnce). An attempt an outage interrupts is discarded: the run pauses (no new requests),
// probes the server until it answers, and measures the cell again from its start.
func (r *Runner) measure(ctx context.Context, key servebench.CellKey, phase string, idx, count int, settled func(servebench.CellResult) bool) (servebench.CellResult, int, error) {
	sent := 0
	r.warnEventRate(ctx, key, phase)
	for attempt := 0; ; attempt++ {
		cell, n, l, err := r.measureOnce(ctx, key, phase, idx, count, attempt, settled)
		sent += n
		var lost *load.LostError
		if errors.As(err, &lost) && ctx.Err() == nil {
			o := servebench.Outage{Cell: key, Attempt: attempt, StartedAt: time.Now().UTC(), EndedAt: time.Now().UTC(), Recovered: true,
				Requests: n, Failed: lost.InFlight, Cause: lost.Cause, Worker: lost.Worker}
			r.addOutage(o)
			if attempt+1 >= maxCellAttempts {
				return servebench.CellResult{}, sent, fmt.Errorf("%w: %d workers were lost during cell %s; resume the run once the workers are stable", load.ErrGeneratorGone, attempt+1, key.ID())
			}
			r.emit(Event{Kind: EventNote, Phase: phase, Cell: key, Message: fmt.Sprintf("%s: measuring cell %s again from its start with the workers that remain", lost.Error(), key.ID())})
			continue
		}
		var oe *outageError
		if !errors.As(err, &oe) {
			if err == nil {
				r.rates.observe(cell)
				l.RequestsSent = sent
				err = r.keep(l)
			}
			return cell, sent, err
		}
		o := servebench.Outage{Cell: key, Attempt: attempt, StartedAt: oe.at.UTC(), Requests: n, Failed: oe.failed, Cause: oe.cause}
		r.emit(Event{Kind: EventNote, Phase: phase, Cell: key, Message: fmt.Sprintf("the server stopped answering during cell %s (%s): paused, probing it for up to %s",
			key.ID(), clipCause(oe.cause), r.outageTimeout())})
		up, werr := r.awaitServer(ctx)
		if werr != nil {
			o.DownSeconds = time.Since(oe.at).Seconds()
			r.addOutage(o)
			return servebench.CellResult{}, sent, errors.Join(werr, r.keep(servebench.CellLog{Event: servebench.LogOutage, Phase: phase, Cell: key, Outage: &o}))
		}
		o.EndedAt, o.Recovered, o.DownSeconds = up.UTC(), true, up.Sub(oe.at).Seconds()
		r.addOutage(o)
		if err := r.keep(servebench.CellLog{Event: servebench.LogOutage, Phase: phase, Cell: key, Outage: &o}); err != nil {
			return servebench.CellResult{}, sent, err
		}
		if attempt+1 >= maxCellAttempts {
			return servebench.CellResult{}, sent, fmt.Errorf("%w: it went down %d times during cell %s; resume the run once it is stable", ErrServerGone, attempt+1, key.ID())
		}
		r.emit(Event{Kind: EventNote, Phase: phase, Cell: key, Message: fmt.Sprintf("the server answers again after %.1f s: measuring cell %s again from its start", o.DownSeconds, key.ID())})
	}
}

func (r *Runner) outageTimeout() time.Duration {
	if r.OutageTimeout > 0 {
		return r.OutageTimeout
	}
	return 5 * time.Minute
}

// awaitServer probes the server with backoff (100 ms doubling to 2 s) until it answers, and
// returns when it did; after the outage timeout it returns ErrServerGone.
func (r *Runner) awaitServer(ctx context.Context) (time.Time, error) {
	timeout := r.outageTimeout()
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := r.Probe(pctx)
		cancel()
		if err == nil {
			return time.Now(), nil
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		left := time.Until(deadline)
		if left <= 0 {
			return time.Time{}, fmt.Errorf("%w for %s (the outage timeout, --outage-timeout): %v", ErrServerGone, timeout, err)
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// addOutage records an outage and states it in the run's notes (the report shows them).
func (r *Runner) addOutage(o servebench.Outage) {
	r.res.AddOutage(o)
	r.flush()
}

func clipCause(s string) string { return servebench.TerminalText(s, 160, false) }
