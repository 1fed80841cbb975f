package load

import (
	"context"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// fake is a client whose requests take a fixed virtual time; it tracks concurrency.
type fake struct {
	origin time.Time
	dur    time.Duration
	// slow, when set, gives the duration of the requests it names (by sequence number)
	slow     map[int64]time.Duration
	mu       sync.Mutex
	inFlight int
	maxSeen  int
	// events: +1 at each start, -1 at each end, with its offset
	events []event
}

type event struct {
	at    float64
	delta int
}

func (f *fake) clock() time.Duration { return time.Since(f.origin) }

func (f *fake) Do(ctx context.Context, req *servebench.Request) servebench.Record {
	f.mu.Lock()
	f.inFlight++
	f.maxSeen = max(f.maxSeen, f.inFlight)
	start := f.clock()
	f.events = append(f.events, event{start.Seconds(), +1})
	f.mu.Unlock()
	rec := servebench.Record{CellKey: req.Cell, Seq: req.Seq, Warmup: req.Warmup, StartOffsetSeconds: start.Seconds(),
		ScheduledOffsetSeconds: req.ScheduledAt.Seconds(), OutputTokens: 10}
	dur := f.dur
	if d, ok := f.slow[req.Seq]; ok {
		dur = d
	}
	select {
	case <-time.After(dur):
	case <-ctx.Done():
		rec.ErrorClass = servebench.ErrCanceled
	}
	f.mu.Lock()
	f.inFlight--
	end := f.clock()
	f.events = append(f.events, event{end.Seconds(), -1})
	f.mu.Unlock()
	rec.EndOffsetSeconds = end.Seconds()
	rec.E2ELatencySeconds = (end - start).Seconds()
	return rec
}

type collector struct {
	mu   sync.Mutex
	recs []servebench.Record
}

func (c *collector) sink(r servebench.Record) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

func source(ctx context.Context, seq int64, warmup bool) (*servebench.Request, error) {
	return &servebench.Request{Prompt: "x"}, nil
}

func spec(mode servebench.LoadMode, n int, f *fake) Spec {
	return Spec{Key: servebench.CellKey{LoadMode: mode, Concurrency: n}, Sizing: Sizing{MinRequests: 10, Rounds: 3}, Clock: f.clock}
}

// inFlightDuring returns the minimum and maximum number of requests in flight during [a, b].
func (f *fake) inFlightDuring(a, b float64) (lo, hi int) {
	// events at the same instant (a slot's end and its next start) are applied together
	sort.SliceStable(f.events, func(i, j int) bool { return f.events[i].at < f.events[j].at })
	lo, hi = 1<<30, 0
	n := 0
	for i, e := range f.events {
		n += e.delta
		if i+1 < len(f.events) && f.events[i+1].at == e.at {
			continue
		}
		if e.at >= a && e.at < b {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	return lo, hi
}

func TestSustainedKeepsExactlyNInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		var c collector
		out, err := Run(context.Background(), spec(servebench.ModeSustained, 4, f), f, source, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		// warm-up 4 + max(10, 3×4) = 12 measured
		if out.Sent != 16 || out.Warmup != 4 || len(c.recs) != 16 {
			t.Fatalf("sent %d warm-up %d records %d", out.Sent, out.Warmup, len(c.recs))
		}
		if f.maxSeen != 4 {
			t.Fatalf("max in flight %d, want 4", f.maxSeen)
		}
		if out.WindowStart != 1 || out.WindowEnd != 4 {
			t.Fatalf("window [%v, %v], want [1, 4]: warm-up ends at 1 s, the drain begins at 4 s", out.WindowStart, out.WindowEnd)
		}
		lo, hi := f.inFlightDuring(out.WindowStart, out.WindowEnd)
		if lo != 4 || hi != 4 {
			t.Fatalf("in flight during the window between %d and %d, want exactly 4", lo, hi)
		}
		warm := 0
		for _, r := range c.recs {
			if r.Warmup {
				warm++
				if r.StartOffsetSeconds != 0 {
					t.Errorf("warm-up request %d started at %v", r.Seq, r.StartOffsetSeconds)
				}
			}
		}
		if warm != 4 {
			t.Fatalf("%d warm-up records", warm)
		}
	})
}

// A warm-up request that straggles (10 s where the others take 1 s) does not hold the window
// shut: it opens at the 4th completion (2 s), the straggler stays warm-up and in flight, and the
// other slots do not run measured requests meanwhile without end (27 before the window when it
// waited for the straggler).
func TestSustainedWindowOpensAtNthCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second, slow: map[int64]time.Duration{0: 10 * time.Second}}
		var c collector
		sp := spec(servebench.ModeSustained, 4, f)
		var opened []float64
		sp.WindowOpened = func(at float64) { opened = append(opened, at) }
		out, err := Run(context.Background(), sp, f, source, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		if out.WindowStart != 2 {
			t.Errorf("window starts at %v s, want 2 (the 4th completion)", out.WindowStart)
		}
		if len(opened) != 1 || opened[0] != out.WindowStart {
			t.Errorf("WindowOpened called with %v, want once with the window's start %v", opened, out.WindowStart)
		}
		early := 0
		for _, r := range c.recs {
			if r.Seq == 0 && !r.Warmup {
				t.Error("the straggling warm-up request was recorded as measured")
			}
			if !r.Warmup && r.StartOffsetSeconds < out.WindowStart {
				early++
			}
		}
		// the floors: max(10, 3 × 4) = 12 measured; at most 3 of them before the window
		if measured := out.Sent - out.Warmup; measured != 12 || early > 3 {
			t.Errorf("%d measured requests, %d before the window: want 12, at most 3", measured, early)
		}
		if lo, hi := f.inFlightDuring(out.WindowStart, out.WindowEnd); lo != 4 || hi != 4 {
			t.Errorf("in flight during the window between %d and %d, want exactly 4", lo, hi)
		}
	})
}

func TestSustainedMinDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := spec(servebench.ModeSustained, 2, f)
		s.Sizing.MinDuration = 10 * time.Second
		out, err := Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		if got := out.WindowEnd - out.WindowStart; got < 10 {
			t.Fatalf("window %v s, want at least the 10 s minimum", got)
		}
	})
}

func TestDedicatedBurstsNeverOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := spec(servebench.ModeDedicated, 3, f)
		s.Bursts = 2
		var c collector
		out, err := Run(context.Background(), s, f, source, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		if out.Sent != 9 || out.Warmup != 3 {
			t.Fatalf("sent %d warm-up %d, want 3 bursts of 3 with the first a warm-up", out.Sent, out.Warmup)
		}
		starts := map[float64]int{}
		for _, r := range c.recs {
			starts[r.StartOffsetSeconds]++
		}
		if len(starts) != 3 || starts[0] != 3 || starts[1] != 3 || starts[2] != 3 {
			t.Fatalf("burst starts %v: each burst must start when the previous one fully ended", starts)
		}
		if out.WindowStart != 1 || out.WindowEnd != 3 {
			t.Fatalf("window [%v, %v], want [1, 3]", out.WindowStart, out.WindowEnd)
		}
	})
}

func TestFixedCountRespectsMaxConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := spec(servebench.ModeFixed, 3, f)
		s.Requests = 10
		out, err := Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		if out.Sent != 10 || f.maxSeen != 3 || out.WindowStart != 0 || out.WindowEnd != 4 {
			t.Fatalf("sent %d, max in flight %d, window [%v, %v]", out.Sent, f.maxSeen, out.WindowStart, out.WindowEnd)
		}
	})
}

func TestOpenLoopSendsOnScheduleAndCountsLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 10 req/s, each takes 1 s: without a cap every send is on time and ~10 are in flight
		f := &fake{origin: time.Now(), dur: time.Second}
		s := spec(servebench.ModeRate, 1, f)
		s.Requests, s.Rate = 20, 10
		var c collector
		out, err := Run(context.Background(), s, f, source, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		// (at the instant one ends and the next starts, 11 can be counted)
		if late(c.recs) != 0 || out.Sent != 20 || f.maxSeen < 10 || f.maxSeen > 11 {
			t.Fatalf("late %d sent %d max in flight %d", late(c.recs), out.Sent, f.maxSeen)
		}
		for _, r := range c.recs {
			if r.StartOffsetSeconds != r.ScheduledOffsetSeconds {
				t.Fatalf("seq %d sent at %v, scheduled %v", r.Seq, r.StartOffsetSeconds, r.ScheduledOffsetSeconds)
			}
		}
		// with at most 2 in flight the schedule cannot be kept: late sends are counted
		f2 := &fake{origin: time.Now(), dur: time.Second}
		s2 := spec(servebench.ModeRate, 1, f2)
		s2.Requests, s2.Rate, s2.MaxInFlight, s2.Clock = 20, 10, 2, f2.clock
		var c2 collector
		_, err = Run(context.Background(), s2, f2, source, c2.sink)
		if err != nil {
			t.Fatal(err)
		}
		if late(c2.recs) == 0 || f2.maxSeen != 2 {
			t.Fatalf("late %d, max in flight %d: a capped open loop must show late sends", late(c2.recs), f2.maxSeen)
		}
	})
}

