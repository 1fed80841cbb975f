// Package load holds the drivers that release requests during a cell:
// sustained (closed loop), dedicated bursts, fixed count and open loop. Drivers know only the
// servebench.Client interface; every launched request yields exactly one Sink call.
//
// Pacing is a pure function (Schedule) so arrival schedules are tested row by row without a
// clock; the drivers themselves are tested on virtual time (testing/synctest).
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
)

// Source builds the request with sequence number seq (prompt and all).
type Source func(ctx context.Context, seq int64, warmup bool) (*servebench.Request, error)

// Sink receives each finished request's record as soon as it ends, from any goroutine.
type Sink func(rec servebench.Record)

// Spec sizes one cell.
type Spec struct {
	Key servebench.CellKey
	// Sizing decides when a sustained cell has measured enough (see Sizing.Enough).
	Sizing Sizing
	// Judge, when set, reports the statistical side of a sustained or dedicated cell's progress
	// (interval widths, a settled decision) over the window so far; the driver fills in the
	// counts. Without it a sustained cell stops as soon as the floors of Sizing hold, and a
	// dedicated one after Bursts measured bursts.
	Judge func(windowStart, now float64) Progress
	// Until, when set, replaces Sizing and Judge for a sustained cell: after the warm-up its
	// slots take measured work until Until reports true (a distributed run's worker, whose
	// coordinator decides on every worker's records together).
	Until func() bool
	// Bursts is the number of measured bursts of a dedicated cell (default 3); one warm-up
	// burst comes first.
	Bursts int
	// Requests is the prompt count of fixed mode and the request count of rate mode.
	Requests int
	// Rate (requests/s) paces rate mode and, when > 0, fixed mode; Poisson picks exponential
	// gaps (seeded by Seed) instead of even ones.
	Rate    float64
	Poisson bool
	Seed    int64
	// MaxInFlight caps open-loop concurrency (0 = no cap); a send that waits for the cap is late.
	MaxInFlight int
	// Offsets, when set, is the open-loop schedule itself (a trace's send times from the cell's
	// start): Requests and Rate are then unused, and request seq k of the cell (counting from
	// its first) is the one scheduled at Offsets[k].
	Offsets []time.Duration
	// MaxDuration > 0 bounds the cell's time: no request starts (nor is scheduled) later than
	// MaxDuration after the cell began. Rate mode with no Requests sends ⌈Rate × MaxDuration⌉.
	MaxDuration time.Duration
	// NextSeq numbers requests run-wide; nil starts at 0.
	NextSeq *atomic.Int64
	// Clock is the offset from the run origin on the monotonic clock (default: since Run began).
	Clock func() time.Duration
	// Population drives a users cell (ModeUsers): who the users are and how their
	// conversations go.
	Population *Population
	// Groups, when set, names the group of each request of a fixed cell: request k (counting
	// from the cell's first) belongs to group Groups[k], a multi-turn session say. A local run
	// ignores it; a distributed run sends every request of a group from one worker, the same
	// for every cell of equal concurrency, so what the group built up (a conversation) stays
	// where it was built.
	Groups []int
	// WindowOpened, when set, is called once in sustained and users mode, the moment the measured window
	// opens, with the offset Outcome.WindowStart will hold (a distributed worker reports its
	// warm-up's end with it).
	WindowOpened func(at float64)
}

// Outcome describes what a driver did. Offsets are seconds from the run origin (Spec.Clock).
//
// The measured window, over which throughput is computed:
//   - sustained: from the N-th completion (the first N completions are the warm-up's length;
//     normally the last warm-up request's) to the first moment a slot finds no more work (from
//     then on fewer than N requests are in flight: the drain is excluded);
//   - dedicated: from the release of the first measured burst to the end of the last one (the
//     few microseconds between bursts are inside the window);
//   - fixed and rate: from the first send to the last completion.
type Outcome struct {
	WindowStart, WindowEnd float64
	// Sent counts requests handed to the client; Warmup those of them marked warm-up.
	Sent, Warmup int
	// Dropped counts scheduled requests never sent (the run stopped first). Late sends are
	// judged from the records (stats.LateSend), which keep both the schedule and the send.
	Dropped int
}

