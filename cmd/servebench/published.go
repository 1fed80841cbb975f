package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/sim/validation"
)

// publishedMetrics are the published metrics a run's cell can be set beside, in table order:
// the figure's name, its unit in the table, and how to read it from a cell and from the
// simulator's estimate. vLLM's TPOT is servebench's ITL (decode time ÷ (output tokens − 1));
// vLLM's ITL is the gap between stream events (servebench's chunk gap), several tokens each
// with speculative decoding.
var publishedMetrics = []struct {
	metric, name string
	unit         string // "tok/s", "s", or "ms" (a figure in seconds shown in ms)
	cell         func(c servebench.CellResult) float64
	est          func(e sim.Estimate, c servebench.CellResult) float64
}{
	{"system_tps", "output throughput (tok/s)", "tok/s", func(c servebench.CellResult) float64 { return c.SystemOutputThroughputTPS },
		func(e sim.Estimate, _ servebench.CellResult) float64 { return e.SystemOutputTPS }},
	{"total_tps", "total throughput, input and output (tok/s)", "tok/s", func(c servebench.CellResult) float64 { return c.TotalThroughputTPS },
		func(e sim.Estimate, c servebench.CellResult) float64 {
			return e.SystemOutputTPS * float64(c.ContextTokens+c.OutputTokens) / float64(c.OutputTokens)
		}},
	{"gen_tps", "per-user generation (tok/s)", "tok/s", func(c servebench.CellResult) float64 { return c.GenerationSpeedTPS.Mean },
		func(e sim.Estimate, _ servebench.CellResult) float64 { return e.GenerationSpeedTPS }},
	{"ttft_s", "TTFT mean (s)", "s", func(c servebench.CellResult) float64 { return c.TTFTSeconds.Mean },
		func(e sim.Estimate, _ servebench.CellResult) float64 { return e.TTFTSeconds }},
	{"tpot_s", "vLLM's TPOT mean = servebench's ITL (ms)", "ms", func(c servebench.CellResult) float64 { return c.ITLSeconds.Mean },
		func(e sim.Estimate, _ servebench.CellResult) float64 { return e.ITLSeconds }},
	{"itl_s", "vLLM's ITL mean = servebench's chunk gap (ms)", "ms", func(c servebench.CellResult) float64 { return c.ChunkGapSeconds.Mean },
		func(e sim.Estimate, _ servebench.CellResult) float64 { return e.ChunkGapSeconds }},
}

// publishedSection sets the published figures a simulated run's profile was validated on
// beside the run, for every published level the run measured (same prompt, output and
// concurrency): the published value, the simulator's estimate of it measured the published
// way (what `servebench sim validate` compares), and the run's own cell, each with its error
// against the published value, and the profile's stated validation error. A cell measured
// another way than the source (a steady-state cell against a whole fixed run) says so: its
// difference is the method's, not the simulator's. ok is false when no run has such a level.
func publishedSection(ins []report.Input, labels []string) (report.Section, bool) {
	pts, err := validation.Points()
	if err != nil {
		return report.Section{}, false
	}
	t := &report.Table{Header: []string{"RUN", "LEVEL", "METRIC", "PUBLISHED", "SIMULATED AS PUBLISHED", "THIS RUN", "WITHIN THE STATED ERROR", "THIS RUN'S CELL"}}
	var stated, methods, fixes []string
	for i, in := range ins {
		man, res := in.Manifest, in.Results
		if !man.Simulated || man.Plan.Target.SimProfile == "" {
			continue
		}
		prof, err := sim.LookupProfile(man.Plan.Target.SimProfile)
		if err != nil || prof.Validation.Points == 0 {
			continue
		}
		cfg, ok := validation.ConfigByID(prof.Validation.Reference)
		if !ok {
			continue
		}
		rows := 0
		for _, m := range publishedMetrics {
			for _, p := range pts {
				if p.Config != cfg.ID || p.Metric != m.metric || p.Concurrency <= 0 || p.Value <= 0 {
					continue
				}
				c, ok := publishedCell(res.Cells, p)
				if !ok {
					continue
				}
				e, err := sim.Simulate(prof, validation.Workload(cfg, p.Context, p.Output, p.Concurrency))
				if err != nil {
					continue
				}
				pub := strconv.FormatFloat(p.Value, 'f', -1, 64)
				if m.unit == "ms" {
					pub = strconv.FormatFloat(math.Round(p.Value*1e4)/10, 'f', -1, 64)
				}
				if p.Qualifier == validation.Approx {
					pub = "~" + pub
				}
				how := fmt.Sprintf("%s, %d requests", c.ID(), c.RequestsTotal)
				within := "—: another method"
				if sameMethod(cfg, c) {
					within = fmt.Sprintf("no (±%.0f %%)", prof.Validation.WorstErrorPct)
					if withinStated(m.cell(c), p.Value, prof.Validation) {
						within = fmt.Sprintf("yes (±%.0f %%)", prof.Validation.WorstErrorPct)
					}
				} else {
					how += ": not the source's method"
					fix := fmt.Sprintf("--mode fixed --requests %d --concurrency %d", sourceRequests(cfg, p.Concurrency), p.Concurrency)
					if !slices.Contains(fixes, fix) {
						fixes = append(fixes, fix)
					}
				}
				t.Rows = append(t.Rows, []string{labels[i], fmt.Sprintf("%s in / %s out, %d in flight", tokLabel(p.Context), tokLabel(p.Output), p.Concurrency), m.name, pub,
					withErr(m.est(e, c), p.Value, m.unit), withErr(m.cell(c), p.Value, m.unit), within, how})
				rows++
			}
		}
		if rows > 0 {
			stated = append(stated, fmt.Sprintf("%s (profile %s): %s", labels[i], prof.Name, prof.Validation.Summary()))
			if !slices.Contains(methods, cfg.Method()) {
				methods = append(methods, cfg.Method())
			}
		}
	}
	if len(t.Rows) == 0 {
		return report.Section{}, false
	}
	how := "How the source measured: " + strings.Join(methods, "; or ") + "."
	if len(fixes) > 0 {
		how += " A cell measured another way reads differently for that reason alone: a sustained cell leaves out its warm-up and measures the steady state, where a whole fixed run includes its first round (every prompt arriving at once) and its tail. To measure the source's way, run its level alone in fixed mode: " + strings.Join(fixes, "; ") + "."
	}
	t.Caption = "Published figures against the simulator: SIMULATED AS PUBLISHED is the simulator measured the source's way (what servebench sim validate compares), THIS RUN the run's own cell at that level; each with its error against the published value."
	return report.Section{ID: "published", Title: "The Published Figures These Simulations Reproduce", Level: 1, Blocks: []report.Block{
		{Kind: report.BlockParagraph, Text: "Each simulated run's profile was fitted and validated on a published benchmark; where the run measured one of its levels, its figures stand here beside the published ones. The simulator's stated validation error, over the held-out published points: " + strings.Join(stated, "; ") + "."},
		{Kind: report.BlockTable, Table: t},
		{Kind: report.BlockNote, Text: how},
	}}, true
}

