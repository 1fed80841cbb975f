//go:build linux

package openai

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// cmsg renders one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	l := cmsgAlign(syscall.SizeofCmsghdr) + len(data)
	b := make([]byte, cmsgAlign(l))
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(l)
	copy(b[cmsgAlign(syscall.SizeofCmsghdr):], data)
	return b
}

func timespec(sec, nsec int64) []byte {
	ts := syscall.NsecToTimespec(sec*1e9 + nsec)
	return unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts))
}

func TestRxStamp(t *testing.T) {
	stamp := cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMPNS, timespec(1700000000, 123456789))
	other := cmsg(syscall.SOL_IP, 8, []byte{1, 2, 3, 4})
	cases := []struct {
		name string
		oob  []byte
		want int64
	}{
		{"the stamp alone", stamp, 1700000000123456789},
		{"after another message", append(append([]byte(nil), other...), stamp...), 1700000000123456789},
		{"no control message", nil, 0},
		{"another message only", other, 0},
		{"cut short", stamp[:len(stamp)-4], 0},
		{"header only", stamp[:syscall.SizeofCmsghdr], 0},
		{"SCM_TIMESTAMP (µs) is not ours", cmsg(syscall.SOL_SOCKET, syscall.SCM_TIMESTAMP, timespec(1, 2)), 0},
	}
	for _, c := range cases {
		if got := rxStamp(c.oob); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// rxPair returns a kernel-stamping client connection to a loopback server whose accepted side
// is passed to serve (run on its own goroutine).
func rxPair(t *testing.T, serve func(net.Conn)) (net.Conn, *rxReader) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	rx := enableRx(nc)
	if rx == nil {
		t.Skip("the socket refuses receive stamps")
	}
	return nc, rx
}

// stampSlack is how far outside the server's write a kernel stamp may fall in these tests: the
// kernel may finish a loopback delivery a little after the write returns (seen: 54 µs under the
// race detector); a user-space stamp of a reader 20 ms late, or a later segment's stamp, is far
// outside.
const stampSlack = int64(time.Millisecond)

// TestWaitReadsAndStamps: a reader 20 ms late gets the bytes that waited for it from wait with
// the kernel stamp of their arrival (within the server's write), not the time it read them;
// then io.EOF at the connection's end; and the socket is left non-blocking for the poller's
// reads. (TestWaitEnds and TestWaitLowWater take the sleeping path.)
func TestWaitReadsAndStamps(t *testing.T) {
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	ev := chatChunk(`{"content":"a"}`)
	var pre, post int64
	wrote := make(chan struct{})
	nc, rx := rxPair(t, func(c net.Conn) {
		pre = time.Now().UnixNano()
		_, _ = io.WriteString(c, ev)
		post = time.Now().UnixNano()
		close(wrote)
	})
	var got string
	var ns int64
	keep := func(p []byte, at int64) bool { got, ns = string(p), at; return true }
	<-wrote
	time.Sleep(20 * time.Millisecond) // a late reader
	stop, ok, err := rx.wait(func() bool { return false }, keep, 0)
	if !ok || err != nil || !stop || got != ev {
		t.Fatalf("wait: %q, stop %v, ok %v, err %v; want the event, and fn's answer", got, stop, ok, err)
	}
	if ns < pre-stampSlack || ns > post+stampSlack {
		t.Errorf("stamped %d ns after the write returned; want within the write", ns-post)
	}
	called := false
	if _, ok, err = rx.wait(func() bool { return false }, func([]byte, int64) bool { called = true; return false }, 0); !ok || err != io.EOF || called {
		t.Errorf("after the server closed: ok %v, err %v, fn called %v; want io.EOF and no call", ok, err, called)
	}
	raw, _ := nc.(*net.TCPConn).SyscallConn()
	_ = raw.Control(func(fd uintptr) {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if e != 0 || fl&syscall.O_NONBLOCK == 0 {
			t.Errorf("socket flags %#x (%v) after wait: not non-blocking", fl, e)
		}
	})
}

