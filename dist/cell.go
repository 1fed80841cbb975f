package dist

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// Run measures one cell on the workers (runner.Generator). It splits the cell (a concurrency
// share per worker; an open-loop schedule dealt round robin, so the server sees the same
// arrivals as from one process), starts it everywhere at one instant, sinks every record on
// the coordinator's clock, and for a sustained cell applies spec's own rule (load.Sizing with
// spec.Judge, on the merged records) to tell every worker when to stop. next is unused: each
// worker builds its prompts itself, with the same run-wide sequence numbers.
//
// A worker lost during the cell ends it with a *load.LostError once the lost worker's requests
// in flight are recorded as failed (servebench.ErrWorkerLost) and the others are stopped.
func (c *Coordinator) Run(ctx context.Context, spec load.Spec, _ load.Source, sink load.Sink) (load.Outcome, error) {
	live, err := c.ready(ctx)
	if err != nil {
		return load.Outcome{}, err
	}
	cr := &cellRun{c: c, spec: spec, sink: sink, wake: make(chan struct{}, 1), parts: map[*wconn]*part{}}
	orders := c.split(spec, len(live))
	lead := 50*time.Millisecond + 10*time.Millisecond*time.Duration(len(live))
	startAt := c.clk.now() + lead.Nanoseconds()
	base := int64(0)
	if spec.NextSeq != nil {
		base = spec.NextSeq.Load()
	}
	cr.maxSeq = base - 1
	for i, w := range live {
		o := orders[i]
		if o.Share == 0 && o.Requests == 0 && len(o.Offsets) == 0 {
			continue
		}
		o.Key, o.SeqBase = spec.Key, base
		w.mu.Lock()
		o.StartAt = startAt + int64(w.offset*1e9) // on the worker's clock
		w.cell = cr
		offset := w.offset
		w.mu.Unlock()
		cr.parts[w] = &part{ord: o, shift: c.shift(w), offset: offset, inflight: map[int64]msg{}}
	}
	defer func() {
		for w := range cr.parts {
			w.mu.Lock()
			w.cell = nil
			w.mu.Unlock()
		}
		if spec.NextSeq != nil && cr.maxSeq+1 > spec.NextSeq.Load() {
			spec.NextSeq.Store(cr.maxSeq + 1)
		}
	}()
	for w, p := range cr.parts {
		o := p.ord
		if err := w.send(msg{T: tCell, Order: &o}); err != nil {
			c.lose(w, "sending it the cell: "+err.Error())
		}
	}
	return cr.drive(ctx)
}

// ready returns the live workers, each with its clock measured again, waiting up to Rejoin
// for MinWorkers.
func (c *Coordinator) ready(ctx context.Context) ([]*wconn, error) {
	need := max(c.MinWorkers, 1)
	rejoin := c.Rejoin
	if rejoin <= 0 {
		rejoin = time.Minute
	}
	if c.Live() < need {
		c.logf("%d worker(s) left, the run needs %d: waiting up to %s for more to join", c.Live(), need, rejoin)
		if err := c.WaitFor(ctx, need, rejoin); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %d worker(s) remain and the run needs at least %d (--min-workers); start more workers and resume the run", load.ErrGeneratorGone, c.Live(), need)
		}
	}
	c.mu.Lock()
	live := c.liveLocked()
	c.mu.Unlock()
	out := live[:0:0]
	for _, w := range live {
		if err := c.sync(w); err != nil {
			c.lose(w, "its clock could not be measured: "+err.Error())
			continue
		}
		out = append(out, w)
	}
	if len(out) < need {
		return c.ready(ctx)
	}
	return out, nil
}