func TestCancellationLeavesOneRecordPerRequest(t *testing.T) {
	for _, mode := range []servebench.LoadMode{servebench.ModeSustained, servebench.ModeDedicated, servebench.ModeFixed, servebench.ModeRate} {
		t.Run(string(mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{origin: time.Now(), dur: time.Second}
				s := spec(mode, 4, f)
				s.Requests, s.Rate = 50, 5
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(2500*time.Millisecond, cancel)
				var c collector
				out, _ := Run(ctx, s, f, source, c.sink)
				if len(c.recs) != out.Sent+out.Dropped {
					t.Fatalf("%d records for %d sent + %d dropped", len(c.recs), out.Sent, out.Dropped)
				}
				seen := map[int64]bool{}
				canceled := 0
				for _, r := range c.recs {
					if seen[r.Seq] {
						t.Fatalf("seq %d recorded twice", r.Seq)
					}
					seen[r.Seq] = true
					if r.ErrorClass == servebench.ErrCanceled {
						canceled++
					}
				}
				if canceled == 0 {
					t.Fatal("requests in flight at the cancel must end as canceled")
				}
				if mode == servebench.ModeRate && out.Dropped == 0 {
					t.Fatal("open-loop requests scheduled after the cancel must be counted as dropped")
				}
			})
		})
	}
}

func TestSchedule(t *testing.T) {
	got := Schedule(4, false, 1, 4)
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("constant schedule %v, want %v", got, want)
		}
	}
	a, b := Schedule(10, true, 7, 5000), Schedule(10, true, 7, 5000)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed must give the same Poisson schedule")
		}
		if i > 0 && a[i] < a[i-1] {
			t.Fatal("schedule must not go back in time")
		}
	}
	// mean gap of 5000 exponential gaps at 10/s is 0.1 s within a few percent
	if mean := a[len(a)-1].Seconds() / float64(len(a)-1); mean < 0.095 || mean > 0.105 {
		t.Fatalf("mean Poisson gap %.4f s, want about 0.1 s", mean)
	}
}

// The time bound (MaxDuration): sustained cells stop launching measured requests once it has
// passed, rate mode without a request count sends ⌈rate × duration⌉ on schedule, and fixed mode
// stops sending (without "dropped" records) when it passes.
func TestMaxDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := spec(servebench.ModeSustained, 2, f)
		s.Sizing.MinRequests, s.MaxDuration = 1000, 5*time.Second
		out, err := Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		// 2 slots × 1 s requests for 5 s: 10 launched, the warm-up included
		if out.Sent != 10 || out.Warmup != 2 {
			t.Errorf("sustained: sent %d (warm-up %d), want 10 (2) within 5 s", out.Sent, out.Warmup)
		}

		f2 := &fake{origin: time.Now(), dur: time.Second}
		s2 := spec(servebench.ModeRate, 0, f2)
		s2.Rate, s2.MaxDuration, s2.Clock = 4, 3*time.Second, f2.clock
		var c collector
		out2, err := Run(context.Background(), s2, f2, source, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		if out2.Sent != 12 || out2.Dropped != 0 || late(c.recs) != 0 || len(c.recs) != 12 {
			t.Errorf("rate 4/s for 3 s: sent %d, dropped %d, late %d, records %d; want 12, 0, 0, 12", out2.Sent, out2.Dropped, late(c.recs), len(c.recs))
		}

		f3 := &fake{origin: time.Now(), dur: time.Second}
		s3 := spec(servebench.ModeFixed, 2, f3)
		s3.Requests, s3.MaxDuration, s3.Clock = 100, 3*time.Second, f3.clock
		var c3 collector
		out3, err := Run(context.Background(), s3, f3, source, c3.sink)
		if err != nil {
			t.Fatal(err)
		}
		if out3.Sent != 6 || out3.Dropped != 0 || len(c3.recs) != 6 {
			t.Errorf("fixed, 2 in flight, 3 s: sent %d, dropped %d, records %d; want 6, 0, 6", out3.Sent, out3.Dropped, len(c3.recs))
		}
	})
}

// late counts the records stats judges late sends.
func late(recs []servebench.Record) int {
	n := 0
	for i := range recs {
		if stats.LateSend(&recs[i]) {
			n++
		}
	}
	return n
}
