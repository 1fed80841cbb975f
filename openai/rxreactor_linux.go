//go:build linux

package openai

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The reactor reads the kernel-stamped sockets of every plain-HTTP stream in flight (the whole
// response, first token included) on one goroutine, through an epoll instance of its own, and
// hands each read's bytes and stamp to the
// stream's consumer there (rxReader.watch; the request's goroutine sleeps until its response
// ends). A token that arrives costs one wake-up of the reactor's goroutine (shared by every
// socket that became readable meanwhile) and one recvmsg, and nothing else:
//
//   - no goroutine is parked or readied per socket: read through the runtime's network poller,
//     each token parked and readied its request's goroutine;
//   - the sockets are out of the runtime's poller (fdConn): only the epoll instance is in it, so
//     the poller's thread wakes once for all the sockets that became readable together;
//   - the reactor's goroutine waits in the runtime's poller like any goroutine waiting for a
//     socket (reactor.wait), holding no P. (It used to sleep in epoll_wait itself: holding its P
//     there left whatever the runtime had queued on that P — the load's send timers, the request
//     goroutines readied by a response's end — waiting up to sysmon's 10 ms preemption, a
//     scheduler latency p99 of 3–4 ms in the demo; handing the P off for the sleep
//     (entersyscallblock) cost a wake-up of sysmon at every return, after which sysmon polled
//     every 20 µs for up to a millisecond: a third of the process's context switches, 0.32–0.41
//     per token against 0.14–0.22 now.) After reads that ended a response it yields, unless it parks
//     first.
//
// At 64 streams one event per packet 5 ms apart (BenchmarkPacedVsMinimal, this 2-core machine
// at a load average of 9–30 from other work), the client's CPU per token is 0.59–0.74 of a
// minimal net/http reader's, against 0.80–0.98 with the reactor sleeping in epoll_wait; what is
// left is mostly the kernel's recvmsg (with the ACK it sends), about a quarter of the process's
// CPU, and the runtime's wake-up of the reactor's goroutine.
//
// The epoll instance is level-triggered: a socket read to a short read is reported again only
// when more bytes (or its end) arrive, so each arrival costs one recvmsg, and a connection's end
// is reported like bytes are. The kernel stamps every read's newest segment on arrival, so a
// stamp is exact when the reactor reads a socket before its next event arrives, as before.
type reactor struct {
	epfd int
	// poll is the epoll instance's own descriptor in the runtime's network poller (nil when it
	// could not be put there: loop then sleeps in epoll_wait with its P handed off).
	poll syscall.RawConn
	// The state of wait (used by loop alone): the ready sockets, and pollFn (rc.pollOnce, bound
	// once so that a wait allocates nothing) with its outcome.
	evs       [256]syscall.EpollEvent
	pollFn    func(uintptr) bool
	pollN     uintptr
	pollErrno syscall.Errno
	pollTries int
	mu        sync.Mutex // held while reading: add and remove wait for the read in progress
	// watches maps a socket to its stream while the stream is read here.
	watches map[int32]*rxWatch
	// active counts the watches (len(watches), read without the lock).
	active atomic.Int64
	// readied says the latest reads ended a response, readying its request's goroutine on the
	// reactor's P (under mu; read by loop).
	readied bool
}

// rxWatch is one response read by the reactor.
type rxWatch struct {
	fd   int
	r    *rxReader
	fn   func(p []byte, ns int64) bool
	done chan error // gets the reading's outcome once: nil when fn stopped it
}

// theReactor is started on first use and lives as long as the process.
var theReactor struct {
	once sync.Once
	rc   *reactor
	file *os.File // the epoll instance in the runtime's poller (reactor.poll)
}

// reactorFor returns the reactor; nil when it could not be started.
func reactorFor() *reactor {
	theReactor.once.Do(func() {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		rc := &reactor{epfd: epfd, watches: map[int32]*rxWatch{}}
		rc.poll = pollable(epfd)
		rc.pollFn = rc.pollOnce
		theReactor.rc = rc
		go rc.loop()
	})
	return theReactor.rc
}

// loop waits for readable sockets and reads each once (more while reads fill the buffer).
func (rc *reactor) loop() {
	buf := make([]byte, readBufferBytes)
	evs := &rc.evs
	readied := false
	for {
		n, parked, errno := rc.wait()
		if errno != 0 {
			// EINTR: a signal, most likely the runtime asking this goroutine to stop: give
			// the P up now.
			runtime.Gosched()
			continue
		}
		if readied && !parked {
			// The goroutines of the responses the previous reads ended are ready on this P,
			// and more sockets became readable before this goroutine parked (when it parks,
			// they run then): let them run now (this goroutine goes to the back of the queue)
			// rather than after sysmon preempts it, up to 10 ms later.
			runtime.Gosched()
		}
		rc.mu.Lock()
		rc.readied = false
		for i := range int(n) {
			if w := rc.watches[evs[i].Fd]; w != nil {
				rc.serve(w, buf)
			}
		}
		readied = rc.readied
		rc.mu.Unlock()
	}
}

// wait returns the readable sockets (n of evs): what is ready now, else the first that become
// ready. The reactor's goroutine parks in the runtime's network poller (rc.poll) until the epoll
// instance becomes readable, as any goroutine waiting for a socket does, and is readied by the
// poller's thread (the one that sleeps in epoll_wait whenever the process has nothing to run,
// which takes every descriptor that became ready meanwhile, and runs the goroutine itself). An
// epoll_wait that does not return at once would need its P handed off (epollWaitBlocking), and
// the thread that comes back from it takes an idle P and wakes the runtime's monitor thread
// (sysmon), which then polls every 20 µs for up to a millisecond: at 64 streams that made a
// third of the process's context switches.
//
// parked says the goroutine waited (its P ran other goroutines meanwhile).
func (rc *reactor) wait() (n uintptr, parked bool, errno syscall.Errno) {
	if rc.poll != nil {
		rc.pollTries = 0
		if err := rc.poll.Read(rc.pollFn); err == nil {
			return rc.pollN, rc.pollTries > 1, rc.pollErrno
		}
		rc.poll = nil // not pollable after all: wait in epoll_wait from now on
	}
	n, errno = epollWaitBlocking(rc.epfd, &rc.evs)
	return n, true, errno
}

// pollOnce is one epoll_wait that does not wait (a raw system call), for wait: true when it
// found ready sockets (or failed).
func (rc *reactor) pollOnce(uintptr) bool {
	rc.pollTries++
	rc.pollN, _, rc.pollErrno = syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(rc.epfd), uintptr(unsafe.Pointer(&rc.evs[0])), uintptr(len(rc.evs)), 0, 0, 0)
	return rc.pollN > 0 || rc.pollErrno != 0
}

