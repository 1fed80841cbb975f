package runner_test

import (
	"errors"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
)

// fullRecorder fails every append from the n-th on, like a disk that filled up.
type fullRecorder struct {
	memRecorder
	n, tried int
}

func (f *fullRecorder) Append(r servebench.Record) error {
	f.mu.Lock()
	f.tried++
	full := f.tried >= f.n
	f.mu.Unlock()
	if full {
		return syscall.ENOSPC
	}
	return f.memRecorder.Append(r)
}

// A failed write stops the run at once: the cell stops sending, no later cell starts, and Run
// returns ErrWrite (the command turns it into an interrupted, resumable run).
func TestFailedWriteStopsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		tg := startSim(t, prof, sim.Options{Seed: 1})
		p := smallPlan(t, "1k", "2,4", 16)
		p.Sweep.MinRequests = 40
		r, _ := newRunner(t, tg, p, nil)
		rec := &fullRecorder{n: 5}
		r.Recorder = rec
		err = r.Run(t.Context())
		if !errors.Is(err, runner.ErrWrite) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("run error %v, want ErrWrite wrapping ENOSPC", err)
		}
		// 4 saved, the failing one, and at most the other request in flight of concurrency 2
		if rec.tried > 5+1 {
			t.Errorf("%d appends tried after the failure: the cell kept sending", rec.tried)
		}
		if n := len(r.Results().Cells); n != 0 {
			t.Errorf("%d cells kept from a run whose records could not be saved", n)
		}
	})
}
