package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRoundsKeepConnections: rounds of as many requests at once as the client has connections
// (BenchmarkPacedVsMinimal's shape: 64 streams, events 5 ms apart, usage, [DONE] and the chunked
// terminator in one write), against a server that keeps every connection alive, dial no
// connection after the first round: no kept-alive connection is taken for closed
// (peerClosed) for bytes left unread on it.
func TestRoundsKeepConnections(t *testing.T) {
	const streams, events, rounds = 64, 16, 4
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
	ev := chunk(chatChunk(`{"content":" tok"}`))
	conns := acceptRequests(ln, func(c net.Conn, _ int32, _ int) bool {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+ev)
		for range events - 1 {
			time.Sleep(5 * time.Millisecond)
			if _, err := io.WriteString(c, ev); err != nil {
				return false
			}
		}
		_, err := io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 1, events)+doneEvent)+"0\r\n\r\n")
		return err == nil
	})
	c := newClient(t, "http://"+ln.Addr().String()+"/v1", func(cfg *Config) { cfg.MaxConnections = streams })
	req := testRequest()
	req.MaxOutputTokens = events
	for r := range rounds {
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				if rec := c.Do(context.Background(), req); !rec.OK() || rec.Chunks != events {
					t.Errorf("%s %s chunks %d", rec.ErrorClass, rec.Error, rec.Chunks)
				}
			})
		}
		wg.Wait()
		if n := conns.Load(); n != streams {
			t.Fatalf("round %d: %d connections dialled for %d streams", r, n, streams)
		}
	}
}
