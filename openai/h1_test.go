package openai

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// h1Decode pushes raw to a fresh h1Resp in the given pieces and returns the body it decoded.
func h1Decode(raw string, cuts []int) (*h1Resp, string, error) {
	var body strings.Builder
	r := &h1Resp{body: func(p []byte) bool { body.Write(p); return false }}
	prev := 0
	for _, c := range append(cuts, len(raw)) {
		stop, err := r.push([]byte(raw[prev:c]))
		prev = c
		if err != nil || stop {
			return r, body.String(), err
		}
	}
	return r, body.String(), nil
}

// TestH1ResponseInPieces: a response decodes to the same head and body however its bytes are
// split across reads (every single cut, and byte by byte).
func TestH1ResponseInPieces(t *testing.T) {
	tests := []struct {
		name, raw, body string
		code            int
		contentType     string
		close           bool
	}{
		{name: "chunked with extension and trailer",
			raw:  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: 1\r\n\r\n",
			body: "hello, world!!!", code: 200, contentType: "text/event-stream"},
		{name: "content-length",
			raw:  "HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\ndata",
			body: "data", code: 200},
		{name: "interim response skipped",
			raw:  "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
			body: "ok", code: 201, close: true},
		{name: "bare line feeds",
			raw:  "HTTP/1.1 404 Not Found\nContent-Type: application/json\nContent-Length: 2\n\n{}",
			body: "{}", code: 404, contentType: "application/json"},
		{name: "HTTP/1.0 up to the connection's end",
			raw:  "HTTP/1.0 200 OK\r\n\r\nall of it",
			body: "all of it", code: 200, close: true},
		{name: "no body", raw: "HTTP/1.1 204 No Content\r\n\r\n", code: 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var splits [][]int
			for i := 0; i <= len(tt.raw); i++ {
				splits = append(splits, []int{i})
			}
			var bytewise []int
			for i := 1; i < len(tt.raw); i++ {
				bytewise = append(bytewise, i)
			}
			splits = append(splits, bytewise)
			for _, cuts := range splits {
				r, body, err := h1Decode(tt.raw, cuts)
				if err != nil {
					t.Fatalf("cuts %v: %v", cuts, err)
				}
				// A body without a length ends with the connection; any other is complete by itself.
				if !r.complete && !r.ended() {
					t.Fatalf("cuts %v: not complete at the connection's end", cuts)
				}
				if body != tt.body || r.head.code != tt.code || r.head.contentType != tt.contentType || r.head.close != tt.close {
					t.Fatalf("cuts %v: body %q code %d type %q close %v", cuts, body, r.head.code, r.head.contentType, r.head.close)
				}
			}
		})
	}
}

func TestH1MalformedResponses(t *testing.T) {
	for _, raw := range []string{
		"SSH-2.0-OpenSSH_9.6\r\n\r\n",
		"HTTP/1.1 abc OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY",
	} {
		if _, _, err := h1Decode(raw, nil); err == nil {
			t.Errorf("%q: no error", raw)
		}
	}
}

// acceptRequests accepts connections on ln until it is closed and answers each request on
// them with respond (conn numbers the connection from 1, i the request on it from 0; false
// closes the connection). It returns the count of connections accepted.
func acceptRequests(ln net.Listener, respond func(c net.Conn, conn int32, i int) bool) *atomic.Int32 {
	conns := new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if !respond(c, n, i) {
						return
					}
				}
			}()
		}
	}()
	return conns
}

// rawServer answers every request with respond on a loopback listener closed at the test's end.
func rawServer(t *testing.T, respond func(c net.Conn) bool) (base string, conns *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String() + "/v1", acceptRequests(ln, func(c net.Conn, _ int32, _ int) bool { return respond(c) })
}

