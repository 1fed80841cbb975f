package capacity_test

import (
	"math"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// sustained builds a measured sustained cell at 1024/128 tokens with a mean (= p99) TTFT.
func sustained(n int, ttft float64) servebench.CellResult {
	return servebench.CellResult{
		CellKey:       servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 128, Concurrency: n},
		RequestsTotal: 10, RequestsSucceeded: 10, SuccessRate: 1,
		TTFTSeconds: servebench.Summary{Count: 10, Mean: ttft, P99: servebench.Float(2 * ttft)},
	}
}

func TestKnownCells(t *testing.T) {
	uc := servebench.UseCase{ContextTokens: 1024, OutputTokens: 128}
	small, big := sustained(2, 0.1), sustained(2, 0.2)
	big.RequestsTotal = 20
	other := sustained(4, 0.1)
	other.ContextTokens = 2048
	dedicated := sustained(8, 0.1)
	dedicated.LoadMode = servebench.ModeDedicated
	skipped := sustained(16, 0.1)
	skipped.Skipped = true
	got := capacity.KnownCells([]servebench.CellResult{sustained(1, 0.1), small, big, other, dedicated, skipped}, uc)
	if len(got) != 2 || got[1].Concurrency != 1 || got[2].RequestsTotal != 20 {
		t.Fatalf("known cells %v, want levels 1 and 2 (the one with 20 requests)", got)
	}
}

func TestReconsider(t *testing.T) {
	grid := []servebench.CellResult{sustained(1, 0.1), sustained(2, 0.2), sustained(4, 0.4), sustained(8, 0.8)}
	dense := []servebench.CellResult{}
	for n := 1; n <= 8; n++ {
		dense = append(dense, sustained(n, 0.1*float64(n)))
	}
	ttft := func(v float64, st servebench.Statistic) servebench.UseCase {
		return servebench.UseCase{Name: "x", ContextTokens: 1024, OutputTokens: 128, Statistic: st, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(v)}}
	}
	tests := []struct {
		name    string
		uc      servebench.UseCase
		ceiling int
		cells   []servebench.CellResult
		decided bool
		label   string
		kind    servebench.LimitKind
		lo, hi  int
		next    int
		verdict string
	}{
		{"everything passes: a lower bound at the highest measured level", ttft(1, ""), 128, grid, true, "8+", servebench.LimitLowerBound, 0, 0, 0,
			"Capacity limit: 8+ concurrent requests. At 8 concurrent requests, TTFT is 800ms, within the 1,000ms threshold. Capacity likely extends higher than the tested ceiling of 8."},
		{"the ceiling caps the measured levels", ttft(1, ""), 4, grid, true, "4+", servebench.LimitLowerBound, 0, 0, 0, ""},
		{"1 passes, 2 fails: measured", ttft(0.15, ""), 128, grid, true, "1", servebench.LimitMeasured, 0, 0, 0, ""},
		{"1 fails: not viable", ttft(0.05, ""), 128, grid, true, "not viable", servebench.LimitNotViable, 0, 0, 0, ""},
		{"4 passes, 8 fails, 5–7 unmeasured: not decided", ttft(0.5, ""), 128, grid, false, "4–7", "", 4, 8, 5,
			"Between 4 and 7 concurrent requests: 4 passes, and at 8 concurrent requests, TTFT reaches 800ms, above the 500ms threshold. The levels in between were not measured; the search would measure 5 next."},
		{"a dense grid decides", ttft(0.55, ""), 128, dense, true, "5", servebench.LimitMeasured, 0, 0, 0, ""},
		{"the statistic matters: p99 is twice the mean", ttft(0.55, servebench.StatP99), 128, dense, true, "2", servebench.LimitMeasured, 0, 0, 0, ""},
		{"no cell of the use case's shape", servebench.UseCase{Name: "x", ContextTokens: 4096, OutputTokens: 128, Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(1)}},
			128, grid, false, "not measured", "", 0, 0, 0, "Not measured: the run has no sustained cell at 4096 context and 128 output tokens."},
		{"no threshold", servebench.UseCase{Name: "x", ContextTokens: 1024, OutputTokens: 128}, 128, grid, false, "not measured", "", 0, 0, 0, ""},
	}
	for _, tt := range tests {
		r := capacity.Reconsider(tt.uc, tt.ceiling, tt.cells, 0)
		if r.Decided != tt.decided || r.Label != tt.label || r.LimitKind != tt.kind || r.Lo != tt.lo || r.Hi != tt.hi || r.Next != tt.next {
			t.Errorf("%s: decided %v label %q kind %q lo %d hi %d next %d", tt.name, r.Decided, r.Label, r.LimitKind, r.Lo, r.Hi, r.Next)
		}
		if tt.verdict != "" && r.Verdict != tt.verdict {
			t.Errorf("%s: verdict\n got %q\nwant %q", tt.name, r.Verdict, tt.verdict)
		}
		if r.Verdict == "" || !strings.HasSuffix(r.Verdict, ".") {
			t.Errorf("%s: verdict %q is not a sentence", tt.name, r.Verdict)
		}
		if r.Decided && r.Verdict != capacity.Verdict(r.CapacityResult) {
			t.Errorf("%s: a decided outcome must carry capacity.Verdict", tt.name)
		}
		if want := capacity.KindWords(r.LimitKind); !r.Decided {
			if r.KindWords != capacity.KindUndecidedByLevels {
				t.Errorf("%s: an undecided outcome's kind reads %q, want %q", tt.name, r.KindWords, capacity.KindUndecidedByLevels)
			}
		} else if r.KindWords != want {
			t.Errorf("%s: kind words %q, want capacity.KindWords %q", tt.name, r.KindWords, want)
		}
	}
}

