package promscrape

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeMetrics serves a vLLM-shaped exposition whose queue and prefill histograms hold count(now)
// observations, in memory (so the test runs on the bubble's virtual clock), and counts scrapes.
type fakeMetrics struct {
	start   time.Time
	count   func(since time.Duration) int
	engine  string
	scrapes atomic.Int64
}

func (f *fakeMetrics) RoundTrip(r *http.Request) (*http.Response, error) {
	f.scrapes.Add(1)
	n := f.count(time.Since(f.start))
	var b strings.Builder
	if f.engine == "vllm" {
		for _, h := range []string{"vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds"} {
			fmt.Fprintf(&b, "# TYPE %s histogram\n%s_bucket{le=\"+Inf\"} %d\n%s_sum %d\n%s_count %d\n", h, h, n, h, n, h, n)
		}
		fmt.Fprintf(&b, "# TYPE vllm:request_success_total counter\nvllm:request_success_total 0\n")
	} else {
		fmt.Fprintf(&b, "# TYPE some_gateway_requests_total counter\nsome_gateway_requests_total %d\n", n)
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain; version=0.0.4"}},
		Body: io.NopCloser(strings.NewReader(b.String())), Request: r}, nil
}

// After waits only for what the cell's figures need and stops as soon as it is known that the
// server will not deliver it; every row runs on virtual time and counts scrapes, so the figures
// are exact whatever the machine does.
func TestAfterStopsWaitingWhenNothingMoves(t *testing.T) {
	const quiet = 500 * time.Millisecond
	for _, tc := range []struct {
		name       string
		engine     string
		count      func(time.Duration) int
		histograms bool
		calls      int           // After calls in a row (cells), the server as described
		maxScrapes int64         // over all calls
		wantWait   time.Duration // virtual time over all calls
		why        string        // in the last call's reason
	}{
		// the server counted every request before the cell's end reached the scraper
		{"counted at once", "vllm", func(time.Duration) int { return 10 }, true, 1, 1, 0, "at the first scrape"},
		// it catches up 150 ms later: scrapes at 0, 20, 60, 140 and 300 ms (each interval twice
		// the one before), none after
		{"counted late", "vllm", func(d time.Duration) int { return map[bool]int{true: 10, false: 4}[d >= 150*time.Millisecond] }, true, 1, 5, 300 * time.Millisecond, "counted the cell's 10 requests 0.30 s after"},
		// a gateway, or a server that counts differently: nothing moves; the first cell waits
		// Quiet, every later cell takes one scrape
		{"never moves", "vllm", func(time.Duration) int { return 0 }, true, 6, 7 + 5, quiet, "not waited for: the server's histograms counted none"},
		// it counts some of the requests, then stops: Quiet after the last movement
		{"stops short", "vllm", func(d time.Duration) int { return min(int(d/(100*time.Millisecond)), 3) }, true, 1, 12, 300*time.Millisecond + quiet, "counted 3 of the cell's 10 requests"},
		// every request carried the server's own timings: the histograms are not needed
		{"timings on the records", "vllm", func(time.Duration) int { return 0 }, false, 6, 6, 0, "carried the server's own timings"},
		// an unknown server: nothing to wait for
		{"no histograms", "other", func(time.Duration) int { return 0 }, true, 6, 6, 0, "no queue or prefill histogram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeMetrics{count: func(time.Duration) int { return 0 }, engine: tc.engine}
				s := New("http://metrics.invalid/metrics", &http.Client{Transport: f})
				ctx := context.Background()
				var waited time.Duration
				var why string
				for range tc.calls {
					f.count = func(time.Duration) int { return 0 }
					before, err := s.Scrape(ctx)
					if err != nil {
						t.Fatal(err)
					}
					f.scrapes.Add(-1) // the before scrape is not the wait's
					f.start, f.count = time.Now(), tc.count
					t0 := time.Now()
					var after *Snapshot
					after, why, err = s.After(ctx, before, Wait{Requests: 10, Histograms: tc.histograms, Quiet: quiet, Timeout: 10 * time.Second})
					if err != nil || after == nil {
						t.Fatalf("After: %v", err)
					}
					waited += time.Since(t0)
				}
				if n := f.scrapes.Load(); n > tc.maxScrapes {
					t.Errorf("%d scrapes after %d cells, want at most %d", n, tc.calls, tc.maxScrapes)
				}
				if waited > tc.wantWait {
					t.Errorf("waited %v in all, want at most %v", waited, tc.wantWait)
				}
				if !strings.Contains(why, tc.why) {
					t.Errorf("why = %q, want it to say %q", why, tc.why)
				}
			})
		})
	}
}
