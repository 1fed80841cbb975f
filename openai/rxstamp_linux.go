//go:build linux

package openai

import (
	"io"
	"net"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// rxReader reads a TCP socket with recvmsg and returns the kernel's receive stamp of each
// read (SO_TIMESTAMPNS: the time the newest segment in the read reached the socket, stamped
// in softirq context before any goroutine runs). One goroutine reads a connection at a time,
// so its scratch fields need no lock; readFn is bound once so a read allocates nothing.
type rxReader struct {
	raw    syscall.RawConn
	readFn func(fd uintptr) bool

	// scratch of the read in progress
	p       []byte
	oob     [128]byte
	n, oobn int
	err     error
}

// enableRx turns on receive stamps for a TCP connection; nil when it is not TCP or the
// socket refuses (the connection then keeps the user clock).
func enableRx(nc net.Conn) *rxReader {
	var sc syscall.Conn
	switch v := nc.(type) {
	case *net.TCPConn:
		sc = v
	case *fdConn:
		sc = v
	default:
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	r := &rxReader{raw: raw}
	r.readFn = r.recv
	return r
}

// recv is one recvmsg attempt; false (EAGAIN) lets the netpoller wait for data.
func (r *rxReader) recv(fd uintptr) bool {
	r.n, r.oobn, r.err = r.recvmsg(fd, r.p, 0)
	if r.err == nil && r.n > 0 {
		raceIOSync(fd)
	}
	return r.err != syscall.EAGAIN
}

// read fills p and returns the byte count and the kernel stamp (ns since the Unix epoch,
// CLOCK_REALTIME; 0 when the read carried none).
func (r *rxReader) read(p []byte) (int, int64, error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	r.p = p
	err := r.raw.Read(r.readFn)
	r.p = nil
	if err != nil {
		return 0, 0, err
	}
	if r.err != nil {
		return 0, 0, &net.OpError{Op: "read", Net: "tcp", Err: r.err}
	}
	if r.n == 0 {
		return 0, 0, io.EOF
	}
	return r.n, rxStamp(r.oob[:r.oobn]), nil
}

// rxStamp finds the SCM_TIMESTAMPNS control message in oob and returns its time in ns since
// the Unix epoch; 0 when there is none. It walks the cmsghdr list without allocating.
func rxStamp(oob []byte) int64 {
	const hdr = syscall.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		data := oob[cmsgAlign(hdr):l]
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&data[0]))
			return ts.Nano()
		}
		next := cmsgAlign(l)
		if next >= len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}

// cmsgAlign rounds n up to the control-message alignment (the size of a long).
func cmsgAlign(n int) int {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return (n + a - 1) &^ (a - 1)
}

const rxSupported = true

// leavePoller moves a kernel-stamped connection out of the runtime's network poller (detach), for
// a reactor to read; a no-op for one that keeps the user clock, is out already, or cannot move.
func (c *conn) leavePoller() {
	if c.rx == nil {
		return
	}
	if _, out := c.Conn.(*fdConn); out {
		return
	}
	fc := detach(c.Conn)
	if fc == nil {
		return
	}
	c.Conn = fc
	c.rx = enableRx(fc) // the socket keeps its options: this cannot fail where it did not before
}

// stampsOn keeps the kernel's receive stamping switched on while the client lives. The kernel
// turns stamping on for the whole system when the first socket asks for it, but a moment
// later (from a work queue), and off again after the last such socket closes: without a
// socket holding it on, the first segments of a run would arrive unstamped. stampsOn opens a
// loopback UDP socket with SO_TIMESTAMPNS and sends itself datagrams until one comes back
// stamped (at most about 200 ms). Close the returned closer when the client is closed; nil
// when no loopback socket could be opened.
func stampsOn() io.Closer {
	for _, network := range []string{"udp4", "udp6"} {
		ip := net.IPv4(127, 0, 0, 1)
		if network == "udp6" {
			ip = net.IPv6loopback
		}
		uc, err := net.ListenUDP(network, &net.UDPAddr{IP: ip})
		if err != nil {
			continue
		}
		raw, err := uc.SyscallConn()
		if err != nil {
			uc.Close()
			continue
		}
		var serr error
		if err := raw.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
		}); err != nil || serr != nil {
			uc.Close()
			continue
		}
		var b [1]byte
		var oob [128]byte
		to := uc.LocalAddr().(*net.UDPAddr)
		for range 20 {
			if _, err := uc.WriteToUDP(b[:], to); err != nil {
				break
			}
			_ = uc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			_, oobn, _, _, err := uc.ReadMsgUDP(b[:], oob[:])
			if err == nil && rxStamp(oob[:oobn]) != 0 {
				break
			}
			if err == nil { // delivered unstamped: stamping is not on yet
				time.Sleep(10 * time.Millisecond)
			}
		}
		return uc
	}
	return nil
}

// recvmsg is one recvmsg(2) of p and the control messages into r.oob that does not wait (a raw
// system call, recvRaw: syscall.Recvmsg tells the runtime, which wakes its monitor thread when
// that sleeps), asked again when a signal interrupts it. flags are added to MSG_DONTWAIT.
func (r *rxReader) recvmsg(fd uintptr, p []byte, flags int) (n, oobn int, err error) {
	return r.recvRaw(int(fd), p, flags)
}

// each reads the socket until fn returns true (nil) or the connection fails (its error; io.EOF
// at its end), calling fn with the bytes and the kernel stamp of every read that returned bytes
// (the bytes are a buffer of rxBufs: fn must not keep them); it stays inside one RawConn.Read
// for the whole response. After a read that left its buffer partly empty the socket is
// drained, and each waits for the next arrival without asking again (one recvmsg per arrival
// instead of two, each a costly system call) when short returns true: the edge-triggered poller
// wakes it for any byte that arrives after the read, but not for a connection end that arrived
// with the bytes, so short must arm a read deadline after which the caller asks once more (each
// returns the deadline's error). fn and short run with the connection's read lock held: they
// must not close the connection.
func (r *rxReader) each(fn func(p []byte, ns int64) bool, short func() bool) error {
	var rerr error
	err := r.raw.Read(func(fd uintptr) bool {
		bp := rxBufs.Get().(*[]byte)
		defer rxBufs.Put(bp)
		p := *bp
		for {
			n, oobn, err := r.recvmsg(fd, p, 0)
			switch {
			case err == syscall.EAGAIN:
				return false
			case err != nil:
				rerr = &net.OpError{Op: "read", Net: "tcp", Err: err}
				return true
			case n == 0:
				rerr = io.EOF
				return true
			}
			raceIOSync(fd)
			if fn(p[:n], rxStamp(r.oob[:oobn])) {
				return true
			}
			if n < len(p) && short() {
				return false
			}
		}
	})
	if err != nil {
		return err
	}
	return rerr
}

// rxBufs lends kernel-stamped reads their buffers (readBufferBytes each) for one read and its
// handling: a connection waiting for bytes holds none, so thousands of open streams cost a buffer
// per read in progress, not one per connection.
var rxBufs = sync.Pool{New: func() any { b := make([]byte, readBufferBytes); return &b }}

// waitSlice bounds one sleep of a detached connection's wait for readiness (fdConn.waitFor): a
// deadline or a close is noticed within it.
const waitSlice = 50 * time.Millisecond

// peerClosed reports whether a kept-alive TCP connection was closed (or written to) by the
// server while it sat idle: a peek that does not wait finds its end or stray bytes. false when
// it cannot tell (not a socket).
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte // a raw system call that cannot block (see recvNow)
		_, _, err := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		closed = err != syscall.EAGAIN
	})
	return closed
}
