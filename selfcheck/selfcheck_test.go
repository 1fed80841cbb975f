package selfcheck

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func TestRunMeasuresTheLoad(t *testing.T) {
	res, err := Run(context.Background(), Config{Concurrency: 2, EventsPerSecond: 400, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.StampError.Count != res.Requests || res.AchievedEventsPerSec <= 0 {
		t.Fatalf("requests %d, stamp errors %d, %.0f events/s", res.Requests, res.StampError.Count, res.AchievedEventsPerSec)
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
