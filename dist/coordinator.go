package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Coordinator accepts workers and is the runner's load Generator (see Run).
type Coordinator struct {
	Token string
	// Plan is handed to every worker; its target URL must be one every worker can reach.
	Plan servebench.Plan
	// Marker goes into every prompt (workload.Config.RunID), as in a local run.
	Marker string
	// Origin is the run's clock origin (runner.Runner.Origin): records are moved onto it.
	Origin time.Time
	// MinWorkers is the fewest workers a cell may run with (default 1); with fewer, a cell
	// waits Rejoin (default 1 minute) for more to join, then the run stops (load.ErrGeneratorGone).
	MinWorkers int
	Rejoin     time.Duration
	// Stale is how long a worker may stay silent during a cell before it counts as lost
	// (default 15 s; it is pinged every second).
	Stale time.Duration
	// Before a connection has proven the token it may send lines of at most 4 KiB and must
	// prove it within AuthTimeout (default 5 s); at most MaxPending (default 16) connections
	// may be at that stage at once (more are closed at once), and a wrong proof holds its
	// place for FailDelay (default 1 s) before the refusal, so no more than MaxPending /
	// FailDelay guesses a second reach the coordinator.
	AuthTimeout time.Duration
	MaxPending  int
	FailDelay   time.Duration
	// ReadyTimeout bounds how long an admitted worker may take to open the target (default 5
	// minutes); Grace is the least time a worker is given to reach a point of a cell that
	// another worker of the cell already reached (default 1 minute; see cellRun.laggards).
	ReadyTimeout time.Duration
	Grace        time.Duration
	// Rejected, when set, keeps each record refused by the checks of a cell (checkRecord) with
	// its worker and the reason (the run folder's rejected.jsonl).
	Rejected func(r Rejection)
	Logf     func(format string, args ...any)

	ln      net.Listener
	clk     clock
	mu      sync.Mutex
	all     []*wconn
	banned  map[string]bool // names of workers dropped for their records
	joined  chan struct{}   // closed and replaced whenever a worker joins
	joining chan struct{}   // a place (1) held while a worker is said to join and added to the pool
	closed  bool
	pingID  atomic.Int64
	pending chan struct{} // a place per connection not yet authenticated
	noise   noisyLog
}

// Rejection is a record a worker sent that contradicted its order (Coordinator.Rejected).
type Rejection struct {
	Worker string            `json:"worker"`
	Cause  string            `json:"cause"`
	Record servebench.Record `json:"record"`
}

// noisyLog says what strangers do at most every 10 s, with the count since the last time.
type noisyLog struct {
	mu    sync.Mutex
	last  time.Time
	count int
}

func (n *noisyLog) say(c *Coordinator, format string, args ...any) {
	n.mu.Lock()
	n.count++
	if !n.last.IsZero() && time.Since(n.last) < 10*time.Second {
		n.mu.Unlock()
		return
	}
	count := n.count
	n.count, n.last = 0, time.Now()
	n.mu.Unlock()
	if count > 1 {
		format += fmt.Sprintf(" (%d such connections in the last 10 s)", count)
	}
	c.logf(format, args...)
}

// wconn is one worker as the coordinator sees it.
type wconn struct {
	*peer
	name, host string
	hello      string // the name it gave, as given (its records carry it)
	base       string // that name as shown, before a suffix made it unique (what a ban names)
	priority   string
	origin     int64 // the worker's clock origin, its clock (Unix ns)
	joinedAt   time.Time

	mu        sync.Mutex
	offset    float64 // worker clock − coordinator clock (s), last measured
	clockLog  []servebench.ClockSample
	requests  int
	lostAt    *time.Time
	lostCause string
	cell      *cellRun

	lastSeen atomic.Int64 // coordinator clock (Unix ns) of its last message
	pongs    chan msg
	gone     chan struct{}
}

func (c *Coordinator) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Listen starts accepting workers on addr (host:port).
func (c *Coordinator) Listen(ctx context.Context, addr string) error {
	if err := CheckToken(c.Token, "SERVEBENCH_TOKEN"); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening for workers on %s: %w", addr, err)
	}
	c.Serve(ctx, ln)
	return nil
}

