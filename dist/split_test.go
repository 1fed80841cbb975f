package dist

import (
	"slices"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/load"
)

// A cell is dealt over the workers: concurrency as evenly as possible; an open-loop schedule
// exactly the local one, request i to worker i mod n (so sequence numbers match a local run's);
// a fixed cell never has more senders than its concurrency.
func TestSplit(t *testing.T) {
	var c Coordinator
	for _, tc := range []struct {
		name   string
		spec   load.Spec
		n      int
		shares []int
		reqs   []int
	}{
		{"sustained 10 on 3", load.Spec{Key: servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 10}}, 3, []int{4, 3, 3}, []int{0, 0, 0}},
		{"sustained 2 on 3", load.Spec{Key: servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 2}}, 3, []int{1, 1, 0}, []int{0, 0, 0}},
		{"dedicated 4 on 2", load.Spec{Key: servebench.CellKey{LoadMode: servebench.ModeDedicated, Concurrency: 4}}, 2, []int{2, 2}, []int{0, 0}},
		{"fixed 7 prompts, 2 in flight, on 3", load.Spec{Key: servebench.CellKey{LoadMode: servebench.ModeFixed, Concurrency: 2}, Requests: 7}, 3, []int{1, 1, 0}, []int{4, 3, 0}},
		{"rate 10 requests on 3", load.Spec{Key: servebench.CellKey{LoadMode: servebench.ModeRate}, Requests: 10, Rate: 5, Poisson: true, Seed: 7}, 3, []int{0, 0, 0}, []int{4, 3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := c.split(tc.spec, tc.n)
			var shares, reqs []int
			for _, o := range out {
				shares, reqs = append(shares, o.Share), append(reqs, o.Requests)
			}
			if !slices.Equal(shares, tc.shares) || !slices.Equal(reqs, tc.reqs) {
				t.Fatalf("shares %v requests %v, want %v and %v", shares, reqs, tc.shares, tc.reqs)
			}
			if tc.spec.Rate == 0 {
				return
			}
			want := load.Schedule(tc.spec.Rate, tc.spec.Poisson, tc.spec.Seed, tc.spec.Requests)
			got := make([]time.Duration, len(want))
			for k, o := range out {
				if len(o.Offsets) != o.Requests {
					t.Fatalf("worker %d: %d offsets for %d requests", k, len(o.Offsets), o.Requests)
				}
				for j, at := range o.Offsets {
					got[o.Slot+o.Stride*j] = at // its j-th request has index slot + stride × j
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("merged schedule %v, want the local one %v", got, want)
			}
		})
	}
}
