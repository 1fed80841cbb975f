package selfcheck

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func TestRunMeasuresTheLoad(t *testing.T) {
	res, err := Run(context.Background(), Config{Concurrency: 2, EventsPerSecond: 400, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.StampError.Count != res.Requests || res.AchievedEventsPerSec <= 0 {
		t.Fatalf("requests %d, stamp errors %d, %.0f events/s", res.Requests, res.StampError.Count, res.AchievedEventsPerSec)
	}
	// Each stream's first request is the warm-up, reported apart and not judged.
	if res.WarmupStampError.Count != 2 || res.WarmupSeconds <= 0 {
		t.Errorf("warm-up: %d stamp errors over %.3f s, want 2 (one per stream)", res.WarmupStampError.Count, res.WarmupSeconds)
	}
	if res.ClockSource == servebench.ClockKernel && res.Lag.Count != res.Requests || res.Coalesced > res.Requests {
		t.Errorf("lag over %d reads, %d coalesced, of %d requests", res.Lag.Count, res.Coalesced, res.Requests)
	}
	if res.OK != (len(res.Problems) == 0) {
		t.Errorf("OK %v with problems %q", res.OK, res.Problems)
	}
}

func TestRunRefusesBadLoad(t *testing.T) {
	_, err := Run(context.Background(), Config{Concurrency: 0, EventsPerSecond: 10})
	if err == nil || !strings.Contains(err.Error(), "--concurrency") {
		t.Fatalf("%v", err)
	}
}

// TestCarry: the estimate is a positive, finite rate; any machine this runs on reads more than
// a thousand events per second of loopback SSE (not a speed goal: a sanity bound on the unit).
func TestCarry(t *testing.T) {
	got, err := Carry(context.Background(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !(got > 1000) || math.IsInf(got, 0) {
		t.Fatalf("Carry = %g events/s", got)
	}
	t.Logf("this machine reads about %.0f events/s", got)
}

// Search doubles the streams from From, each stream at PerStream events/s, and stops at the
// first load that breaks a limit or at UpTo: whatever this machine manages, the steps must say
// so consistently.
func TestSearchDoublesUntilALimitBreaks(t *testing.T) {
	var seen []int
	out, err := Search(context.Background(), SearchConfig{From: 1, UpTo: 4, PerStream: 50, Step: 200 * time.Millisecond,
		Progress: func(r Result) { seen = append(seen, r.Concurrency) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) == 0 || len(seen) != len(out.Steps) {
		t.Fatalf("%d steps, %d reported", len(out.Steps), len(seen))
	}
	for i, s := range out.Steps {
		if want := 1 << i; s.Concurrency != want || s.EventsPerSecond != float64(want)*50 {
			t.Errorf("step %d: %d streams at %.0f events/s, want %d at %d", i, s.Concurrency, s.EventsPerSecond, want, want*50)
		}
		if last := i == len(out.Steps)-1; !s.OK && !last {
			t.Errorf("step %d failed (%q) but the search went on", i, s.Problems)
		}
	}
	last := &out.Steps[len(out.Steps)-1]
	switch {
	case out.Failed != nil && (out.Failed != last || last.OK):
		t.Errorf("failed step %+v is not the last, failing one", out.Failed.Config)
	case out.Failed == nil && last.Concurrency != 4:
		t.Errorf("no failure, but the search stopped at %d streams", last.Concurrency)
	case out.Held != nil && !out.Held.OK:
		t.Errorf("held step %+v did not hold", out.Held.Config)
	}
}

func TestSearchRefusesAnEmptyRange(t *testing.T) {
	if _, err := Search(context.Background(), SearchConfig{From: 64, UpTo: 8}); err == nil || !strings.Contains(err.Error(), "--up-to") {
		t.Fatalf("%v", err)
	}
}
