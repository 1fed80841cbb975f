//go:build linux

package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/servebench/servebench"
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

// TestFirstTokenStampedAtItsArrival: a first token is stamped with its own arrival, not a later
// event's, after a response whose head was longer. The server answers two requests on one
// kept-alive connection: first with a head padded to 2 KiB, then with a short head and the
// role-only chunk at once, the first token 10 ms later and five more events 20 ms apart. The
// first token's kernel stamp must fall within its write (the loopback write has delivered the
// bytes when it returns) and its gap to the next event must not be zero. A first-token read that
// slept with SO_RCVLOWAT at the previous head's length + 1 woke only once that many unread bytes
// had come, or after its 50 ms SO_RCVTIMEO slice, so it took the first token with the later
// events under the newest one's stamp (33 ms late here; 31 events, 0.5 s late, in a demo run).
// Only a reader held up for more than the 20 ms gap could merge the two now.
func TestFirstTokenStampedAtItsArrival(t *testing.T) {
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	const gap = 20 * time.Millisecond
	events := 6
	var pre, post atomic.Int64 // the first token's write, Unix ns
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	acceptRequests(ln, func(c net.Conn, _ int32, i int) bool {
		if i == 0 {
			body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 9, 1) + doneEvent
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Pad: "+strings.Repeat("x", 2048)+
				"\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk(body)+"0\r\n\r\n")
			return true
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			chunk(chatChunk(`{"role":"assistant","content":""}`)))
		time.Sleep(gap / 2)
		pre.Store(time.Now().UnixNano())
		_, _ = io.WriteString(c, chunk(chatChunk(`{"content":"a"}`)))
		post.Store(time.Now().UnixNano())
		for range events - 1 {
			time.Sleep(gap)
			_, _ = io.WriteString(c, chunk(chatChunk(`{"content":"b"}`)))
		}
		_, _ = io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 9, events)+doneEvent)+"0\r\n\r\n")
		return true
	})
	base := "http://" + ln.Addr().String() + "/v1"
	c := newClient(t, base, nil)
	req := testRequest()
	if rec := c.Do(context.Background(), req); !rec.OK() {
		t.Fatalf("first request: %s %s", rec.ErrorClass, rec.Error)
	}
	rec := c.Do(context.Background(), req)
	if !rec.OK() || rec.Retries != 0 {
		t.Fatalf("second request: %s %s retries %d", rec.ErrorClass, rec.Error, rec.Retries)
	}
	if rec.ClockSource != servebench.ClockKernel {
		t.Skipf("clock %q: no kernel stamps here", rec.ClockSource)
	}
	first := rec.StartUnixNano + int64(rec.TTFTSeconds*1e9)
	if first < pre.Load()-stampSlack || first > post.Load()+stampSlack {
		t.Errorf("first token stamped %v after its write returned; want within the write (±%v)",
			time.Duration(first-post.Load()), time.Duration(stampSlack))
	}
	if len(rec.ChunkGapsSeconds) != events-1 || rec.ChunkGapsSeconds[0] == 0 {
		t.Errorf("chunk gaps %v: want %d, the first not zero (the first token under a later event's stamp)", rec.ChunkGapsSeconds, events-1)
	}
}
