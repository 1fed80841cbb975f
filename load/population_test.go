package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
)

// talker answers every request after a virtual time that grows with its prompt (1 s + 1 ms per
// message) and writes an answer naming the request, which the next turn must send back.
type talker struct {
	origin time.Time
	mu     sync.Mutex
	bad    []string
}

func (f *talker) Do(ctx context.Context, req *servebench.Request) servebench.Record {
	start := time.Since(f.origin)
	rec := servebench.Record{CellKey: req.Cell, Seq: req.Seq, Warmup: req.Warmup, StartOffsetSeconds: start.Seconds(), OutputTokens: 10}
	// A turn sends the whole history: two messages per earlier turn, then its own.
	if want := 2*(req.Cell.Turn-1) + 1; len(req.Messages) != want {
		f.note("seq %d, turn %d: %d messages, want %d", req.Seq, req.Cell.Turn, len(req.Messages), want)
	}
	if n := len(req.Messages); n >= 3 && !strings.HasPrefix(req.Messages[n-2].Content, "answer to") && !strings.HasPrefix(req.Messages[n-2].Content, "history") {
		f.note("seq %d: the previous answer %q was not sent back", req.Seq, req.Messages[n-2].Content)
	}
	select {
	case <-time.After(time.Second + time.Duration(len(req.Messages))*time.Millisecond):
		req.Answer.WriteString(fmt.Sprintf("answer to %d", req.Seq))
	case <-ctx.Done():
		rec.ErrorClass = servebench.ErrCanceled
	}
	end := time.Since(f.origin)
	rec.EndOffsetSeconds, rec.E2ELatencySeconds = end.Seconds(), (end - start).Seconds()
	return rec
}

func (f *talker) note(format string, a ...any) {
	f.mu.Lock()
	f.bad = append(f.bad, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

// conversations draws sessions of 3–12 turns with 0.5–3 s of think time, seeded per user.
func conversations(users int) func(u int, joining bool) ([]UserTurn, int) {
	var mu sync.Mutex
	rngs := make([]*rand.Rand, users)
	for u := range rngs {
		rngs[u] = rand.New(rand.NewPCG(uint64(u), 9))
	}
	return func(u int, joining bool) ([]UserTurn, int) {
		mu.Lock()
		defer mu.Unlock()
		r := rngs[u]
		turns := make([]UserTurn, 3+r.IntN(10))
		for i := range turns {
			turns[i] = UserTurn{NewTokens: 100, OutputTokens: 10, Think: time.Duration(500+r.IntN(2500)) * time.Millisecond}
		}
		return turns, r.IntN(len(turns))
	}
}

func text(ctx context.Context, seq int64, key, tokens int) (string, error) {
	if key > 0 {
		return fmt.Sprintf("history %d.%d", seq, key), nil
	}
	return fmt.Sprintf("turn %d", seq), nil
}

// populationSpec is the Spec of a cell of users users of pop, measuring at least measured
// requests, on a clock from origin.
func populationSpec(origin time.Time, users, measured int, pop *Population) Spec {
	return Spec{Key: servebench.CellKey{LoadMode: servebench.ModeUsers, Concurrency: users},
		Sizing:     Sizing{MinRequests: measured},
		Clock:      func() time.Duration { return time.Since(origin) },
		Population: pop}
}

// A population of users, on virtual time: every user's requests follow one another (never
// overlapping), each sends the whole history with the previous answer, conversations are
// replaced when they end, and in the measured window the requests in flight at every moment
// span at least three turn depths (the lowest and the highest turn in flight at least two
// apart).
func TestPopulationMixesDepths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const users = 32
		f := &talker{origin: time.Now()}
		var c collector
		out, err := Run(context.Background(), populationSpec(f.origin, users, 200, &Population{Session: conversations(users), Text: text, Stagger: 2 * time.Second}), f, nil, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.bad) > 0 {
			t.Fatalf("%d bad requests, first: %s", len(f.bad), f.bad[0])
		}
		if out.WindowEnd <= out.WindowStart || out.Sent != len(c.recs) {
			t.Fatalf("window [%.1f, %.1f], %d sent, %d records", out.WindowStart, out.WindowEnd, out.Sent, len(c.recs))
		}
		byUser := map[int][]servebench.Record{}
		measured := 0
		for _, r := range c.recs {
			byUser[r.User] = append(byUser[r.User], r)
			if !r.Warmup {
				measured++
			}
		}
		if len(byUser) != users || measured < 200 {
			t.Fatalf("%d users sent, %d measured requests", len(byUser), measured)
		}
		// The window opens once every user's joining turn is answered (not a round later).
		allJoined := 0.0
		for _, rs := range byUser {
			first := rs[0]
			for _, r := range rs {
				if r.StartOffsetSeconds < first.StartOffsetSeconds {
					first = r
				}
			}
			allJoined = max(allJoined, first.EndOffsetSeconds)
		}
		if out.WindowStart > allJoined+1e-6 {
			t.Errorf("window opened at %.2f s, after every user's joining turn was answered at %.2f s", out.WindowStart, allJoined)
		}
		for _, r := range c.recs {
			if r.Warmup && r.StartOffsetSeconds > allJoined+1e-6 {
				t.Fatalf("request %d sent at %.2f s, after every user had joined (%.2f s), is warm-up", r.Seq, r.StartOffsetSeconds, allJoined)
			}
		}
		restarts := 0
		for u, rs := range byUser {
			sort.Slice(rs, func(i, j int) bool { return rs[i].StartOffsetSeconds < rs[j].StartOffsetSeconds })
			for i := 1; i < len(rs); i++ {
				if rs[i].StartOffsetSeconds < rs[i-1].EndOffsetSeconds {
					t.Fatalf("user %d: request %d starts at %.2f before request %d ended at %.2f", u, rs[i].Seq, rs[i].StartOffsetSeconds, rs[i-1].Seq, rs[i-1].EndOffsetSeconds)
				}
				if rs[i].Turn == 1 {
					restarts++
				} else if rs[i].Turn != rs[i-1].Turn+1 {
					t.Fatalf("user %d: turn %d follows turn %d", u, rs[i].Turn, rs[i-1].Turn)
				}
			}
		}
		if restarts == 0 {
			t.Error("no conversation ended and was replaced")
		}
		// At every start and end inside the window, the depths in flight.
		narrow, moments := 0, 0
		for _, m := range c.recs {
			for _, at := range []float64{m.StartOffsetSeconds, m.EndOffsetSeconds - 1e-9} {
				if at < out.WindowStart || at > out.WindowEnd {
					continue
				}
				moments++
				lo, hi := 0, 0
				for _, r := range c.recs {
					if r.StartOffsetSeconds <= at && at < r.EndOffsetSeconds {
						if lo == 0 || r.Turn < lo {
							lo = r.Turn
						}
						hi = max(hi, r.Turn)
					}
				}
				if lo == 0 || hi-lo+1 < 3 {
					narrow++
					t.Logf("at %.2f: turns %d–%d in flight", at, lo, hi)
				}
			}
		}
		t.Logf("window %.1f–%.1f s, %d measured; %d of %d moments in the window spanned fewer than three turn depths", out.WindowStart, out.WindowEnd, measured, narrow, moments)
		if moments == 0 || narrow > 0 {
			t.Errorf("%d of %d moments in the window had requests of fewer than three turn depths in flight", narrow, moments)
		}
	})
}

