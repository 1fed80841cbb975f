package openai

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
)

// Clock sources of a record (servebench.Record.ClockSource).
const (
	// clockKernel: every response read was stamped by the kernel on arrival (SO_TIMESTAMPNS).
	clockKernel = servebench.ClockKernel
	// clockUser: at least one read was stamped with the time the read returned in user space.
	clockUser = servebench.ClockUser
)

// conn wraps every connection the client opens. It stamps the start of a request right
// before the request's first byte is written (armStart), and, where the system allows it
// (rxstamp_linux.go), reads through recvmsg and keeps the kernel's receive stamp of the
// latest read that returned bytes.
type conn struct {
	net.Conn
	// rx is the kernel-stamping reader; nil when stamps are unavailable (user clock).
	rx *rxReader
	// kernelNs is the kernel receive stamp (CLOCK_REALTIME, ns since the Unix epoch) of the
	// latest read that returned bytes; 0 when that read carried none.
	kernelNs atomic.Int64
	// start, when set, is stamped by the next Write and cleared.
	start atomic.Pointer[startMark]
	// writing is the mark of the request being written: each Write notes its return in it.
	writing atomic.Pointer[startMark]
	// prewarmed marks a connection opened ahead of its first request (Client.Prewarm).
	prewarmed bool
	// live counts the dialer's open connections; closed makes Close count once.
	live   *atomic.Int64
	closed atomic.Bool
}

func (c *conn) Close() error {
	if c.live != nil && c.closed.CompareAndSwap(false, true) {
		c.live.Add(-1)
	}
	return c.Conn.Close()
}

// startMark receives the time right before a request's first byte was written, and how long
// after it the latest write of the request returned.
type startMark struct {
	t   time.Time
	set atomic.Bool // published after t is written
	// wrote is the latest write's return − t in ns, + 1 (0: none returned yet).
	wrote atomic.Int64
}

// written returns how long after the start the request's latest write returned.
func (m *startMark) written() (time.Duration, bool) {
	if m == nil {
		return 0, false
	}
	w := m.wrote.Load()
	return time.Duration(w - 1), w > 0
}

// at returns the stamp and whether the write happened.
func (m *startMark) at() (time.Time, bool) {
	if m == nil || !m.set.Load() {
		return time.Time{}, false
	}
	return m.t, true
}

// armStart makes the next Write stamp m.
func (c *conn) armStart(m *startMark) { c.start.Store(m) }

func (c *conn) Write(p []byte) (int, error) {
	if m := c.start.Swap(nil); m != nil {
		m.t = time.Now()
		m.set.Store(true)
		c.writing.Store(m)
	}
	n, err := c.Conn.Write(p)
	if m := c.writing.Load(); m != nil && err == nil {
		m.wrote.Store(int64(time.Since(m.t)) + 1)
	}
	return n, err
}

func (c *conn) Read(p []byte) (int, error) {
	if c.rx == nil {
		return c.Conn.Read(p)
	}
	n, ns, err := c.rx.read(p)
	if n > 0 {
		c.kernelNs.Store(ns)
	}
	return n, err
}

// kernelClock reports whether this connection's reads carry kernel stamps.
func (c *conn) kernelClock() bool { return c.rx != nil }

// NetConn returns the wrapped connection.
func (c *conn) NetConn() net.Conn { return c.Conn }

// dialFunc opens a connection.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ownConn finds the *conn under a connection the transport handed out (TLS wraps it).
func ownConn(nc net.Conn) *conn {
	for range 4 {
		switch v := nc.(type) {
		case *conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// readStamp is the clock reading of one response read that returned bytes.
type readStamp struct {
	// at is when the bytes arrived on the run's monotonic clock: the kernel's stamp mapped
	// onto the monotonic clock, or the user-space time the read returned.
	at time.Time
	// lag is user-space read time − kernel stamp (how far behind the client was); -1 with
	// the user clock.
	lag time.Duration
}

// stampRead turns the user-space time a read returned (user) and the kernel's receive stamp
// of the bytes (kernelNs, CLOCK_REALTIME; 0 = none) into the read's stamp.
//
// Mapping: a kernel stamp is wall-clock time. user carries both clocks, read together, so the
// stamp is placed on the monotonic clock at user − (wall(user) − kernelNs): the offset between
// the two clocks is measured afresh at every read, and a wall-clock step during the run moves
// both readings alike. A step inside the few microseconds between arrival and read could still
// misplace one stamp; such a stamp is refused (user clock) when it would fall after the read
// (a backward step) or before notBefore (the request start; a forward step).
func stampRead(user time.Time, kernelNs int64, notBefore time.Time) readStamp {
	if kernelNs == 0 {
		return readStamp{at: user, lag: -1}
	}
	lag := time.Duration(user.UnixNano() - kernelNs)
	if lag < 0 {
		return readStamp{at: user, lag: -1}
	}
	at := user.Add(-lag)
	if !notBefore.IsZero() && at.Before(notBefore) {
		return readStamp{at: user, lag: -1}
	}
	return readStamp{at: at, lag: lag}
}
