package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// eventRateFloor is the planned event rate (events/s) below which no machine is asked whether
// it can carry a cell: any machine servebench runs on reads a few thousand events per second.
const eventRateFloor = 2000

// eventRates remembers the fastest stream seen so far and this machine's capacity.
type eventRates struct {
	mu       sync.Mutex
	stream   float64 // the largest stats.StreamEventRate of the cells measured so far (events/s)
	capacity float64 // Runner.EventCapacity's answer (events/s); 0 before it was asked
	asked    bool
}

func (e *eventRates) observe(c servebench.CellResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stream = max(e.stream, stats.StreamEventRate(c))
}

// warnEventRate emits a note before a closed-loop cell whose planned event rate — its
// concurrency × the fastest stream measured so far — is more than this machine can read
// with its timing intact. Nothing is known before the first cell has been measured.
func (r *Runner) warnEventRate(ctx context.Context, key servebench.CellKey, phase string) {
	if r.EventCapacity == nil || key.Concurrency < 1 {
		return
	}
	e := &r.rates
	e.mu.Lock()
	planned := float64(key.Concurrency) * e.stream
	if planned < eventRateFloor {
		e.mu.Unlock()
		return
	}
	if !e.asked {
		e.asked = true
		e.mu.Unlock()
		c, err := r.EventCapacity(ctx)
		e.mu.Lock()
		if err == nil {
			e.capacity = c
		}
	}
	capacity, stream := e.capacity, e.stream
	e.mu.Unlock()
	if capacity <= 0 || planned <= capacity {
		return
	}
	r.emit(Event{Kind: EventNote, Phase: phase, Cell: key, Message: fmt.Sprintf(
		"%s plans about %.0f stream events/s (%d streams × %.0f/s, the fastest stream so far); this machine reads about %.0f/s with its timing intact, so the cell may be client-bound: check with `servebench selfcheck --concurrency %d --events-per-second %.0f`, or measure from more client machines",
		key.ID(), planned, key.Concurrency, stream, capacity, key.Concurrency, planned)})
}