// ErrGeneratorLost marks a cell attempt that lost part of its load generator (a worker of a
// distributed run died or disconnected); see LostError.
var ErrGeneratorLost = errors.New("part of the load generator was lost")

// ErrGeneratorGone means too little of the load generator remains to go on (fewer workers
// than the run needs): the run stops and can be resumed once there are enough.
var ErrGeneratorGone = errors.New("too few load generators remain")

// LostError ends a cell attempt during which a worker was lost: the worker's requests in
// flight were recorded as failed (servebench.ErrWorkerLost), the others' were stopped, and the
// cell can be measured again with the Remaining workers.
type LostError struct {
	Worker, Cause string
	Remaining     int
	// InFlight counts the lost worker's requests that were in flight.
	InFlight int
}

func (e *LostError) Error() string {
	return fmt.Sprintf("worker %s was lost (%s); %d worker(s) remain", e.Worker, e.Cause, e.Remaining)
}

// Is makes errors.Is(err, ErrGeneratorLost) true.
func (e *LostError) Is(target error) bool { return target == ErrGeneratorLost }

// Run drives one cell. It returns when every launched request has been sunk. A canceled ctx
// stops launching; requests in flight end through ctx (the client records them as canceled).
func Run(ctx context.Context, spec Spec, c servebench.Client, next Source, sink Sink) (Outcome, error) {
	if spec.Key.Concurrency < 1 && !(spec.Key.LoadMode == servebench.ModeRate && spec.Key.Concurrency == 0) {
		return Outcome{}, fmt.Errorf("load: concurrency must be at least 1, or 0 for an uncapped open loop (got %d)", spec.Key.Concurrency)
	}
	if spec.NextSeq == nil {
		spec.NextSeq = new(atomic.Int64)
	}
	if spec.Clock == nil {
		t0 := time.Now()
		spec.Clock = func() time.Duration { return time.Since(t0) }
	}
	if spec.Bursts <= 0 {
		spec.Bursts = 3
	}
	d := &driver{spec: spec, client: c, next: next, sink: sink}
	d.begin = spec.Clock()
	switch spec.Key.LoadMode {
	case servebench.ModeSustained, "":
		return d.sustained(ctx)
	case servebench.ModeDedicated:
		return d.dedicated(ctx)
	case servebench.ModeFixed:
		return d.paced(ctx, spec.Key.Concurrency)
	case servebench.ModeRate:
		return d.paced(ctx, spec.MaxInFlight)
	case servebench.ModeUsers:
		return d.population(ctx)
	}
	return Outcome{}, fmt.Errorf("load: unknown mode %q: use sustained, dedicated, fixed, rate or users", spec.Key.LoadMode)
}

type driver struct {
	spec   Spec
	client servebench.Client
	next   Source
	sink   Sink

	begin time.Duration // when Run started, on Clock

	mu  sync.Mutex
	out Outcome
	err error
	// done, when set, sees every record before the sink (the sustained driver's progress).
	done func(servebench.Record)
}

func (d *driver) now() float64 { return d.spec.Clock().Seconds() }

// expired reports whether the cell's time bound (Spec.MaxDuration) has passed.
func (d *driver) expired() bool {
	return d.spec.MaxDuration > 0 && d.spec.Clock()-d.begin >= d.spec.MaxDuration
}

func (d *driver) fail(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.mu.Unlock()
}

// one builds and sends one request; it reports false when the request could not be built.
func (d *driver) one(ctx context.Context, warmup bool, scheduled time.Duration) bool {
	return d.oneSeq(ctx, d.spec.NextSeq.Add(1)-1, warmup, scheduled)
}

// oneSeq is one with the sequence number already taken.
func (d *driver) oneSeq(ctx context.Context, seq int64, warmup bool, scheduled time.Duration) bool {
	req, err := d.next(ctx, seq, warmup)
	if err != nil {
		if ctx.Err() == nil {
			d.fail(fmt.Errorf("building request %d: %w", seq, err))
		}
		return false
	}
	req.Cell, req.Seq, req.Warmup, req.ScheduledAt = d.spec.Key, seq, warmup, scheduled
	d.mu.Lock()
	d.out.Sent++
	if warmup {
		d.out.Warmup++
	}
	d.mu.Unlock()
	rec := d.client.Do(ctx, req)
	if d.done != nil {
		d.done(rec)
	}
	d.sink(rec)
	return true
}

