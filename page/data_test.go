package page

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/store"
)

type fakeIndex []store.IndexEntry

func (f fakeIndex) List(context.Context) ([]store.IndexEntry, error) { return f, nil }

var limit3 = 3

// writeRun writes a minimal run folder: run.json and results.json with one cell and one capacity limit.
func writeRun(t *testing.T, dir string, m servebench.Manifest) {
	t.Helper()
	res := servebench.Results{SchemaVersion: servebench.SchemaVersion, Cells: []servebench.CellResult{{
		CellKey:       servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 64, Concurrency: 1},
		RequestsTotal: 4, RequestsSucceeded: 3, SystemOutputThroughputTPS: 50,
		SystemOutputThroughputCI95: &servebench.Interval{Low: 45, High: 55}}},
		Capacity: []servebench.CapacityResult{{UseCase: "general_chatbot", Title: "General Chatbot", ContextTokens: 32768,
			Limit: &limit3, LimitKind: servebench.LimitMeasured, LimitRange: &[2]int{2, 4}}}}
	writeRunFolder(t, dir, m, res)
}

// writeRunFolder writes a run folder at dir: its run.json (m) and results.json (res).
func writeRunFolder(t *testing.T, dir string, m servebench.Manifest, res servebench.Results) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{store.ManifestFile: m, store.ResultsFile: res} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSource(t *testing.T) {
	tmp := t.TempDir()
	hostile := "</script><img src=x onerror=alert(1)>"
	m := servebench.Manifest{ID: "20260101-000000-aaaa", Status: "completed", StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m.Plan.Target.URL = "http://user:secret@gpu-box:8000/v1"
	m.Plan.Target.Model = hostile
	m.Server.Raw = map[string]string{"models": "big body"}
	writeRun(t, filepath.Join(tmp, "good"), m)
	ix := fakeIndex{
		{ID: m.ID, Dir: filepath.Join(tmp, "good")},
		{ID: "20250101-000000-bbbb", Dir: filepath.Join(tmp, "gone"), Model: "old-model", Cells: 3, StartedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "../../etc", Dir: tmp},
	}
	src := Source{Index: ix}
	l, err := src.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 2 || l.Runs[0].ID != m.ID || l.Runs[1].ID != "20250101-000000-bbbb" {
		t.Fatalf("want the good run then the missing one (the unsafe id left out), got %+v", l.Runs)
	}
	good, gone := l.Runs[0], l.Runs[1]
	if good.Target != "http://gpu-box:8000/v1" || strings.Contains(good.Target, "secret") {
		t.Errorf("target %q: credentials must be removed", good.Target)
	}
	if good.Cells != 1 || good.PeakThroughputTPS != 50 || good.SuccessRate != 0.75 {
		t.Errorf("headline numbers %+v", good)
	}
	if gone.Status != "missing" || gone.Problem == "" || gone.Model != "old-model" || gone.Cells != 3 {
		t.Errorf("a run whose folder is gone: %+v", gone)
	}
	doc, err := src.Run(context.Background(), m.ID)
	if err != nil || doc.Server.Raw != nil {
		t.Errorf("run document: %v, raw bodies %v", err, doc.Server.Raw)
	}
	if c := doc.Run.Capacity; len(c) != 1 || c[0].Label != "3" || c[0].LimitRange == nil || *c[0].LimitRange != [2]int{2, 4} {
		t.Errorf("run document: capacity %+v, want the limit 3 with the levels 2–4 its data cannot tell apart", c)
	}
	// the peak cell's interval rests on 3 successful requests, fewer than an interval needs:
	// withheld (the page writes "n<min"), not shown as [45, 55]
	if iv := doc.Run.PeakThroughputCI95; iv != nil || !doc.Run.PeakThroughputCI95Withheld {
		t.Errorf("run document: the peak throughput's interval is %+v (withheld %v), want it withheld: 3 requests < %d", iv, doc.Run.PeakThroughputCI95Withheld, stats.MinIntervalSamples)
	}
	if _, err := src.Run(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown id: %v, want ErrNotFound", err)
	}
	// Text from the server cannot end the data script or become markup in a page.
	p := &Pages{Source: src}
	var js, page bytes.Buffer
	if err := p.RunJS(context.Background(), &js, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.IndexHTML(context.Background(), &page); err != nil {
		t.Fatal(err)
	}
	var runPage bytes.Buffer
	if err := p.RunHTML(context.Background(), &runPage, m.ID); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(runPage.String(), "peak 50.0 tok/s (n&lt;min)") || strings.Contains(runPage.String(), "±10%") {
		t.Error("the run page's peak throughput writes an interval from 3 requests; want (n<min)")
	}
	if strings.Contains(js.String(), "</script") || strings.Contains(js.String(), "<img") {
		t.Errorf("the data script carries raw markup: %s", js.String())
	}
	if strings.Contains(page.String(), hostile) || !strings.Contains(page.String(), "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("the index page does not escape the model name")
	}
}

// Run folders named to serve or site are what the pages publish: the index's other runs (other
// people's, on a shared store) are left out, and a named run keeps its label, shown beside its
// id wherever the pages name it.
func TestSourceNamedRunsOnly(t *testing.T) {
	tmp := t.TempDir()
	mine := servebench.Manifest{ID: "20260102-000000-mine", Status: "completed", StartedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	mine.Plan.Metadata.Label = "H200 tp1"
	other := servebench.Manifest{ID: "20260103-000000-othr", Status: "completed", StartedAt: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)}
	writeRun(t, filepath.Join(tmp, "mine"), mine)
	writeRun(t, filepath.Join(tmp, "other"), other)
	ix := fakeIndex{{ID: mine.ID, Dir: filepath.Join(tmp, "mine"), Label: "H200 tp1"}, {ID: other.ID, Dir: filepath.Join(tmp, "other")}}
	for _, tt := range []struct {
		name string
		dirs []string
		want []string
	}{
		{"nothing named: the whole index", nil, []string{other.ID, mine.ID}},
		{"one run named: that run only", []string{filepath.Join(tmp, "mine")}, []string{mine.ID}},
	} {
		src := Source{Index: ix, Dirs: tt.dirs}
		l, err := src.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range l.Runs {
			got = append(got, r.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: listed %v, want %v", tt.name, got, tt.want)
		}
		if _, err := src.Run(context.Background(), other.ID); (err == nil) != (tt.dirs == nil) {
			t.Errorf("%s: the run not named is served: %v", tt.name, err)
		}
		site := filepath.Join(t.TempDir(), "site")
		n, err := (&Pages{Source: src}).WriteSite(context.Background(), site)
		if err != nil || n != len(tt.want) {
			t.Errorf("%s: site wrote %d run pages (%v), want %d", tt.name, n, err, len(tt.want))
		}
		if _, err := os.Stat(filepath.Join(site, "runs", other.ID)); (err == nil) != (tt.dirs == nil) {
			t.Errorf("%s: the site holds the run not named: %v", tt.name, err)
		}
		var index, run bytes.Buffer
		p := &Pages{Source: src}
		if err := p.IndexHTML(context.Background(), &index); err != nil {
			t.Fatal(err)
		}
		if err := p.RunHTML(context.Background(), &run, mine.ID); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(index.String(), `">H200 tp1</a></div><div class="runid">`+mine.ID) {
			t.Errorf("%s: the list of runs does not name the run by its label:\n%s", tt.name, index.String())
		}
		if !strings.Contains(run.String(), `<b class="runlabel">H200 tp1</b> (<code>`+mine.ID+`</code>)`) || !strings.Contains(run.String(), "<title>H200 tp1 · ") {
			t.Errorf("%s: the run page does not name the run by its label", tt.name)
		}
	}
}
