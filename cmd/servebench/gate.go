package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/gate"
	"github.com/servebench/servebench/stats"
)

func newGateCmd(e *env) *cobra.Command {
	var index string
	th := map[gate.Metric]*string{}
	cmd := &cobra.Command{
		Use:   "gate BASELINE CANDIDATE",
		Short: "Fail (exit 5) when a run is worse than a baseline beyond the uncertainty and a threshold, for CI",
		Long: fmt.Sprintf(`gate compares a candidate run with a baseline run metric by metric: output throughput, mean
TTFT and per-user speed at every cell both measured, and the capacity limit of every use case
both searched. A metric fails when the candidate is worse both beyond the two runs' 95%%
uncertainty and by more than its threshold; gate then prints the table and exits 5. A change
inside the noise or under the threshold passes (exit 0). A value that rests on fewer than %d
requests in either run has no interval to judge by: its row reads "too few samples" with both
counts, and a gate with such rows and nothing worse is undecided (exit 6), never passed.

BASELINE and CANDIDATE are each a run folder, a run id (or unique prefix) in the runs index, or a
label: the latest run in the index with that label (the plan's metadata.label, --label).
Thresholds are percentages of the baseline's value; "off" shows a metric without gating it.`, stats.MinIntervalSamples),
		Example: `  servebench gate runs/baseline runs/candidate
  servebench gate "main H100" runs/pr-1234 --throughput 3% --ttft off
  SERVEBENCH_INDEX=postgres://ci@db/servebench servebench gate nightly 20261126-0312`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return withCode(exitUsage, fmt.Errorf("gate needs BASELINE and CANDIDATE (a run folder, run id or label each), got %d argument%s", len(args), plural(len(args))))
			}
			return nil
		},
		ValidArgsFunction: dirArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			thresholds := gate.Thresholds{}
			var bad []string
			for _, m := range gate.Metrics {
				v, on, err := parseThreshold(*th[m])
				if err != nil {
					bad = append(bad, fmt.Sprintf("--%s %s", m, err))
					continue
				}
				if on {
					thresholds[m] = v
				}
			}
			if len(bad) > 0 {
				return withCode(exitUsage, fmt.Errorf("%s", strings.Join(bad, "; ")))
			}
			rr := &runResolver{e: e, index: index}
			defer rr.close()
			b, err := rr.resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := rr.resolve(cmd.Context(), args[1])
			if err != nil {
				return err
			}
			res := gate.Decide(b.Results, c.Results, thresholds)
			fmt.Fprintf(e.stdout, "baseline:  %s\ncandidate: %s\n", servebench.TerminalText(b.How, termLine, false), servebench.TerminalText(c.How, termLine, false))
			if b.Manifest.Simulated != c.Manifest.Simulated {
				fmt.Fprintln(e.stdout, "note: one run measured the SIMULATED engine and the other a real server")
			}
			if len(res.Rows) == 0 {
				return withCode(exitUsage, fmt.Errorf("the two runs have no cell and no use case in common to compare (same context, output length, concurrency and load mode; same use case names)"))
			}
			if err := gateTable(e, res); err != nil {
				return err
			}
			failed, undecided := res.Failed(), res.Undecided()
			fmt.Fprintf(e.stdout, "\n%d common cell%s, %d common use case%s; a metric is WORSE when the candidate is worse beyond the 95%% interval of the difference and by more than its threshold.\n",
				res.CommonCells, plural(res.CommonCells), res.CommonUseCases, plural(res.CommonUseCases))
			tooFew := ""
			if len(undecided) > 0 {
				tooFew = fmt.Sprintf("%d gated metric%s rest%s on fewer than %d requests in a run (the fewest servebench judges an interval from), so whether %s worse is not known: measure both runs with at least %d successful requests per cell (servebench run --min-requests %d, the default, with --max-requests and --max-duration that let each cell reach it) and gate again",
					len(undecided), plural(len(undecided)), map[bool]string{true: "s", false: ""}[len(undecided) == 1], stats.MinIntervalSamples,
					map[bool]string{true: "it is", false: "they are"}[len(undecided) == 1], stats.MinIntervalSamples, stats.MinIntervalSamples)
			}
			if len(failed) > 0 {
				if tooFew != "" {
					fmt.Fprintf(e.stdout, "also: %s.\n", tooFew)
				}
				return withCode(exitRegression, fmt.Errorf("gate failed: %d metric%s worse than the baseline beyond the uncertainty and the threshold", len(failed), plural(len(failed))))
			}
			if tooFew != "" {
				return withCode(exitUndecided, fmt.Errorf("gate undecided: %s", tooFew))
			}
			fmt.Fprintln(e.stdout, "gate passed: nothing worse than the baseline beyond both the uncertainty and the threshold")
			return nil
		},
	}
	defaults := gate.DefaultThresholds()
	help := map[gate.Metric]string{
		gate.Throughput: "largest drop in output throughput (tokens/s) at a common cell",
		gate.TTFT:       "largest rise in mean time to first token at a common cell",
		gate.Speed:      "largest drop in mean per-user generation speed at a common cell",
		gate.Capacity:   "largest drop in a use case's capacity limit (users)",
	}
	for _, m := range gate.Metrics {
		th[m] = new(string)
		cmd.Flags().StringVar(th[m], string(m), strconv.FormatFloat(defaults[m]*100, 'f', -1, 64)+"%", help[m]+", as a percentage of the baseline; off = not gated")
	}
	registerIndex(cmd, &index, " (to find runs named by id or label)")
	return cmd
}

// parseThreshold reads a threshold flag: a percentage ("5%", "5", "2.5%") or "off".
func parseThreshold(s string) (v float64, on bool, err error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if perr != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, fmt.Errorf("%q is not a percentage (e.g. 5%%) or off", s)
	}
	return f / 100, true, nil
}

// gateTable prints the gate's rows, one per metric and cell or use case.
func gateTable(e *env, res gate.Result) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tWHERE\tBASELINE\tCANDIDATE\tCHANGE\t95% INTERVAL OF DIFFERENCE\tTHRESHOLD\tVERDICT")
	for _, r := range res.Rows {
		diff := "none"
		switch {
		case r.Diff != nil:
			diff = fmt.Sprintf("[%s, %s] %s", num(r.Diff.Low), num(r.Diff.High), r.Unit)
		case r.Metric != gate.Capacity && !stats.IntervalShown(min(r.BaselineN, r.CandidateN)):
			diff = fmt.Sprintf("n<%d", stats.MinIntervalSamples)
		}
		verdict := string(r.Outcome)
		if r.Outcome == gate.TooFew {
			verdict = fmt.Sprintf("too few samples to judge (%d and %d requests; an interval needs %d)", r.BaselineN, r.CandidateN, stats.MinIntervalSamples)
		}
		thr := "off"
		if r.Gated {
			thr = fmt.Sprintf("%s%.3g%%", map[bool]string{true: "-", false: "+"}[r.Metric != gate.TTFT], r.Threshold*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s %s\t%s\t%s\t%s\t%s\n", r.Metric, servebench.TerminalText(r.Where, 60, false),
			num(r.Baseline), r.Unit, num(r.Candidate), r.Unit, pct(r.Change), diff, thr, verdict)
	}
	return tw.Flush()
}

// num writes a value with 4 significant digits; an unbounded end as ∞.
func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// pct writes a relative change as a signed percentage.
func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", v*100)
}
