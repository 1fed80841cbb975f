package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
)

func newSiteCmd(e *env) *cobra.Command {
	f := pagesFlags{e: e}
	cmd := &cobra.Command{
		Use:   "site OUT_DIR [RUN_DIR...]",
		Short: "Write the benchmark pages of every recorded run as a static site",
		Long: `site writes the pages of servebench serve into OUT_DIR as plain files with relative links: the
list of runs, a page and the full report per run, the comparison page and the JSON documents
(api/v1/runs.json, api/v1/runs/ID.json). Host the folder on any static file server or open
index.html from disk; the what-if and the values read between cells work offline.`,
		Example: `  servebench site public/
  servebench site public/ runs/extra-run`,
		ValidArgsFunction: dirArgs,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(exitUsage, fmt.Errorf("site needs OUT_DIR, the folder to write the pages into (see servebench site --help)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, closeIndex, err := f.pages(args[1:])
			if err != nil {
				return err
			}
			defer closeIndex()
			n, err := p.WriteSite(cmd.Context(), args[0])
			if err != nil {
				return withCode(exitError, err)
			}
			fmt.Fprintf(e.stdout, "wrote %d run page%s to %s (open %s)\n", n, plural(n), args[0], filepath.Join(args[0], "index.html"))
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
