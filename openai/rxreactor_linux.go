//go:build linux

package openai

import (
	"io"
	"math/bits"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The reactor reads the kernel-stamped sockets of every plain-HTTP stream in flight (the whole
// response, first token included) on one goroutine, through an epoll instance of its own, and
// hands each read's bytes and stamp to the
// stream's consumer there (rxReader.watch; the request's goroutine sleeps until its response
// ends). A token that arrives costs one recvmsg and a share of one wake-up of the reactor's
// goroutine (shared by every socket that became readable meanwhile), and nothing else:
//
//   - no goroutine is parked or readied per socket: read through the runtime's network poller,
//     each token parked and readied its request's goroutine;
//   - the sockets are out of the runtime's poller (fdConn): only the gate is in it (an epoll
//     instance holding the reactor's epoll instance and the nap's timer), so the poller's thread
//     wakes once for all the sockets that became readable together;
//   - the reactor's goroutine waits in the runtime's poller like any goroutine waiting for a
//     socket (reactor.wait), holding no P. (It used to sleep in epoll_wait itself: holding its P
//     there left whatever the runtime had queued on that P — the load's send timers, the request
//     goroutines readied by a response's end — waiting up to sysmon's 10 ms preemption, a
//     scheduler latency p99 of 3–4 ms in the demo; handing the P off for the sleep
//     (entersyscallblock) cost a wake-up of sysmon at every return, after which sysmon polled
//     every 20 µs for up to a millisecond: a third of the process's context switches, 0.32–0.41
//     per token against 0.14–0.22 then.) After reads that ended a response it yields, unless it
//     parks first;
//   - after reading, while the streams' events come at least 0.5 ms apart, it naps (coalesce):
//     the sockets are unwatched for up to 2/5 of the shortest recent gap between two reads of
//     any stream (at most 2 ms), so the ones that become readable meanwhile wake nobody and are
//     read together after the nap. A read taken later carries the same kernel stamp (the
//     segment's arrival) as long as the stream's next event has not come before it;
//   - a safety net: whenever it parks with streams in flight, a second timer in the gate is
//     armed to wake it within 20 ms (netInterval), so that a lost wake-up costs a stream at most
//     that much, never a hang (armNet; ReactorRescues counts what it found). The wake-ups are
//     not supposed to need it: every attempt of a wait looks at the sockets and timers
//     themselves rather than trust a notification (napOnce says why).
//
// At 64 streams one event per packet 5 ms apart, the naps (2 ms, back to back) took the
// reactor's wake-ups from one per ~10 events to one per ~23, the process's context switches
// from 0.10 to 0.08 per event and its epoll_wait calls from 0.44 to 0.15 (BenchmarkPacedEvents
// under perf); BenchmarkPacedVsMinimal's ratio, the client's CPU per token over a minimal
// net/http reader's, went from 0.59–0.71 to 0.55–0.60 beside nothing and from 0.52–0.60 to
// 0.50–0.57 beside a busy process (seven interleaved runs each, this 2-core machine at a load
// average of 0.5–2.0 from other work; 0.80–0.98 with the reactor sleeping in epoll_wait); with
// the naps' wake-up fixed and the net, six interleaved runs against the reader without naps
// (load 1.7–3.3): beside nothing median 0.61 (0.57–0.68) -> 0.58 (0.55–0.65), beside busy
// 0.56 (0.53–0.59) -> 0.53 (0.51–0.55), context switches per event 0.09–0.13 -> 0.07–0.08. What
// is left is mostly the kernel's recvmsg, over 40% of the process's CPU (a third of it the ACK
// each read sends, whose receipt on loopback the client's softirq also pays), the parsing
// (~14%, ~1.7 µs an event where BenchmarkParseStream's hot loop takes 0.45 µs: the stream's
// state is cold after each system call), and the wake-ups with the naps' own calls (~20%). Beside a busy process a wake-up costs less (no idle CPU to halt and wake),
// so the naps save less there.
//
// The epoll instance is level-triggered: a socket read to a short read is reported again only
// when more bytes (or its end) arrive, so each arrival costs one recvmsg, and a connection's end
// is reported like bytes are. The kernel stamps every read's newest segment on arrival, so a
// stamp is exact when the reactor reads a socket before its next event arrives, as before; a
// nap makes that wait longer (the selfcheck's read lag, first token's read − its stamp, p50
// ~2 ms at 4,096 streams), never a stamp later.
type reactor struct {
	epfd int
	// gate is an epoll instance that holds epfd and the nap's timer (-1 when none could be made:
	// epfd is then in the runtime's poller itself and reads are never coalesced). armed says epfd is watched
	// there (EPOLLIN); while the reactor coalesces it is not, so sockets that become readable
	// meanwhile wake no thread (see coalesce).
	gate  int
	armed bool
	// timer is the nap's timerfd, in the gate (EPOLLIN), napAt its deadline (CLOCK_MONOTONIC
	// ns, absolute); napFn is rc.napOnce, bound once.
	timer int
	napAt int64
	napFn func(uintptr) bool
	// net is the safety net's timerfd, in the gate beside timer: whenever the reactor parks with
	// streams in flight it is armed to fire within netInterval and every netInterval after
	// (netAt, its first deadline, 0 when disarmed; set under netMu), so that no lost wake-up
	// can leave a stream unread for longer (see armNet).
	net   int
	netMu sync.Mutex
	netAt atomic.Int64
	// netWake says the latest wait was ended by the net, and rescueBefore the wall-clock time
	// before which the bytes it finds count as rescued (used by loop alone).
	netWake      bool
	rescueBefore int64
	// poll is the gate's (else the epoll instance's) own descriptor in the runtime's network
	// poller (nil when it could not be put there: loop then sleeps in epoll_wait with its P
	// handed off).
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
	// gaps counts the streams by their shortest recent gap between two reads (under mu), for
	// coalesce; naps counts the naps coalesce took (read by tests).
	gaps gapWindow
	naps atomic.Int64
	// netWakes counts the waits the safety net ended; rescues those of them that found bytes
	// unread for netSlack or longer before the net's deadline (and the naps that ended netSlack
	// or more late): a lost wake-up, or a process that did not run its woken reactor for that
	// long. Read by tests and selfcheck (ReactorRescues).
	netWakes atomic.Int64
	rescues  atomic.Int64
}

// rxWatch is one response read by the reactor.
type rxWatch struct {
	fd int
	// last is the kernel stamp of the socket's latest read (0 before the first); gaps the
	// latest gaps between its reads (ngaps of them so far), bucket the gapWindow bucket of their
	// shortest (-1: none yet). Under rc.mu.
	last   int64
	gaps   [gapRing]int64
	ngaps  int
	bucket int
	r      *rxReader
	fn     func(p []byte, ns int64) bool
	done   chan error // gets the reading's outcome once: nil when fn stopped it
}

// theReactor is started on first use and lives as long as the process.
var theReactor struct {
	once sync.Once
	rc   *reactor
	file *os.File                // the epoll instance in the runtime's poller (reactor.poll)
	live atomic.Pointer[reactor] // rc, for readers outside once (ReactorRescues)
}

// reactorFor returns the reactor; nil when it could not be started.
func reactorFor() *reactor {
	theReactor.once.Do(func() {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		rc := &reactor{epfd: epfd, gate: -1, timer: -1, net: -1, watches: map[int32]*rxWatch{}}
		rc.gate, rc.armed, rc.timer, rc.net = newGate(epfd)
		if rc.gate >= 0 {
			if rc.poll = pollable(rc.gate); rc.poll == nil {
				syscall.Close(rc.gate)
				syscall.Close(rc.timer)
				syscall.Close(rc.net)
				rc.gate, rc.armed, rc.timer, rc.net = -1, false, -1, -1
			}
		}
		if rc.poll == nil {
			rc.poll = pollable(epfd)
		}
		rc.pollFn, rc.napFn = rc.pollOnce, rc.napOnce
		theReactor.rc = rc
		theReactor.live.Store(rc)
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
		rc.netWake = false
		readied = rc.readied
		nap := rc.gaps.window()
		rc.mu.Unlock()
		if nap > 0 && rc.gate >= 0 && rc.poll != nil {
			rc.coalesce(nap)
			readied = false // the nap let them run
		}
	}
}

// coalesce sleeps for nap with the sockets unwatched, so that the sockets that become readable
// meanwhile are read together after it, in one wake-up of the reactor's goroutine, rather than
// each waking it (and the runtime's poller thread) on its own. The kernel stamps every segment
// on arrival, so a read taken later carries the same stamp as long as the stream's next event
// has not arrived before it: nap is at most 2/5 of the shortest recent gap between two reads of
// any stream being read (gapWindow.window), so a stream's events never share a read's stamp
// unless two of them come closer than that, and then the earlier one is stamped late by at
// most their spacing (a stream whose events come in pairs closer than a nap shows the reactor
// only the gaps between its pairs). The nap is the gate's timer (a timerfd, exact to the microsecond, that
// wakes the runtime's poller once); time.Sleep would wake the poller's sleeping thread at once
// to shorten its sleep, and a second thread with it. The next wait re-arms the gate when a poll
// finds nothing ready.
func (rc *reactor) coalesce(nap time.Duration) {
	if rc.armed {
		ev := syscall.EpollEvent{Fd: int32(rc.epfd)} // no events: readiness wakes nobody
		if epollCtl(rc.gate, syscall.EPOLL_CTL_MOD, rc.epfd, &ev) != nil {
			return
		}
		rc.armed = false
	}
	at := nanotime() + int64(nap)
	if !setTimer(rc.timer, at, 0) {
		return
	}
	rc.napAt = at
	rc.naps.Add(1)
	if h := napSetHook.Load(); h != nil {
		(*h)()
	}
	if rc.poll.Read(rc.napFn) != nil {
		rc.poll = nil // not pollable after all (see wait)
	}
}

// napSetHook, when set (by tests), runs between arming a nap's timer and waiting for it.
var napSetHook atomic.Pointer[func()]

// napOnce is one attempt to take the nap's timer expiry, for coalesce: false (not expired yet)
// parks the reactor's goroutine until the gate becomes readable. Every attempt, the first
// included, looks at the timers themselves (the clock, then the timerfd), never trusting that
// a notification will come: RawRead starts by forgetting whatever the runtime's poller reported
// before it (prepareRead), so an expiry that came between arming the nap's timer and RawRead
// (the reactor's thread descheduled for longer than the nap) was reported to nobody, and
// waiting for it parked the reactor for good, the sockets unwatched. That was the lost wake-up
// of the first naps (8ef510e), which parked on their first attempt without a look: a worker
// whose warm-up never ended in CI, one selfcheck hung for 10 minutes. TestNapTimerBeforeWait
// makes it happen at every nap. The net is taken here too when due (see takeNet).
func (rc *reactor) napOnce(uintptr) bool {
	now := nanotime()
	fired, netExpiry := rc.takeNet(now)
	if now < rc.napAt {
		return false
	}
	var expirations uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(rc.timer), uintptr(unsafe.Pointer(&expirations)), 8); e == syscall.EAGAIN {
		return false // due, not fired yet (timer slack): its notification comes after this call
	}
	if fired && netExpiry-rc.napAt >= int64(netSlack) {
		rc.rescues.Add(1) // the nap's timer had fired netSlack or more before the net woke it
	}
	return true
}

// ReactorRescues is how many times the reactor's safety net found a stream's bytes, or the end
// of a nap, left waiting for netSlack (10 ms) or more by the wake-ups, since the process
// started: a lost wake-up, or a reactor whose thread did not run for that long (a machine too
// short of CPU to measure). 0 without a reactor.
func ReactorRescues() int64 {
	if rc := theReactor.live.Load(); rc != nil {
		return rc.rescues.Load()
	}
	return 0
}

// The safety net: a reactor that parks with streams in flight is woken within netInterval
// whatever happens to the wake-ups of its sockets; a wake-up by the net that finds bytes
// waiting since netSlack or more before its deadline counts as a rescue.
const (
	netInterval = 20 * time.Millisecond
	netSlack    = 10 * time.Millisecond
)

// armNet makes sure the net fires within netInterval from now (now: nanotime()), and every
// netInterval after that until the reactor parks with no stream in flight: a net whose
// notification was lost (see napOnce) fires again. Its deadline is moved to now + netInterval
// once less than half of netInterval is left, so a reactor that wakes at least that often never
// sees it fire, for one timerfd_settime every netInterval/2 at most. Called by the reactor
// before it parks and by watch for every new stream (one added while the reactor is parked
// with none in flight).
func (rc *reactor) armNet(now int64) {
	if rc.net < 0 {
		return
	}
	if rc.active.Load() == 0 {
		if rc.netAt.Load() != 0 {
			rc.netMu.Lock()
			if rc.active.Load() == 0 && setTimer(rc.net, 0, 0) { // disarm: nothing to rescue
				rc.netAt.Store(0)
			}
			rc.netMu.Unlock()
		}
		return
	}
	if at := rc.netAt.Load(); at != 0 && now < at-int64(netInterval/2) {
		return
	}
	rc.netMu.Lock()
	if at := rc.netAt.Load(); at == 0 || now >= at-int64(netInterval/2) {
		if next := now + int64(netInterval); setTimer(rc.net, next, int64(netInterval)) {
			rc.netAt.Store(next)
		}
	}
	rc.netMu.Unlock()
}

// takeNet takes the net's expiries when its deadline has passed (fired is false when it has
// not fired). Both of RawRead's callbacks (pollOnce, napOnce) call it at every attempt, the
// first included, for the reason napOnce gives: a net whose notification came before RawRead
// would otherwise never be read, and a periodic timerfd fires again only once read. latest is
// the net's latest expiry (CLOCK_MONOTONIC ns).
func (rc *reactor) takeNet(now int64) (fired bool, latest int64) {
	at := rc.netAt.Load()
	if at == 0 || now < at {
		return false, 0
	}
	var expirations uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(rc.net), uintptr(unsafe.Pointer(&expirations)), 8); e != 0 {
		return false, 0
	}
	return true, at + (now-at)/int64(netInterval)*int64(netInterval)
}

// setTimer arms the timerfd fd to fire at at (CLOCK_MONOTONIC ns, absolute; 0 disarms it),
// then every interval ns (0: once).
func setTimer(fd int, at, interval int64) bool {
	spec := [4]int64{interval / 1e9, interval % 1e9, at / 1e9, at % 1e9} // itimerspec
	_, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(fd), 1 /* TFD_TIMER_ABSTIME */, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	return e == 0
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
// found ready sockets (or failed). Before parking with streams in flight it arms the safety net.
func (rc *reactor) pollOnce(uintptr) bool {
	rc.pollTries++
	now := int64(0)
	if rc.net >= 0 {
		now = nanotime()
		if fired, latest := rc.takeNet(now); fired && rc.pollTries > 1 {
			// It ended a wait: bytes stamped (wall clock) netSlack or more before its
			// latest expiry were left unread by the wake-ups.
			rc.netWake = true
			rc.rescueBefore = time.Now().UnixNano() - (now - latest) - int64(netSlack)
			rc.netWakes.Add(1)
		}
	}
	rc.pollN, _, rc.pollErrno = syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(rc.epfd), uintptr(unsafe.Pointer(&rc.evs[0])), uintptr(len(rc.evs)), 0, 0, 0)
	if rc.pollN == 0 && rc.pollErrno == 0 && !rc.armed && !loseWakes.Load() {
		// Nothing came during the nap: watch the sockets again before parking, then look
		// once more. A socket that becomes readable after EPOLL_CTL_MOD wakes the gate; one
		// that did in between may not (when the gate still lists the epoll instance as ready
		// from before the nap, the MOD notifies nobody, and the runtime's poller waits for an
		// edge that never comes: a reactor asleep on unread bytes until some other socket
		// receives), so the second look reads it now.
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(rc.epfd)}
		if epollCtl(rc.gate, syscall.EPOLL_CTL_MOD, rc.epfd, &ev) != nil {
			rc.poll = nil // the gate cannot wake the reactor: wait in epoll_wait from now on
			return true
		}
		rc.armed = true
		rc.pollN, _, rc.pollErrno = syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(rc.epfd), uintptr(unsafe.Pointer(&rc.evs[0])), uintptr(len(rc.evs)), 0, 0, 0)
	}
	if rc.pollN > 0 || rc.pollErrno != 0 {
		return true
	}
	if loseWakes.Load() && rc.armed {
		// A test breaks the wake-ups: the sockets wake nobody, only the timers do.
		ev := syscall.EpollEvent{Fd: int32(rc.epfd)}
		if epollCtl(rc.gate, syscall.EPOLL_CTL_MOD, rc.epfd, &ev) == nil {
			rc.armed = false
		}
	}
	rc.armNet(now)
	return false
}

