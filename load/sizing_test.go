package load

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
)

func TestSizingEnough(t *testing.T) {
	inf := math.Inf(1)
	capped := Sizing{MinRequests: 10, Rounds: 3, RelHalfWidth: 0.05, MaxRequests: 200, MaxDuration: time.Minute}
	tests := []struct {
		name string
		s    Sizing
		n    int
		p    Progress
		want bool
	}{
		// n = 4: floor max(10, 12) = 12 completions, window ≥ 2 × 1 s.
		{"below the count floor", capped, 4, Progress{Measured: 11, WindowSeconds: 10, MeanE2ESeconds: 1, ThroughputRelHalfWidth: 0, TTFTRelHalfWidth: 0}, false},
		{"window shorter than 2 × mean e2e", capped, 4, Progress{Measured: 40, WindowSeconds: 1.9, MeanE2ESeconds: 1}, false},
		{"floors met, intervals tight", capped, 4, Progress{Measured: 12, WindowSeconds: 2, MeanE2ESeconds: 1, ThroughputRelHalfWidth: 0.05, TTFTRelHalfWidth: 0.01}, true},
		{"floors met, throughput wide", capped, 4, Progress{Measured: 12, WindowSeconds: 2, MeanE2ESeconds: 1, ThroughputRelHalfWidth: 0.2, TTFTRelHalfWidth: 0.01}, false},
		{"floors met, wide but settled", capped, 4, Progress{Measured: 12, WindowSeconds: 2, MeanE2ESeconds: 1, ThroughputRelHalfWidth: inf, TTFTRelHalfWidth: inf, Settled: true}, true},
		{"settled never cuts the window rule", capped, 4, Progress{Measured: 12, WindowSeconds: 1, MeanE2ESeconds: 1, Settled: true}, false},
		{"request cap", capped, 4, Progress{Measured: 200, WindowSeconds: 30, MeanE2ESeconds: 1, ThroughputRelHalfWidth: inf, TTFTRelHalfWidth: inf}, true},
		{"time cap", capped, 4, Progress{Measured: 100, WindowSeconds: 60, MeanE2ESeconds: 1, ThroughputRelHalfWidth: inf, TTFTRelHalfWidth: inf}, true},
		{"no cap: floors are enough", Sizing{MinRequests: 10, Rounds: 3}, 4, Progress{Measured: 12, WindowSeconds: 2, MeanE2ESeconds: 1, ThroughputRelHalfWidth: inf, TTFTRelHalfWidth: inf}, true},
		{"2 × n completions even with no count floor", Sizing{}, 8, Progress{Measured: 15, WindowSeconds: 9, MeanE2ESeconds: 1}, false},
		{"nothing succeeded: 2 × n failures end it", capped, 4, Progress{Measured: 12, WindowSeconds: 0.1}, true},
		{"zero target means ±5%", Sizing{MaxRequests: 100}, 1, Progress{Measured: 2, WindowSeconds: 2, MeanE2ESeconds: 1, ThroughputRelHalfWidth: 0.049, TTFTRelHalfWidth: 0.049}, true},
	}
	for _, tt := range tests {
		if got := tt.s.Enough(tt.n, tt.p); got != tt.want {
			t.Errorf("%s: Enough = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := capped.Minimum(4); got != 4+12 {
		t.Errorf("Minimum(4) = %d, want 16", got)
	}
	if got := (Sizing{}).Minimum(5); got != 5+10 {
		t.Errorf("Minimum(5) with no floors = %d, want 15 (the window rule's 2 × n)", got)
	}
}

// The window rule keeps a sustained cell measuring past its count floor: with 1 s requests at
// N = 3 and a floor of 1, it runs until the window holds 2 × 3 completions and lasts 2 s.
func TestSustainedWindowRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := Spec{Key: servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 3}, Sizing: Sizing{MinRequests: 1}, Clock: f.clock}
		out, err := Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		if w := out.WindowEnd - out.WindowStart; w < 2 || out.Sent-out.Warmup < 6 {
			t.Fatalf("window %v s with %d measured, want ≥ 2 s and ≥ 6", w, out.Sent-out.Warmup)
		}
		if out.Sent-out.Warmup != 6 {
			t.Errorf("%d measured requests, want exactly 6 (the rule holds at the 2 s mark)", out.Sent-out.Warmup)
		}
	})
}

// A judge that reports tight intervals only after 5 s of window keeps the cell going until
// then, and a request cap ends a judge that never gets tight.
func TestSustainedMeasuresUntilSure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{origin: time.Now(), dur: time.Second}
		s := Spec{Key: servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: 2},
			Sizing: Sizing{MaxRequests: 1000}, Clock: f.clock,
			Judge: func(ws, now float64) Progress {
				w := 1.0
				if now-ws >= 5 {
					w = 0.01
				}
				return Progress{ThroughputRelHalfWidth: w, TTFTRelHalfWidth: w}
			}}
		out, err := Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		if w := out.WindowEnd - out.WindowStart; w != 5 {
			t.Errorf("window %v s, want 5 (the judge became sure at 5 s)", w)
		}
		s.Sizing = Sizing{MaxRequests: 8}
		s.Judge = func(ws, now float64) Progress { return Progress{ThroughputRelHalfWidth: 1, TTFTRelHalfWidth: 1} }
		out, err = Run(context.Background(), s, f, source, (&collector{}).sink)
		if err != nil {
			t.Fatal(err)
		}
		if m := out.Sent - out.Warmup; m != 8 {
			t.Errorf("%d measured requests, want the cap of 8", m)
		}
	})
}

