//go:build linux

package openai

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestReactorStress: 64 streams for SERVEBENCH_STRESS_SECONDS (skipped without it), each
// response 1–40 events 0–4 ms apart with bursts (every seventh event right after the one before),
// a fifth of the connections closed by the server after their response (the client dials again),
// 0–3 ms between a stream's requests; every request must end within 5 s. Beside two busy loops
// (load average 5–7 on 2 cores) the naps as first landed (cda5751) left 512 of 1,668 requests
// stuck in 40 s (the reactor asleep for good after 406 naps); with their wake-up fixed, 0 of
// 38,881 (9,913 naps), the net ending 19 waits.
func TestReactorStress(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("SERVEBENCH_STRESS_SECONDS"))
	if secs == 0 {
		t.Skip("SERVEBENCH_STRESS_SECONDS not set")
	}
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	ev := chunk(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n")
	acceptRequests(ln, func(c net.Conn, conn int32, i int) bool {
		n := 1 + rand.IntN(40)
		gap := time.Duration(rand.IntN(4000)) * time.Microsecond
		_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+ev)
		for k := range n - 1 {
			if k%7 != 3 { // bursts: some events back to back
				time.Sleep(gap)
			}
			if err == nil {
				_, err = io.WriteString(c, ev)
			}
		}
		if err == nil {
			_, err = io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 9, n)+doneEvent)+"0\r\n\r\n")
		}
		if rand.IntN(5) == 0 {
			return false // close the connection: the client dials again
		}
		return err == nil
	})
	c := newClient(t, "http://"+ln.Addr().String()+"/v1", func(cfg *Config) { cfg.MaxConnections = 64 })
	req := testRequest()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	n, fails := 0, 0
	for range 64 {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				rec := c.Do(ctx, req)
				cancel()
				mu.Lock()
				n++
				if rec.ErrorClass == "canceled" || rec.ErrorClass == "timeout" {
					fails++
					if fails < 5 {
						t.Errorf("%s %s after %d chunks", rec.ErrorClass, rec.Error, rec.Chunks)
					}
				}
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	rc := reactorFor()
	if fails > 0 {
		t.Errorf("%d of %d requests stuck", fails, n)
	}
	t.Logf("%d requests, %d stuck; naps %d, net wakes %d, rescues %d", n, fails, rc.naps.Load(), rc.netWakes.Load(), rc.rescues.Load())
}