// pollable puts the epoll instance epfd into the runtime's network poller (an epoll instance is
// readable while any of its descriptors is ready); nil when it cannot be.
func pollable(epfd int) syscall.RawConn {
	d, err := syscall.Dup(epfd)
	if err != nil {
		return nil
	}
	syscall.CloseOnExec(d)
	if syscall.SetNonblock(d, true) != nil {
		syscall.Close(d)
		return nil
	}
	f := os.NewFile(uintptr(d), "servebench-reactor")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	theReactor.file = f // kept open (and reachable) as long as the process
	return raw
}

// serve reads w's socket, with rc.mu held.
func (rc *reactor) serve(w *rxWatch, buf []byte) {
	for {
		n, oobn, err := w.r.recvRaw(w.fd, buf, 0)
		switch {
		case err == syscall.EAGAIN:
			return
		case err != nil:
			rc.end(w, &net.OpError{Op: "read", Net: "tcp", Err: err})
			return
		case n == 0:
			rc.end(w, io.EOF)
			return
		}
		raceIOSync(uintptr(w.fd))
		if w.fn(buf[:n], rxStamp(w.r.oob[:oobn])) {
			rc.end(w, nil)
			return
		}
		if n < len(buf) {
			return
		}
	}
}

// end stops watching w (rc.mu held) and hands its outcome over.
func (rc *reactor) end(w *rxWatch, err error) {
	_ = epollCtl(rc.epfd, syscall.EPOLL_CTL_DEL, w.fd, nil)
	delete(rc.watches, int32(w.fd))
	rc.active.Add(-1)
	w.done <- err
	rc.readied = true
}