// TestWaitEnds: a wait with nothing arriving ends once the request is canceled (within a
// slice), and when every wait slot is taken wait reads nothing and says so.
func TestWaitEnds(t *testing.T) {
	_, rx := rxPair(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	asked := 0
	none := func([]byte, int64) bool { t.Error("fn called without bytes"); return true }
	stop, ok, err := rx.wait(func() bool { asked++; return asked > 2 }, none, 0)
	if !ok || stop || err != os.ErrDeadlineExceeded || asked != 3 {
		t.Errorf("canceled wait: stop %v, ok %v, err %v after %d questions; want the deadline error after 3", stop, ok, err, asked)
	}
	for range maxWaiters {
		waiters <- struct{}{}
	}
	stop, ok, err = rx.wait(func() bool { t.Error("asked while no slot was free"); return true }, none, 0)
	for range maxWaiters {
		<-waiters
	}
	if ok || stop || err != nil {
		t.Errorf("no free slot: stop %v, ok %v, err %v; want nothing read and ok false", stop, ok, err)
	}
}

// TestWaitLowWater: with a low-water mark above the response head, a head sent ahead of the
// first event is taken with the event in one read stamped at the event's arrival, and the socket
// is left waking for any byte again. The head waits alone in the socket for 5 ms; a sleep ends
// with what has come after waitSlice (50 ms), so an attempt whose server goroutine was held up
// longer than that between its two writes proves nothing and is tried again.
func TestWaitLowWater(t *testing.T) {
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
	ev := chatChunk(`{"content":"a"}`)
	for range 3 {
		var headDone, pre, post int64
		wrote := make(chan struct{})
		nc, rx := rxPair(t, func(c net.Conn) {
			_, _ = io.WriteString(c, head)
			headDone = time.Now().UnixNano()
			time.Sleep(5 * time.Millisecond)
			pre = time.Now().UnixNano()
			_, _ = io.WriteString(c, ev)
			post = time.Now().UnixNano()
			close(wrote)
			_, _ = io.Copy(io.Discard, c)
		})
		var got string
		var ns int64
		_, ok, err := rx.wait(func() bool { return false }, func(p []byte, at int64) bool { got, ns = string(p), at; return true }, len(head)+1)
		<-wrote
		if time.Duration(pre-headDone) >= waitSlice {
			t.Logf("the event was written %v after the head, past one sleep: again", time.Duration(pre-headDone))
			continue
		}
		if !ok || err != nil || got != head+ev {
			t.Fatalf("wait: %q, ok %v, err %v; want the head and the event in one read", got, ok, err)
		}
		if ns < pre-stampSlack || ns > post+stampSlack {
			t.Errorf("stamped %d ns after the event's write returned; want within it", ns-post)
		}
		raw, _ := nc.(*net.TCPConn).SyscallConn()
		_ = raw.Control(func(fd uintptr) {
			if v, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT); err != nil || v != 1 {
				t.Errorf("SO_RCVLOWAT %d (%v) after wait; want 1", v, err)
			}
		})
		return
	}
	t.Skip("the server goroutine was held up past a sleep slice in every attempt")
}

