//go:build linux

package openai

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// fdConn is a TCP connection that the runtime's network poller does not watch: the socket of a
// kernel-stamped plain-HTTP connection, whose responses a reactor reads (rxreactor_linux.go).
// While the poller watched it too, every token that arrived also woke the poller's thread (it
// sleeps in epoll_wait whenever the process has a timer), a second wake-up per token for nothing.
// Its other reads and writes (the request, the rest of a body after its end signal, a kept-alive
// connection's check) wait in ppoll(2) with the thread's P handed off, for at most waitSlice at a
// time, so that a deadline set meanwhile (cancellation) is noticed within it.
type fdConn struct {
	fd            int
	local, remote net.Addr
	deadlineR     atomic.Int64 // Unix ns; 0: none
	deadlineW     atomic.Int64
	closed        atomic.Bool
}

// detach moves a TCP connection out of the runtime's poller: its socket is duplicated and the
// original closed (which takes it out of the poller's epoll instance), leaving the duplicate the
// only descriptor of the socket. nil (and nc untouched) when nc is no TCP connection or the
// duplicate could not be made.
func detach(nc net.Conn) *fdConn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if err := raw.Control(func(s uintptr) {
		if d, err := syscall.Dup(int(s)); err == nil {
			fd = d
		}
	}); err != nil || fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil
	}
	fc := &fdConn{fd: fd, local: tc.LocalAddr(), remote: tc.RemoteAddr()}
	_ = tc.Close()
	return fc
}

func (c *fdConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := recvNow(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if err := c.waitFor(pollIn, &c.deadlineR); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, c.opError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		raceIOSync(uintptr(c.fd))
		return n, nil
	}
}

func (c *fdConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		raceWriteSync(uintptr(c.fd))
		n, err := sendNow(c.fd, p[done:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if err := c.waitFor(pollOut, &c.deadlineW); err != nil {
				return done, err
			}
			continue
		case err != nil:
			return done, c.opError("write", err)
		}
		done += n
	}
	return done, nil
}

// recvNow and sendNow are one recv(2) or send(2) that does not wait, as raw system calls: they
// cannot block, so the runtime need not be told (a system call it is told of wakes its monitor
// thread, sysmon, when that sleeps, and sysmon then polls every 20 µs for up to a millisecond).
func recvNow(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func sendNow(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// setsockoptNow is setsockopt(2) of an int option as a raw system call (see recvNow).
func setsockoptNow(fd uintptr, level, opt, v int) error {
	iv := int32(v)
	if _, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&iv)), 4, 0); e != 0 {
		return e
	}
	return nil
}

// waitFor sleeps until the socket is ready for events or the deadline passes.
func (c *fdConn) waitFor(events int16, deadline *atomic.Int64) error {
	for {
		if c.closed.Load() {
			return net.ErrClosed
		}
		slice := waitSlice
		if d := deadline.Load(); d != 0 {
			left := time.Until(time.Unix(0, d))
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			slice = min(slice, left)
		}
		pfd := pollFd{fd: int32(c.fd), events: events}
		ts := syscall.NsecToTimespec(int64(slice))
		n, errno := ppollBlocking(&pfd, &ts)
		switch {
		case errno == syscall.EINTR:
		case errno != 0:
			return c.opError("poll", errno)
		case n > 0:
			return nil
		}
	}
}

func (c *fdConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: os.NewSyscallError(op, err)}
}

func (c *fdConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	return syscall.Close(c.fd)
}

func (c *fdConn) LocalAddr() net.Addr  { return c.local }
func (c *fdConn) RemoteAddr() net.Addr { return c.remote }

func (c *fdConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *fdConn) SetReadDeadline(t time.Time) error { c.deadlineR.Store(unixNanoOrZero(t)); return nil }
func (c *fdConn) SetWriteDeadline(t time.Time) error {
	c.deadlineW.Store(unixNanoOrZero(t))
	return nil
}

func unixNanoOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// SyscallConn gives the socket to enableRx and peerClosed: Control runs f on it, Read and Write
// wait for it as the poller would.
func (c *fdConn) SyscallConn() (syscall.RawConn, error) { return fdRaw{c}, nil }

type fdRaw struct{ c *fdConn }

func (r fdRaw) Control(f func(fd uintptr)) error {
	if r.c.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(r.c.fd))
	return nil
}

func (r fdRaw) Read(f func(fd uintptr) bool) error {
	for !f(uintptr(r.c.fd)) {
		if err := r.c.waitFor(pollIn, &r.c.deadlineR); err != nil {
			return err
		}
	}
	return nil
}

func (r fdRaw) Write(f func(fd uintptr) bool) error {
	for !f(uintptr(r.c.fd)) {
		if err := r.c.waitFor(pollOut, &r.c.deadlineW); err != nil {
			return err
		}
	}
	return nil
}

// poll(2) events.
const (
	pollIn  = 0x1
	pollOut = 0x4
)

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// ppollBlocking is one ppoll(2) of one descriptor with a timeout, between entersyscallblock and
// exitsyscall (see entersyscallblock): the sleeping thread holds no P.
//
//go:nosplit
func ppollBlocking(pfd *pollFd, ts *syscall.Timespec) (uintptr, syscall.Errno) {
	entersyscallblock()
	n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(pfd)), 1, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	exitsyscall()
	return n, errno
}