// straggler answers like talker (1 s plus 1 ms per message), except the joining turn of the
// user whose first request is seq 0 (the first sent): its answer takes 1,000 s.
type straggler struct{ talker }

func (f *straggler) Do(ctx context.Context, req *servebench.Request) servebench.Record {
	start := time.Since(f.origin)
	rec := servebench.Record{CellKey: req.Cell, Seq: req.Seq, Warmup: req.Warmup, StartOffsetSeconds: start.Seconds(), OutputTokens: 10}
	answer := time.Second + time.Duration(len(req.Messages))*time.Millisecond
	if req.Seq == 0 {
		answer = 1000 * time.Second
	}
	select {
	case <-time.After(answer):
		req.Answer.WriteString(fmt.Sprintf("answer to %d", req.Seq))
	case <-ctx.Done():
		rec.ErrorClass = servebench.ErrCanceled
	}
	end := time.Since(f.origin)
	rec.EndOffsetSeconds, rec.E2ELatencySeconds = end.Seconds(), (end - start).Seconds()
	return rec
}

// A joining turn with a 1,000 s answer holds neither the window shut (it opens at the 2N-th
// completion) nor the cell open: once the window has ended and its measured requests with it,
// that warm-up straggler is canceled, and users thinking then return at once, so the cell ends
// with its last request.
func TestPopulationStragglersHoldNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const users = 8
		f := &straggler{talker{origin: time.Now()}}
		var c collector
		out, err := Run(context.Background(), populationSpec(f.origin, users, 40, &Population{Session: conversations(users), Text: text, Stagger: 2 * time.Second}), f, nil, c.sink)
		if err != nil {
			t.Fatal(err)
		}
		returned := time.Since(f.origin).Seconds()
		var ends []float64
		lastMeasured := 0.0
		var slow *servebench.Record
		for i, r := range c.recs {
			ends = append(ends, r.EndOffsetSeconds)
			if !r.Warmup {
				lastMeasured = max(lastMeasured, r.EndOffsetSeconds)
			}
			if r.Seq == 0 {
				slow = &c.recs[i]
			}
		}
		sort.Float64s(ends)
		t.Logf("window %.1f–%.1f s; 2N-th end %.1f s; last measured end %.1f s; returned at %.1f s", out.WindowStart, out.WindowEnd, ends[2*users-1], lastMeasured, returned)
		if out.WindowStart != ends[2*users-1] {
			t.Errorf("window opened at %.2f s, want the 2N-th completion's %.2f s", out.WindowStart, ends[2*users-1])
		}
		if slow == nil || !slow.Warmup || slow.ErrorClass != servebench.ErrCanceled || slow.EndOffsetSeconds < lastMeasured || slow.EndOffsetSeconds > lastMeasured+1e-6 {
			t.Errorf("the joining turn with a 1,000 s answer: %+v; want warm-up, canceled when the last measured request ended (%.2f s)", slow, lastMeasured)
		}
		// users thinking when the window ended (0.5–3 s) returned at once
		if last := ends[len(ends)-1]; returned > last+1e-6 {
			t.Errorf("the cell returned at %.2f s, after its last request ended at %.2f s: users still thinking held it", returned, last)
		}
	})
}