// EnoughBursts ends a dedicated cell by the precision its validity is judged by (the mean-TTFT
// interval) once it rests on stats.MinIntervalSamples requests, never before the plan's bursts,
// and at a cap.
func TestSizingEnoughBursts(t *testing.T) {
	inf := math.Inf(1)
	capped := Sizing{RelHalfWidth: 0.15, MaxRequests: 40, MaxDuration: time.Minute}
	tests := []struct {
		name               string
		s                  Sizing
		n, measured, floor int
		p                  Progress
		want               bool
	}{
		{"below the plan's bursts, even when tight", capped, 4, 1, 2, Progress{TTFTRelHalfWidth: 0.01}, false},
		{"bursts done, TTFT tight", capped, 4, 3, 2, Progress{TTFTRelHalfWidth: 0.15}, true},
		{"tight on 8 requests: fewer than an interval is shown from", capped, 4, 2, 2, Progress{TTFTRelHalfWidth: 0.01, WindowSeconds: 3}, false},
		{"tight on 10 bursts of 1", capped, 1, 10, 3, Progress{TTFTRelHalfWidth: 0.01}, true},
		{"tight on 9 bursts of 1", capped, 1, 9, 3, Progress{TTFTRelHalfWidth: 0.01}, false},
		{"bursts done, TTFT wide: another burst", capped, 4, 2, 2, Progress{TTFTRelHalfWidth: 0.3, WindowSeconds: 3}, false},
		{"throughput is not judged", capped, 4, 3, 2, Progress{TTFTRelHalfWidth: 0.1, ThroughputRelHalfWidth: inf}, true},
		{"wide but settled", capped, 4, 2, 2, Progress{TTFTRelHalfWidth: inf, Settled: true}, true},
		{"request cap (10 bursts of 4)", capped, 4, 10, 2, Progress{TTFTRelHalfWidth: inf}, true},
		{"time cap", capped, 4, 3, 2, Progress{TTFTRelHalfWidth: inf, WindowSeconds: 60}, true},
		{"no cap: the bursts are enough", Sizing{RelHalfWidth: 0.15}, 4, 2, 2, Progress{TTFTRelHalfWidth: inf}, true},
		{"zero target means ±5%", Sizing{MaxRequests: 100}, 1, 3, 3, Progress{TTFTRelHalfWidth: 0.06}, false},
	}
	for _, tt := range tests {
		if got := tt.s.EnoughBursts(tt.n, tt.measured, tt.floor, tt.p); got != tt.want {
			t.Errorf("%s: EnoughBursts = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A dedicated cell whose Judge reports a wide TTFT interval releases more bursts than the plan's
// floor until the interval is within the target and rests on stats.MinIntervalSamples requests;
// without a Judge it stops at the floor.
func TestDedicatedAimsForTTFTPrecision(t *testing.T) {
	for _, tt := range []struct {
		name      string
		wideCalls int // the Judge reports a wide interval this many times, then a tight one
		judge     bool
		want      int // measured bursts
	}{
		{"no judge: the plan's bursts", 0, false, 2},
		{"tight at once: bursts until the interval rests on 10 requests (4 of 3)", 0, true, 4},
		{"wide four times: two more bursts", 4, true, 6},
	} {
		synctest.Test(t, func(t *testing.T) {
			f := &fake{origin: time.Now(), dur: time.Second}
			s := spec(servebench.ModeDedicated, 3, f)
			s.Bursts = 2
			s.Sizing = Sizing{RelHalfWidth: 0.15, MaxRequests: 100}
			calls := 0
			if tt.judge {
				s.Judge = func(ws, now float64) Progress {
					calls++
					if calls <= tt.wideCalls {
						return Progress{TTFTRelHalfWidth: 0.4}
					}
					return Progress{TTFTRelHalfWidth: 0.1}
				}
			}
			var c collector
			out, err := Run(context.Background(), s, f, source, c.sink)
			if err != nil {
				t.Fatal(err)
			}
			if got := (out.Sent - out.Warmup) / 3; got != tt.want {
				t.Errorf("%s: %d measured bursts, want %d", tt.name, got, tt.want)
			}
			if out.WindowEnd-out.WindowStart != float64(tt.want) {
				t.Errorf("%s: window [%v, %v], want %d s (one per burst)", tt.name, out.WindowStart, out.WindowEnd, tt.want)
			}
		})
	}
}
