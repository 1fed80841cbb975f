package dist

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A worker's join is said before WaitFor sees it: the run, which starts when WaitFor returns,
// never prints its header or its first cell before the line that says its last worker is
// ready (a distributed run printed "worker w1 joined: 3 worker(s) ready" after its first
// cell's title). The coordinator's log takes a second of virtual time over each join's line,
// so a join said after the pool grew is seen by WaitFor first; and each line counts the workers
// before it, once.
func TestJoinSaidBeforeTheRunStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		var (
			waited atomic.Bool
			mu     sync.Mutex
			lines  []string
			early  []string // joins said after WaitFor returned
		)
		r.c.Close() // the rig's own coordinator is not used: this one's log is slow
		ln := newPipeListener()
		r.ln = ln
		r.c = &Coordinator{Token: testToken, Marker: "m", Origin: r.origin, MinWorkers: 1, Rejoin: time.Second,
			Logf: func(format string, args ...any) {
				line := fmt.Sprintf(format, args...)
				if !strings.Contains(line, " joined: ") {
					return
				}
				time.Sleep(time.Second)
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, line)
				if waited.Load() {
					early = append(early, line)
				}
			}}
		r.c.Serve(t.Context(), ln)
		t.Cleanup(func() { r.c.Close(); ln.Close() })
		for i := 1; i <= 3; i++ {
			r.honest(fmt.Sprintf("w%d", i))
		}
		if err := r.c.WaitFor(t.Context(), 3, time.Minute); err != nil {
			t.Fatal(err)
		}
		waited.Store(true)
		time.Sleep(5 * time.Second) // any join line still to come
		mu.Lock()
		defer mu.Unlock()
		if len(early) > 0 {
			t.Errorf("said after WaitFor returned (the run had started): %q", early)
		}
		if len(lines) != 3 {
			t.Fatalf("join lines %q, want 3", lines)
		}
		for i, l := range lines {
			if want := fmt.Sprintf(": %d worker(s) ready", i+1); !strings.Contains(l, want) {
				t.Errorf("join %d said %q, want %q", i+1, l, want)
			}
		}
	})
}