// split deals a cell over n workers: concurrency (and fixed-mode prompts) as evenly as
// possible, an open-loop schedule round robin (request i to worker i mod n).
func (c *Coordinator) split(spec load.Spec, n int) []order {
	key := spec.Key
	out := make([]order, n)
	for k := range out {
		out[k].Slot, out[k].Stride = k, n
	}
	share := func(total, k int) int {
		s := total / n
		if k < total%n {
			s++
		}
		return s
	}
	switch key.LoadMode {
	case servebench.ModeSustained, servebench.ModeDedicated, "":
		for k := range out {
			out[k].Share = share(key.Concurrency, k)
		}
		return out
	}
	// fixed and rate: the schedule a local run would follow, dealt round robin
	total := spec.Requests
	if spec.Offsets != nil {
		total = len(spec.Offsets)
	}
	if total < 1 && spec.MaxDuration > 0 && spec.Rate > 0 {
		total = int(math.Ceil(spec.Rate * spec.MaxDuration.Seconds()))
	}
	sched := spec.Offsets
	if sched == nil && spec.Rate > 0 {
		sched = load.Schedule(spec.Rate, spec.Poisson, spec.Seed, total)
	}
	if key.LoadMode == servebench.ModeFixed && key.Concurrency < n {
		n = max(key.Concurrency, 1) // no more senders than the concurrency allows
		for k := range out {
			out[k].Stride = n
		}
	}
	for k := 0; k < n; k++ {
		out[k].Requests = share(total, k)
		out[k].MaxDuration = spec.MaxDuration
		if key.LoadMode == servebench.ModeFixed {
			out[k].Share = share(key.Concurrency, k)
		}
		if sched != nil {
			for i := k; i < total; i += n {
				out[k].Offsets = append(out[k].Offsets, sched[i])
			}
		}
	}
	return out
}

// cellRun is one cell on the workers, as the coordinator follows it.
type cellRun struct {
	c    *Coordinator
	spec load.Spec
	sink load.Sink
	wake chan struct{}

	mu       sync.Mutex
	parts    map[*wconn]*part
	measured int // measured requests sent
	// stopAt is when the sustained rule said enough (the window's end, the coordinator's
	// clock); stopped once it has.
	stopAt  float64
	stopped bool
	e2eSum  float64
	e2eN    int
	maxSeq  int64
}

// part is one worker's share of the cell.
type part struct {
	ord      order
	shift    float64 // its offsets + shift = the coordinator's
	offset   float64 // its clock − the coordinator's (s)
	inflight map[int64]msg
	warmAt   float64
	warmed   bool
	burst    int // the last burst it finished, -1 before
	bStart   map[int]float64
	bEnd     map[int]float64
	done     bool
	out      load.Outcome
	err      string
}

func (cr *cellRun) wakeUp() {
	select {
	case cr.wake <- struct{}{}:
	default:
	}
}

// handle is one message of a worker about the cell (from its reader, in order).
func (cr *cellRun) handle(w *wconn, m msg) {
	cr.mu.Lock()
	p := cr.parts[w]
	if p == nil {
		cr.mu.Unlock()
		return
	}
	var rec *servebench.Record
	switch m.T {
	case tStarted:
		p.inflight[m.Seq] = m
		if !m.Warm {
			cr.measured++
		}
		cr.maxSeq = max(cr.maxSeq, m.Seq)
	case tRecord:
		if m.Rec == nil {
			break
		}
		rec = m.Rec
		delete(p.inflight, rec.Seq)
		cr.maxSeq = max(cr.maxSeq, rec.Seq)
		moveRecord(rec, p.shift, p.offset)
		if cr.stopped && !rec.Warmup && rec.StartOffsetSeconds >= cr.stopAt {
			// Sent after the rule said enough, before the stop reached the worker: a local run
			// would never have sent it, so it stays out of the statistics as warm-up does.
			rec.Warmup = true
		}
		if rec.OK() && !rec.Warmup {
			cr.e2eSum += rec.E2ELatencySeconds
			cr.e2eN++
		}
	case tWarm:
		p.warmAt, p.warmed = m.At+p.shift, true
	case tBurstDone:
		if p.bStart == nil {
			p.bStart, p.bEnd = map[int]float64{}, map[int]float64{}
		}
		p.burst, p.bStart[m.Burst], p.bEnd[m.Burst] = m.Burst, m.Start+p.shift, m.End+p.shift
	case tDone:
		p.done = true
		if m.Out != nil {
			p.out = *m.Out
		}
		p.err = m.Err
	}
	cr.mu.Unlock()
	if rec != nil {
		w.mu.Lock()
		w.requests++
		w.mu.Unlock()
		cr.sink(*rec)
	}
	cr.wakeUp()
}

// moveRecord puts a worker's record on the coordinator's clock: offsets by shift (s), the wall
// time by the worker's clock offset (s).
func moveRecord(rec *servebench.Record, shift, offset float64) {
	if rec.StartOffsetSeconds != 0 || rec.EndOffsetSeconds != 0 {
		rec.StartOffsetSeconds += shift
		rec.EndOffsetSeconds += shift
	}
	if rec.ScheduledOffsetSeconds != 0 {
		rec.ScheduledOffsetSeconds += shift
	}
	if rec.StartUnixNano != 0 {
		rec.StartUnixNano -= int64(offset * 1e9)
	}
}

