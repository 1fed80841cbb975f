package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/collect/gpu"
	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/store"
	"github.com/servebench/servebench/workload"
)

// simRunDir is the run folder of a real run against the simulator (run.json, results.json,
// telemetry.jsonl), recorded by recordSimRun under -record and committed.
var simRunDir = filepath.Join("testdata", "simrun")

var record = flag.Bool("record", false, "measure testdata/simrun again against the simulator (with -update, rewrite its goldens from it)")

// simRunPlan is what the recorded run measured: a sweep (1K and 4K prompts, 128-token answers,
// 1 to 8 users), the code-completion capacity search (its own shape, so the report holds a cell
// of another shape than the sweep's) and the plan's dedicated scenarios.
func simRunPlan(t *testing.T) servebench.Plan {
	t.Helper()
	p, err := plan.Resolve(nil, plan.Overrides{"url": "http://127.0.0.1:1/v1", "contexts": "1k,4k", "concurrency": "1,2,4,8",
		"output-tokens": "128", "use-cases": "code_completion", "capacity-max": "16", "min-requests": "8", "rounds": "1",
		"max-requests": "64", "max-duration": "5s"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordSimRun measures simRunPlan against the simulator's fast profile through the real
// client, prompt builder, runner and run folder, on virtual time, and writes the run's
// run.json, results.json and telemetry.jsonl into simRunDir.
func recordSimRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := simtest.StartInMemory(t, simtest.Config{Options: sim.Options{Seed: 26}})
		p := simRunPlan(t)
		p.Target.URL = srv.URL + "/v1"
		origin := time.Now()
		cfg := openai.Config{BaseURL: p.Target.URL, API: p.Target.API, Origin: origin, MaxConnections: 16, DialContext: srv.Dial}
		info, quirks, err := openai.Discover(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Quirks, cfg.Model = quirks, info.Models[0]
		client, err := openai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		hc := srv.HTTPClient()
		defer hc.CloseIdleConnections()
		prompts, err := workload.NewBuilder(ctx, workload.Config{RunID: "simrun", API: p.Target.API, BaseURL: p.Target.URL,
			Model: cfg.Model, HTTPClient: hc, Probe: client.ProbePromptTokens})
		if err != nil {
			t.Fatal(err)
		}
		info.TokenCounting = prompts.Method()
		gpuSrc, err := gpu.Open(ctx, "dcgm="+srv.URL+"/dcgm/metrics", hc)
		if err != nil {
			t.Fatal(err)
		}
		p.Target.Model = cfg.Model
		man := servebench.Manifest{SchemaVersion: servebench.SchemaVersion, ID: "simrun", ToolVersion: "test", Simulated: true,
			Plan: p, Server: info, Command: []string{"servebench", "run", "(report/simrun_test.go)"}, StartedAt: time.Now().UTC(),
			Status: "running", ClockSource: client.ClockSource()}
		man.Plan.Metadata = srv.Profile().Metadata(man.Plan.Metadata)
		dir := filepath.Join(t.TempDir(), "run")
		run, err := store.Create(dir, man)
		if err != nil {
			t.Fatal(err)
		}
		metrics := promscrape.New(srv.URL+"/metrics", hc)
		sampleCtx, stopSampling := context.WithCancel(ctx)
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			_ = metrics.Sample(sampleCtx, time.Second, func(s servebench.Sample) {
				if s.OffsetSeconds == 0 {
					s.OffsetSeconds = time.Since(origin).Seconds()
				}
				_ = run.AppendSamples([]servebench.Sample{s})
			})
		}()
		r := &runner.Runner{Plan: man.Plan, Server: info, Client: client, Prompts: prompts, Recorder: run, Metrics: metrics, GPU: gpuSrc,
			Origin: origin, RunInfo: servebench.RunInfo{ID: man.ID, Target: p.Target.URL, API: p.Target.API, Model: cfg.Model, Simulated: true, StartedAt: man.StartedAt}}
		runErr := r.Run(ctx)
		stopSampling()
		<-sampled
		if runErr != nil {
			t.Fatal(runErr)
		}
		man.Status, man.FinishedAt = "completed", time.Now().UTC()
		if err := run.WriteManifest(man); err != nil {
			t.Fatal(err)
		}
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(simRunDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{store.ManifestFile, store.ResultsFile, store.TelemetryFile} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(simRunDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The report of a real (simulated) run, golden in Markdown and HTML: under -record the run is
// measured again (recordSimRun), under -update both goldens are rewritten, to be read by a
// person. Every
// "peak throughput" the report states, in Markdown, on the terminal and in the HTML, is the one
// stats.Peak names.
func TestSimulatedRunReport(t *testing.T) {
	if *record {
		recordSimRun(t)
	}
	in := loadRun(t, simRunDir)
	if !in.Manifest.Simulated || len(in.Results.Cells) < 8 || len(in.Results.Capacity) != 1 || len(in.Samples) == 0 {
		t.Fatalf("the recorded run lacks what it is for: simulated %v, %d cells, %d capacity searches, %d samples",
			in.Manifest.Simulated, len(in.Results.Cells), len(in.Results.Capacity), len(in.Samples))
	}
	r := Build(in)
	var md, html, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "simrun.md", md.Bytes())
	golden(t, "simrun.html", []byte(htmlGolden(html.String())))

	pk := stats.Peak(in.Results.Cells)
	if pk == nil {
		t.Fatal("no peak")
	}
	want := fmtNum(pk.SystemOutputThroughputTPS, 1)
	for _, out := range []struct {
		name string
		text string
		min  int // highlight, Key Findings, System Throughput table; the terminal's highlight
	}{{"report.md", md.String(), 3}, {"report.html", htmlText(html.String()), 2}, {"terminal", term.String(), 1}} {
		got := peakThroughputs(out.text)
		if len(got) < out.min {
			t.Errorf("%s: found %d peak throughputs (%v), want at least %d", out.name, len(got), got, out.min)
		}
		for _, g := range got {
			if g.value != want {
				t.Errorf("%s: a peak throughput of %s tok/s, want %s (stats.Peak, %s): %q", out.name, g.value, want, pk.ID(), g.line)
			}
		}
	}
}

// TestPeakThroughputsDisagreeing: the check above fails on a report stating two different peak
// throughputs.
func TestPeakThroughputsDisagreeing(t *testing.T) {
	got := peakThroughputs("Peak throughput: 1,234.5 tok/s\n| Peak system throughput | 999.0 tok/s |\n")
	if len(got) != 2 || got[0].value == got[1].value {
		t.Errorf("two different peak throughputs read as %v", got)
	}
}

type peakStatement struct{ value, line string }

// peakThroughputs finds every line stating a peak throughput and the figure it states (digits,
// without thousands separators): the Markdown, terminal and HTML text alike.
func peakThroughputs(text string) []peakStatement {
	num := regexp.MustCompile(`[0-9][0-9,]*\.[0-9]`)
	var out []peakStatement
	for _, line := range strings.Split(text, "\n") {
		l := strings.ToLower(line)
		if !strings.Contains(l, "peak throughput") && !strings.Contains(l, "peak system throughput") && !strings.HasPrefix(l, "| peak (") {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "peak throughput is the highest") || strings.Contains(l, "tokens per hour") {
			continue // the sentence naming a faster cell of another shape; the per-hour volume at the peak
		}
		if n := num.FindString(line); n != "" {
			out = append(out, peakStatement{strings.ReplaceAll(n, ",", ""), strings.TrimSpace(line)})
		}
	}
	return out
}

// htmlGolden is the HTML without the bodies of its script and style assets (about 1 MB that
// the report embeds whatever it reports; TestHTMLSelfContained checks them): its markup, text
// and data block stay.
func htmlGolden(h string) string {
	return regexp.MustCompile(`(?s)(<script>|<style>)(.*?)(</script>|</style>)`).ReplaceAllString(h, "${1}/* asset omitted from the golden file */${3}")
}

// htmlText is the HTML's text, a line per paragraph, table row, list item or heading (a
// highlight's figure and its label stay on one line), its tags spaces.
func htmlText(h string) string {
	h = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>`).ReplaceAllString(h, "")
	h = regexp.MustCompile(`(?i)</?(p|tr|li|h[1-6]|section|table|br)\b[^>]*>`).ReplaceAllString(h, "\n")
	h = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(h, " ")
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&nbsp;", " ").Replace(h)
}
