package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
)

// The sequential capacity search, driven through the real client and runner against the
// controlled server, finds limits from 5 to 60 within ±1 and spends at most 25% of the
// dense grid's requests in total and at most 50% for any one use case, where the dense grid is
// Σ over n = 1 … limit + 1 of n warm-up + max(10, 3n) measured requests (the default sweep
// sizing). Each use case has its own context length, so no search reuses another's cells.
func TestSequentialSearchSpend(t *testing.T) {
	const out = 16
	srv := &controlled{prefillPerUser: 20 * time.Millisecond, tokenPerUser: 5 * time.Millisecond}
	// From the controlled server's formulas (K = 16 output tokens):
	//   speed 200/n ≥ 16            ⇔ n ≤ 12.5  → 12
	//   TTFT 0.001 + 0.020n ≤ 0.15  ⇔ n ≤ 7.45  → 7
	//   E2E 0.001 + 0.095n ≤ 0.5    ⇔ n ≤ 5.25  → 5
	//   speed 200/n ≥ 3.3           ⇔ n ≤ 60.6  → 60
	cases := []struct {
		uc    servebench.UseCase
		limit int
	}{
		{servebench.UseCase{Name: "speed_bound", Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(16)}}, 12},
		{servebench.UseCase{Name: "ttft_bound", Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.15)}}, 7},
		{servebench.UseCase{Name: "e2e_bound", Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(0.5)}}, 5},
		{servebench.UseCase{Name: "wide_speed_bound", Thresholds: servebench.Thresholds{GenerationSpeedTPSMin: servebench.Float(3.3)}}, 60},
	}
	url := "http://127.0.0.1:8000/v1"
	p, err := plan.Resolve(nil, plan.Overrides{"url": url, "contexts": "64", "concurrency": "1", "output-tokens": fmt.Sprint(out), "use-cases": "none"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sweep.MinRequests != 10 || p.Sweep.Rounds != 3 {
		t.Fatalf("default sizing %d/%d, want 10/3 (the dense grid's)", p.Sweep.MinRequests, p.Sweep.Rounds)
	}
	p.Capacity.MaxConcurrency = 64
	p.Scenarios = nil
	for i, c := range cases {
		uc := c.uc
		uc.Title, uc.ContextTokens, uc.OutputTokens, uc.Statistic = uc.Name, servebench.Tokens(100+i), out, servebench.StatMean
		p.UseCases = append(p.UseCases, uc)
	}

	synctest.Test(t, func(t *testing.T) {
		rec := runControlled(t, srv, p, url, 64, "search")
		res := rec.res
		if len(res.Capacity) != len(cases) {
			t.Fatalf("%d capacity results, want %d", len(res.Capacity), len(cases))
		}
		var table strings.Builder
		fmt.Fprintf(&table, "%-17s %5s %5s %6s %6s %6s  %s\n", "use case", "limit", "found", "spent", "dense", "share", "levels")
		spent, denseAll := 0, 0
		for i, c := range cases {
			got := res.Capacity[i]
			dense := 0
			for n := 1; n <= c.limit+1; n++ {
				dense += n + max(10, 3*n)
			}
			if got.DenseGridRequests != dense {
				t.Errorf("%s: dense grid %d in the result, want %d", got.UseCase, got.DenseGridRequests, dense)
			}
			share := float64(got.RequestsSpent) / float64(dense)
			fmt.Fprintf(&table, "%-17s %5d %5v %6d %6d %5.1f%%  %v\n", got.UseCase, c.limit, deref(got.Limit), got.RequestsSpent, dense, 100*share, levels(got.Points))
			spent += got.RequestsSpent
			denseAll += dense
			if got.Limit == nil || *got.Limit < c.limit-1 || *got.Limit > c.limit+1 {
				t.Errorf("%s: limit %v, want %d ± 1", got.UseCase, deref(got.Limit), c.limit)
			}
			if share > 0.5 {
				t.Errorf("%s: spent %d of the dense grid's %d requests (%.0f%%), want at most 50%%", got.UseCase, got.RequestsSpent, dense, 100*share)
			}
			if got.LimitRange == nil || got.LimitRange[0] != *got.Limit || got.LimitRange[1] != *got.Limit {
				t.Errorf("%s: limit range %v, want [%v, %v] (both sides settled on a noiseless server)", got.UseCase, got.LimitRange, deref(got.Limit), deref(got.Limit))
			}
			for _, pt := range got.Points {
				if !pt.Settled {
					t.Errorf("%s: level %d not settled", got.UseCase, pt.Concurrency)
				}
			}
		}
		fmt.Fprintf(&table, "%-17s %5s %5s %6d %6d %5.1f%%\n", "total", "", "", spent, denseAll, 100*float64(spent)/float64(denseAll))
		t.Logf("\n%s", table.String())
		if float64(spent) > 0.25*float64(denseAll) {
			t.Errorf("spent %d of the dense grids' %d requests in total, want at most 25%%", spent, denseAll)
		}
		// Every sustained cell of the run satisfies the window rule and is assessed.
		for _, c := range res.Cells {
			if c.Validity.Verdict == "" {
				t.Errorf("%s: no validity", c.ID())
			}
			if c.Validity.Has(servebench.ReasonWindowTooShort) {
				t.Errorf("%s: window too short: %s", c.ID(), c.Validity.Notes[servebench.ReasonWindowTooShort])
			}
		}
	})
}