func (cr *cellRun) now() float64 { return cr.spec.Clock().Seconds() }

// broadcast sends m to every worker of the cell still there.
func (cr *cellRun) broadcast(m msg) {
	for w := range cr.parts {
		if !w.isLost() {
			if err := w.send(m); err != nil {
				cr.c.lose(w, "sending it "+m.T+": "+err.Error())
			}
		}
	}
}

// lostOne returns a lost worker of the cell that has not yet been accounted for.
func (cr *cellRun) lostOne() (*wconn, *part) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for w, p := range cr.parts {
		if w.isLost() && !p.done {
			return w, p
		}
	}
	return nil, nil
}

func (cr *cellRun) allDone() bool {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, p := range cr.parts {
		if !p.done {
			return false
		}
	}
	return true
}

// drive follows the cell to its end.
func (cr *cellRun) drive(ctx context.Context) (load.Outcome, error) {
	spec := cr.spec
	begin := spec.Clock()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stale := cr.c.Stale
	if stale <= 0 {
		stale = 15 * time.Second
	}
	mode := spec.Key.LoadMode
	stopped := false
	var windowEnd float64
	burst, bursts := 0, max(spec.Bursts, 1)
	if mode == servebench.ModeDedicated {
		cr.broadcast(msg{T: tBurst, Burst: 0})
	}
	for {
		select {
		case <-ctx.Done():
			return cr.abort(ctx.Err())
		case <-cr.wake:
		case <-tick.C:
			now := cr.c.clk.now()
			for w := range cr.parts {
				if !w.isLost() {
					if time.Duration(now-w.lastSeen.Load()) > stale {
						cr.c.lose(w, fmt.Sprintf("silent for more than %s", stale))
						continue
					}
					_ = w.send(msg{T: tPing})
				}
			}
		}
		if w, p := cr.lostOne(); w != nil {
			return cr.fail(w, p)
		}
		if cr.allDone() {
			break
		}
		switch {
		case mode == servebench.ModeDedicated && !stopped:
			if cr.burstDone(burst) {
				burst++
				if burst > bursts || (burst >= 2 && spec.MaxDuration > 0 && spec.Clock()-begin >= spec.MaxDuration) {
					stopped = true
					cr.broadcast(msg{T: tStop})
				} else {
					cr.broadcast(msg{T: tBurst, Burst: burst})
				}
			}
		case (mode == servebench.ModeSustained || mode == "") && !stopped:
			if cr.enough(begin) {
				stopped, windowEnd = true, cr.now()
				cr.mu.Lock()
				cr.stopped, cr.stopAt = true, windowEnd
				cr.mu.Unlock()
				cr.broadcast(msg{T: tStop})
			}
		}
	}
	return cr.outcome(windowEnd, burst-1), cr.firstErr()
}

// enough is the sustained driver's rule (load.Sizing.Enough with spec.Judge) on the merged
// records: the window starts when the last worker's warm-up ended.
func (cr *cellRun) enough(begin time.Duration) bool {
	spec := cr.spec
	if spec.MaxDuration > 0 && spec.Clock()-begin >= spec.MaxDuration {
		return true // the time bound ends the measured phase (never the warm-up: workers finish it)
	}
	ws, ok := cr.windowStart()
	if !ok {
		return false
	}
	now := cr.now()
	p := load.Progress{}
	if spec.Judge != nil {
		p = spec.Judge(ws, now)
	}
	cr.mu.Lock()
	p.Measured, p.WindowSeconds = cr.measured, now-ws
	if cr.e2eN > 0 {
		p.MeanE2ESeconds = cr.e2eSum / float64(cr.e2eN)
	}
	cr.mu.Unlock()
	return spec.Sizing.Enough(spec.Key.Concurrency, p)
}

// windowStart is when the last worker's warm-up ended (false until every one has).
func (cr *cellRun) windowStart() (float64, bool) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	ws := math.Inf(-1)
	for _, p := range cr.parts {
		if !p.warmed {
			return 0, false
		}
		ws = max(ws, p.warmAt)
	}
	return ws, len(cr.parts) > 0
}

func (cr *cellRun) burstDone(b int) bool {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, p := range cr.parts {
		if _, ok := p.bEnd[b]; !ok {
			return false
		}
	}
	return true
}