// TestPlainHTTPConnections: kept-alive connections are reused after a chunked or a sized
// response, and not after one that says Connection: close.
func TestPlainHTTPConnections(t *testing.T) {
	body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 9, 1) + doneEvent
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	tests := []struct {
		name, resp string
		wantConns  int32
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked, 1},
		{"sized", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body), 1},
		{"connection close", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, conns := rawServer(t, func(c net.Conn) bool {
				_, _ = io.WriteString(c, tt.resp)
				return !strings.Contains(tt.resp, "close")
			})
			c := newClient(t, base, nil)
			if c.h1 == nil {
				t.Fatal("an http:// target does not take the plain-HTTP path")
			}
			req := testRequest()
			req.MaxOutputTokens = 1
			for i := 0; i < 3; i++ {
				if rec := c.Do(context.Background(), req); !rec.OK() || rec.Retries != 0 {
					t.Fatalf("request %d: %s %s retries %d", i, rec.ErrorClass, rec.Error, rec.Retries)
				}
			}
			if n := conns.Load(); n != tt.wantConns {
				t.Errorf("%d connections, want %d", n, tt.wantConns)
			}
		})
	}
}

// TestPlainHTTPEndArrivesWithTheBytes: the server writes part of an event and closes at once,
// so the connection's end can reach the socket together with the bytes. The cut must be
// reported as such, not waited on until the idle timeout.
func TestPlainHTTPEndArrivesWithTheBytes(t *testing.T) {
	base, _ := rawServer(t, func(c net.Conn) bool {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			fmt.Sprintf("%x\r\n%s\r\n", len(chatChunk(`{"content":"a"}`)), chatChunk(`{"content":"a"}`))+"20\r\ndata: {\"id\":\"x\",\"cho")
		return false
	})
	c := newClient(t, base, func(cfg *Config) { cfg.IdleTimeout = time.Minute })
	rec := c.Do(context.Background(), testRequest())
	if rec.ErrorClass != servebench.ErrStreamTruncated || !strings.Contains(rec.Error, "broke") {
		t.Fatalf("class %q: %s", rec.ErrorClass, rec.Error)
	}
}

// TestPlainHTTPErrorBodyKeepsConnection: a sized non-2xx answer is read whole, reported, and its
// connection reused.
func TestPlainHTTPErrorBodyKeepsConnection(t *testing.T) {
	msg := `{"error":{"message":"model not loaded"}}`
	base, conns := rawServer(t, func(c net.Conn) bool {
		fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
		return true
	})
	c := newClient(t, base, nil)
	for i := 0; i < 2; i++ {
		rec := c.Do(context.Background(), testRequest())
		if rec.ErrorClass != servebench.ErrHTTPStatus || rec.HTTPStatus != 503 || !strings.Contains(rec.Error, "HTTP 503 Service Unavailable from /v1/chat/completions") ||
			!strings.Contains(rec.Error, "model not loaded") || !strings.Contains(rec.Error, "refusing load") {
			t.Fatalf("class %q status %d: %s", rec.ErrorClass, rec.HTTPStatus, rec.Error)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// TestPlainHTTPRefusesWhatNetHTTPRefuses: a header net/http would refuse keeps the requests on
// net/http, so they fail the same way.
func TestPlainHTTPRefusesWhatNetHTTPRefuses(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1/v1", func(cfg *Config) { cfg.Headers = http.Header{"X-Bad": {"a\r\nb"}} })
	if c.h1 != nil {
		t.Error("a header value with CR LF takes the plain-HTTP path")
	}
	c = newClient(t, "https://127.0.0.1:1/v1", nil)
	if c.h1 != nil {
		t.Error("an https:// target takes the plain-HTTP path")
	}
}

// TestPlainHTTPSkipsConnectionsClosedWhileIdle plays llama.cpp, which closes a kept-alive
// connection after each stream: the next request takes a new connection at once, without a
// failed attempt and a retry.
func TestPlainHTTPSkipsConnectionsClosedWhileIdle(t *testing.T) {
	if !rxSupported {
		t.Skip("idle connections are checked where the system can peek at a socket")
	}
	body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 9, 1) + doneEvent
	closed := make(chan struct{}, 4)
	base, conns := rawServer(t, func(c net.Conn) bool {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		c.Close()
		closed <- struct{}{}
		return false
	})
	c := newClient(t, base, nil)
	req := testRequest()
	req.MaxOutputTokens = 1
	for i := 0; i < 3; i++ {
		if rec := c.Do(context.Background(), req); !rec.OK() || rec.Retries != 0 {
			t.Fatalf("request %d: %s %s retries %d", i, rec.ErrorClass, rec.Error, rec.Retries)
		}
		<-closed // the server's close has reached the client's socket
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}
