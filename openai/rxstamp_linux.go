//go:build linux

package openai

import (
	"io"
	"net"
	"syscall"
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
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
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
	for {
		r.n, r.oobn, _, _, r.err = syscall.Recvmsg(int(fd), r.p, r.oob[:], 0)
		if r.err != syscall.EINTR {
			break
		}
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
