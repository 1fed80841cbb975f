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
	"github.com/servebench/servebench/store"
)

// The what-if card's chart names a point as the report does: its context ("8K", not 8192),
// its value with its 95% interval, its verdict, and its cell's validity with the reasons, read
// in headless Chromium from the tooltip ECharts draws; it read "8 concurrent: 1.265 s" alone.
func TestWhatIfChartTooltipNamesContextIntervalAndValidity(t *testing.T) {
	needBrowser(t)
	tmp := t.TempDir()
	m := servebench.Manifest{ID: "20261126-141514-7e472a89", Status: "completed", Simulated: true, StartedAt: time.Date(2026, 11, 26, 14, 15, 14, 0, time.UTC)}
	m.Plan.Target.Model = "zai-org/GLM-4.7-Flash"
	key := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 8192, OutputTokens: 1024, Concurrency: 8}
	cell := servebench.CellResult{CellKey: key, RequestsTotal: 23, RequestsSucceeded: 23, SuccessRate: 1, SystemOutputThroughputTPS: 641.3,
		Validity: servebench.Validity{Verdict: servebench.VerdictLowConfidence, Reasons: []servebench.Reason{servebench.ReasonTooFewSamples}}}
	limit, ttftMax := 8, 10.0
	res := servebench.Results{SchemaVersion: servebench.SchemaVersion, Cells: []servebench.CellResult{cell},
		Capacity: []servebench.CapacityResult{{UseCase: "short_form_chatbot", Title: "Short-form Chatbot", ContextTokens: 8192, OutputTokens: 1024,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: &ttftMax}, Ceiling: 128, Limit: &limit, LimitKind: servebench.LimitLowerBound,
			Points: []servebench.CapacityPoint{{Concurrency: 8, Pass: true, Settled: true, CellID: key.ID(), Reused: true,
				Values: map[string]float64{"ttft_seconds": 1.265}, CI95: map[string]servebench.Interval{"ttft_seconds": {Low: 1.05, High: 1.48}}}}}}}
	dir := filepath.Join(tmp, m.ID)
	writeRunFolder(t, dir, m, res)
	srv := httptest.NewServer((&Pages{Source: Source{Index: fakeIndex{store.Entry(dir, m, res)}}}).Handler())
	defer srv.Close()
	tctx := browser(t, 1280, 900, 90*time.Second)
	var tip string
	err := chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"/runs/"+m.ID+"/index.html"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			chart := `document.querySelector('.card[data-usecase="short_form_chatbot"] .small-chart')`
			if _, err := chromedp.Poll[bool](chart+` !== null && echarts.getInstanceByDom(`+chart+`) !== undefined`)(ctx, tg); err != nil {
				return fmt.Errorf("waiting for the what-if chart: %w", err)
			}
			var err error
			tip, err = chromedp.Evaluate[string](`(function () {
				var div = `+chart+`, inst = echarts.getInstanceByDom(div);
				inst.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 0 });
				var box = Array.prototype.filter.call(div.querySelectorAll("div"), function (d) { return d.style.position === "absolute" && d.textContent; }).pop();
				return box ? box.innerText : "";
			})()`)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tooltip: %s", tip)
	for _, want := range []string{"8K context, 8 concurrent: 1.265 s", "95% interval 1.050–1.480", "passes, settled at 95%", "cell low-confidence: too-few-samples"} {
		if !strings.Contains(tip, want) {
			t.Errorf("the what-if chart's tooltip lacks %q:\n%s", want, tip)
		}
	}
}