// TestReactorJudge: first tokens go to blocking reads once more than 1% of the reactor's reads
// within a second (and at least reactorLateMin) came more than reactorLagLimit late, for
// reactorLateFor; a new second starts the count afresh.
func TestReactorJudge(t *testing.T) {
	rc := &reactor{}
	now := int64(1e18)
	onTime, late := now-int64(reactorLagLimit)/2, now-2*int64(reactorLagLimit)
	for range 1000 {
		rc.judge(onTime, now)
	}
	for i := range 11 {
		if rc.lateUntil.Load() != 0 {
			t.Fatalf("late after %d late reads of %d", i, rc.reads)
		}
		rc.judge(late, now)
	}
	if got := rc.lateUntil.Load(); got != now+int64(reactorLateFor) {
		t.Fatalf("11 late reads of 1,011: lateUntil %d, want %d", got, now+int64(reactorLateFor))
	}
	rc = &reactor{}
	for range reactorLateMin - 1 {
		rc.judge(late, now)
	}
	if rc.lateUntil.Load() != 0 {
		t.Errorf("%d late reads (of as many) sent first tokens to blocking reads; want at least %d", reactorLateMin-1, reactorLateMin)
	}
	now += int64(2 * time.Second) // a new second: the two late reads are forgotten
	rc.judge(late+int64(2*time.Second), now)
	if rc.reads != 1 || rc.late != 1 || rc.lateUntil.Load() != 0 {
		t.Errorf("after a second: %d reads, %d late, lateUntil %d; want 1, 1, 0", rc.reads, rc.late, rc.lateUntil.Load())
	}
}

// TestFirstTokenByReactorUntilLate: while the reactor keeps up, first tokens are left to it (no
// blocking read); reads of bytes that waited in the watched socket for more than
// reactorLagLimit send first tokens to blocking reads (firstByWait). Bytes that waited for the
// watch itself (before the socket was given to the reactor) do not count.
func TestFirstTokenByReactorUntilLate(t *testing.T) {
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	rc := reactorFor()
	if rc == nil {
		t.Skip("no reactor on this system")
	}
	rc.mu.Lock()
	rc.epoch, rc.reads, rc.late = time.Now().UnixNano(), 0, 0
	rc.lateUntil.Store(0)
	rc.mu.Unlock()
	t.Cleanup(func() { rc.lateUntil.Store(0) })
	next, wrote := make(chan string), make(chan struct{})
	_, rx := rxPair(t, func(c net.Conn) {
		for s := range next {
			_, _ = io.WriteString(c, s)
			wrote <- struct{}{}
		}
	})
	t.Cleanup(func() { close(next) })
	if rx.firstByWait() {
		t.Fatal("firstByWait before any late read: want the reactor")
	}
	watchOne := func() <-chan string {
		got := make(chan string, 1)
		go func() {
			var s string
			err, ok := rx.watch(func(p []byte, ns int64) bool {
				if ns == 0 {
					t.Error("the reactor's read carried no kernel stamp")
				}
				s = string(p)
				return true
			}, nil)
			if !ok || err != nil {
				t.Errorf("watch: ok %v, err %v", ok, err)
			}
			got <- s
		}()
		return got
	}
	wait := 3 * reactorLagLimit / 2

	// Bytes that arrived before the watch: read late, but not the reactor's lateness.
	next <- "early"
	<-wrote // a loopback write has delivered the bytes when it returns
	time.Sleep(wait)
	if got := <-watchOne(); got != "early" {
		t.Fatalf("watch read %q, want early", got)
	}
	if rx.firstByWait() {
		t.Error("bytes that waited for the watch counted as the reactor's lateness")
	}

	// Bytes that arrive while the reactor is held up (its lock taken here) and are read late.
	watching := func() bool {
		for _, w := range rc.watches {
			if w.r == rx {
				return true
			}
		}
		return false
	}
	for i := range reactorLateMin {
		got := watchOne()
		for {
			rc.mu.Lock()
			if watching() {
				break
			}
			rc.mu.Unlock()
			runtime.Gosched()
		}
		next <- "late"
		<-wrote
		time.Sleep(wait)
		rc.mu.Unlock()
		if s := <-got; s != "late" {
			t.Fatalf("watch read %q, want late", s)
		}
		if by, last := rx.firstByWait(), i == reactorLateMin-1; by != last {
			t.Errorf("after %d reads %v behind their stamps: firstByWait %v, want %v", i+1, wait, by, last)
		}
	}
	if left := time.Until(time.Unix(0, rc.lateUntil.Load())); left <= 0 || left > reactorLateFor {
		t.Errorf("blocking reads for %v more; want up to %v", left, reactorLateFor)
	}
}
