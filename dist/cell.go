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
	cr := &cellRun{c: c, spec: spec, sink: sink, wake: make(chan struct{}, 1), parts: map[*wconn]*part{}, begin: spec.Clock().Seconds(), released: map[int]float64{}}
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
		cr.parts[w] = &part{ord: o, shift: c.shift(w), offset: offset, unc: w.lastClock().UncertaintySeconds,
			inflight: map[int64]started{}, seen: map[int64]bool{}, firstStart: math.Inf(1), lastEnd: math.Inf(-1)}
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
	case servebench.ModeSustained, servebench.ModeDedicated, servebench.ModeUsers, "":
		// a users cell: worker k runs users k, k + n, k + 2n, … (each user lives on one worker)
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
		if spec.Groups != nil && sched == nil {
			// a group's requests (a session's turns) go to one worker: group g to worker g mod n,
			// the same worker at every cell of this concurrency
			out[k].Items = []int{}
			for i := 0; i < total && i < len(spec.Groups); i++ {
				if spec.Groups[i]%n == k {
					out[k].Items = append(out[k].Items, i)
				}
			}
			// no more slots than requests; a worker with none takes no part
			out[k].Requests, out[k].Share = len(out[k].Items), min(out[k].Share, len(out[k].Items))
			continue
		}
		if sched != nil {
			for i := k; i < total; i += n {
				out[k].Offsets = append(out[k].Offsets, sched[i])
			}
		}
	}
	return out
}

// windowed reports whether cells of mode open their measured window after a warm-up and end
// it by the runner's rule on the merged records: sustained cells and user populations.
func windowed(mode servebench.LoadMode) bool {
	return mode == servebench.ModeSustained || mode == servebench.ModeUsers || mode == ""
}

// warmRecords is the latest completion of the order's part that ends its warm-up: its
// Share-th in a sustained cell (one request per slot), its 2 × Share-th in a population (load:
// the window opens when every user's joining turn is answered, or at the 2N-th completion if
// that comes first).
func warmRecords(o order) int {
	if o.Key.LoadMode == servebench.ModeUsers {
		return 2 * o.Share
	}
	return o.Share
}

// warmRecordsMin is the earliest completion that can end the order's part's warm-up: its
// Share-th in both modes (in a population, every user's joining turn answered).
func warmRecordsMin(o order) int { return o.Share }

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
	// begin is when the cell began (s, the coordinator's axis); released the release time of
	// each dedicated burst, stoppedAt when the workers were told to stop (for laggards).
	begin     float64
	released  map[int]float64
	stoppedAt float64
}

// part is one worker's share of the cell.
type part struct {
	ord      order
	shift    float64 // its offsets + shift = the coordinator's
	offset   float64 // its clock − the coordinator's (s)
	unc      float64 // that offset's uncertainty (s)
	inflight map[int64]started
	seen     map[int64]bool // every seq it started
	sent     int            // requests it started
	records  int            // records it sent
	busy     float64        // the sum of its records' end − start (s)
	// firstStart and lastEnd bound its records (the coordinator's axis)
	firstStart, lastEnd float64
	warmAt              float64
	warmed              bool
	burst               int // the last burst it finished, -1 before
	bStart              map[int]float64
	bEnd                map[int]float64
	done                bool
	out                 load.Outcome
	err                 string
	// when (the coordinator's axis) it reported its warm-up's end, each burst's end, its done
	warmSeen, doneSeen float64
	burstSeen          map[int]float64
}

// started is a request a worker announced: its warm-up flag and start (the coordinator's axis).
type started struct {
	warm bool
	at   float64
}

// span is where the part's times must lie now: from the cell's start to now, widened by the
// clock's uncertainty and slackSeconds.
func (cr *cellRun) span(p *part) span {
	pad := p.unc + slackSeconds
	return span{lo: cr.begin - pad, hi: cr.now() + pad}
}

func (cr *cellRun) wakeUp() {
	select {
	case cr.wake <- struct{}{}:
	default:
	}
}