// A run whose capacity search had a resolution (capacity.resolution) and ended at a crossing of
// its highest level (8 → 28.3 tok/s settled, 15 → 15.1 ± 5%: passing within its noise; the model
// crosses 15 tok/s at 15.1, before 16): the what-if at the run's thresholds decides it as the run
// did, "~15" with no failing level; the exact rule (resolution 0) sees only a lower bound, 15+.
func TestReconsiderAtACrossing(t *testing.T) {
	uc := servebench.UseCase{Name: "chat", ContextTokens: 1024, OutputTokens: 128, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}
	cell := func(n int, speed float64) servebench.CellResult {
		c := sustained(n, 1)
		c.GenerationSpeedTPS = servebench.Summary{Count: 40, Mean: speed, CI95: &servebench.Interval{Low: 0.95 * speed, High: 1.05 * speed}}
		return c
	}
	cells := []servebench.CellResult{cell(1, 174), cell(2, 118), cell(8, 28.3), cell(15, 15.1)}
	r := capacity.Reconsider(uc, 128, cells, capacity.UsersResolution)
	if !r.Decided || r.Label != "~15" || r.Crossing == nil || r.FirstFailing != nil || r.Resolution != capacity.UsersResolution ||
		!strings.Contains(r.Verdict, "no failing level measured") {
		t.Errorf("with the run's resolution: decided %v, %q, crossing %v, first failing %v: %s", r.Decided, r.Label, r.Crossing, r.FirstFailing, r.Verdict)
	}
	if r := capacity.Reconsider(uc, 128, cells, 0); r.Label != "15+" || r.Crossing != nil {
		t.Errorf("exact: %q (%s)", r.Label, r.Verdict)
	}
}

// A resolution read from a run folder out of range (NaN, negative, above MaxResolution: a
// hand-edited results.json) is taken as the exact rule, not as a step of any size.
func TestReconsiderRefusesABadResolution(t *testing.T) {
	uc := servebench.UseCase{Name: "chat", ContextTokens: 1024, OutputTokens: 128, Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(15)}}
	cell := func(n int, speed float64) servebench.CellResult {
		c := sustained(n, 1)
		c.GenerationSpeedTPS = servebench.Summary{Count: 40, Mean: speed, CI95: &servebench.Interval{Low: 0.95 * speed, High: 1.05 * speed}}
		return c
	}
	cells := []servebench.CellResult{cell(1, 174), cell(2, 118), cell(8, 28.3), cell(15, 15.1)}
	for _, r := range []float64{math.NaN(), -0.1, 0.9, 1e300} {
		if got := capacity.Reconsider(uc, 128, cells, r); got.Label != "15+" || got.Crossing != nil || got.Resolution != 0 {
			t.Errorf("resolution %g: %q (resolution %g), want the exact rule's 15+", r, got.Label, got.Resolution)
		}
	}
}