// Serve accepts workers from ln (Listen does it on a TCP address).
func (c *Coordinator) Serve(ctx context.Context, ln net.Listener) {
	c.ln = ln
	c.clk = clock{origin: c.Origin}
	c.mu.Lock()
	c.joined = make(chan struct{})
	c.joining = make(chan struct{}, 1)
	c.pending = make(chan struct{}, orDefault(c.MaxPending, 16))
	c.mu.Unlock()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case c.pending <- struct{}{}:
				go c.admit(conn)
			default:
				conn.Close()
				c.noise.say(c, "closed a connection from %s: %d others are still to prove the token", conn.RemoteAddr(), cap(c.pending))
			}
		}
	}()
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Addr is the address workers reach it at.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// admit authenticates a worker, hands it the plan, measures its clock and adds it to the pool.
//
// The handshake: the worker says hello with its nonce; the coordinator answers with its own
// nonce only; the worker proves the token over both nonces (proof "worker"); only then does the
// coordinator prove it (proof "coordinator") in its welcome. Someone without the token gets
// nothing computed from it, so there is nothing to test guesses against offline.
func (c *Coordinator) admit(conn net.Conn) {
	p := newPeer(conn, maxUnauthBytes)
	released := false
	release := func() {
		if !released {
			released = true
			<-c.pending
		}
	}
	defer release()
	from := conn.RemoteAddr()
	fail := func(why string) {
		_ = p.send(msg{T: tRefused, Err: why})
		conn.Close()
	}
	_ = conn.SetDeadline(time.Now().Add(orDefault(c.AuthTimeout, 5*time.Second)))
	hello, err := p.recv()
	if err != nil || hello.T != tHello || !validNonce(hello.Nonce) {
		c.noise.say(c, "closed a connection from %s that did not start servebench's handshake (%s)", from, orText(errText(err), "its first message was not a hello"))
		conn.Close()
		return
	}
	mine := nonce()
	if err := p.send(msg{T: tChallenge, Nonce: mine}); err != nil {
		conn.Close()
		return
	}
	auth, err := p.recv()
	if err != nil || auth.T != tAuth || !proofOK(c.Token, "worker", mine, hello.Nonce, auth.MAC) {
		if err != nil {
			c.noise.say(c, "closed a connection from %s during the handshake: %v", from, err)
			conn.Close()
			return
		}
		c.noise.say(c, "refused a worker from %s: wrong token", from)
		time.Sleep(orDefault(c.FailDelay, time.Second))
		fail("wrong token: set SERVEBENCH_TOKEN to the coordinator's")
		return
	}
	release()
	p.max.Store(maxMessageBytes)
	_ = conn.SetDeadline(time.Time{})
	name := servebench.TerminalText(hello.Name, 64, false)
	c.mu.Lock()
	closed, banned := c.closed, c.banned[name]
	base := name
	for _, w := range c.all {
		if w.name == name && !w.isLost() {
			name = fmt.Sprintf("%s-%d", name, len(c.all))
		}
	}
	c.mu.Unlock()
	if closed {
		fail("the run is over")
		return
	}
	if banned {
		c.logf("refused worker %s from %s: it was dropped earlier in this run for records that contradicted its orders", name, from)
		fail("this worker was dropped earlier in this run for records that contradicted its orders")
		return
	}
	plan := c.Plan
	if err := p.send(msg{T: tWelcome, MAC: proof(c.Token, "coordinator", hello.Nonce, mine), Plan: &plan, Marker: c.Marker}); err != nil {
		conn.Close()
		return
	}
	// opening the target (discovery, prompt sizing) may take a while
	_ = conn.SetReadDeadline(time.Now().Add(orDefault(c.ReadyTimeout, 5*time.Minute)))
	ready, err := p.recv()
	if err != nil || ready.T != tReady || ready.Err != "" {
		c.logf("worker %s could not open the target: %s", name, orText(ready.Err, fmt.Sprint(err)))
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	w := &wconn{peer: p, name: name, hello: hello.Name, base: base, host: servebench.TerminalText(hello.Host, 64, false), origin: ready.Origin,
		priority: servebench.TerminalText(hello.Priority, 200, false),
		joinedAt: time.Now().UTC(), pongs: make(chan msg, 8), gone: make(chan struct{})}
	w.lastSeen.Store(c.clk.now())
	go c.read(w)
	if err := c.sync(w); err != nil {
		c.lose(w, "its clock could not be measured: "+err.Error())
		return
	}
	// The join is said before the pool grows: WaitFor returns the moment it has grown, and the
	// run's own output (its header, its first cell) must not come before the line that says its
	// last worker is ready. Joins take turns (a place in joining: a channel, which a synctest
	// bubble sees as durably blocked) so that each line counts the workers before it.
	c.joining <- struct{}{}
	defer func() { <-c.joining }()
	c.mu.Lock()
	n := len(c.liveLocked()) + 1
	c.mu.Unlock()
	cs := w.lastClock()
	c.logf("worker %s (%s) joined: %d worker(s) ready; clock offset %+.3f ms ± %.3f ms", w.name, w.host, n, 1e3*cs.OffsetSeconds, 1e3*cs.UncertaintySeconds)
	c.mu.Lock()
	c.all = append(c.all, w)
	close(c.joined)
	c.joined = make(chan struct{})
	c.mu.Unlock()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (w *wconn) lastClock() servebench.ClockSample {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.clockLog) == 0 {
		return servebench.ClockSample{}
	}
	return w.clockLog[len(w.clockLog)-1]
}

// read handles one worker's messages until its connection ends.
func (c *Coordinator) read(w *wconn) {
	for {
		m, err := w.recv()
		if err != nil {
			c.lose(w, "connection closed: "+err.Error())
			return
		}
		w.lastSeen.Store(c.clk.now())
		switch m.T {
		case tPong:
			if m.ID == 0 {
				break // a heartbeat's
			}
			select {
			case w.pongs <- m:
			default:
			}
		default:
			w.mu.Lock()
			cr := w.cell
			w.mu.Unlock()
			if cr != nil {
				cr.handle(w, m)
			}
		}
	}
}

// lose marks a worker lost (once) and closes its connection.
func (c *Coordinator) lose(w *wconn, cause string) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed { // the run is over: a closed connection is no loss
		w.conn.Close()
		return
	}
	w.mu.Lock()
	if w.lostAt != nil {
		w.mu.Unlock()
		return
	}
	now := time.Now().UTC()
	w.lostAt, w.lostCause = &now, cause
	cr := w.cell
	w.mu.Unlock()
	close(w.gone)
	w.conn.Close()
	c.logf("worker %s lost: %s", w.name, cause)
	if cr != nil {
		cr.wakeUp()
	}
}