// handle is one message of a worker about the cell (from its reader, in order). Each is
// checked against the worker's order (check.go); a message that breaks a check drops the
// worker (reject).
func (cr *cellRun) handle(w *wconn, m msg) {
	if w.isLost() {
		return // dropped: what it still had on the wire is not taken
	}
	cr.mu.Lock()
	p := cr.parts[w]
	if p == nil {
		cr.mu.Unlock()
		cr.c.reject(w, nil, fmt.Sprintf("it sent %q for a cell it has no part in", servebench.TerminalText(m.T, 20, false)))
		return
	}
	o := p.ord
	sp := cr.span(p)
	bursts := max(cr.spec.Bursts, len(cr.released)-1, 1) // measured bursts released so far, or the plan's
	now := cr.now()
	var rec *servebench.Record
	var bad string
	switch m.T {
	case tStarted:
		at := m.At + p.shift
		if bad = checkStart(o, bursts, p, m, at, sp); bad != "" {
			break
		}
		p.inflight[m.Seq] = started{warm: m.Warm, at: at}
		p.seen[m.Seq] = true
		p.sent++
		if !m.Warm {
			cr.measured++
		}
		cr.maxSeq = max(cr.maxSeq, m.Seq)
	case tRecord:
		if m.Rec == nil {
			bad = "a record message without a record"
			break
		}
		rec = m.Rec
		moveRecord(rec, p.shift, p.offset)
		st, ok := p.inflight[rec.Seq]
		if !ok {
			bad = fmt.Sprintf("seq %d was not in flight (never started, or recorded before)", rec.Seq)
			break
		}
		if bad = checkRecord(o.Key, w.hello, rec, st, sp); bad != "" {
			break
		}
		p.records++
		if windowed(o.Key.LoadMode) && !p.warmed && p.records >= warmRecords(o)+o.Share {
			// its warm-up ends at its warmRecords-th completion; fewer than Share more can
			// follow before it says so
			bad = fmt.Sprintf("it sent %d records without reporting the end of its warm-up, which comes with its %d-th", p.records, warmRecords(o))
			break
		}
		if bad = cr.volume(w, p, rec); bad != "" {
			break
		}
		delete(p.inflight, rec.Seq)
		p.firstStart, p.lastEnd = min(p.firstStart, rec.StartOffsetSeconds), max(p.lastEnd, rec.EndOffsetSeconds)
		turn := rec.Turn
		rec.CellKey, rec.Worker = cr.spec.Key, w.name
		if o.Key.LoadMode == servebench.ModeUsers {
			rec.Turn = turn // the depth of the user's conversation
		}
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
		at := m.At + p.shift
		switch {
		case !windowed(o.Key.LoadMode):
			bad = "it reported a warm-up's end in a cell without one"
		case p.warmed:
			bad = "it reported its warm-up's end twice"
		case !sp.has(at) || p.records < warmRecordsMin(o):
			bad = fmt.Sprintf("it reported its warm-up's end at %.3f s after %d records (the span is %.3f–%.3f s, the end comes with its %d-th at the earliest)", at, p.records, sp.lo, sp.hi, warmRecordsMin(o))
		default:
			p.warmAt, p.warmed, p.warmSeen = at, true, now
		}
	case tBurstDone:
		start, end := m.Start+p.shift, m.End+p.shift
		_, released := cr.released[m.Burst]
		_, twice := p.bEnd[m.Burst]
		if o.Key.LoadMode != servebench.ModeDedicated || !released || twice || !sp.has(start) || !sp.has(end) || end < start {
			bad = fmt.Sprintf("it reported burst %d done (%.3f–%.3f s), which was not released to it, was reported before, or lies outside the span %.3f–%.3f s", m.Burst, start, end, sp.lo, sp.hi)
			break
		}
		if p.bStart == nil {
			p.bStart, p.bEnd, p.burstSeen = map[int]float64{}, map[int]float64{}, map[int]float64{}
		}
		p.burst, p.bStart[m.Burst], p.bEnd[m.Burst], p.burstSeen[m.Burst] = m.Burst, start, end, now
	case tDone:
		if p.done {
			bad = "it reported the cell done twice"
			break
		}
		var out load.Outcome
		if m.Out != nil {
			out = *m.Out
		}
		if bad = checkOutcome(o, bursts, p, out, sp); bad != "" {
			break
		}
		p.done, p.out, p.err, p.doneSeen = true, out, servebench.TerminalText(m.Err, 400, false), now
	default:
		bad = fmt.Sprintf("it sent %q during a cell", servebench.TerminalText(m.T, 20, false))
	}
	cr.mu.Unlock()
	if bad != "" {
		cr.c.reject(w, rec, bad)
		return
	}
	if rec != nil {
		w.mu.Lock()
		w.requests++
		w.mu.Unlock()
		cr.sink(*rec)
	}
	cr.wakeUp()
}

