package page

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/store"
)

// usersShown is what the run page shows of the general chatbot: its users' limit card and its
// planner row.
type usersShown struct {
	Label   string `json:"label"`
	Kind    string `json:"kind"`
	Verdict string `json:"verdict"`
	Was     string `json:"was"`
	From    string `json:"from"`
	PerRep  string `json:"per_replica"`
	Row     string `json:"row"`
}

// TestUsersWhatIfInBrowser opens the run page of a run with a population of users (the report's
// users fixture, report/testdata/users: general chatbot, chat users, limit 30) in headless
// Chromium and checks that the users' limit is decided again when the reader changes the use
// case's thresholds, exactly as capacity.ReconsiderUsers decides it, and that the planner sizes
// from it (capacity.Size): at the run's thresholds 30 users per replica from the users' limit;
// with a speed floor of 20 tok/s ~35; with a TTFT ceiling of 0.5 s no population passes ("below
// 10"), so the planner falls back to the cold-prompt limit and says why; back to the run's.
// SERVEBENCH_SCREENSHOT_DIR=dir saves users-whatif.png there.
func TestUsersWhatIfInBrowser(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	runDir := filepath.Join("..", "report", "testdata", "users")
	man, res, err := store.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	var u servebench.UsersCapacity
	for _, x := range res.Users {
		if x.UseCase == "general_chatbot" {
			u = x
		}
	}
	if u.Limit == nil || *u.Limit != 30 {
		t.Fatalf("the fixture's general chatbot has no users' limit of 30: %+v", u.CapacityResult)
	}
	uc := servebench.UseCase{Name: u.UseCase, Statistic: u.Statistic, Thresholds: u.Thresholds}
	decide := func(th servebench.Thresholds) capacity.Reconsidered {
		c := uc
		c.Thresholds = th
		return capacity.ReconsiderUsers(c, u.Ceiling, res.Cells)
	}
	speed20, ttft05 := u.Thresholds, u.Thresholds
	speed20.GenerationSpeedTPSMin = servebench.Float(20)
	ttft05.TTFTSecondsMax = servebench.Float(0.5)
	want := []capacity.Reconsidered{decide(u.Thresholds), decide(speed20), decide(ttft05)}
	if want[0].Label != "30" || want[1].Label != "~35" || want[2].Label != "below 10" {
		t.Fatalf("the fixture decides %q, %q, %q; the test expects 30, ~35, below 10", want[0].Label, want[1].Label, want[2].Label)
	}

	site := t.TempDir()
	p := &Pages{Source: Source{Dirs: []string{runDir}}, Version: "test"}
	if _, err := p.WriteSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	runURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(site, "runs", man.ID, "index.html"))}).String()
	tctx := browser(t, 1280, 1000, 4*time.Minute)

	const card = `document.querySelector('.card[data-usecase="general_chatbot"]')`
	set := func(key, v string) string {
		return `(function () { var i = document.getElementById("t-general_chatbot-` + key + `"); i.value = "` + v + `"; i.dispatchEvent(new Event("input")); return true; })()`
	}
	const show = `(function () {
		var c = ` + card + `, row = document.querySelector('#pl-table tr[data-usecase="general_chatbot"]');
		var tds = row ? Array.from(row.querySelectorAll("td")) : [];
		var from = row && row.querySelector("td.from"), per = row && row.querySelector("td.users-per-replica");
		return JSON.stringify({ label: c.querySelector(".users-limit").textContent, kind: c.querySelector(".users-kind").textContent,
			verdict: c.querySelector(".users-verdict").textContent, was: c.querySelector(".users-was").textContent,
			from: from ? from.textContent : "", per_replica: per ? per.textContent : "", row: row ? row.textContent : "" });
	})()`
	var got []usersShown
	var shot []byte
	step := func(js ...string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			for _, j := range js {
				if _, err := chromedp.Evaluate[bool](j)(ctx, tg); err != nil {
					return err
				}
			}
			s, err := chromedp.Evaluate[string](show)(ctx, tg)
			if err != nil {
				return err
			}
			var one usersShown
			if err := json.Unmarshal([]byte(s), &one); err != nil {
				return err
			}
			got = append(got, one)
			t.Logf("step %d: %+v", len(got), one)
			return nil
		})
	}
	err = chromedp.Do(tctx,
		chromedp.EmulateViewport(1280, 1000),
		chromedp.Navigate(runURL),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true" && `+card+`.getAttribute("data-ready") === "true"`)(ctx, tg)
			return err
		}),
		step(),
		step(set("generation_speed_tps_min", "20")),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Evaluate[bool](card+`.scrollIntoView(); true`)(ctx, tg); err != nil {
				return err
			}
			var err error
			shot, err = chromedp.CaptureScreenshot()(ctx, tg)
			return err
		}),
		step(set("generation_speed_tps_min", "30"), set("ttft_seconds_max", "0.5")),
		step(`(function () { `+card+`.querySelector("button.reset").click(); return true; })()`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("SERVEBENCH_SCREENSHOT_DIR"); d != "" {
		if err := os.WriteFile(filepath.Join(d, "users-whatif.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d steps read", len(got))
	}
	for i, w := range []capacity.Reconsidered{want[0], want[1], want[2], want[0]} {
		g := got[i]
		if g.Label != w.Label || g.Kind != w.KindWords || g.Verdict != w.Verdict {
			t.Errorf("step %d: the page shows %q (%s) %q; capacity.ReconsiderUsers decides %q (%s) %q", i, g.Label, g.Kind, g.Verdict, w.Label, w.KindWords, w.Verdict)
		}
	}
	if !strings.HasPrefix(got[0].From, "users' limit (chat users") || got[0].PerRep != "30" || got[0].Was != "" {
		t.Errorf("at the run's thresholds the planner shows %+v, want 30 users per replica from the users' limit", got[0])
	}
	if !strings.HasPrefix(got[1].From, "users' limit") || got[1].PerRep != "~35" || !strings.Contains(got[1].Was, "As the run decided it: 30 users") {
		t.Errorf("at ≥ 20 tok/s the planner shows %+v, want ~35 users per replica from the users' limit", got[1])
	}
	if !strings.HasPrefix(got[2].From, "cold-prompt limit") || !strings.Contains(got[2].From, "users' limit not decided") {
		t.Errorf("at TTFT ≤ 0.5 s the planner shows %+v, want the cold-prompt limit, the users' limit not decided", got[2])
	}
	if got[3].PerRep != "30" || got[3].Was != "" {
		t.Errorf("after the reset the planner shows %+v, want 30 again", got[3])
	}
}

// A run whose use case was searched only in users (the users fixture without its cold-prompt
// searches or sizing): the planner sizes it from its users' limit (capacity.Sizable), 30 users
// per replica, instead of saying that nothing was searched.
func TestUsersOnlyPlannerInBrowser(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("starts a browser")
	}
	src := filepath.Join("..", "report", "testdata", "users")
	runDir := filepath.Join(t.TempDir(), "users-only")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.json", "results.json", "telemetry.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "results.json" {
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			res["capacity"] = []any{}
			delete(res, "sizing")
			if b, err = json.Marshal(res); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(runDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	man, _, err := store.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	p := &Pages{Source: Source{Dirs: []string{runDir}}, Version: "test"}
	if _, err := p.WriteSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	runURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(site, "runs", man.ID, "index.html"))}).String()
	tctx := browser(t, 1280, 1000, 4*time.Minute)
	var shown string
	err = chromedp.Do(tctx,
		chromedp.Navigate(runURL),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.body.getAttribute("data-ready") === "true" && !!document.getElementById("pl-out")`)(ctx, tg)
			if err != nil {
				return err
			}
			shown, err = chromedp.Evaluate[string](`(function () {
				var box = document.getElementById("pl-out"), row = box.querySelector('#pl-table tr[data-usecase="general_chatbot"]');
				if (!row) return "no row: " + box.textContent;
				var from = row.querySelector("td.from"), per = row.querySelector("td.users-per-replica");
				return (from ? from.textContent : "") + " | " + (per ? per.textContent : "");
			})()`)(ctx, tg)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown, "users' limit (chat users") || !strings.HasSuffix(shown, " | 30") {
		t.Errorf("the planner shows %q, want the general chatbot sized from its users' limit, 30 users per replica", shown)
	}
}
