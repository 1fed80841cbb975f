package report

import (
	"bytes"
	"context"
	pdfprint "github.com/servebench/servebench/report/pdf"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// requireChromium skips when no headless Chromium is installed (CI installs it).
func requireChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	exe, err := pdfprint.FindBrowser()
	if err != nil {
		t.Skipf("skipping browser test: %v", err)
	}
	return exe
}

// openInBrowser writes page as report.html in a temporary folder and starts headless Chromium
// (listen, when not nil, sees its events). It returns a context for the browser, limited to
// 90 s, and the page's file:// URL; the browser stops when the test ends.
func openInBrowser(t *testing.T, page string, listen func(ev any)) (context.Context, string) {
	t.Helper()
	exe := requireChromium(t)
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := pdfprint.FileURL(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := pdfprint.BrowserContext(context.Background(), exe, filepath.Join(dir, "profile"), listen)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	return tctx, u
}

// TestHTMLInBrowser opens the fixture's report.html from a file:// URL in headless Chromium and
// checks that every chart rendered with data, that threshold lines are dashed, and that the
// page requested nothing but the file itself. SERVEBENCH_SCREENSHOT=path saves the first screen.
func TestHTMLInBrowser(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	tctx, u := openInBrowser(t, renderHTML(t, nil), func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	})
	type chartState struct {
		ID       string `json:"id"`
		Series   int    `json:"series"`
		Points   int    `json:"points"`
		Dashed   int    `json:"dashed"`
		Rendered bool   `json:"rendered"`
	}
	var states []chartState
	var shot, capShot []byte
	var containers int
	err := chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
			return err
		}),
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(u),
		pdfprint.WaitCharts(),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			containers, err = chromedp.Evaluate[int](`document.querySelectorAll("div.chart").length`)(ctx, tg)
			if err != nil {
				return err
			}
			states, err = chromedp.Evaluate[[]chartState](`Array.from(document.querySelectorAll("div.chart")).map(function (el) {
				var inst = echarts.getInstanceByDom(el);
				if (!inst) return {id: el.id, series: 0, points: 0, dashed: 0, rendered: false};
				var o = inst.getOption(), pts = 0, dashed = 0;
				o.series.forEach(function (s) {
					pts += s.data.filter(function (v) { return v !== null && v !== undefined && !(Array.isArray(v) && v[1] === null); }).length;
					(s.markLine ? s.markLine.data : []).forEach(function (m) { if (m.yAxis !== undefined && m.lineStyle && m.lineStyle.type !== "solid") dashed++; });
				});
				return {id: el.id, series: o.series.length, points: pts, dashed: dashed, rendered: el.querySelector("svg path") !== null};
			})`)(ctx, tg)
			if err != nil {
				return err
			}
			if shot, err = chromedp.CaptureScreenshot()(ctx, tg); err != nil {
				return err
			}
			if _, err = chromedp.Evaluate[bool](`document.getElementById("capacity-general-chatbot").scrollIntoView(); true`)(ctx, tg); err != nil {
				return err
			}
			capShot, err = chromedp.CaptureScreenshot()(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if containers < 10 || len(states) != containers {
		t.Fatalf("want every chart container inspected, got %d of %d", len(states), containers)
	}
	dashed := 0
	for _, s := range states {
		if s.Series == 0 || s.Points == 0 || !s.Rendered {
			t.Errorf("chart %s did not render with data: %+v", s.ID, s)
		}
		dashed += s.Dashed
	}
	if dashed == 0 {
		t.Error("no dashed threshold line in any rendered chart")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 {
		t.Fatal("network events were not observed (the file itself should be one request)")
	}
	for _, r := range requests {
		if r != u && !strings.HasPrefix(r, "data:") && !strings.HasPrefix(r, "blob:") {
			t.Errorf("the report made a network request beyond its own file: %s", r)
		}
	}
	if !bytes.HasPrefix(shot, []byte("\x89PNG")) {
		t.Fatal("screenshot is not a PNG")
	}
	if p := os.Getenv("SERVEBENCH_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(p, ".png")+"-capacity.png", capShot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPDF prints the fixture's report with headless Chromium.
func TestPDF(t *testing.T) {
	requireChromium(t)
	dir := t.TempDir()
	htmlPath, pdfPath := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(htmlPath, []byte(renderHTML(t, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pdfprint.Print(context.Background(), htmlPath, pdfPath); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pdfPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) || bytes.Count(b, []byte("/Type /Page")) < 3 {
		t.Fatalf("not a multi-page PDF (%d bytes)", len(b))
	}
	if p := os.Getenv("SERVEBENCH_PDF"); p != "" {
		_ = os.WriteFile(p, b, 0o644)
	}
}

// TestPDFWithoutBrowser names the package to install when no browser is on PATH.
func TestPDFWithoutBrowser(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := pdfprint.Print(context.Background(), htmlPath, filepath.Join(dir, "report.pdf"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install chromium") {
		t.Fatalf("want an error naming apt-get install chromium, got %v", err)
	}
}

// In the browser, the points of cells that are not valid are drawn hollow (low-confidence) or
// as crosses (invalid) on the capacity charts as on the sweep's, the caption says what the
// marks mean, and every point of every chart lies inside its plot (a marked point is an object,
// and the axis range must still see its value).
func TestChartMarksInBrowser(t *testing.T) {
	tctx, u := openInBrowser(t, renderHTML(t, func(in *Input) { markCapacityCells(t, in) }), nil)
	type chartState struct {
		ID      string `json:"id"`
		Points  int    `json:"points"`
		Hollow  int    `json:"hollow"`
		Cross   int    `json:"cross"`
		Outside int    `json:"outside"`
		Caption string `json:"caption"`
	}
	var states []chartState
	err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u), pdfprint.WaitCharts(),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			states, err = chromedp.Evaluate[[]chartState](`Array.from(document.querySelectorAll("div.chart")).map(function (el) {
				var inst = echarts.getInstanceByDom(el), st = {id: el.id, points: 0, hollow: 0, cross: 0, outside: 0,
					caption: el.parentNode.querySelector("figcaption").textContent};
				inst.getOption().series.forEach(function (s, si) {
					s.data.forEach(function (v, i) {
						if (v !== null && typeof v === "object" && !Array.isArray(v)) {
							if (v.symbol === "emptyCircle") st.hollow++;
							else if (String(v.symbol).indexOf("path://") === 0) st.cross++;
							v = v.value;
						}
						if (v === null || v === undefined || (Array.isArray(v) && v[1] === null)) return;
						st.points++;
						var px = inst.convertToPixel({seriesIndex: si}, Array.isArray(v) ? v : [i, v]);
						var inside = px && [0, 1, -1].some(function (d) { return inst.containPixel("grid", [px[0], px[1] + d]); });
						if (!inside) st.outside++;
					});
				});
				return st;
			})`)(ctx, tg)
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
	capacity := 0
	for _, s := range states {
		if s.Points == 0 {
			t.Errorf("%s drew no point", s.ID)
		}
		if s.Outside > 0 {
			t.Errorf("%s: %d of %d points lie outside the plot", s.ID, s.Outside, s.Points)
		}
		if !strings.HasPrefix(s.ID, "chart-capacity-general-chatbot") {
			continue
		}
		capacity++
		if s.Hollow == 0 || s.Cross == 0 {
			t.Errorf("%s: %d hollow and %d crossed points, want both marks", s.ID, s.Hollow, s.Cross)
		}
		if !strings.Contains(s.Caption, "Hollow points come from low-confidence cells, crosses from invalid cells") {
			t.Errorf("%s: the caption does not explain the marks: %q", s.ID, s.Caption)
		}
	}
	if capacity == 0 {
		t.Fatal("no general chatbot capacity chart in the page")
	}
}

// A chart's tooltip names the point as its axis does (the context "8K", not 8,192.00) and gives
// each value with its 95% interval and its cell's validity, read in headless Chromium from the
// tooltip ECharts draws on hover.
func TestChartTooltipNamesContextIntervalAndValidity(t *testing.T) {
	page := renderHTML(t, func(in *Input) {
		for i := range in.Results.Cells {
			c := &in.Results.Cells[i]
			c.TTFTSeconds.Count = 40
			c.TTFTSeconds.CI95 = &servebench.Interval{Low: c.TTFTSeconds.Mean * 0.9, High: c.TTFTSeconds.Mean * 1.1}
			c.Validity = servebench.Valid()
			c.Validity.Add(servebench.ReasonTooFewSamples, servebench.VerdictLowConfidence, "")
		}
	})
	tctx, u := openInBrowser(t, page, nil)
	var tip string
	err := chromedp.Do(tctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(u),
		pdfprint.WaitCharts(),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			tip, err = chromedp.Evaluate[string](`(function () {
				var inst = echarts.getInstanceByDom(document.getElementById("chart-ttft"));
				inst.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 1 });
				var box = Array.prototype.filter.call(document.querySelectorAll("#chart-ttft div"), function (d) { return d.style.position === "absolute" && d.textContent; }).pop();
				return box ? box.textContent : "";
			})()`)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(loadFixture(t))
	var ctx string
	for _, c := range charts(rep.Sections) {
		if c.ID == "chart-ttft" {
			ctx = c.X[1]
		}
	}
	for _, want := range []string{"context (tokens): " + ctx, "±10%", "low-confidence: too-few-samples"} {
		if !strings.Contains(tip, want) {
			t.Errorf("the TTFT chart's tooltip lacks %q:\n%s", want, tip)
		}
	}
	t.Logf("tooltip: %s", tip)
	if strings.Contains(tip, ",") && strings.Contains(tip, ".00") {
		t.Errorf("the tooltip writes the context as a number: %s", tip)
	}
}