// volume checks a worker has not finished more requests than its share allows (cr.mu held;
// rec is the record just taken, on the coordinator's axis):
//
//   - busy ≤ share × (now − begin + 2 × pad), busy being the sum of its records' end − start
//     (s): its slots send one request after another, so together they are busy at most that
//     long (not checked in rate mode, an open loop with no cap);
//   - in a sustained cell, records ≤ volumeAllowance(share, perSlot), perSlot being the most
//     records per slot of another worker that has finished at least one round (share records).
//
// pad is the part's clock uncertainty + slackSeconds. Fixed, rate and dedicated orders also
// count their requests (checkStart).
func (cr *cellRun) volume(w *wconn, p *part, rec *servebench.Record) string {
	o := p.ord
	p.busy += rec.EndOffsetSeconds - rec.StartOffsetSeconds
	pad := p.unc + slackSeconds
	if limit := float64(o.Share) * (cr.now() - cr.begin + 2*pad); o.Key.LoadMode != servebench.ModeRate && p.busy > limit {
		return fmt.Sprintf("its %d requests took %.3f s together, more than its %d slots had since the cell began (%.3f s)", p.records, p.busy, o.Share, limit)
	}
	if k := o.Key.LoadMode; k != servebench.ModeSustained && k != "" {
		return ""
	}
	best := -1.0
	for ow, op := range cr.parts {
		if ow != w && op.ord.Share > 0 && op.records >= op.ord.Share {
			best = max(best, float64(op.records)/float64(op.ord.Share))
		}
	}
	if best < 0 {
		return ""
	}
	if allow := volumeAllowance(o.Share, best); p.records > allow {
		return fmt.Sprintf("it finished %d requests with %d slots while the others finished at most %.1f per slot (allowed: %d)", p.records, o.Share, best, allow)
	}
	return ""
}

// volumeAllowance is the most requests a worker with share slots may finish in a sustained
// cell while another finished perSlot per slot: 3 × share × perSlot + 3 × share + 16. Every
// slot of every worker sends to one server back to back, so their completions per slot agree
// up to the requests in flight when counted (share) and the spread of latencies; three times
// that is no honest worker's.
func volumeAllowance(share int, perSlot float64) int {
	return int(3*float64(share)*perSlot) + 3*share + 16
}

// reject drops a worker whose message broke a check of its order: the record (if any) goes
// to Rejected, its name may not join again this run, and it is lost, so that its cell ends
// with a *load.LostError: the attempt is discarded (its records stay in requests.jsonl with
// their cell_attempt) and the cell is measured again with the workers that remain.
func (c *Coordinator) reject(w *wconn, rec *servebench.Record, why string) {
	cause := "dropped by the coordinator, its messages contradict its order: " + why
	if rec != nil && c.Rejected != nil {
		c.Rejected(Rejection{Worker: w.name, Cause: why, Record: *rec})
	}
	c.mu.Lock()
	if c.banned == nil {
		c.banned = map[string]bool{}
	}
	c.banned[w.base] = true
	c.mu.Unlock()
	c.lose(w, cause)
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
	release := func(b int) {
		cr.mu.Lock()
		cr.released[b] = cr.now()
		cr.mu.Unlock()
		cr.broadcast(msg{T: tBurst, Burst: b})
	}
	stop := func() {
		cr.mu.Lock()
		cr.stoppedAt = cr.now()
		cr.mu.Unlock()
		cr.broadcast(msg{T: tStop})
	}
	if mode == servebench.ModeDedicated {
		release(0)
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
			for _, l := range cr.laggards() {
				cr.c.lose(l.w, l.why)
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
				if !cr.moreBursts(burst, bursts) || (burst >= 2 && spec.MaxDuration > 0 && spec.Clock()-begin >= spec.MaxDuration) {
					stopped = true
					stop()
				} else {
					release(burst)
				}
			}
		case windowed(mode) && !stopped:
			if cr.enough(begin) {
				stopped, windowEnd = true, cr.now()
				cr.mu.Lock()
				cr.stopped, cr.stopAt = true, windowEnd
				cr.mu.Unlock()
				stop()
			}
		}
	}
	return cr.outcome(windowEnd, burst-1), cr.firstErr()
}

