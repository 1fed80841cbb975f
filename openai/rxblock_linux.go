//go:build linux

package openai

import (
	"runtime"
	"syscall"
	"unsafe"
)

// The runtime's own bracket for a system call known to sleep: entersyscallblock hands the
// goroutine's P to another thread at once. syscall.Syscall's entersyscall keeps it until the
// runtime's monitor thread takes it back, 20 µs to 10 ms later, and meanwhile every goroutine
// that needs that P waits: with a plain blocking recvmsg a slot whose request had ended sent its
// next one up to 13 ms late (p90 12 ms at 2 streams against the simulator, 0.7 ms before), which
// changed the load itself. Both functions are kept for programs outside the standard library
// (go.dev/issue/67401).
//
//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// recvmsgBlocking is one recvmsg(2) with msg prepared by the caller, between entersyscallblock
// and exitsyscall. Between the two it must not grow its stack or allocate (nosplit, a raw
// system call only).
//
//go:nosplit
func recvmsgBlocking(fd uintptr, msg *syscall.Msghdr) (uintptr, syscall.Errno) {
	entersyscallblock()
	n, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(msg)), 0)
	exitsyscall()
	return n, errno
}

// recvBlocking is recvmsg (p and the control messages into r.oob, asked again when a signal
// interrupts it) on a blocking socket, giving the P up while it sleeps.
func (r *rxReader) recvBlocking(fd uintptr, p []byte) (n, oobn int, err error) {
	var iov syscall.Iovec
	var msg syscall.Msghdr
	iov.Base = &p[0]
	iov.SetLen(len(p))
	msg.Iov = &iov
	msg.Iovlen = 1
	msg.Control = &r.oob[0]
	for {
		msg.SetControllen(len(r.oob))
		got, errno := recvmsgBlocking(fd, &msg)
		runtime.KeepAlive(p)
		switch errno {
		case 0:
			return int(got), int(msg.Controllen), nil
		case syscall.EINTR:
			continue
		}
		return 0, 0, errno
	}
}
