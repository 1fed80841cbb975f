package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/report"
	pdfprint "github.com/servebench/servebench/report/pdf"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/store"
)

func newReportCmd(e *env) *cobra.Command {
	var formats string
	var recompute, force bool
	cmd := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Re-render the report of a run folder (html, md, pdf, json) and print its summary",
		Long: `Re-render the report of a run folder (html, md, pdf, json) and print its summary.

With --recompute, results.json is first computed again from what the folder keeps of the run —
run.json (the plan and the server), requests.jsonl (every request) and cells.jsonl (each cell's
window and the server and GPU telemetry around it) — by the code that computed it during the
run, and written over the folder's results.json.`,
		Args:              needArgs(1, 1, "run folder"),
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs, err := parseFormats(formats)
			if err != nil {
				return withCode(exitUsage, err)
			}
			if recompute {
				if err := recomputeRun(e, args[0], force); err != nil {
					return err
				}
			}
			man, res, err := store.Load(args[0])
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("%s is not a readable run folder: %w", args[0], err))
			}
			withSizing(&res, man.Plan)
			if err := renderRun(cmd.Context(), e, args[0], man, res, fs); err != nil {
				return withCode(exitError, err)
			}
			printSummary(e, man, res)
			return nil
		},
	}
	cmd.Flags().BoolVar(&recompute, "recompute", false, "compute results.json again from run.json, requests.jsonl and cells.jsonl before rendering")
	cmd.Flags().BoolVar(&force, "force", false, "with --recompute: replace results.json even when the recomputed results cover fewer measured requests than it does")
	cmd.Flags().StringVar(&formats, "format", "html,md", "formats to write: html, md, pdf, json, csv (cells.csv: one row per cell; requests.csv: one row per request; frontier.csv: one row per measured level on the buyer's axes) (comma separated)")
	completeValues(cmd, "format", true, fixed(knownFormats...))
	return cmd
}

// recomputeRun writes dir's results.json computed again from the run's records and cell logs.
// It holds the folder's lock (no run is writing it meanwhile), says how many lines of
// requests.jsonl gave no record, and refuses, unless force, to replace results that cover more
// measured requests than the recomputed ones.
func recomputeRun(e *env, dir string, force bool) error {
	man, _, err := store.ReadForResume(dir)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("cannot recompute %s: %w", dir, err))
	}
	lk, err := store.Lock(dir)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("cannot recompute %s: %w", dir, err))
	}
	defer lk.Release()
	recsPath := filepath.Join(dir, store.RecordsFile)
	recs, lines, bad, err := store.ReadRecordsChecked(recsPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return withCode(exitError, fmt.Errorf("cannot recompute %s: %w", dir, err))
	}
	if bad > 0 {
		fmt.Fprintf(e.stderr, "servebench: %s: %d of %d lines hold no readable record (torn, or not a servebench record) and are left out\n", recsPath, bad, lines)
	}
	logs, err := store.ReadCellLogs(filepath.Join(dir, store.CellsFile))
	if errors.Is(err, os.ErrNotExist) {
		return withCode(exitUsage, fmt.Errorf("cannot recompute %s: it has no %s (runs recorded before servebench kept it can only be re-rendered: drop --recompute)", dir, store.CellsFile))
	}
	if err != nil {
		return withCode(exitError, fmt.Errorf("cannot recompute %s: %w", dir, err))
	}
	res, err := runner.Recompute(man, recs, logs)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("cannot recompute %s: %w", dir, err))
	}
	if _, old, lerr := store.Load(dir); lerr == nil && !force {
		if was, now := measuredRequests(old), measuredRequests(res); now < was {
			why := ""
			if bad > 0 {
				why = fmt.Sprintf(" (%d lines of %s hold no readable record)", bad, store.RecordsFile)
			}
			return withCode(exitError, fmt.Errorf("not recomputing %s: its results.json covers %d measured requests, the recomputed results only %d%s; results.json is left as it was. Pass --force to replace it anyway",
				dir, was, now, why))
		}
	}
	if err := store.SaveResults(dir, res); err != nil {
		return withCode(exitError, err)
	}
	fmt.Fprintf(e.stderr, "recomputed %s from %d records and %d cell logs\n", filepath.Join(dir, store.ResultsFile), len(recs), len(logs))
	return nil
}