// watch reads the socket on a reactor until fn returns true (nil), the connection fails (its
// error; io.EOF at its end) or stop is closed (os.ErrDeadlineExceeded), calling fn with the bytes
// and kernel stamp of every read on the reactor's goroutine (the bytes are the reactor's buffer:
// fn must not keep them); the caller's goroutine sleeps meanwhile. ok is false, and nothing was
// read, when no reactor could take the socket: the caller reads it itself (each).
func (r *rxReader) watch(fn func(p []byte, ns int64) bool, stop <-chan struct{}) (err error, ok bool) {
	rc := reactorFor()
	if rc == nil {
		return nil, false
	}
	w := &rxWatch{r: r, fn: fn, done: make(chan error, 1)}
	var aerr error
	if cerr := r.raw.Control(func(fd uintptr) {
		w.fd = int(fd)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.watches[int32(fd)] = w
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
		if aerr = epollCtl(rc.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev); aerr != nil {
			delete(rc.watches, int32(fd))
			return
		}
		rc.active.Add(1)
	}); cerr != nil || aerr != nil {
		return nil, false
	}
	select {
	case err := <-w.done:
		return err, true
	case <-stop:
	}
	rc.mu.Lock()
	if rc.watches[int32(w.fd)] == w {
		_ = epollCtl(rc.epfd, syscall.EPOLL_CTL_DEL, w.fd, nil)
		delete(rc.watches, int32(w.fd))
		rc.active.Add(-1)
	}
	rc.mu.Unlock()
	select {
	case err := <-w.done: // it ended while stop closed
		return err, true
	default:
		return os.ErrDeadlineExceeded, true
	}
}

// recvRaw is one recvmsg(2) that does not wait (MSG_DONTWAIT, with flags), of p and the control
// messages into r.oob, as a raw system call: the runtime is not told (see recvNow), and it cannot
// block, whatever the socket's mode.
func (r *rxReader) recvRaw(fd int, p []byte, flags int) (n, oobn int, err error) {
	var iov syscall.Iovec
	var msg syscall.Msghdr
	iov.Base = &p[0]
	iov.SetLen(len(p))
	msg.Iov = &iov
	msg.Iovlen = 1
	msg.Control = &r.oob[0]
	for {
		msg.SetControllen(len(r.oob))
		got, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags|syscall.MSG_DONTWAIT))
		switch errno {
		case 0:
			return int(got), int(msg.Controllen), nil
		case syscall.EINTR:
			continue
		}
		return 0, 0, errno
	}
}

// epollCtl is epoll_ctl(2) as a raw system call (it cannot block; see recvNow): syscall.EpollCtl
// tells the runtime, which then wakes its monitor thread (sysmon) when that sleeps, twice per
// request (the watch's start and end).
func epollCtl(epfd, op, fd int, ev *syscall.EpollEvent) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0); e != 0 {
		return e
	}
	return nil
}

// epollWaitBlocking is one epoll_wait(2) without a timeout into evs, between entersyscallblock
// and exitsyscall (see entersyscallblock): the sleeping thread holds no P.
//
//go:nosplit
func epollWaitBlocking(epfd int, evs *[256]syscall.EpollEvent) (uintptr, syscall.Errno) {
	entersyscallblock()
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), ^uintptr(0), 0, 0)
	exitsyscall()
	return n, errno
}
