//go:build linux

package openai

import (
	"syscall"
	"testing"
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
