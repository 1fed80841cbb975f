package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/selfcheck"
)

func newSelfcheckCmd(e *env) *cobra.Command {
	var cfg selfcheck.Config
	cmd := &cobra.Command{
		Use:   "selfcheck [--concurrency N] [--events-per-second R]",
		Short: "Check that this machine can measure a load: stamp error, scheduler latency and CPU at that load",
		Long: `selfcheck streams the planned load from a zero-latency server inside this process to
servebench's own client and reports how late the client stamps first tokens (against the moment
the server's write returned), how long its goroutines wait to run, and how much CPU it needs.
It exits 1 when this machine cannot measure that load to the millisecond. The server shares the
process, so the check is pessimistic: a real run carries only the client.`,
		Example: `  servebench selfcheck --concurrency 256 --events-per-second 5000`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prio := host.PrepareClient() // as a run does
			res, err := selfcheck.Run(cmd.Context(), cfg)
			if err != nil {
				return withCode(exitUsage, err)
			}
			w := e.stdout
			fmt.Fprintf(w, "priority:      %s\n", prio)
			fmt.Fprintf(w, "load:          %d streams, %.0f events/s planned, %.0f delivered (%d requests)\n", res.Concurrency, res.EventsPerSecond, res.AchievedEventsPerSec, res.Requests)
			fmt.Fprintf(w, "clock:         %s\n", res.ClockSource)
			p99 := res.StampError.Max
			if res.StampError.P99 != nil {
				p99 = *res.StampError.P99
			}
			fmt.Fprintf(w, "stamp error:   p50 %.3f ms, p99 %.3f ms, max %.3f ms (first-token stamp − server write)\n", pOr(res.StampError.P50, res.StampError.Mean)*1000, p99*1000, res.StampError.Max*1000)
			fmt.Fprintf(w, "scheduler:     p50 %.3f ms, p99 %.3f ms (goroutine wait before running)\n", res.Sched.P50*1000, res.Sched.P99*1000)
			if res.CPUShare >= 0 {
				fmt.Fprintf(w, "CPU:           %.0f%% of this machine (server included)\n", res.CPUShare*100)
			}
			if res.OK {
				fmt.Fprintln(w, "verdict:       this machine can measure this load")
				return nil
			}
			fmt.Fprintln(w, "verdict:       this machine cannot measure this load to the millisecond:")
			for _, p := range res.Problems {
				fmt.Fprintln(w, "  -", p)
			}
			return withCode(exitError, fmt.Errorf("this machine cannot measure %d streams at %.0f events/s: use a machine with more free CPU, or fewer streams", res.Concurrency, res.EventsPerSecond))
		},
	}
	cmd.Flags().IntVar(&cfg.Concurrency, "concurrency", 16, "streams in flight")
	cmd.Flags().Float64Var(&cfg.EventsPerSecond, "events-per-second", 1000, "token events per second over all streams")
	cmd.Flags().DurationVar(&cfg.Duration, "duration", 5*time.Second, "how long to run the load")
	return cmd
}

func pOr(p *float64, v float64) float64 {
	if p != nil {
		return *p
	}
	return v
}
