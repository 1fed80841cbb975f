package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/page"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/store"
)

// pageRuns records two runs against the simulator over HTTP into a fresh index: a dense one
// (concurrency 1–8 at the code-completion shape, with its capacity search) and a small sweep.
func pageRuns(t *testing.T) (index string, dirs [2]string) {
	t.Helper()
	tmp := t.TempDir()
	index = filepath.Join(tmp, "runs.db")
	args := [2][]string{
		{"--contexts", "1k", "--concurrency", "1-8", "--output-tokens", "128", "--use-cases", "code_completion", "--capacity-max", "8"},
		{"--contexts", "1k,2k", "--concurrency", "1,2,4", "--output-tokens", "64", "--use-cases", "none"},
	}
	synctest.Test(t, func(t *testing.T) { // on virtual time
		base := startSimWith(t, sim.Options{})
		for i, a := range args {
			dirs[i] = filepath.Join(tmp, []string{"dense", "small"}[i])
			full := append([]string{"run", "--url", base + "/v1", "--min-requests", "4", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--quiet", "--format", "md",
				"--index", index, "--out", dirs[i], "--gpu", "none"}, a...)
			if code, _, stderr := runCLI(t, full...); code != 0 {
				t.Fatalf("run %d: exit %d\n%s", i, code, stderr)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return index, dirs
}

func runID(t *testing.T, dir string) string {
	t.Helper()
	m, _, err := store.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func get(t *testing.T, u string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// externalRef finds a src or href attribute pointing at another host.
var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestPages(t *testing.T) {
	index, dirs := pageRuns(t)
	ids := [2]string{runID(t, dirs[0]), runID(t, dirs[1])}
	ix, err := store.OpenIndex(index)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	pages := &page.Pages{Source: page.Source{Index: ix}, Version: "test"}
	srv := httptest.NewServer(pages.Handler())
	defer srv.Close()

	t.Run("handlers", func(t *testing.T) {
		code, ct, body := get(t, srv.URL+"/")
		if code != 200 || !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("index: %d %s", code, ct)
		}
		for _, id := range ids {
			if !strings.Contains(body, `href="runs/`+id+`/index.html"`) {
				t.Errorf("the index does not link run %s", id)
			}
		}
		if strings.Count(body, `class="pick"`) != 2 || !strings.Contains(body, "Code Completion: <b>8&#43;</b>") && !strings.Contains(body, "Code Completion: <b>") {
			t.Errorf("the index should list 2 selectable runs with the dense run's capacity limit:\n%s", body)
		}
		for _, id := range ids {
			code, _, body := get(t, srv.URL+"/runs/"+id+"/index.html")
			if code != 200 || !strings.Contains(body, "Run <code>"+id+"</code>") || !strings.Contains(body, `src="../../data/runs/`+id+`.js"`) {
				t.Errorf("run page %s: %d\n%s", id, code, body)
			}
			if externalRef.MatchString(body) {
				t.Errorf("run page %s refers to another host: %s", id, externalRef.FindString(body))
			}
			if code, ct, body := get(t, srv.URL+"/runs/"+id+"/report.html"); code != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, id) {
				t.Errorf("report of %s: %d %s", id, code, ct)
			}
			if code, ct, body := get(t, srv.URL+"/data/runs/"+id+".js"); code != 200 || !strings.HasPrefix(ct, "text/javascript") || !strings.Contains(body, `"api":"`+page.APIVersion+`"`) {
				t.Errorf("data of %s: %d %s %.200s", id, code, ct, body)
			}
		}
		dense := pageDoc(t, srv.URL+"/api/v1/runs/"+ids[0])
		if len(dense.Results.Cells) < 8 || len(dense.Results.Capacity) != 1 || dense.Run.Capacity[0].Label != capacity.LimitLabel(dense.Results.Capacity[0]) {
			t.Errorf("dense run document: %d cells, capacity %+v", len(dense.Results.Cells), dense.Run.Capacity)
		}
		if doc := pageDoc(t, srv.URL+"/api/v1/runs/"+ids[1]+".json"); doc.Run.ID != ids[1] || doc.Run.Cells != 6 {
			t.Errorf("small run document via .json: id %s, %d cells", doc.Run.ID, doc.Run.Cells)
		}
		code, ct, body = get(t, srv.URL+"/api/v1/runs")
		var list page.RunList
		if err := json.Unmarshal([]byte(body), &list); err != nil || code != 200 || ct != "application/json; charset=utf-8" {
			t.Fatalf("runs list: %d %s %v", code, ct, err)
		}
		got := []string{}
		for _, r := range list.Runs {
			got = append(got, r.ID)
		}
		want := []string{ids[0], ids[1]}
		sort.Strings(got)
		sort.Strings(want)
		if list.API != page.APIVersion || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("runs list: api %q ids %v, want %v", list.API, got, want)
		}
		for _, p := range []string{"/runs/nope/index.html", "/api/v1/runs/nope", "/data/runs/nope.js", "/assets/nope.js", "/runs/nope/report.html"} {
			if code, _, _ := get(t, srv.URL+p); code != 404 {
				t.Errorf("%s: status %d, want 404", p, code)
			}
		}
		if code, _, body := get(t, srv.URL+"/compare.html"); code != 200 || !strings.Contains(body, `id="cmp"`) {
			t.Errorf("compare page: %d", code)
		}
		for _, name := range page.AssetNames() {
			if code, _, body := get(t, srv.URL+"/assets/"+name); code != 200 || len(body) == 0 {
				t.Errorf("asset %s: %d", name, code)
			}
		}
	})

	t.Run("run in progress", func(t *testing.T) {
		testLiveRun(t, dirs[1])
	})

	siteDir := filepath.Join(t.TempDir(), "site")
	t.Run("site", func(t *testing.T) {
		out := siteDir
		code, stdout, stderr := runCLI(t, "site", out, "--index", index)
		if code != 0 || !strings.Contains(stdout, "wrote 2 run pages") {
			t.Fatalf("site: exit %d\n%s%s", code, stdout, stderr)
		}
		for _, id := range ids {
			for _, f := range []string{"runs/" + id + "/index.html", "runs/" + id + "/report.html", "data/runs/" + id + ".js", "api/v1/runs/" + id + ".json"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("site lacks %s", f)
				}
			}
		}
		// The same bytes as the server's pages, and nothing that points at another host.
		_, _, served := get(t, srv.URL+"/runs/"+ids[0]+"/index.html")
		written, _ := os.ReadFile(filepath.Join(out, "runs", ids[0], "index.html"))
		if strings.ReplaceAll(served, "servebench test", "servebench "+version) != string(written) {
			t.Error("the site's run page differs from the served one")
		}
		err := filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			b, err := os.ReadFile(p)
			if m := externalRef.Find(b); m != nil {
				t.Errorf("%s refers to another host: %s", p, m)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "site", out, "--index", index, filepath.Join(t.TempDir(), "not-a-run")); code != exitUsage || !strings.Contains(stderr, "not a readable run folder") {
			t.Errorf("a wrong run folder: exit %d, %s", code, stderr)
		}
	})

	t.Run("browser", func(t *testing.T) {
		testWhatIfInBrowser(t, srv.URL, ids[0], dirs[0], siteDir, dirs[1])
	})
}

// liveRun serves a copy of a finished run folder, named directly (not in the index), as a run
// still in progress ("live-run"); setCells(n) rewrites its results.json with the first n of
// its cells, as the runner does when a cell ends.
func liveRun(t *testing.T, finished string) (base string, setCells func(n int), total int) {
	t.Helper()
	m, res, err := store.ReadRun(finished)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m.ID, m.Status, m.FinishedAt = "live-run", "running", time.Time{}
	all := res.Cells
	write := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(store.ManifestFile, m)
	p := &page.Pages{Source: page.Source{Dirs: []string{dir}}, Version: "test"}
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	return srv.URL, func(n int) {
		res.Cells = all[:n]
		write(store.ResultsFile, res)
	}, len(all)
}

// testLiveRun: a running run's page says so, and its data file follows results.json.
func testLiveRun(t *testing.T, finished string) {
	base, setCells, total := liveRun(t, finished)
	// Before the first cell ends there is no results.json: the run is shown with no cells.
	if _, _, body := get(t, base+"/runs/live-run/index.html"); !strings.Contains(body, `id="live"`) || !strings.Contains(body, "No cell has finished yet") {
		t.Errorf("a run without results yet: page\n%s", body)
	}
	for _, n := range []int{2, total} {
		setCells(n)
		doc := pageDoc(t, base+"/api/v1/runs/live-run")
		if doc.Run.Status != "running" || doc.Run.Cells != n {
			t.Errorf("after %d cells: status %s, %d cells", n, doc.Run.Status, doc.Run.Cells)
		}
		if _, _, js := get(t, base+"/data/runs/live-run.js"); !strings.Contains(js, fmt.Sprintf(`"cells":%d,`, n)) {
			t.Errorf("after %d cells the data file says otherwise: %.300s", n, js)
		}
	}
}

func pageDoc(t *testing.T, u string) page.RunDoc {
	t.Helper()
	code, _, body := get(t, u)
	var doc page.RunDoc
	if err := json.Unmarshal([]byte(body), &doc); err != nil || code != 200 || doc.API != page.APIVersion {
		t.Fatalf("%s: %d %v %.200s", u, code, err, body)
	}
	return doc
}

// testWhatIfInBrowser opens the index in headless Chromium, follows the dense run's link, types
// three TTFT thresholds into the code-completion what-if and checks that each shows the limit
// capacity.Reconsider decides for it, and the capacity planning table sizes that limit as
// capacity.Size does; no request may leave 127.0.0.1. It then opens the static site's copy of
// the run page from file:// and checks that the what-if works there too. Last, the page of a
// run in progress (live) must show a cell that finishes while it is open.
// SERVEBENCH_SCREENSHOT_DIR=dir saves index.png, run.png and whatif.png there.
func testWhatIfInBrowser(t *testing.T, base, id, dir, site, live string) {
	exe := "/usr/bin/chromium"
	if _, err := os.Stat(exe); err != nil {
		t.Skip("skipping the browser test: no chromium at /usr/bin/chromium (apt-get install chromium)")
	}
	_, res, err := store.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Capacity) != 1 {
		t.Fatalf("want the code-completion search, got %d", len(res.Capacity))
	}
	cr := res.Capacity[0]
	uc := servebench.UseCase{Name: cr.UseCase, Title: cr.Title, ContextTokens: servebench.Tokens(cr.ContextTokens), OutputTokens: servebench.Tokens(cr.OutputTokens), Statistic: cr.Statistic, Thresholds: cr.Thresholds}
	// Three TTFT maxima: between the measured means at 2 and 3, at 5 and 6, and above all.
	ttft := map[int]float64{}
	for n, c := range capacity.KnownCells(res.Cells, uc) {
		ttft[n] = c.TTFTSeconds.Mean
	}
	thresholds := []float64{(ttft[2] + ttft[3]) / 2, (ttft[5] + ttft[6]) / 2, 2 * ttft[8]}
	want := make([]string, len(thresholds))
	var last capacity.Reconsidered
	for i, v := range thresholds {
		u := uc
		u.Thresholds.TTFTSecondsMax = servebench.Float(v)
		last = capacity.Reconsider(u, cr.Ceiling, res.Cells, cr.Resolution)
		want[i] = last.Label + "|" + last.KindWords
	}
	var wantCaptions []string
	for _, f := range capacity.Fields() {
		wantCaptions = append(wantCaptions, f.Caption)
	}
	var gotCaptions string
	sizing := capacity.Size([]servebench.CapacityResult{last.CapacityResult}, capacity.SizingInput{Plan: servebench.SizingPlan{UsersPerSlot: 4}})
	if len(sizing.UseCases) != 1 || sizing.UseCases[0].SlotsPerReplica == nil {
		t.Fatalf("the last threshold should be sized: %+v", sizing)
	}
	// in the report's words: a lower bound keeps its "+" (the report's "32+ users per replica")
	plus := ""
	if sizing.UseCases[0].AtMost {
		plus = "+"
	}
	wantSize := fmt.Sprintf("%d%s|%.0f%s", *sizing.UseCases[0].SlotsPerReplica, plus, *sizing.UseCases[0].UsersPerReplica, plus)
	if plus != "" {
		wantSize += "|at most "
	}
	if want[0] == want[1] && want[1] == want[2] {
		t.Fatalf("the three thresholds %v should give different limits, all give %s", thresholds, want[0])
	}

	var mu sync.Mutex
	var requests []string
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")), chromedp.WindowSize(1280, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}))
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	shots := map[string][]byte{}
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			b, err := chromedp.CaptureScreenshot()(ctx, tg)
			shots[name] = b
			return err
		})
	}
	var href, firstCells, compareHref string
	var visible, compared int
	got := make([]string, len(thresholds))
	var gotSize string
	err = chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
			return err
		}),
		chromedp.EmulateViewport(1280, 1000),
		chromedp.Navigate(base+"/"),
		shot("index"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			href, err = chromedp.Evaluate[string](`document.querySelector('a.run[href*="`+id+`"]').href`)(ctx, tg)
			if err != nil {
				return err
			}
			// Filtering by part of an id leaves that run; sorting by cells puts the 6-cell run first.
			visible, err = chromedp.Evaluate[int](`(function () {
				var f = document.getElementById("filter"); f.value = "`+id[len(id)-8:]+`"; f.dispatchEvent(new Event("input"));
				var n = Array.from(document.querySelectorAll("#runs tbody tr")).filter(function (r) { return !r.hidden; }).length;
				f.value = ""; f.dispatchEvent(new Event("input"));
				return n;
			})()`)(ctx, tg)
			if err != nil {
				return err
			}
			firstCells, err = chromedp.Evaluate[string](`(function () {
				document.querySelector('th[data-key="cells"]').click();
				return document.querySelector("#runs tbody tr").getAttribute("data-cells");
			})()`)(ctx, tg)
			if err != nil {
				return err
			}
			// Tick both runs and compare them.
			compareHref, err = chromedp.Evaluate[string](`(function () {
				document.querySelectorAll("input.pick").forEach(function (c) { c.checked = true; c.dispatchEvent(new Event("change", {bubbles: true})); });
				var b = document.getElementById("compare");
				if (b.disabled) return "";
				b.click();
				return location.href;
			})()`)(ctx, tg)
			return err
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			var err error
			for tries := 0; ; tries++ { // the click navigates: a poll cut by it is retried
				compared, err = chromedp.Poll[int](`document.body.getAttribute("data-ready") === "true" && document.querySelectorAll("#cmp-table thead th").length`)(ctx, tg)
				if err == nil || tries == 3 || ctx.Err() != nil {
					return err
				}
			}
		}),
		shot("compare"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if visible != 1 || firstCells != "6" {
		t.Errorf("index: filtering by the id's end shows %d rows (want 1); sorting by cells puts %s cells first (want 6)", visible, firstCells)
	}
	if compareHref == "" {
		t.Error("with two runs ticked, the compare button stayed disabled")
	}
	if compared != 3 {
		t.Errorf("comparing both runs: the comparison table has %d header cells, want 3 (label + 2 runs)", compared)
	}
	if !strings.HasPrefix(href, base+"/runs/"+id+"/") {
		t.Fatalf("the index links run %s to %q", id, href)
	}
	err = chromedp.Do(tctx,
		chromedp.Navigate(href),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true"`)(ctx, tg)
			return err
		}),
		shot("run"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			for i, v := range thresholds {
				js := `(function () {
					var card = document.querySelector('.card[data-usecase="code_completion"]');
					var inp = card.querySelector('input[data-metric="ttft_seconds_max"]');
					inp.value = "` + formatFloat(v) + `";
					inp.dispatchEvent(new Event("input", {bubbles: true}));
					return card.querySelector(".limit").textContent + "|" + card.querySelector(".kind").textContent;
				})()`
				var err error
				if got[i], err = chromedp.Evaluate[string](js)(ctx, tg); err != nil {
					return err
				}
			}
			var err error
			if gotCaptions, err = chromedp.Evaluate[string](`Array.prototype.map.call(document.querySelectorAll('.card[data-usecase="code_completion"] .fields label'), function (l) { return l.textContent; }).slice(1).join("|")`)(ctx, tg); err != nil {
				return err
			}
			gotSize, err = chromedp.Evaluate[string](`(function () {
				var users = document.getElementById("pl-users"); users.value = "4"; users.dispatchEvent(new Event("input"));
				var tds = document.querySelectorAll('#pl-table tr[data-usecase="code_completion"] td');
				return tds[1].textContent + "|" + tds[2].textContent.replace(/,/g, "") + (tds[3].textContent.indexOf("at most ") === 0 ? "|at most " : "");
			})()`)(ctx, tg)
			if err != nil {
				return err
			}
			_, err = chromedp.Evaluate[bool](`document.getElementById("whatif").scrollIntoView(); true`)(ctx, tg)
			return err
		}),
		shot("whatif"),
	)
	if err != nil {
		t.Fatal(err)
	}
	for i := range thresholds {
		if got[i] != want[i] {
			t.Errorf("TTFT threshold %.4f s: the page shows limit|kind %q, capacity decides %q", thresholds[i], got[i], want[i])
		}
	}
	if w := strings.Join(wantCaptions, "|"); gotCaptions != w {
		t.Errorf("the what-if's threshold fields read %q, want capacity.Fields' captions %q", gotCaptions, w)
	}
	if gotSize != wantSize {
		t.Errorf("capacity planning for the last threshold: the page shows slots|users per replica %q, capacity.Size gives %q", gotSize, wantSize)
	}
	t.Logf("TTFT thresholds %v → limits %v; sized %s", thresholds, got, gotSize)

	// A run in progress: the open page shows a cell that ends after it was loaded.
	liveBase, setCells, total := liveRun(t, live)
	setCells(2)
	err = chromedp.Do(tctx,
		chromedp.Navigate(liveBase+"/runs/live-run/index.html"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true" && document.querySelectorAll("#cells-table tbody tr").length === 2`)(ctx, tg); err != nil {
				return err
			}
			setCells(total)
			// The page reloads itself when the data changed: a poll cut by the reload is retried.
			expr := fmt.Sprintf(`document.querySelectorAll("#cells-table tbody tr").length === %d`, total)
			for tries := 0; ; tries++ {
				_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
				if err == nil || tries == 5 || ctx.Err() != nil {
					return err
				}
			}
		}),
	)
	if err != nil {
		t.Fatalf("following a run in progress: %v", err)
	}

	// The static site, from disk: the what-if runs offline.
	if site != "" {
		var offline string
		err = chromedp.Do(tctx,
			chromedp.Navigate((&url.URL{Scheme: "file", Path: filepath.Join(site, "runs", id, "index.html")}).String()),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				if _, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true"`)(ctx, tg); err != nil {
					return err
				}
				var err error
				offline, err = chromedp.Evaluate[string](`(function () {
					var card = document.querySelector('.card[data-usecase="code_completion"]');
					var inp = card.querySelector('input[data-metric="ttft_seconds_max"]');
					inp.value = "`+formatFloat(thresholds[0])+`";
					inp.dispatchEvent(new Event("input", {bubbles: true}));
					return card.querySelector(".limit").textContent + "|" + card.querySelector(".kind").textContent;
				})()`)(ctx, tg)
				return err
			}),
		)
		if err != nil {
			t.Fatalf("the site's run page from file://: %v", err)
		}
		if offline != want[0] {
			t.Errorf("from file://, TTFT threshold %.4f s shows %q, want %q", thresholds[0], offline, want[0])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) < 5 {
		t.Fatalf("network events were not observed: %v", requests)
	}
	for _, r := range requests {
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Scheme != "file" && u.Hostname() != "127.0.0.1") {
			t.Errorf("a request left 127.0.0.1: %s", r)
		}
	}
	if d := os.Getenv("SERVEBENCH_SCREENSHOT_DIR"); d != "" {
		for name, b := range shots {
			if err := os.WriteFile(filepath.Join(d, name+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func formatFloat(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lineWriter hands each write to a channel, so a test can wait for a line printed by a
// command running in another goroutine.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// The serve verb serves until its context ends; a busy or malformed --listen is a usage error.
func TestServeVerb(t *testing.T) {
	index := filepath.Join(t.TempDir(), "runs.db")
	out := make(lineWriter, 16)
	var errb strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{stdout: out, stderr: &errb, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- execute(ctx, e, []string{"serve", "--index", index, "--listen", "127.0.0.1:0"}) }()
	var addr string
	select {
	case line := <-out:
		m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("serve printed %q, want its address", line)
		}
		addr = m[1]
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	if code, _, body := get(t, "http://"+addr+"/"); code != 200 || !strings.Contains(body, "No runs recorded yet") {
		t.Errorf("an empty index: %d\n%s", code, body)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/runs", nil)
	req.Host = "rebound.example:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request addressed to another host name: %s, want 403", resp.Status)
	}
	if code, _, stderr := runCLI(t, "serve", "--index", index, "--listen", addr); code != exitUsage || !strings.Contains(stderr, "address already in use") {
		t.Errorf("a busy address: exit %d, %s", code, stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serve exited %d after its context ended: %s", code, errb.String())
	}
	if code, _, stderr := runCLI(t, "serve", "--index", index, "--listen", "nohost"); code != exitUsage || !strings.Contains(stderr, "--listen nohost") {
		t.Errorf("a malformed address: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "site"); code != exitUsage || !strings.Contains(stderr, "site needs OUT_DIR") {
		t.Errorf("site without a folder: exit %d, %s", code, stderr)
	}
}
