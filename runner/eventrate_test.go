package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// TestWarnEventRate: the runner asks this machine's capacity once, only when a cell's planned
// event rate (concurrency × the fastest stream so far) passes the floor, and warns before each
// cell planned above the capacity.
func TestWarnEventRate(t *testing.T) {
	var notes []string
	asked := 0
	r := &Runner{
		Events:        func(e Event) { notes = append(notes, e.Message) },
		EventCapacity: func(context.Context) (float64, error) { asked++; return 3000, nil },
	}
	key := func(n int) servebench.CellKey {
		return servebench.CellKey{LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 256, Concurrency: n}
	}
	ctx := context.Background()
	r.warnEventRate(ctx, key(64), "sweep") // nothing measured yet: no rate known
	r.rates.observe(servebench.CellResult{GenerationSpeedTPS: servebench.Summary{Mean: 500}, TokensPerChunk: 1})
	r.rates.observe(servebench.CellResult{GenerationSpeedTPS: servebench.Summary{Mean: 2000}, TokensPerChunk: 2}) // 1000 events/s
	r.rates.observe(servebench.CellResult{})                                                                      // failed cell: no rate
	r.warnEventRate(ctx, key(1), "sweep")                                                                         // 1000/s: below the floor
	if asked != 0 || len(notes) != 0 {
		t.Fatalf("asked %d, notes %q: want nothing below the floor", asked, notes)
	}
	r.warnEventRate(ctx, key(3), "sweep") // 3000/s: at capacity, no warning
	r.warnEventRate(ctx, key(4), "sweep") // 4000/s: above
	r.warnEventRate(ctx, key(8), "capacity")
	if asked != 1 {
		t.Errorf("capacity asked %d times, want once", asked)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "about 4000 stream events/s (4 streams × 1000/s") ||
		!strings.Contains(notes[0], "reads about 3000/s") || !strings.Contains(notes[1], "--concurrency 8 --events-per-second 8000") {
		t.Errorf("notes %q", notes)
	}
}