// outcome merges the workers' outcomes onto the coordinator's clock.
func (cr *cellRun) outcome(windowEnd float64, lastBurst int) load.Outcome {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	var out load.Outcome
	start, end := math.Inf(1), math.Inf(-1)
	for _, p := range cr.parts {
		out.Sent += p.out.Sent
		out.Warmup += p.out.Warmup
		out.Dropped += p.out.Dropped
		switch cr.spec.Key.LoadMode {
		case servebench.ModeSustained, "":
		case servebench.ModeDedicated:
			if s, ok := p.bStart[1]; ok {
				start = min(start, s)
			}
			if e, ok := p.bEnd[lastBurst]; ok && lastBurst >= 1 {
				end = max(end, e)
			}
		default:
			if p.out.Sent > 0 {
				start = min(start, p.out.WindowStart+p.shift)
				end = max(end, p.out.WindowEnd+p.shift)
			}
		}
	}
	if cr.spec.Key.LoadMode == servebench.ModeSustained || cr.spec.Key.LoadMode == "" {
		start = math.Inf(-1)
		for _, p := range cr.parts {
			if p.warmed {
				start = max(start, p.warmAt)
			}
		}
		end = windowEnd
		if end == 0 {
			end = cr.now()
		}
	}
	if !math.IsInf(start, 0) {
		out.WindowStart = start
	}
	if !math.IsInf(end, 0) {
		out.WindowEnd = end
	}
	return out
}

func (cr *cellRun) firstErr() error {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for w, p := range cr.parts {
		if p.err != "" {
			return fmt.Errorf("worker %s: %s", w.name, p.err)
		}
	}
	return nil
}

// abort cancels the cell on every worker and waits (up to 30 s) for what they had in flight.
func (cr *cellRun) abort(cause error) (load.Outcome, error) {
	cr.broadcast(msg{T: tAbort})
	deadline := time.After(30 * time.Second)
	for !cr.allDoneOrLost() {
		select {
		case <-cr.wake:
		case <-deadline:
			cr.mu.Lock()
			var late []*wconn
			for w, p := range cr.parts {
				if !p.done && !w.isLost() {
					late = append(late, w)
				}
			}
			cr.mu.Unlock()
			for _, w := range late {
				cr.c.lose(w, "it did not stop within 30 s of being told to")
			}
		}
	}
	// the requests of a worker that never came back still leave one record each
	for {
		w, p := cr.lostOne()
		if w == nil {
			break
		}
		cr.recordLost(w, p)
	}
	return cr.outcome(cr.now(), 0), cause
}

func (cr *cellRun) allDoneOrLost() bool {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for w, p := range cr.parts {
		if !p.done && !w.isLost() {
			return false
		}
	}
	return true
}

// recordLost records a lost worker's requests in flight as failed (servebench.ErrWorkerLost)
// and marks its part done; it returns how many there were.
func (cr *cellRun) recordLost(w *wconn, p *part) int {
	w.mu.Lock()
	cause := w.lostCause
	w.mu.Unlock()
	cr.mu.Lock()
	now := cr.now()
	var recs []servebench.Record
	for seq, st := range p.inflight {
		recs = append(recs, servebench.Record{CellKey: cr.spec.Key, Seq: seq, Warmup: st.Warm, Worker: w.name,
			StartOffsetSeconds: st.At + p.shift, EndOffsetSeconds: now, StartUnixNano: cr.c.Origin.Add(time.Duration((st.At + p.shift) * 1e9)).UnixNano(),
			ErrorClass: servebench.ErrWorkerLost, Error: "worker " + w.name + " was lost while the request was in flight (" + cause + ")"})
	}
	p.inflight = map[int64]msg{}
	p.done = true
	cr.mu.Unlock()
	for _, r := range recs {
		cr.sink(r)
	}
	return len(recs)
}

// fail ends the cell after a worker was lost: its requests in flight are recorded as failed,
// the others are stopped, and the attempt ends with a *load.LostError.
func (cr *cellRun) fail(w *wconn, p *part) (load.Outcome, error) {
	n := cr.recordLost(w, p)
	w.mu.Lock()
	cause := w.lostCause
	w.mu.Unlock()
	out, _ := cr.abort(nil)
	return out, &load.LostError{Worker: w.name, Cause: cause, Remaining: cr.c.Live(), InFlight: n}
}