// sustained keeps exactly N requests in flight: the first N launched are the warm-up, then
// measured requests until Sizing.Enough says the cell has measured enough, each slot starting
// its next request the moment its previous one ends. The rule is checked each time a slot
// looks for its next request: a slot that finds no more work ends the window.
//
// The window opens at the N-th completion, whichever request it was: normally the last warm-up
// request, but a warm-up request that straggles stays in flight (and out of the statistics)
// while the window runs, instead of holding it shut. At most N − 1 measured requests start
// before the window; waiting for the last warm-up instead, 4,096 streams on an overloaded client
// (warm-up requests ending between 4 and 12 s) started 14,704 measured requests before the
// window and 21,988 in all against --max-requests 8,192.
// enough reports whether a window opened at ws has measured enough after measured requests
// were taken (e2eN of them finished, their end-to-end latencies summing to e2eSum seconds): by
// Until where the spec has one, else by the sizing rule over the window's progress. It is the
// one rule of a measured window's end, for the sustained cell and the population alike.
func (d *driver) enough(n int, ws float64, measured int, e2eSum float64, e2eN int) bool {
	if d.spec.Until != nil {
		return d.spec.Until()
	}
	now := d.now()
	p := Progress{}
	if d.spec.Judge != nil {
		p = d.spec.Judge(ws, now)
	}
	p.Measured, p.WindowSeconds = measured, now-ws
	if e2eN > 0 {
		p.MeanE2ESeconds = e2eSum / float64(e2eN)
	}
	return d.spec.Sizing.Enough(n, p)
}

func (d *driver) sustained(ctx context.Context) (Outcome, error) {
	n := d.spec.Key.Concurrency
	var tickets atomic.Int64
	var completed atomic.Int64
	var windowStart, windowEnd atomic.Value // float64
	var mu sync.Mutex
	var measured int // measured tickets taken
	var e2eSum float64
	var e2eN int
	stopped := false
	// more reports whether a slot may take ticket t: always during warm-up and until the
	// window has started, then while the sizing rule asks for more. Once the rule has said
	// "enough", no slot takes more work.
	more := func(t int64) bool {
		if t >= int64(n) && d.expired() {
			return false // the time bound ends the measured phase (never the warm-up)
		}
		if t < int64(n) {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		ws, ok := windowStart.Load().(float64)
		if !ok {
			measured++
			return true
		}
		if stopped {
			return false
		}
		if stopped = d.enough(n, ws, measured, e2eSum, e2eN); !stopped {
			measured++
		}
		return !stopped
	}
	d.done = func(rec servebench.Record) {
		if rec.Warmup || !rec.OK() {
			return
		}
		mu.Lock()
		e2eSum += rec.E2ELatencySeconds
		e2eN++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := tickets.Add(1) - 1
				if !more(t) {
					break
				}
				if !d.one(ctx, t < int64(n), 0) {
					break
				}
				if completed.Add(1) == int64(n) {
					at := d.now()
					windowStart.Store(at)
					if d.spec.WindowOpened != nil {
						d.spec.WindowOpened(at)
					}
				}
			}
			windowEnd.CompareAndSwap(nil, d.now())
		})
	}
	wg.Wait()
	out := d.result()
	if ws, ok := windowStart.Load().(float64); ok {
		out.WindowStart = ws
	}
	if we, ok := windowEnd.Load().(float64); ok {
		out.WindowEnd = we
	}
	return out, d.err
}

// dedicated releases N requests together, waits for all of them, and repeats: one warm-up
// burst, then at least Bursts measured ones, and more while the spec's Judge says the mean-TTFT
// interval is wider than the precision aimed for (Sizing.EnoughBursts). No request ever waits
// behind another of ours.
func (d *driver) dedicated(ctx context.Context) (Outcome, error) {
	n := d.spec.Key.Concurrency
	bursts := d.spec.Bursts
	var start, end float64
	more := func(b int) bool {
		if b <= bursts {
			return true
		}
		if d.spec.Judge == nil {
			return false
		}
		now := d.now()
		p := d.spec.Judge(start, now)
		p.WindowSeconds = now - start
		return !d.spec.Sizing.EnoughBursts(n, b-1, bursts, p)
	}
	for b := 0; more(b) && ctx.Err() == nil && d.err == nil && (b < 2 || !d.expired()); b++ {
		warm := b == 0
		if b == 1 {
			start = d.now()
		}
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { d.one(ctx, warm, 0) })
		}
		wg.Wait()
		if !warm {
			end = d.now()
		}
	}
	out := d.result()
	out.WindowStart, out.WindowEnd = start, end
	return out, d.err
}

