package page

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/store"
)

// The pages fit a 1,280-px window: on the list of runs, a run's page (its planner's table) and a
// comparison of three runs, no table box and no page is wider than its box, so nothing is cut
// off behind a scroll bar ("Code Complet"), with labelled runs, long targets and the five
// default use cases' titles (the list's capacity column now puts one use case a line), the
// simulator's long engine name, and an unlabelled simulated run, named by its id with the
// SIMULATED badge (on one line beside the id, it pushed the list 100 px past its box), and a
// run page's cells table with its validity column and the longest cell id.
func TestPagesFit1280(t *testing.T) {
	needBrowser(t)
	tmp := t.TempDir()
	var ix fakeIndex
	titles := []string{"Code Completion", "Short-form Chatbot", "General Chatbot", "Long Document Processing", "Automated Coding Assistant"}
	for i := range 3 {
		m := servebench.Manifest{ID: fmt.Sprintf("20261126-08564%d-4b11a5dc", i), Status: "completed", Simulated: true,
			StartedAt: time.Date(2026, 11, 26, 8, 56, 40+i, 0, time.UTC)}
		m.Plan.Target.Model = "zai-org/GLM-4.7-Flash"
		m.Plan.Target.URL = "http://gpu-box.example.internal:8000/v1"
		if i > 0 {
			m.Plan.Metadata.Label = fmt.Sprintf("H200 tp1 run %d", i)
		}
		m.Plan.Metadata.GPU = "1x NVIDIA H200 (simulated)"
		m.Plan.Metadata.Engine = "vLLM-like simulator: servebench-sim 1.0 (profile h200-glm47-flash)"
		res := servebench.Results{SchemaVersion: servebench.SchemaVersion}
		// the run page's cells: the longest id a default use case makes, low-confidence, and a
		// cell the time budget left unmeasured
		why := "skipped: the run's time budget (--max-time) had no time left for this cell"
		res.Cells = []servebench.CellResult{
			{CellKey: servebench.CellKey{Scenario: "automated_coding_assistant", LoadMode: servebench.ModeSustained, ContextTokens: 98304, OutputTokens: 1024, Concurrency: 1},
				RequestsTotal: 2, RequestsSucceeded: 2, SuccessRate: 1, SystemOutputThroughputTPS: 61.5,
				Validity: servebench.Validity{Verdict: servebench.VerdictLowConfidence, Reasons: []servebench.Reason{servebench.ReasonTooFewSamples, servebench.ReasonClientBound}}},
			{CellKey: servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 32768, OutputTokens: 1024, Concurrency: 8},
				Skipped: true, Note: why, Validity: servebench.NotMeasured(why)},
		}
		for j, title := range titles {
			l := 100 + j
			res.Capacity = append(res.Capacity, servebench.CapacityResult{UseCase: fmt.Sprintf("uc%d", j), Title: title, Limit: &l, LimitKind: servebench.LimitLowerBound, Ceiling: l})
		}
		dir := filepath.Join(tmp, m.ID)
		writeRunFolder(t, dir, m, res)
		ix = append(ix, store.Entry(dir, m, res))
	}
	srv := httptest.NewServer((&Pages{Source: Source{Index: ix}}).Handler())
	defer srv.Close()
	tctx := browser(t, 1280, 900, 90*time.Second)
	type box struct {
		ID            string `json:"id"`
		Scroll, Width int
		Text          string `json:"text"`
	}
	measure := func(path, ready string) []box {
		var boxes []box
		err := chromedp.Do(tctx,
			chromedp.EmulateViewport(1280, 900),
			chromedp.Navigate(srv.URL+path),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				if _, err := chromedp.Poll[bool](`document.querySelector(`+"`"+ready+"`"+`) !== null`)(ctx, tg); err != nil {
					return fmt.Errorf("waiting for %s: %w", ready, err)
				}
				var err error
				boxes, err = chromedp.Evaluate[[]box](`Array.prototype.map.call(document.querySelectorAll(".wide, main"), function (w) {
					var t = w.querySelector("table"), r = t && t.querySelector("tbody tr");
					return { id: (t && t.id) || w.tagName, Scroll: w.scrollWidth, Width: w.clientWidth, text: r ? r.innerText.slice(0, 200) : "" };
				})`)(ctx, tg)
				return err
			}),
		)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return boxes
	}
	for _, pg := range []struct{ path, ready string }{
		{"/", "#runs tbody tr"},
		{"/runs/" + ix[0].ID + "/index.html", "#pl-table"},
		{"/compare.html#runs=" + ix[0].ID + "," + ix[1].ID + "," + ix[2].ID, "#cmp-table"},
	} {
		boxes := measure(pg.path, pg.ready)
		if len(boxes) < 2 {
			t.Fatalf("%s: no table", pg.path)
		}
		for _, b := range boxes {
			if b.Scroll > b.Width+1 {
				t.Errorf("%s: %q is %d px wide in a %d-px box at 1,280 px: it scrolls and clips (%q)", pg.path, b.ID, b.Scroll, b.Width, b.Text)
			}
		}
	}
}
