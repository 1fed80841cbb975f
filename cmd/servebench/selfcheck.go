package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/selfcheck"
)

func newSelfcheckCmd(e *env) *cobra.Command {
	var cfg selfcheck.Config
	var search selfcheck.SearchConfig
	cmd := &cobra.Command{
		Use:   "selfcheck [--concurrency N --events-per-second R | --up-to N --per-stream R]",
		Short: "Find the load this machine can measure to the millisecond: stamp error, scheduler latency and CPU",
		Long: `selfcheck streams a load from a zero-latency server inside this process to servebench's own
client and reports how late the client stamps first tokens (against the moment the server's
write returned), how long its goroutines wait to run, and how much CPU it needs. The streams
start evenly spread over one request's length (16 events); each stream's first request is the
warm-up, as in a sustained cell: the load is measured for --duration from the moment the last
of them ends (the warm-up's stamp error is shown, not judged).

Without --concurrency it searches: 16 streams, then twice as many each time up to --up-to, each
stream at --per-stream events/s, until a load breaks the 1 ms bound; it says the largest load
this machine measured within it, and why the next did not hold. With --concurrency (and
--events-per-second) it checks that one load and exits 1 when this machine cannot measure it to
the millisecond. The server shares the process, so the check is pessimistic: a real run carries
only the client.`,
		Example: `  servebench selfcheck
  servebench selfcheck --up-to 8192 --per-stream 10
  servebench selfcheck --concurrency 256 --events-per-second 5000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prio := host.PrepareClient() // as a run does
			w := e.stdout
			fmt.Fprintf(w, "priority:      %s\n", prio)
			if !cmd.Flags().Changed("concurrency") && !cmd.Flags().Changed("events-per-second") {
				return runSelfcheckSearch(cmd, e, search)
			}
			res, err := selfcheck.Run(cmd.Context(), cfg)
			if err != nil {
				return withCode(exitUsage, err)
			}
			fmt.Fprintf(w, "load:          %d streams, %.0f events/s planned, %.0f delivered (%d requests measured over %s, after a warm-up of %.1f s)\n", res.Concurrency, res.EventsPerSecond, res.AchievedEventsPerSec, res.Requests, res.Duration, res.WarmupSeconds)
			fmt.Fprintf(w, "clock:         %s\n", res.ClockSource)
			mx := pOr(res.StampError.Max, 0)
			p99 := stampP99(res)
			fmt.Fprintf(w, "stamp error:   p50 %.3f ms, p99 %.3f ms, max %.3f ms (first-token stamp − server write)\n", pOr(res.StampError.P50, res.StampError.Mean)*1000, p99*1000, mx*1000)
			if res.Lag.Count > 0 {
				fmt.Fprintf(w, "read lag:      p50 %.3f ms, p99 %.3f ms (first token's read − its kernel stamp); %d of %d first tokens read after their stream's next event (stamped a gap late)\n", pOr(res.Lag.P50, res.Lag.Mean)*1000, pOr(res.Lag.P99, pOr(res.Lag.Max, 0))*1000, res.Coalesced, res.Requests)
			}
			if wp := res.WarmupStampError; wp.Count > 0 {
				fmt.Fprintf(w, "warm-up:       stamp error p50 %.3f ms, p99 %.3f ms over every stream's first request (not judged)\n", pOr(wp.P50, wp.Mean)*1000, pOr(wp.P99, pOr(wp.Max, 0))*1000)
			}
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
	cmd.Flags().IntVar(&cfg.Concurrency, "concurrency", 16, "check this one load: streams in flight")
	cmd.Flags().Float64Var(&cfg.EventsPerSecond, "events-per-second", 1000, "check this one load: token events per second over all streams")
	cmd.Flags().DurationVar(&cfg.Duration, "duration", 5*time.Second, "how long to measure the load after its warm-up (each load of a search: 3s unless set)")
	cmd.Flags().IntVar(&search.UpTo, "up-to", 4096, "search: the most streams to try")
	cmd.Flags().Float64Var(&search.PerStream, "per-stream", 5, "search: token events per second of each stream")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("duration") {
			search.Step = cfg.Duration
		}
		return nil
	}
	return cmd
}

// runSelfcheckSearch runs selfcheck.Search, a line per load, and says the largest load that held.
func runSelfcheckSearch(cmd *cobra.Command, e *env, cfg selfcheck.SearchConfig) error {
	w := e.stdout
	fmt.Fprintf(w, "search:        streams doubling up to %d, %g events/s each; limits: stamp error and scheduler p99 ≤ 1 ms, CPU ≤ %.0f%%\n", cfg.UpTo, cfg.PerStream, selfcheck.MaxCPUShare*100)
	cfg.Progress = func(r selfcheck.Result) {
		verdict := "holds"
		if !r.OK {
			verdict = "breaks: " + strings.Join(r.Problems, "; ")
		}
		fmt.Fprintf(w, "  %5d streams %8.0f events/s: stamp p99 %.3f ms, scheduler p99 %.3f ms, CPU %.0f%%, clock %s: %s\n",
			r.Concurrency, r.EventsPerSecond, stampP99(r)*1000, r.Sched.P99*1000, max(r.CPUShare, 0)*100, r.ClockSource, verdict)
	}
	out, err := selfcheck.Search(cmd.Context(), cfg)
	if err != nil {
		return withCode(exitUsage, err)
	}
	switch {
	case out.Held == nil:
		fmt.Fprintf(w, "verdict:       this machine cannot measure even %d streams at %.0f events/s to the millisecond\n", out.Failed.Concurrency, out.Failed.EventsPerSecond)
		return withCode(exitError, fmt.Errorf("this machine cannot measure %d streams to the millisecond: use a machine with more free CPU", out.Failed.Concurrency))
	case out.Failed == nil:
		fmt.Fprintf(w, "verdict:       this machine holds the 1 ms bound up to %d streams at %.0f events/s (the most tried; --up-to to try more)\n", out.Held.Concurrency, out.Held.EventsPerSecond)
	default:
		fmt.Fprintf(w, "verdict:       this machine holds the 1 ms bound up to %d streams at %.0f events/s; not at %d streams (%.0f events/s)\n",
			out.Held.Concurrency, out.Held.EventsPerSecond, out.Failed.Concurrency, out.Failed.EventsPerSecond)
	}
	return nil
}

// stampP99 is the check's first-token stamp error at p99 (the maximum with too few requests).
func stampP99(r selfcheck.Result) float64 {
	return pOr(r.StampError.P99, pOr(r.StampError.Max, 0))
}

func pOr(p *float64, v float64) float64 {
	if p != nil {
		return *p
	}
	return v
}