// paced serves fixed mode (P prompts, at most limit in flight, optional rate) and rate mode
// (open loop on a schedule, limit 0 = no cap). A request is never sent early; a send that
// had to wait past its schedule is late (its record keeps both times).
func (d *driver) paced(ctx context.Context, limit int) (Outcome, error) {
	total := d.spec.Requests
	if d.spec.Offsets != nil {
		total = len(d.spec.Offsets)
	}
	if total < 1 && d.spec.MaxDuration > 0 && d.spec.Rate > 0 {
		total = int(math.Ceil(d.spec.Rate * d.spec.MaxDuration.Seconds()))
	}
	if total < 1 {
		return Outcome{}, errors.New("load: fixed and rate modes need Requests >= 1 (or a rate and a duration)")
	}
	var sched []time.Duration
	if d.spec.Rate > 0 || d.spec.Offsets != nil {
		sched = d.spec.Offsets
		if sched == nil {
			sched = Schedule(d.spec.Rate, d.spec.Poisson, d.spec.Seed, total)
		}
		if m := d.spec.MaxDuration; m > 0 {
			for total > 0 && sched[total-1] >= m {
				total-- // scheduled past the time bound: not part of the cell
			}
			sched = sched[:total]
		}
	}
	var sem chan struct{}
	if limit > 0 {
		sem = make(chan struct{}, limit)
	}
	base := d.spec.Clock()
	start := -1.0
	var last atomic.Value
	var wg sync.WaitGroup
	sent := 0
	for i := 0; i < total; i++ {
		var at time.Duration
		if sched != nil {
			at = base + sched[i]
			if wait := at - d.spec.Clock(); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
				case <-t.C:
				}
			}
		}
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		if sched == nil && d.expired() {
			if sem != nil {
				<-sem
			}
			total = i // the time bound ends the cell: the rest were never part of it
			break
		}
		if start < 0 {
			start = d.now()
		}
		sent++
		seq := d.spec.NextSeq.Add(1) - 1 // in schedule order
		wg.Go(func() {
			d.oneSeq(ctx, seq, false, at)
			last.Store(d.now())
			if sem != nil {
				<-sem
			}
		})
	}
	wg.Wait()
	// requests that were scheduled but never sent still leave one record each
	for i := sent; i < total; i++ {
		seq := d.spec.NextSeq.Add(1) - 1
		var at time.Duration
		if sched != nil {
			at = base + sched[i]
		}
		d.sink(servebench.Record{CellKey: d.spec.Key, Seq: seq, ScheduledOffsetSeconds: at.Seconds(),
			ErrorClass: servebench.ErrCanceled, Error: "not sent: the run stopped before its scheduled time"})
		d.out.Dropped++
	}
	out := d.result()
	if start >= 0 {
		out.WindowStart = start
	}
	if l, ok := last.Load().(float64); ok {
		out.WindowEnd = l
	}
	return out, d.err
}

func (d *driver) result() Outcome {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out
}

// Schedule returns the send offsets of n requests at rate requests/s, starting at 0: evenly
// spaced (gap = 1/rate) or, with poisson, exponential gaps of mean 1/rate from a PCG generator
// seeded by seed (the same seed gives the same schedule).
func Schedule(rate float64, poisson bool, seed int64, n int) []time.Duration {
	out := make([]time.Duration, n)
	if rate <= 0 || n == 0 {
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eedbeef))
	t := 0.0
	for i := range out {
		out[i] = time.Duration(t * float64(time.Second))
		gap := 1 / rate
		if poisson {
			gap = rng.ExpFloat64() / rate
		}
		t += gap
		if math.IsInf(t, 0) {
			t = math.MaxFloat64 / 2
		}
	}
	return out
}
