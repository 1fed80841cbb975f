package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/exchange"
)

// exportFormats are the formats export writes, by the name --format takes.
var exportFormats = map[string]string{
	"llmd-br": "llm-d Benchmark Report v" + exchange.BRVersion + ", one JSON file per measured cell",
}

func newExportCmd(e *env) *cobra.Command {
	var index, format, out string
	cmd := &cobra.Command{
		Use:   "export RUN --format llmd-br --out DIR",
		Short: "Write a run in another tool's result format (llm-d Benchmark Report v0.2.1)",
		Long: `export writes a run in a result format other tools read. RUN is a run folder, a run id or a label
in the runs index.

  llmd-br   llm-d Benchmark Report v` + exchange.BRVersion + ` (llm-d-benchmark, inference-perf): one JSON file
            per measured cell, DIR/RUNID-cell-N.json, as those tools write one report per load
            stage. The report holds aggregates only; docs/exchange.md maps every field and lists
            what the format cannot carry.`,
		Example: `  servebench export runs/h100 --format llmd-br --out br/`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return withCode(exitUsage, fmt.Errorf("export needs one RUN (a run folder, run id or label), got %d", len(args)))
			}
			return nil
		},
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := exportFormats[format]; !ok {
				return withCode(exitUsage, fmt.Errorf("--format %q is not a format export writes; one of: llmd-br", format))
			}
			if out == "" {
				return withCode(exitUsage, fmt.Errorf("--out DIR is needed: the folder to write the reports into"))
			}
			rr := &runResolver{e: e, index: index}
			defer rr.close()
			r, err := rr.resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			brs := exchange.BenchmarkReports(r.Manifest, r.Results)
			if len(brs) == 0 {
				return withCode(exitUsage, fmt.Errorf("%s has no measured cell to export", r.How))
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return withCode(exitError, err)
			}
			for _, br := range brs {
				b, err := json.MarshalIndent(br, "", "  ")
				if err != nil {
					return withCode(exitError, err)
				}
				name := filepath.Join(out, strings.NewReplacer("/", "_", `\`, "_").Replace(br.Run.UID)+".json")
				if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
					return withCode(exitError, err)
				}
			}
			fmt.Fprintf(e.stdout, "wrote %d llm-d Benchmark Report%s v%s of %s to %s\n", len(brs), plural(len(brs)), exchange.BRVersion, r.How, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "llmd-br", "format to write: llmd-br")
	cmd.Flags().StringVar(&out, "out", "", "folder to write into")
	registerIndex(cmd, &index, " (to find a run named by id or label)")
	return cmd
}
