package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/exchange"
	"github.com/servebench/servebench/store"
)

func newImportCmd(e *env) *cobra.Command {
	var from, label, out, index, mode, simProfile string
	var ctxTokens, outTokens int
	cmd := &cobra.Command{
		Use:   "import --from vllm|guidellm|aiperf FILE [--label L] [--out DIR]",
		Short: "Record another tool's result file (vllm bench serve, GuideLLM, AIPerf) as a run to compare",
		Long: `import reads a result file of another benchmark tool and records it as a run: a run folder
(run.json naming the tool and the file, results.json with one cell per load point of the file,
keyed like servebench's cells) indexed in the runs index, so runs, compare, serve and site set it
beside servebench's own runs, labelled as imported.

  vllm       the JSON of vllm bench serve --save-result (one load point; with --append-result,
             one per line). With --save-detailed its per-request figures give every summary
             and its 95% interval; without, the file's mean, median, p99 and std are used.
  guidellm   GuideLLM's benchmarks.json: one cell per benchmark (load stage).
  aiperf     AIPerf's profile_export_aiperf.json (GenAI-Perf's has the same shape).

The figures are the tool's own, under its definitions: vllm's TTFT stops at the first chunk
(a role-only chat chunk counts), its TPOT is servebench's ITL, GuideLLM's TPOT includes TTFT,
and the tools divide throughput by the whole benchmark where servebench takes a steady-state
window. docs/exchange.md maps every field and says where each definition differs. A value the
file does not have is left out, never written as zero.

compare sets cells side by side when their load mode, prompt and output length and concurrency
agree: --mode, --context and --output-tokens rekey the imported cells to match a servebench run.`,
		Example: `  servebench import --from vllm vllm-result.json --label "vllm bench serve"
  servebench compare "vllm bench serve" runs/h100
  servebench import --from guidellm benchmarks.json --mode sustained --context 1k`,
		Args:              needArgs(1, 1, "result file"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := exchange.Format(strings.ToLower(from))
			known := false
			for _, k := range exchange.Formats {
				known = known || k == f
			}
			if !known {
				return withCode(exitUsage, fmt.Errorf("--from %q: say which tool wrote the file: --from vllm (vllm bench serve --save-result), guidellm (benchmarks.json) or aiperf (profile_export_aiperf.json)", from))
			}
			opt := exchange.ImportOptions{File: args[0], Label: label, SimProfile: simProfile, ToolVersion: version,
				Command: append([]string{"servebench"}, e.args[min(1, len(e.args)):]...), Now: time.Now()}
			switch m := servebench.LoadMode(mode); m {
			case "", servebench.ModeSustained, servebench.ModeDedicated, servebench.ModeFixed, servebench.ModeRate:
				opt.Mode = m
			default:
				return withCode(exitUsage, fmt.Errorf("--mode %q: one of sustained, dedicated, fixed, rate (the mode of the servebench run to compare with)", mode))
			}
			for _, t := range []struct {
				flag string
				v    int
				dst  *int
			}{{"--context", ctxTokens, &opt.ContextTokens}, {"--output-tokens", outTokens, &opt.OutputTokens}} {
				if t.v < 0 {
					return withCode(exitUsage, fmt.Errorf("%s %d: a token count cannot be negative", t.flag, t.v))
				}
				*t.dst = t.v
			}
			data, err := readImportFile(args[0])
			if err != nil {
				return withCode(exitUsage, err)
			}
			m, res, err := exchange.Import(f, data, opt)
			if err != nil {
				return withCode(exitUsage, err)
			}
			dir := out
			if dir == "" {
				dir = filepath.Join("runs", m.ID)
			}
			if err := writeImported(dir, m, res); err != nil {
				return withCode(exitError, err)
			}
			fmt.Fprintf(e.stdout, "imported %d cell%s from %s (%s) as run %s into %s\n", len(res.Cells), plural(len(res.Cells)), servebench.TerminalText(args[0], 0, false), f.Tool(), m.ID, dir)
			printImportedCells(e.stdout, res)
			fmt.Fprintf(e.stdout, "figures are %s's own, under its definitions: docs/exchange.md says where they differ from servebench's\n", f.Tool())
			if index != "none" {
				ix, err := openIndex(e, index)
				if err != nil {
					return err
				}
				defer ix.Close()
				abs, _ := filepath.Abs(dir)
				if err := ix.PutContext(cmd.Context(), abs, m, res); err != nil {
					return withCode(exitError, fmt.Errorf("runs index %s: %w", ix.Where(), err))
				}
				fmt.Fprintf(e.stdout, "indexed in %s as %q: servebench compare %q RUN\n", ix.Where(), m.Plan.Metadata.Label, m.Plan.Metadata.Label)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "the tool that wrote FILE: vllm, guidellm or aiperf")
	fl.StringVar(&label, "label", "", "the run's label in compare and the runs index (default \"TOOL import\")")
	fl.StringVar(&out, "out", "", "run folder to create (default runs/<run id>)")
	fl.StringVar(&mode, "mode", "", "load mode to key the cells by (default: the tool's: vllm and AIPerf fixed, GuideLLM's concurrent sustained, its rates rate)")
	fl.IntVar(&ctxTokens, "context", 0, "prompt tokens to key the cells by (default: the file's mean per request, rounded)")
	fl.IntVar(&outTokens, "output-tokens", 0, "output tokens to key the cells by (default: the file's mean per request, rounded)")
	fl.StringVar(&simProfile, "simulated", "", "the file measured servebench's simulator with this profile: mark the run SIMULATED")
	_ = cmd.RegisterFlagCompletionFunc("from", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"vllm", "guidellm", "aiperf"}, cobra.ShellCompDirectiveNoFileComp
	})
	registerIndex(cmd, &index, " (none: do not index)")
	return cmd
}

// readImportFile reads a result file, refusing one above exchange.MaxImportBytes before
// reading it whole.
func readImportFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist: name the result file the tool wrote", path)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a folder: name the result file in it (vllm's --result-filename, GuideLLM's benchmarks.json, AIPerf's profile_export_aiperf.json)", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, exchange.MaxImportBytes+1))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// writeImported creates the run folder of an imported run: run.json and results.json (its
// requests.jsonl stays empty: the tool's per-request records are not servebench's).
func writeImported(dir string, m servebench.Manifest, res servebench.Results) error {
	r, err := store.Create(dir, m)
	if err != nil {
		return err
	}
	if err := r.WriteResults(res); err != nil {
		r.Close()
		return err
	}
	return r.Close()
}

// printImportedCells lists the imported cells: their key and headline figures.
func printImportedCells(w io.Writer, res servebench.Results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CELL\tREQUESTS\tOUTPUT tok/s\tTTFT mean\tITL mean")
	ms := func(s servebench.Summary) string {
		if s.Count == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f ms", s.Mean*1000)
	}
	for _, c := range res.Cells {
		fmt.Fprintf(tw, "  %s\t%d/%d\t%.1f\t%s\t%s\n", c.ID(), c.RequestsSucceeded, c.RequestsTotal, c.SystemOutputThroughputTPS, ms(c.TTFTSeconds), ms(c.ITLSeconds))
	}
	tw.Flush()
}
