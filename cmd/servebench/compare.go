package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/report"
)

func newCompareCmd(e *env) *cobra.Command {
	var out, index string
	var prices []string
	q := report.DefaultFrontierQuestion()
	cmd := &cobra.Command{
		Use:   "compare RUN... [--out FILE]",
		Short: "Side-by-side report of several runs (HTML and Markdown)",
		Long: `compare sets runs side by side. A run is named by its folder, or by its id (or a unique prefix
of it) or its label in the runs index (the latest run with that label), so runs that other
machines recorded into a shared store compare as well.`,
		Example: `  servebench compare runs/b200 runs/h100 runs/a100 --out compare.html
  # also writes compare.md next to it
  servebench compare "H100 vLLM" 20261125-0930 --index postgres://bench@db/servebench`,
		Args:              needArgs(2, -1, "run"),
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ins []report.Input
			rr := &runResolver{e: e, index: index}
			defer rr.close()
			for _, name := range args {
				r, err := rr.resolve(cmd.Context(), name)
				if err != nil {
					return err
				}
				ins = append(ins, report.Input{Manifest: r.Manifest, Results: r.Results})
			}
			cmp := report.Compare(ins)
			if q.TargetPerUserTPS <= 0 || q.Users <= 0 {
				return withCode(exitUsage, fmt.Errorf("--target-speed %v and --users %d must both be positive (tok/s per user; concurrent users)", q.TargetPerUserTPS, q.Users))
			}
			var err error
			if q.Prices, err = labelPrices(prices, cmp.Labels); err != nil {
				return withCode(exitUsage, err)
			}
			report.AddFrontier(cmp, ins, q)
			if sec, ok := publishedSection(ins, cmp.Labels); ok {
				insertAfter(cmp, "headline", sec)
			}
			base := strings.TrimSuffix(strings.TrimSuffix(out, ".html"), ".md")
			var h, m bytes.Buffer
			if err := report.CompareHTML(&h, cmp); err != nil {
				return withCode(exitError, err)
			}
			if err := report.CompareMarkdown(&m, cmp); err != nil {
				return withCode(exitError, err)
			}
			if dir := filepath.Dir(base); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return withCode(exitError, err)
				}
			}
			for name, b := range map[string][]byte{base + ".html": h.Bytes(), base + ".md": m.Bytes()} {
				if err := os.WriteFile(name, b, 0o644); err != nil {
					return withCode(exitError, err)
				}
				fmt.Fprintln(e.stderr, "wrote", name)
			}
			_, err = e.stdout.Write(m.Bytes())
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "compare.html", "output file; the Markdown goes next to it with .md")
	cmd.Flags().Float64Var(&q.TargetPerUserTPS, "target-speed", q.TargetPerUserTPS, "the speed each user needs, in tok/s per user: throughput per GPU, cost per 1M tokens and GPUs are read on each run's frontier at it")
	cmd.Flags().IntVar(&q.Users, "users", q.Users, "users to size each run for at --target-speed, counted as Capacity Planning counts them (--users-per-slot active users per request in flight, default 4)")
	cmd.Flags().StringArrayVar(&prices, "gpu-price", nil, "a run's price in USD per GPU-hour by its label, LABEL=USD (repeatable): --gpu-price A100=1.50; without it a run's own --gpu-price, else the public default for its GPU")
	completeFiles(cmd, "out", "html")
	registerIndex(cmd, &index, " (to find runs named by id or label)")
	return cmd
}

// labelPrices reads --gpu-price LABEL=USD values, each label one of the runs'.
func labelPrices(vals, labels []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, v := range vals {
		label, num, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--gpu-price %q: want LABEL=USD per GPU-hour, e.g. --gpu-price A100=1.50", v)
		}
		label = strings.TrimSpace(label)
		if !slices.Contains(labels, label) {
			return nil, fmt.Errorf("--gpu-price %q: no run is labelled %q (the runs are %s)", v, label, strings.Join(labels, ", "))
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || p <= 0 || math.IsInf(p, 0) || math.IsNaN(p) {
			return nil, fmt.Errorf("--gpu-price %q: %q is not a positive price in USD per GPU-hour", v, num)
		}
		out[label] = p
	}
	return out, nil
}

// insertAfter puts s after the section with id after (first when there is none).
func insertAfter(cmp *report.Comparison, after string, s report.Section) {
	i := slices.IndexFunc(cmp.Sections, func(x report.Section) bool { return x.ID == after })
	cmp.Sections = slices.Insert(cmp.Sections, i+1, s)
}
