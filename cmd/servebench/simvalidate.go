package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/sim/validation"
)

func newSimValidateCmd(e *env) *cobra.Command {
	var summary bool
	cmd := &cobra.Command{
		Use:   "validate [--summary]",
		Short: "Re-run every published reference measurement on the simulator (virtual time) and print the error",
		Long: `Re-runs every published point of the reference benchmark reports (four real configurations:
GLM-4.7-Flash BF16 on 1× H200; Qwen3.6-35B-A3B FP8 + MTP on 1× RTX Pro 6000; Step-3.7-Flash NVFP4 on
2× RTX Pro 6000; Step-3.7-Flash BF16 + MTP on 4× B200, 8× H100 and 8× A100) on the matching simulator
profile, in virtual time, and prints published vs simulated with the relative error, then the median
and worst error per configuration and metric over the held-out points (those not used to fit the
engine-overhead parameters), then the capacity limits of the use cases, then the agreement
targets: over the held-out points, a median error within 20% for TTFT, per-user generation
speed and system throughput, and every capacity limit within 25% (or the same "N+" / "not
viable" kind). It exits 1 when a target is missed, naming it.`,
		Example: `  servebench sim validate
  servebench sim validate --summary`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pts, err := validation.Points()
			if err != nil {
				return withCode(exitError, err)
			}
			r, err := validation.NewRunner()
			if err != nil {
				return withCode(exitError, err)
			}
			t, err := r.Run(pts)
			if err != nil {
				return withCode(exitError, fmt.Errorf("simulating the reference points: %w", err))
			}
			fmt.Fprintln(e.stdout, "SIMULATED vs published: error = (simulated − published) / published.")
			if err := t.WriteText(e.stdout, summary); err != nil {
				return withCode(exitError, err)
			}
			if v := t.Violations(); len(v) > 0 {
				return withCode(exitError, fmt.Errorf("the simulator misses %d of its agreement targets (listed above as MISSED); see docs/simulator.md for why", len(v)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&summary, "summary", false, "print only the error summary and the capacity limits")
	return cmd
}

func simWithValidate(e *env) *cobra.Command {
	c := newSimCmd(e)
	c.AddCommand(newSimValidateCmd(e))
	return c
}

// simValidationNote says, for the report, how far the profile's kind of configuration was from
// published measurements (servebench sim validate).
func simValidationNote(p sim.Profile) string {
	v := p.Validation
	if v.Points == 0 {
		return fmt.Sprintf("Simulator profile %q was not validated against published measurements (it models an imaginary or unmeasured configuration): read its figures as trends, not predictions.", p.Name)
	}
	s := fmt.Sprintf("Simulator agreement: profile %q's kind of configuration was, on %d published points held out from fitting (TTFT, per-user generation speed, system throughput of %s), within a median %.0f%% (worst %.0f%%) of the real measurements",
		p.Name, v.Points, v.Reference, v.MedianErrorPct, v.WorstErrorPct)
	if v.Limits > 0 {
		s += fmt.Sprintf(", and %d of its %d published capacity limits came out within ±%.0f%% (or the same kind)", v.LimitsAgree, v.Limits, 100*validation.CapacityBound)
		if v.Misses != "" {
			s += "; it missed " + v.Misses + ": do not rely on its capacity for that kind of workload"
		}
	}
	return s + ". `servebench sim validate` prints the table."
}
