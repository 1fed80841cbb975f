//go:build linux

package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// spacedServer serves streams of events token events each, gap apart (one packet each), and
// returns a client with streams connections to it and the request to send.
func spacedServer(t *testing.T, streams, events int, gap time.Duration) (*Client, func(ctx context.Context) error) {
	t.Helper()
	if s := stampsOn(); s != nil {
		t.Cleanup(func() { s.Close() })
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	ev := chunk(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n")
	acceptRequests(ln, func(c net.Conn, conn int32, i int) bool {
		_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+ev)
		for range events - 1 {
			time.Sleep(gap)
			if err == nil {
				_, err = io.WriteString(c, ev)
			}
		}
		if err == nil {
			_, err = io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 9, events)+doneEvent)+"0\r\n\r\n")
		}
		return err == nil
	})
	c := newClient(t, "http://"+ln.Addr().String()+"/v1", func(cfg *Config) { cfg.MaxConnections = streams })
	req := testRequest()
	req.MaxOutputTokens = events
	run := func(ctx context.Context) error {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for range streams {
			wg.Go(func() {
				if rec := c.Do(ctx, req); !rec.OK() || rec.Chunks != events {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("%s %s, %d of %d events", rec.ErrorClass, rec.Error, rec.Chunks, events)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return first
	}
	return c, run
}

// gatedReactor returns the reactor, skipping the test where it has no gate (no naps, no net).
func gatedReactor(t *testing.T) *reactor {
	t.Helper()
	rc := reactorFor()
	if rc == nil || rc.gate < 0 || rc.net < 0 {
		t.Skip("no reactor with a gate here")
	}
	return rc
}

// TestNapTimerBeforeWait: a nap whose timer fires before the reactor waits for it (its thread
// descheduled for longer than the nap right after arming it: here a 5 ms sleep at every nap of
// 2 ms) still ends at once. RawRead forgets what the runtime's poller reported before it, so
// the first naps (8ef510e), which parked on the first try, slept for good, their sockets
// unwatched: every stream here failed at the 10 s deadline with 1 or 2 of its 8 events read.
// The net must not have been needed (no rescue; with the old first attempt and the net, 7 in
// one run, every run).
func TestNapTimerBeforeWait(t *testing.T) {
	_, run := spacedServer(t, 4, 8, 20*time.Millisecond)
	rc := gatedReactor(t)
	var hooked atomic.Int64
	late := func() { hooked.Add(1); time.Sleep(5 * time.Millisecond) }
	napSetHook.Store(&late)
	defer napSetHook.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rescued(t, rc, func() {
		if err := run(ctx); err != nil {
			t.Fatal(err)
		}
		if hooked.Load() == 0 {
			t.Fatal("the reactor never napped: nothing was tested")
		}
	}, "the naps lost their timer's wake-up")
}

// rescued fails the test when every one of three runs of f had the net rescue something. A
// rescue also counts a reactor whose thread was not run for 10 ms (on a loaded machine, beside
// busy processes, one in a run is seen), which seldom happens three runs in a row; a lost
// wake-up shows in every run.
func rescued(t *testing.T, rc *reactor, f func(), why string) {
	t.Helper()
	for try := range 3 {
		r0 := rc.rescues.Load()
		f()
		n := rc.rescues.Load() - r0
		if n == 0 {
			return
		}
		t.Logf("run %d: %d rescues", try+1, n)
	}
	t.Errorf("rescues by the net in 3 runs of 3: %s", why)
}

// TestNetRescuesLostWakeUps: the safety net wakes a reactor parked with streams in flight within
// netInterval whatever happens to its sockets' wake-ups. With the wake-ups working (events
// 30 ms apart, so the reactor parks longer than netInterval) the net fires and rescues
// nothing; with every wake-up lost (loseWakes: the reactor parks with its sockets unwatched)
// the streams still end, read by the net, which counts its rescues.
func TestNetRescuesLostWakeUps(t *testing.T) {
	_, run := spacedServer(t, 4, 8, 30*time.Millisecond)
	rc := gatedReactor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rescued(t, rc, func() {
		wakes0 := rc.netWakes.Load()
		if err := run(ctx); err != nil {
			t.Fatal(err)
		}
		if n := rc.netWakes.Load() - wakes0; n == 0 {
			t.Errorf("the net never fired while the reactor was parked for 30 ms")
		}
	}, "with every wake-up working")

	loseWakes.Store(true)
	defer loseWakes.Store(false)
	rescues0 := rc.rescues.Load()
	if err := run(ctx); err != nil {
		t.Fatalf("with the wake-ups lost: %v", err)
	}
	if n := rc.rescues.Load() - rescues0; n == 0 {
		t.Errorf("no rescue with every wake-up lost: the streams were read by something else")
	}
}
