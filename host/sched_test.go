package host

import (
	"runtime"
	"sync"
	"testing"
)

func TestSchedLatencyCounts(t *testing.T) {
	before := SchedLatency()
	if len(before.Counts) == 0 || len(before.Buckets) != len(before.Counts)+1 {
		t.Fatalf("no histogram: %d counts, %d buckets", len(before.Counts), len(before.Buckets))
	}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(runtime.Gosched)
	}
	wg.Wait()
	after := SchedLatency()
	var n0, n1 uint64
	for i := range before.Counts {
		n0 += before.Counts[i]
		n1 += after.Counts[i]
	}
	// the runtime samples a fraction of the transitions
	if n1 <= n0 {
		t.Errorf("%d scheduling events after starting 100 goroutines, %d before", n1, n0)
	}
}
