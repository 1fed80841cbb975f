package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// A server restart during the very first cell: its counters start from zero both before the
// cell and after the restart, so the histogram deltas look ordinary; only the process start
// time says the server is another process. The cell's server-side values must be unavailable
// with that reason, and the cell marked server-restart; the second cell is unaffected.
func TestRestartDuringTheFirstCellIsNoticed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		// /metrics through a proxy that reports a new process start time from the run's second
		// scrape on (armed once discovery has read it)
		var scrapes atomic.Int64
		var armed atomic.Bool
		startLine := regexp.MustCompile(`(?m)^process_start_time_seconds .*$`)
		tg := startSimConfig(t, simtest.Config{Profile: prof, Options: sim.Options{Seed: 1}, Wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/metrics" || !armed.Load() {
					h.ServeHTTP(w, r)
					return
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				start := 1000
				if scrapes.Add(1) > 1 {
					start = 2000
				}
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				w.Write(startLine.ReplaceAll(rec.Body.Bytes(), []byte(fmt.Sprintf("process_start_time_seconds %d", start))))
			})
		}})

		p := smallPlan(t, "1k", "2,3", 16)
		r, _ := newRunner(t, tg, p, nil)
		armed.Store(true)
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		if len(res.Cells) != 2 {
			t.Fatalf("%d cells", len(res.Cells))
		}
		first, second := res.Cells[0], res.Cells[1]
		if first.QueueWaitSeconds != nil || first.PrefillSeconds != nil || first.PrefillSpeedTPS != nil {
			t.Errorf("first cell keeps server-side values across a restart: queue %v prefill %v", first.QueueWaitSeconds, first.PrefillSeconds)
		}
		if why := first.Unavailable["queue_wait_seconds"]; !bytes.Contains([]byte(why), []byte("restarted")) {
			t.Errorf("first cell: queue wait unavailable because %q, want the restart", why)
		}
		if !first.Validity.Has(servebench.ReasonServerRestart) {
			t.Errorf("first cell validity %+v lacks server-restart", first.Validity)
		}
		if second.QueueWaitSeconds == nil || second.Validity.Has(servebench.ReasonServerRestart) {
			t.Errorf("second cell (no restart between its scrapes): queue %v, validity %+v, unavailable %v", second.QueueWaitSeconds, second.Validity, second.Unavailable)
		}
	})
}
