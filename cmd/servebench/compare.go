package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/report"
	"github.com/servebench/servebench/store"
)

func newCompareCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR... [--out FILE]",
		Short: "Side-by-side report of several runs (HTML and Markdown)",
		Example: `  servebench compare runs/b200 runs/h100 runs/a100 --out compare.html
  # also writes compare.md next to it`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ins []report.Input
			for _, dir := range args {
				man, res, _, err := store.Load(dir)
				if err != nil {
					return withCode(exitUsage, fmt.Errorf("%s is not a readable run folder: %w", dir, err))
				}
				ins = append(ins, report.Input{Manifest: man, Results: res})
			}
			cmp := report.Compare(ins)
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
			_, err := e.stdout.Write(m.Bytes())
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "compare.html", "output file; the Markdown goes next to it with .md")
	completeFiles(cmd, "out", "html")
	return cmd
}
