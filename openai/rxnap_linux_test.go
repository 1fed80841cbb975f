//go:build linux

package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// TestGapWindow: the reactor's nap is 2/5 of the shortest recent gap (the shortest of each
// stream's latest four, in 250 µs steps) of the streams being read, at most 2 ms, none under
// 200 µs; a stream stops counting when its response ends.
func TestGapWindow(t *testing.T) {
	ms := func(f float64) int64 { return int64(f * float64(time.Millisecond)) }
	// A step: stream s saw a gap (ns), or ended (end).
	type step struct {
		s   int
		gap int64
		end bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  time.Duration
	}{
		// Nothing seen yet: no nap, every read as soon as its socket is readable.
		{"none", nil, 0},
		// One event every 5 ms (BenchmarkPacedVsMinimal): 2 ms.
		{"5ms", []step{{0, ms(5), false}, {1, ms(5.1), false}}, 2 * time.Millisecond},
		// 4.1 ms: its bucket (4–4.25 ms), 1.6 ms.
		{"4.1ms", []step{{0, ms(4.1), false}}, 1600 * time.Microsecond},
		// Slow streams: capped at 2 ms, so a response's end is read at most that late.
		{"100ms", []step{{0, ms(100), false}}, 2 * time.Millisecond},
		// One fast stream among slow ones shortens every nap: 1 ms → 400 µs.
		{"fast among slow", []step{{0, ms(50), false}, {1, ms(1), false}, {2, ms(50), false}}, 400 * time.Microsecond},
		// Faster than 0.5 ms: 200 µs or less is not worth a timer, no nap.
		{"too fast", []step{{0, ms(5), false}, {1, ms(0.4), false}}, 0},
		// Two reads with one stamp: no nap.
		{"zero", []step{{0, ms(5), false}, {1, 0, false}}, 0},
		// A stream's short gap counts for its next three gaps …
		{"recent", []step{{0, ms(1), false}, {0, ms(10), false}, {0, ms(10), false}, {0, ms(10), false}}, 400 * time.Microsecond},
		// … and no longer after four.
		{"aged out", []step{{0, ms(1), false}, {0, ms(10), false}, {0, ms(10), false}, {0, ms(10), false}, {0, ms(10), false}}, 2 * time.Millisecond},
		// The burst of a response's last events stops counting when it ends.
		{"ended", []step{{0, ms(5), false}, {1, ms(5), false}, {1, ms(0.01), false}, {1, 0, true}}, 2 * time.Millisecond},
		// Every stream ended: no nap until gaps are seen again.
		{"all ended", []step{{0, ms(5), false}, {0, 0, true}}, 0},
	} {
		rc := &reactor{}
		ws := map[int]*rxWatch{}
		for _, st := range tc.steps {
			w := ws[st.s]
			if w == nil {
				w = &rxWatch{bucket: -1}
				ws[st.s] = w
			}
			if st.end {
				rc.dropGaps(w)
			} else {
				rc.addGap(w, st.gap)
			}
		}
		if got := rc.gaps.window(); got != tc.want {
			t.Errorf("%s: window %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNapsKeepStamps: while the reactor naps between reads (coalesce), every token event still
// carries the kernel stamp of its own arrival. Eight streams send eight events 20 ms apart
// (naps of 2 ms); the server notes the time around each event's write (the loopback write has
// delivered the bytes when it returns), and each event's stamp (the record's first token and
// gaps) must fall within its write, where an event read together with its stream's next one
// would be stamped a gap late. The reactor must have napped meanwhile.
func TestNapsKeepStamps(t *testing.T) {
	if s := stampsOn(); s != nil {
		defer s.Close()
	}
	const (
		streams = 8
		events  = 8
		gap     = 20 * time.Millisecond
	)
	type write struct{ pre, post int64 }
	var mu sync.Mutex
	writes := map[string][]write{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	acceptRequests(ln, func(c net.Conn, conn int32, i int) bool {
		id := fmt.Sprintf("s%d-%d", conn, i)
		ev := chunk(`data: {"id":"` + id + `","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n")
		var ws []write
		put := func(s string) bool {
			pre := time.Now().UnixNano()
			_, err := io.WriteString(c, s)
			ws = append(ws, write{pre, time.Now().UnixNano()})
			return err == nil
		}
		ok := put("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + ev)
		for range events - 1 {
			time.Sleep(gap)
			ok = ok && put(ev)
		}
		mu.Lock()
		writes[id] = ws
		mu.Unlock()
		_, err := io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 9, events)+doneEvent)+"0\r\n\r\n")
		return ok && err == nil
	})
	c := newClient(t, "http://"+ln.Addr().String()+"/v1", func(cfg *Config) { cfg.MaxConnections = streams })
	req := testRequest()
	req.MaxOutputTokens = events
	if rec := c.Do(context.Background(), req); !rec.OK() { // connections open, gaps seen
		t.Fatalf("warm-up: %s %s", rec.ErrorClass, rec.Error)
	}
	rc := reactorFor()
	if rc == nil || rc.gate < 0 {
		t.Skip("no reactor with a gate here")
	}
	naps0 := rc.naps.Load()
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			rec := c.Do(context.Background(), req)
			if !rec.OK() || rec.Chunks != events {
				t.Errorf("%s %s chunks %d", rec.ErrorClass, rec.Error, rec.Chunks)
				return
			}
			if rec.ClockSource != "kernel" {
				t.Errorf("clock %q: no kernel stamps", rec.ClockSource)
				return
			}
			mu.Lock()
			ws := writes[rec.ResponseID]
			mu.Unlock()
			if len(ws) != events {
				t.Errorf("%s: %d writes noted, want %d", rec.ResponseID, len(ws), events)
				return
			}
			at := rec.StartUnixNano + int64(rec.TTFTSeconds*1e9)
			for k, w := range ws {
				if k > 0 {
					at += int64(rec.ChunkGapsSeconds[k-1] * 1e9)
				}
				if at < w.pre-stampSlack || at > w.post+stampSlack {
					t.Errorf("%s: event %d stamped %v after its write returned; want within the write (±%v)",
						rec.ResponseID, k, time.Duration(at-w.post), time.Duration(stampSlack))
				}
			}
		})
	}
	wg.Wait()
	if naps := rc.naps.Load() - naps0; naps == 0 {
		t.Errorf("the reactor never napped: the stamps above were not taken across naps")
	}
}
