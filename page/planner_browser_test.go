package page

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/store"
)

// When the reader's thresholds put a use case's limit between two measured levels (8 passes,
// 24 fails: "8–23"), the planner sizes it at the level that passes as a lower bound, in the
// report's words (8+ slots, 32+ users, "at most" replicas) and names the bracket, instead of
// "Not sized"; read in headless Chromium after typing the threshold into the what-if.
func TestPlannerSizesAWhatIfBracketAsALowerBound(t *testing.T) {
	needBrowser(t)
	tmp := t.TempDir()
	m := servebench.Manifest{ID: "20261126-141514-7e472a89", Status: "completed", Simulated: true, StartedAt: time.Date(2026, 11, 26, 14, 15, 14, 0, time.UTC)}
	m.Plan.Target.Model = "zai-org/GLM-4.7-Flash"
	m.Plan.Metadata.GPU = "1x NVIDIA H200 (simulated)"
	cell := func(c int, e2e, tps float64) servebench.CellResult {
		return servebench.CellResult{CellKey: servebench.CellKey{Scenario: "code_completion", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 128, Concurrency: c},
			RequestsTotal: 40, RequestsSucceeded: 40, SuccessRate: 1, SystemOutputThroughputTPS: tps,
			E2ELatencySeconds: servebench.Summary{Count: 40, Mean: e2e, CI95: &servebench.Interval{Low: 0.98 * e2e, High: 1.02 * e2e}}}
	}
	cells := []servebench.CellResult{cell(1, 0.74, 171), cell(8, 1.45, 705), cell(24, 1.90, 1575)}
	uc := servebench.UseCase{Name: "code_completion", Title: "Code Completion", ContextTokens: 1024, OutputTokens: 128,
		Thresholds: servebench.Thresholds{E2ELatencySecondsMax: servebench.Float(2)}}
	run := capacity.Reconsider(uc, 24, cells, 0)
	uc.Thresholds.E2ELatencySecondsMax = servebench.Float(1.7)
	if what := capacity.Reconsider(uc, 24, cells, 0); run.Label != "24+" || what.Decided || what.Lo != 8 || what.Hi != 24 {
		t.Fatalf("the fixture decides %q at 2 s and %q (lo %d, hi %d) at 1.7 s; the test expects 24+ and a bracket 8–23", run.Label, what.Label, what.Lo, what.Hi)
	}
	run.CapacityResult.Title = uc.Title
	res := servebench.Results{SchemaVersion: servebench.SchemaVersion, Cells: cells, Capacity: []servebench.CapacityResult{run.CapacityResult}}
	dir := filepath.Join(tmp, m.ID)
	writeRunFolder(t, dir, m, res)
	srv := httptest.NewServer((&Pages{Source: Source{Index: fakeIndex{store.Entry(dir, m, res)}}}).Handler())
	defer srv.Close()
	tctx := browser(t, 1280, 1000, 2*time.Minute)
	const row = `document.querySelector('#pl-table tr[data-usecase="code_completion"]')`
	var before, after string
	err := chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"/runs/"+m.ID+"/index.html"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Poll[bool](row+` !== null`)(ctx, tg); err != nil {
				return fmt.Errorf("waiting for the planner: %w", err)
			}
			var err error
			if before, err = chromedp.Evaluate[string](row+`.innerText`)(ctx, tg); err != nil {
				return err
			}
			if _, err = chromedp.Evaluate[bool](`(function () { var i = document.getElementById("t-code_completion-e2e_latency_seconds_max"); i.value = "1.7"; i.dispatchEvent(new Event("input")); return true; })()`)(ctx, tg); err != nil {
				return err
			}
			after, err = chromedp.Poll[string](`(function () { var t = `+row+`.innerText; return t.indexOf("between") >= 0 || t.indexOf("Not sized") >= 0 ? t : ""; })()`)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatalf("%v (the row read %q, then %q)", err, before, after)
	}
	t.Logf("at 2 s: %s\nat 1.7 s: %s", before, after)
	if !strings.Contains(before, "24+") {
		t.Errorf("at the run's threshold the planner row reads %q, want the lower bound 24+", before)
	}
	for _, want := range []string{"limit between 8 and 23: sized at 8", "8+", "32+", "at most "} {
		if !strings.Contains(after, want) {
			t.Errorf("with the limit between 8 and 23 the planner row lacks %q: %q", want, after)
		}
	}
	if strings.Contains(after, "Not sized") {
		t.Errorf("a limit between two measured levels reads Not sized: %q", after)
	}
}
