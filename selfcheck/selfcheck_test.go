package selfcheck

import (
	"context"
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