// publishedCell is the run's cell at p's level (prompt, output, concurrency) measured in closed
// loop, the one with the most requests when there are several.
func publishedCell(cells []servebench.CellResult, p validation.Point) (servebench.CellResult, bool) {
	var best servebench.CellResult
	found := false
	for _, c := range cells {
		if c.Skipped || c.RequestsSucceeded == 0 || c.ContextTokens != p.Context || c.OutputTokens != p.Output || c.Concurrency != p.Concurrency || c.RatePerSecond > 0 {
			continue
		}
		if c.LoadMode != servebench.ModeSustained && c.LoadMode != servebench.ModeFixed && c.LoadMode != servebench.ModeDedicated {
			continue
		}
		if !found || c.RequestsTotal > best.RequestsTotal {
			best, found = c, true
		}
	}
	return best, found
}

// withinStated reports whether v is within the profile's stated validation error (its worst held-out
// error, stated to the whole percent) of the published value.
func withinStated(v, published float64, val sim.Validation) bool {
	return 100*math.Abs(v-published)/published <= val.WorstErrorPct+0.5
}

// sameMethod reports whether c was measured as cfg's source measured (validation.Workload): a
// fixed run of its prompt count (vllm bench serve --num-prompts), or of 3 × N for the
// reports' three rounds of N clients started together.
func sameMethod(cfg validation.Config, c servebench.CellResult) bool {
	return c.LoadMode == servebench.ModeFixed && c.RequestsTotal == sourceRequests(cfg, c.Concurrency)
}

// sourceRequests is the request count cfg's source measured a level of n with.
func sourceRequests(cfg validation.Config, n int) int {
	if cfg.Prompts > 0 {
		return cfg.Prompts
	}
	return 3 * n
}

// fmtFigure writes a figure of the table: ms to 0.1, seconds to the ms, throughputs to the
// token (to 0.1 below 100 tok/s).
func fmtFigure(v float64, unit string) string {
	switch {
	case unit == "ms":
		return fmt.Sprintf("%.1f", v*1000)
	case unit == "s":
		return fmt.Sprintf("%.3f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// withErr writes v and its relative error against the published value: "1,610 (+0.8 %)".
func withErr(v, published float64, unit string) string {
	if v <= 0 || published <= 0 || math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%s (%+.1f %%)", fmtFigure(v, unit), 100*(v-published)/published)
}

// tokLabel writes a token count as the tables do: 8192 → "8K", 2048 → "2K", 1000 → "1000".
func tokLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}