// moreBursts reports whether a dedicated cell releases burst b: its floor of bursts measured
// ones always, then more while the spec's Judge, on the merged records, says the mean-TTFT
// interval is not yet within the precision (load.Sizing.EnoughBursts, the local driver's rule).
func (cr *cellRun) moreBursts(b, bursts int) bool {
	spec := cr.spec
	if b <= bursts {
		return true
	}
	if spec.Judge == nil {
		return false
	}
	cr.mu.Lock()
	start, ok := cr.released[1]
	cr.mu.Unlock()
	if !ok {
		return false
	}
	now := cr.now()
	p := spec.Judge(start, now)
	p.WindowSeconds = now - start
	return !spec.Sizing.EnoughBursts(spec.Key.Concurrency, b-1, bursts, p)
}

// laggard is a worker that did not reach a point of the cell in time, and why.
type laggard struct {
	w   *wconn
	why string
}

// laggards are the workers of the cell that fell behind: once one worker reached a point of
// the cell (its warm-up's end in a sustained cell, a dedicated burst's end, its done after the
// stop, or from the start in fixed and rate cells), every other must reach it by
//
//	from + max(Grace, 3 × (first − from))
//
// where from is when that point's phase began (the cell's start, the burst's release, the
// stop) and first is when the first worker reached it (s, the coordinator's clock). Workers
// of one cell share one server and near-equal shares, so an honest one is rarely slower than
// three times the fastest; one that answers pings but never reports keeps nothing open.
func (cr *cellRun) laggards() []laggard {
	grace := orDefault(cr.c.Grace, time.Minute).Seconds()
	cr.mu.Lock()
	defer cr.mu.Unlock()
	now := cr.now()
	var out []laggard
	late := map[*wconn]bool{}
	check := func(what string, from float64, reached func(*part) (float64, bool)) {
		first, firstW := math.Inf(1), ""
		for w, p := range cr.parts {
			if at, ok := reached(p); ok && at < first {
				first, firstW = at, w.name
			}
		}
		if math.IsInf(first, 1) {
			return
		}
		deadline := from + max(grace, 3*(first-from))
		if now <= deadline {
			return
		}
		for w, p := range cr.parts {
			if _, ok := reached(p); !ok && !p.done && !late[w] && !w.isLost() {
				late[w] = true
				out = append(out, laggard{w, fmt.Sprintf("it did not %s within %.0f s, while worker %s did in %.1f s", what, deadline-from, firstW, first-from)})
			}
		}
	}
	switch cr.spec.Key.LoadMode {
	case servebench.ModeSustained, servebench.ModeUsers, "":
		check("end its warm-up", cr.begin, func(p *part) (float64, bool) { return p.warmSeen, p.warmed })
	case servebench.ModeDedicated:
		for b, from := range cr.released {
			check(fmt.Sprintf("finish burst %d", b), from, func(p *part) (float64, bool) { at, ok := p.burstSeen[b]; return at, ok })
		}
	}
	switch k := cr.spec.Key.LoadMode; {
	case k == servebench.ModeFixed || k == servebench.ModeRate:
		check("finish its part of the cell", cr.begin, func(p *part) (float64, bool) { return p.doneSeen, p.done })
	case cr.stoppedAt > 0:
		check("finish its part of the cell after the stop", cr.stoppedAt, func(p *part) (float64, bool) { return p.doneSeen, p.done })
	}
	return out
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
		case servebench.ModeSustained, servebench.ModeUsers, "":
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
	if windowed(cr.spec.Key.LoadMode) {
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
		recs = append(recs, servebench.Record{CellKey: cr.spec.Key, Seq: seq, Warmup: st.warm, Worker: w.name,
			StartOffsetSeconds: st.at, EndOffsetSeconds: now, StartUnixNano: cr.c.Origin.Add(time.Duration(st.at * 1e9)).UnixNano(),
			ErrorClass: servebench.ErrWorkerLost, Error: "worker " + w.name + " was lost while the request was in flight (" + cause + ")"})
	}
	p.inflight = map[int64]started{}
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
