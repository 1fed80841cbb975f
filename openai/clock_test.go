package openai

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// TestStampRead checks the mapping of a kernel stamp onto the monotonic clock, row by row.
func TestStampRead(t *testing.T) {
	user := time.Now() // carries both clocks
	start := user.Add(-50 * time.Millisecond)
	wall := user.UnixNano()
	cases := []struct {
		name      string
		kernelNs  int64
		notBefore time.Time
		wantLag   time.Duration // -1: user clock
	}{
		{"no stamp: user clock", 0, start, -1},
		{"stamp 3 ms before the read", wall - 3e6, start, 3 * time.Millisecond},
		{"stamp at the read itself", wall, start, 0},
		// the wall clock stepped back between arrival and read: the stamp would lie after the read
		{"stamp after the read", wall + 1e6, start, -1},
		// the wall clock stepped forward by more than the request's age: before the start
		{"stamp before the request start", wall - int64(time.Second), start, -1},
		{"no start known", wall - int64(time.Second), time.Time{}, time.Second},
	}
	for _, c := range cases {
		st := stampRead(user, c.kernelNs, c.notBefore)
		if st.lag != c.wantLag {
			t.Errorf("%s: lag %v, want %v", c.name, st.lag, c.wantLag)
		}
		want := user
		if c.wantLag >= 0 {
			want = user.Add(-c.wantLag)
		}
		if !st.at.Equal(want) || st.at.Sub(user) != want.Sub(user) {
			t.Errorf("%s: at %v, want %v", c.name, st.at, want)
		}
	}
}

// rawSSE is a server on a real loopback socket that writes an SSE response in two parts: the
// headers with the first event in one write, then, when told to, the second event and the
// end. It reports the wall-clock times before and after each of the two writes.
type rawSSE struct {
	ln        net.Listener
	second    chan struct{}
	pre, post [2]int64
	written   chan struct{}
}

func newRawSSE(t *testing.T) *rawSSE {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawSSE{ln: ln, second: make(chan struct{}), written: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
		s.pre[0] = time.Now().UnixNano()
		_, _ = io.WriteString(c, head+chunk(chatChunk(`{"content":"a"}`)))
		s.post[0] = time.Now().UnixNano()
		<-s.second
		s.pre[1] = time.Now().UnixNano()
		_, _ = io.WriteString(c, chunk(chatChunk(`{"content":"b"}`)+fmt.Sprintf(usageEvent, 1, 2)+doneEvent)+"0\r\n\r\n")
		s.post[1] = time.Now().UnixNano()
		close(s.written)
		_, _ = io.Copy(io.Discard, c)
	}()
	return s
}

// TestKernelStampFollowsTheBytes: the first event arrives with the headers and sits in
// net/http's buffer while the reader is late; the second arrives later. Each event must get the
// kernel stamp of its own arrival (between the server's pre- and post-write times), not the
// time the late body read returned, and not the newer connection read's stamp.
func TestKernelStampFollowsTheBytes(t *testing.T) {
	if !rxSupported {
		t.Skip("no kernel receive stamps on this system")
	}
	if s := stampsOn(); s != nil { // as the client does: stamping is on before the bytes arrive
		defer s.Close()
	}
	srv := newRawSSE(t)
	tr := newTransport(1, false)
	tr.DialContext = (&dialer{dial: (&net.Dialer{}).DialContext, kernel: true}).DialContext
	defer tr.CloseIdleConnections()
	var kc *conn
	mark := new(startMark)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		kc = ownConn(info.Conn)
		kc.armStart(mark)
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, "http://"+srv.ln.Addr().String()+"/v1/chat/completions", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if kc == nil || !kc.kernelClock() {
		t.Fatal("the connection does not take kernel stamps")
	}
	start, ok := mark.at()
	if !ok {
		t.Fatal("no start stamp at the request's first write")
	}
	close(srv.second)
	<-srv.written
	time.Sleep(30 * time.Millisecond) // a starved reader: both events wait before it reads

	sr := newStampReader(resp.Body, &watchdog{base: start}, kc, start)
	st := newStream(servebench.APIChat, 2, nil)
	if f := st.read(sr); f != nil {
		t.Fatal(f.msg)
	}
	wallOf := func(at time.Time) int64 { return start.UnixNano() + int64(at.Sub(start)) }
	for i, at := range []time.Time{st.firstToken, st.lastToken} {
		w := wallOf(at)
		if w < srv.pre[i]-int64(50*time.Microsecond) || w > srv.post[i]+int64(50*time.Microsecond) {
			t.Errorf("event %d stamped %d ns after its write returned (%d ns after it began); want within the write", i+1, w-srv.post[i], w-srv.pre[i])
		}
	}
	if st.firstLag < 30*time.Millisecond {
		t.Errorf("first-token client lag %v; the reader was at least 30 ms late", st.firstLag)
	}
	if sr.clockSource() != clockKernel || sr.maxLag < st.firstLag {
		t.Errorf("clock %s, max lag %v below first lag %v", sr.clockSource(), sr.maxLag, st.firstLag)
	}
}

// TestRecordsSayWhichClock: on a loopback TCP socket records are kernel-stamped with a client
// lag; with UserClock they say "user" and carry no lag.
func TestRecordsSayWhichClock(t *testing.T) {
	base := serve(t, scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: chatChunk(`{"content":"b"}`) + fmt.Sprintf(usageEvent, 1, 2) + doneEvent}))
	for _, user := range []bool{false, true} {
		c := newClient(t, base, func(cfg *Config) { cfg.UserClock = user })
		rec := c.Do(context.Background(), testRequest())
		if !rec.OK() {
			t.Fatalf("user=%v: %s %s", user, rec.ErrorClass, rec.Error)
		}
		want := c.ClockSource()
		if rec.ClockSource != want {
			t.Errorf("user=%v: clock_source %q, want %q", user, rec.ClockSource, want)
		}
		kernel := want == servebench.ClockKernel
		if (rec.ClientLagSeconds != nil) != kernel || (rec.ClientLagMaxSeconds != nil) != kernel {
			t.Errorf("user=%v: lag %v max %v with clock %s", user, deref(rec.ClientLagSeconds), deref(rec.ClientLagMaxSeconds), want)
		}
		if kernel && (*rec.ClientLagSeconds < 0 || *rec.ClientLagMaxSeconds < *rec.ClientLagSeconds) {
			t.Errorf("lag %v, max %v", *rec.ClientLagSeconds, *rec.ClientLagMaxSeconds)
		}
		if user && c.ClockSource() != servebench.ClockUser {
			t.Errorf("UserClock client says %s", c.ClockSource())
		}
	}
}

// TestFailureWithoutResponseIsUserClock: a request that never got a byte is timed by the user
// clock and says so.
func TestFailureWithoutResponseIsUserClock(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, "http://"+addr+"/v1", nil)
	rec := c.Do(context.Background(), testRequest())
	if rec.OK() || rec.ClockSource != servebench.ClockUser || rec.ClientLagSeconds != nil {
		t.Fatalf("class %q clock %q lag %v", rec.ErrorClass, rec.ClockSource, deref(rec.ClientLagSeconds))
	}
}