func (w *wconn) isLost() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lostAt != nil
}

// sync measures a worker's clock: five exchanges, the one with the shortest round trip wins.
func (c *Coordinator) sync(w *wconn) error {
	best := servebench.ClockSample{UncertaintySeconds: -1}
	for range 5 {
		id := c.pingID.Add(1)
		t1 := c.clk.now()
		if err := w.send(msg{T: tPing, ID: id, T1: t1}); err != nil {
			return err
		}
		timer := time.NewTimer(5 * time.Second)
		var m msg
	wait:
		for {
			select {
			case m = <-w.pongs:
				if m.ID == id {
					break wait
				}
			case <-w.gone:
				timer.Stop()
				return errors.New("the worker left")
			case <-timer.C:
				return errors.New("no answer to a clock exchange within 5 s")
			}
		}
		timer.Stop()
		t4 := c.clk.now()
		off, unc := stats.ClockOffset(t1, m.T2, m.T3, t4)
		if best.UncertaintySeconds < 0 || unc < best.UncertaintySeconds {
			best = servebench.ClockSample{At: time.Now().UTC(), OffsetSeconds: off, UncertaintySeconds: unc}
		}
	}
	w.mu.Lock()
	w.offset = best.OffsetSeconds
	w.clockLog = append(w.clockLog, best)
	w.mu.Unlock()
	return nil
}

// shift moves a worker's offsets (seconds from its origin, its clock) onto the coordinator's
// axis (seconds from the run origin): origin_w − offset − origin_c.
func (c *Coordinator) shift(w *wconn) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return float64(w.origin-c.Origin.UnixNano())/1e9 - w.offset
}

func (c *Coordinator) liveLocked() []*wconn {
	var out []*wconn
	for _, w := range c.all {
		if !w.isLost() {
			out = append(out, w)
		}
	}
	return out
}

// Live returns the workers currently in the pool.
func (c *Coordinator) Live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.liveLocked())
}

// WaitFor waits until n workers are in the pool, ctx ends or timeout passes.
func (c *Coordinator) WaitFor(ctx context.Context, n int, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		have, ch := len(c.liveLocked()), c.joined
		c.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("only %d of %d worker(s) joined within %s: start them with  SERVEBENCH_TOKEN=… servebench worker --coordinator tcp://%s", have, n, timeout, c.Addr())
		case <-ch:
		}
	}
}

// Workers lists every worker that joined, lost ones included (results.json "workers").
func (c *Coordinator) Workers() []servebench.Worker {
	c.mu.Lock()
	all := slices.Clone(c.all)
	c.mu.Unlock()
	out := make([]servebench.Worker, 0, len(all))
	for _, w := range all {
		w.mu.Lock()
		out = append(out, servebench.Worker{Name: w.name, Host: w.host, JoinedAt: w.joinedAt, LostAt: w.lostAt, LostCause: w.lostCause,
			Requests: w.requests, Priority: w.priority, Clock: slices.Clone(w.clockLog)})
		w.mu.Unlock()
	}
	return out
}

// Close tells every worker the run is over and stops accepting more.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	all := slices.Clone(c.all)
	c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
	}
	for _, w := range all {
		if !w.isLost() {
			_ = w.send(msg{T: tBye})
			w.conn.Close()
		}
	}
}
