package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/sim"
)

// countingMetrics counts the scrapes a run takes after its cells and keeps each wait's reason.
type countingMetrics struct {
	inner  *promscrape.Scraper
	mu     sync.Mutex
	whys   []string
	waited time.Duration
}

func (c *countingMetrics) Scrape(ctx context.Context) (*promscrape.Snapshot, error) {
	return c.inner.Scrape(ctx)
}

func (c *countingMetrics) After(ctx context.Context, before *promscrape.Snapshot, w promscrape.Wait) (*promscrape.Snapshot, string, error) {
	t0 := time.Now()
	snap, why, err := c.inner.After(ctx, before, w)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.whys = append(c.whys, why)
	c.waited += time.Since(t0)
	return snap, why, err
}

// A 6-cell run against a server whose /metrics never counts a finished request (a gateway in
// front of other replicas) does not wait for it between cells: the first cell's scrape stops
// once the histograms stayed still for 5% of the cell's span (at least 100 ms), and every later
// cell takes one scrape, its log saying why. Before, every cell waited 10 s for the counter.
func TestNoWaitingOnACounterThatNeverMoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		tg := startSim(t, prof, sim.Options{Seed: 3, UncountedMetrics: true})
		p, err := plan.Resolve(nil, plan.Overrides{"url": "http://127.0.0.1:1/v1", "contexts": "1k,2k", "concurrency": "1,2,4",
			"output-tokens": "8", "use-cases": "none", "min-requests": "4", "rounds": "1", "max-requests": "12"})
		if err != nil {
			t.Fatal(err)
		}
		r, rec := newRunner(t, tg, p, nil)
		cm := &countingMetrics{inner: r.Metrics.(*promscrape.Scraper)}
		r.Metrics = cm
		t0 := time.Now()
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		wall := time.Since(t0)
		if len(cm.whys) < 6 {
			t.Fatalf("%d cells read the server's metrics after them, want 6: %q", len(cm.whys), cm.whys)
		}
		waited := 0
		for i, why := range cm.whys {
			switch {
			case strings.Contains(why, "did not move for"):
				waited++
			case strings.HasPrefix(why, "not waited for: the server's histograms counted none"):
			default:
				t.Errorf("cell %d: %q", i, why)
			}
		}
		if waited != 1 {
			t.Errorf("%d cells waited for histograms that never move, want only the first: %q", waited, cm.whys)
		}
		for _, l := range rec.logs {
			if l.Metrics != nil && l.Metrics.Wait == "" {
				t.Errorf("cell %s: no reason recorded for the scrape after it", l.Cell.ID())
			}
		}
		t.Logf("run %v, after-cell scrapes %v (%.1f%%)", wall.Round(time.Millisecond), cm.waited.Round(time.Millisecond), 100*cm.waited.Seconds()/wall.Seconds())
	})
}