// measuredRequests counts the requests res's cells measured, warm-up included.
func measuredRequests(res servebench.Results) int {
	n := 0
	for _, c := range res.Cells {
		if !c.Skipped {
			n += c.RequestsTotal + c.WarmupRequests
		}
	}
	return n
}

var knownFormats = []string{"html", "md", "pdf", "json", "csv"}

func parseFormats(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "" {
			continue
		}
		if f == "markdown" {
			f = "md"
		}
		ok := false
		for _, k := range knownFormats {
			ok = ok || k == f
		}
		if !ok {
			return nil, fmt.Errorf("--format %q is unknown: use %s", f, strings.Join(knownFormats, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

// renderRun writes the requested report files into dir.
func renderRun(ctx context.Context, e *env, dir string, man servebench.Manifest, res servebench.Results, formats []string) error {
	samples, _ := store.ReadSamples(filepath.Join(dir, "telemetry.jsonl"))
	rep := report.Build(report.Input{Manifest: man, Results: res, Samples: samples})
	var errs []error
	write := func(name string, render func(*bytes.Buffer) error) {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			errs = append(errs, err)
			return
		}
		fmt.Fprintf(e.stderr, "wrote %s\n", filepath.Join(dir, name))
	}
	wantHTML := false
	for _, f := range formats {
		switch f {
		case "html":
			wantHTML = true
		case "md":
			write("report.md", func(b *bytes.Buffer) error { return report.Markdown(b, rep) })
		case "json":
			write("report.json", func(b *bytes.Buffer) error { return report.JSON(b, rep) })
		case "csv":
			write("cells.csv", func(b *bytes.Buffer) error { return report.CellsCSV(b, res.Cells) })
			if rep.Frontier != nil {
				write("frontier.csv", func(b *bytes.Buffer) error { return report.FrontierCSV(b, rep.Frontier) })
			}
			recs, err := store.ReadRecords(filepath.Join(dir, "requests.jsonl"))
			if err != nil {
				errs = append(errs, fmt.Errorf("requests.csv: %w", err))
				break
			}
			write("requests.csv", func(b *bytes.Buffer) error { return report.RequestsCSV(b, recs) })
		}
	}
	if wantHTML {
		write("report.html", func(b *bytes.Buffer) error { return report.HTML(b, rep) })
	}
	if slices.Contains(formats, "pdf") {
		if err := writePDF(ctx, e, dir, rep, wantHTML); err != nil {
			errs = append(errs, fmt.Errorf("pdf: %w", err))
		}
	}
	return errors.Join(errs...)
}

func printSummary(e *env, man servebench.Manifest, res servebench.Results) {
	rep := report.Build(report.Input{Manifest: man, Results: res})
	if err := report.Terminal(e.stdout, rep); err != nil {
		fmt.Fprintln(e.stderr, "servebench: summary:", err)
	}
}

// withSizing fills results' Capacity Planning when a run recorded without one has capacity
// limits (cold-prompt or users': capacity.Sizable) but no sizing.
func withSizing(res *servebench.Results, p servebench.Plan) {
	if res.Sizing == nil && capacity.Sizable(res.Capacity, res.Users) {
		sz := capacity.Size(res.Capacity, capacity.SizingInput{Plan: p.Sizing, DeclaredGPU: p.Metadata.GPU, Cells: res.Cells, Users: res.Users})
		res.Sizing = &sz
	}
}

// writePDF prints rep to dir/report.pdf from its HTML: the report.html just written when html
// was asked for too, else a copy rendered in a temporary folder, so asking for the PDF alone
// writes nothing else into the run folder.
func writePDF(ctx context.Context, e *env, dir string, rep *report.Report, htmlWritten bool) error {
	src := filepath.Join(dir, "report.html")
	if !htmlWritten {
		tmp, err := os.MkdirTemp("", "servebench-pdf-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		var b bytes.Buffer
		if err := report.HTML(&b, rep); err != nil {
			return err
		}
		src = filepath.Join(tmp, "report.html")
		if err := os.WriteFile(src, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	out := filepath.Join(dir, "report.pdf")
	if err := pdfprint.Print(ctx, src, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s\n", out)
	return nil
}
