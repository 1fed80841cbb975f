package page

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/frontier"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/store"
)

// frontierRow is what the calculator shows for one workload or run: each cell's raw value
// (data-value) and how the throughput was read.
type frontierRow struct {
	Key    string     `json:"key"`
	Values []*float64 `json:"values"`
	How    string     `json:"how"`
	Text   string     `json:"text"`
	// PerGPU is the text of the throughput-per-GPU cell: "~991.3 tok/s ±5%", "… (n<min)".
	PerGPU string `json:"per_gpu"`
}

// TestFrontierCalculatorInBrowser opens a static site of the report fixture's run from file://
// in headless Chromium, types a target speed per user into the run page's frontier calculator
// and checks that every workload's throughput per GPU, cost, tokens per dollar, GPUs and monthly
// cost are the report's own (package frontier, via report.Build), that an interpolated reading
// says so, and that the comparison page's calculator gives the same for the run.
// SERVEBENCH_SCREENSHOT_DIR=dir saves frontier-run.png and frontier-compare.png there.
func TestFrontierCalculatorInBrowser(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	man, res, err := store.ReadRun(filepath.Join("..", "report", "testdata", "run"))
	if err != nil {
		t.Fatal(err)
	}
	// Every cell gets a ±5% throughput interval; the 1K/128 cell at 8 requests, which the
	// 1K/128 reading at 60 tok/s rests on, has fewer successful requests than an interval needs,
	// so the page must write that reading's interval as n<min, as the report does, while the
	// 1K/1K reading (12 requests) keeps its ±.
	few := false
	for i := range res.Cells {
		c := &res.Cells[i]
		c.SystemOutputThroughputCI95 = &servebench.Interval{Low: 0.95 * c.SystemOutputThroughputTPS, High: 1.05 * c.SystemOutputThroughputTPS}
		if c.ContextTokens == 1024 && c.OutputTokens == 128 && c.Concurrency == 8 && c.RequestsSucceeded > 0 {
			c.RequestsSucceeded, few = stats.MinIntervalSamples-1, true
		}
	}
	if !few {
		t.Fatal("the fixture has no 1K/128 cell at 8 requests")
	}
	runDir := filepath.Join(t.TempDir(), man.ID)
	writeRunFolder(t, runDir, man, res)
	const speed, users = 60.0, 2000
	rep := report.Build(report.Input{Manifest: man, Results: res})
	if rep.Frontier == nil {
		t.Fatal("the fixture has no frontier")
	}
	want := rep.Frontier.Answers(speed, users)
	interpolated := 0
	for _, a := range want {
		if a.Reading.Kind == frontier.ReadInterpolated {
			interpolated++
		}
	}
	if interpolated == 0 {
		t.Fatalf("at %v tok/s per user no workload of the fixture is interpolated: pick another speed", speed)
	}

	site := t.TempDir()
	p := &Pages{Source: Source{Dirs: []string{runDir}}, Version: "test"}
	if _, err := p.WriteSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	runURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(site, "runs", man.ID, "index.html"))}).String()
	cmpURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(site, "compare.html")), Fragment: "runs=" + man.ID}).String()

	tctx := browser(t, 1280, 1000, 2*time.Minute)

	read := func(table, input, usersInput, keyAttr string) string {
		return `(function () {
			var s = document.getElementById("` + input + `"); s.value = "` + formatNum(speed) + `"; s.dispatchEvent(new Event("input"));
			var u = document.getElementById("` + usersInput + `"); u.value = "` + formatNum(users) + `"; u.dispatchEvent(new Event("input"));
			return JSON.stringify(Array.from(document.querySelectorAll("#` + table + ` tbody tr")).map(function (tr) {
				var tds = Array.from(tr.querySelectorAll("td")).slice(1);
				return { key: tr.getAttribute("` + keyAttr + `"), how: tr.querySelector("td.how") ? tr.querySelector("td.how").textContent : "",
					text: tr.textContent, per_gpu: tds.length ? tds[0].textContent : "",
					values: tds.map(function (td) { var v = td.getAttribute("data-value"); return v === null ? null : parseFloat(v); }) };
			}));
		})()`
	}
	var runJSON, cmpJSON string
	shots := map[string][]byte{}
	err = chromedp.Do(tctx,
		chromedp.EmulateViewport(1280, 1000),
		chromedp.Navigate(runURL),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true"`)(ctx, tg); err != nil {
				return err
			}
			var err error
			if runJSON, err = chromedp.Evaluate[string](read("fr-table", "fr-speed", "fr-users", "data-workload"))(ctx, tg); err != nil {
				return err
			}
			if _, err := chromedp.Evaluate[bool](`document.getElementById("frontier").scrollIntoView(); true`)(ctx, tg); err != nil {
				return err
			}
			shots["frontier-run.png"], err = chromedp.CaptureScreenshot()(ctx, tg)
			return err
		}),
		chromedp.Navigate(cmpURL),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true" && document.getElementById("cf-table") !== null`)(ctx, tg); err != nil {
				return err
			}
			var err error
			if cmpJSON, err = chromedp.Evaluate[string](read("cf-table", "cf-speed", "cf-users", "data-run"))(ctx, tg); err != nil {
				return err
			}
			if _, err := chromedp.Evaluate[bool](`document.getElementById("cmp-frontier").scrollIntoView(); true`)(ctx, tg); err != nil {
				return err
			}
			shots["frontier-compare.png"], err = chromedp.CaptureScreenshot()(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("SERVEBENCH_SCREENSHOT_DIR"); d != "" {
		for name, b := range shots {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var rows, cmpRows []frontierRow
	if err := json.Unmarshal([]byte(runJSON), &rows); err != nil {
		t.Fatalf("%v: %s", err, runJSON)
	}
	if err := json.Unmarshal([]byte(cmpJSON), &cmpRows); err != nil {
		t.Fatalf("%v: %s", err, cmpJSON)
	}
	if len(rows) != len(want) {
		t.Fatalf("the calculator shows %d workloads, the report has %d", len(rows), len(want))
	}
	withheld, shown := 0, 0
	for i, a := range want {
		r := rows[i]
		// the columns: tok/s per GPU, how, $/1M output, tokens per $, tok/s per MW, GPUs, $/month
		if len(a.Reading.Economics.Costs) == 0 && a.Reading.Kind != frontier.ReadOutOfRange {
			t.Fatalf("workload %d/%d has no cost: the fixture declares a price", a.ContextTokens, a.OutputTokens)
		}
		var cost frontier.Cost
		if len(a.Reading.Economics.Costs) > 0 {
			cost = a.Reading.Economics.Costs[0]
		}
		wantVals := []*float64{ptr(a.Reading.OutputTPSPerGPU), nil, ptr(cost.USDPerMillionOutputTokens), ptr(cost.OutputTokensPerUSD), ptr(a.Reading.Economics.OutputTPSPerMW)}
		if a.Fleet != nil {
			wantVals = append(wantVals, ptr(float64(a.Fleet.GPUs)), ptr(a.Fleet.MonthlyUSD))
		} else {
			wantVals = append(wantVals, nil, nil)
		}
		if a.Reading.Kind == frontier.ReadOutOfRange {
			wantVals = []*float64{nil, nil, nil, nil, nil, nil, nil}
		}
		if len(r.Values) != len(wantVals) {
			t.Fatalf("workload %s: %d values, want %d", r.Key, len(r.Values), len(wantVals))
		}
		for j, w := range wantVals {
			if j == 1 {
				continue
			}
			g := r.Values[j]
			if (g == nil) != (w == nil) || (g != nil && math.Abs(*g-*w) > 1e-9*math.Max(1, math.Abs(*w))) {
				t.Errorf("workload %s column %d: the page shows %v, the report %v", r.Key, j, val(g), val(w))
			}
		}
		// the interval beside the throughput per GPU, written as the report writes it
		if a.Reading.Kind != frontier.ReadOutOfRange {
			pm := report.PlusMinusOrWithheld(a.Reading.OutputTPSPerGPUCI95, a.Reading.OutputTPSPerGPU, a.Reading.OutputCI95Withheld)
			if !strings.HasSuffix(r.PerGPU, " tok/s"+pm) {
				t.Errorf("workload %s: the page writes %q, the report's interval is %q", r.Key, r.PerGPU, pm)
			}
			if pm == " (n<min)" {
				withheld++
			} else if pm != "" {
				shown++
			}
		}
		if kind := string(a.Reading.Kind); r.How == "" || (kind == "interpolated") != (len(r.How) >= 12 && r.How[:12] == "interpolated") {
			t.Errorf("workload %s: how %q, the report reads it %s", r.Key, r.How, kind)
		}
	}
	if withheld == 0 || shown == 0 {
		t.Errorf("%d readings with a withheld interval and %d with one shown: the test needs both", withheld, shown)
	}
	// the comparison page's row for the run is the run page's row for the workload it chose
	if len(cmpRows) != 1 || cmpRows[0].Key != man.ID {
		t.Fatalf("comparison rows = %+v", cmpRows)
	}
	found := false
	for _, r := range rows {
		same := len(r.Values) == len(cmpRows[0].Values) && r.How == cmpRows[0].How
		for j := range r.Values {
			same = same && fmt.Sprint(val(r.Values[j])) == fmt.Sprint(val(cmpRows[0].Values[j]))
		}
		found = found || same
	}
	if !found {
		t.Errorf("the comparison page's answer %+v is none of the run page's %+v", cmpRows[0], rows)
	}
	t.Logf("at %v tok/s per user: %s", speed, runJSON)
}

func ptr(v float64) *float64 { return &v }

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func formatNum(v float64) string { b, _ := json.Marshal(v); return string(b) }