// loseWakes, when set (by tests), makes the reactor park with its sockets unwatched, so that
// only its timers (the net) wake it: a lost wake-up at every park.
var loseWakes atomic.Bool

// newGate makes the gate for the epoll instance epfd: an epoll instance holding epfd (armed),
// the nap's timer and the safety net's; gate -1 when it cannot be made.
func newGate(epfd int) (gate int, armed bool, timer, net int) {
	gate, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return -1, false, -1, -1
	}
	var fds [2]int
	for i := range fds {
		t, _, e := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if e != 0 {
			for _, fd := range fds[:i] {
				syscall.Close(fd)
			}
			syscall.Close(gate)
			return -1, false, -1, -1
		}
		fds[i] = int(t)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(epfd)}
	tev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fds[0])}
	nev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fds[1])}
	if epollCtl(gate, syscall.EPOLL_CTL_ADD, epfd, &ev) != nil || epollCtl(gate, syscall.EPOLL_CTL_ADD, fds[0], &tev) != nil ||
		epollCtl(gate, syscall.EPOLL_CTL_ADD, fds[1], &nev) != nil {
		syscall.Close(gate)
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return -1, false, -1, -1
	}
	return gate, true, fds[0], fds[1]
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
		ns := rxStamp(w.r.oob[:oobn])
		if ns > 0 {
			if w.last > 0 {
				rc.addGap(w, ns-w.last)
			}
			w.last = ns
			if rc.netWake && ns < rc.rescueBefore {
				rc.rescues.Add(1) // bytes the wake-ups left unread (one count a wait)
				rc.netWake = false
			}
		}
		if w.fn(buf[:n], ns) {
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
	rc.dropGaps(w)
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
	w := &rxWatch{r: r, fn: fn, done: make(chan error, 1), bucket: -1}
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
	rc.armNet(nanotime()) // the reactor may be parked: the net covers this stream too
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
		rc.dropGaps(w)
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

// Coalescing bounds: a nap is at most maxNap (a response's end, and so its stream's next
// request in a closed loop, is read at most that late), at most 2/5 of the shortest gap between
// two reads of any stream being read (each stream's shortest of its latest gapRing gaps, in
// gapBucket steps, rounded down), and none shorter than minNap (not worth the timer).
const (
	maxNap     = 2 * time.Millisecond
	minNap     = 200 * time.Microsecond
	gapBucket  = 250 * time.Microsecond
	gapBuckets = 21 // the last one: 5 ms and longer (a 2 ms nap)
	gapRing    = 4
)

// gapWindow counts the streams being read by their shortest recent gap between two reads
// (rxWatch.gaps), in gapBucket steps: a stream whose events come faster shortens the reactor's
// naps as soon as two of its reads are seen, and stops counting when its response ends (the
// burst of a response's last events, a few microseconds apart, shortens no nap after it).
type gapWindow struct {
	count [gapBuckets]int32
	mask  uint32 // bit b: count[b] > 0
}

// note moves a stream from bucket from to bucket to (-1: none).
func (g *gapWindow) note(from, to int) {
	if from == to {
		return
	}
	for _, x := range [2]struct{ b, d int }{{from, -1}, {to, 1}} {
		if x.b < 0 {
			continue
		}
		g.count[x.b] += int32(x.d)
		if g.count[x.b] > 0 {
			g.mask |= 1 << x.b
		} else {
			g.mask &^= 1 << x.b
		}
	}
}

// gapBucketOf is the bucket of a gap of ns.
func gapBucketOf(ns int64) int {
	return int(min(max(ns, 0)/int64(gapBucket), gapBuckets-1))
}

// window is how long the reactor may nap before its next read: 2/5 of the shortest gap of any
// stream being read (rounded down to its bucket), at most maxNap; 0 when no stream has shown a
// gap yet or that would be under minNap.
func (g *gapWindow) window() time.Duration {
	if g.mask == 0 {
		return 0
	}
	nap := time.Duration(bits.TrailingZeros32(g.mask)) * gapBucket * 2 / 5
	if nap < minNap {
		return 0
	}
	return min(nap, maxNap)
}

// addGap notes a gap of ns between two reads of w's socket (rc.mu held).
func (rc *reactor) addGap(w *rxWatch, ns int64) {
	w.gaps[w.ngaps%gapRing] = ns
	w.ngaps++
	m := ns
	for _, g := range w.gaps[:min(w.ngaps, gapRing)] {
		m = min(m, g)
	}
	b := gapBucketOf(m)
	rc.gaps.note(w.bucket, b)
	w.bucket = b
}

// dropGaps stops counting w's gaps (rc.mu held; its response ended or is abandoned).
func (rc *reactor) dropGaps(w *rxWatch) {
	rc.gaps.note(w.bucket, -1)
	w.bucket = -1
}
