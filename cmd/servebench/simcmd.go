package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/sim"
)

func newSimCmd(e *env) *cobra.Command {
	var listen, profile, name, reasoningField string
	var list, reqMetrics bool
	var reasoning int
	cmd := &cobra.Command{
		Use:   "sim [--listen ADDR] [--profile NAME]",
		Short: "Serve the simulated engine (OpenAI-compatible, /metrics, /dcgm/metrics) until interrupted",
		Example: `  servebench sim --listen 127.0.0.1:18000
  servebench sim --profile h100-llama8b --request-metrics
  servebench sim --reasoning-tokens 256          # a reasoning model: thinks before it answers
  servebench sim --list
  servebench sim validate                        # the simulator against published measurements`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				return listProfiles(e.stdout)
			}
			prof, err := sim.LookupProfile(profile)
			if err != nil {
				return withCode(exitUsage, err)
			}
			if reasoning < 0 {
				return withCode(exitUsage, fmt.Errorf("--reasoning-tokens %d: give 0 (no reasoning) or a positive token count", reasoning))
			}
			if reasoningField != sim.ReasoningFieldContent && reasoningField != sim.ReasoningFieldShort {
				return withCode(exitUsage, fmt.Errorf("--reasoning-field %q: use %s (DeepSeek, vLLM reasoning parsers) or %s (newer vLLM)", reasoningField, sim.ReasoningFieldContent, sim.ReasoningFieldShort))
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--listen %q: %v (write host:port, e.g. 127.0.0.1:18000)", listen, err))
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				fmt.Fprintf(e.stderr, "warning: listening on %s, reachable beyond this machine\n", listen)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--listen %s: %w", listen, err))
			}
			ctx := cmd.Context()
			srv := sim.New(prof, sim.Options{RequestMetrics: reqMetrics, ServedModelName: name, Seed: time.Now().UnixNano(),
				ReasoningTokens: reasoning, ReasoningField: reasoningField})
			srv.Start(ctx)
			defer srv.Close()
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = hs.Shutdown(sctx)
			}()
			base := "http://" + ln.Addr().String()
			fmt.Fprintf(e.stderr, "servebench sim: SIMULATED engine, profile %q\n  API      %s/v1\n  metrics  %s/metrics\n  GPU      %s/dcgm/metrics  (--gpu dcgm=%s/dcgm/metrics)\n",
				prof.Name, base, base, base, base)
			if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
				return withCode(exitError, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "127.0.0.1:18000", "address to listen on")
	fl.StringVar(&profile, "profile", "fast", "hardware × model profile (see --list)")
	fl.StringVar(&name, "served-model-name", "", "model id to serve (default from the profile)")
	fl.BoolVar(&list, "list", false, "list the profiles and exit")
	fl.BoolVar(&reqMetrics, "request-metrics", false, "attach vLLM-style per-request metrics to the final chunk")
	fl.IntVar(&reasoning, "reasoning-tokens", 0, "simulate a reasoning model: stream this many reasoning tokens before each chat answer")
	fl.StringVar(&reasoningField, "reasoning-field", sim.ReasoningFieldContent, "delta field of the reasoning text: reasoning_content or reasoning")
	completeValues(cmd, "profile", false, profileNames)
	completeValues(cmd, "reasoning-field", false, fixed("reasoning_content", "reasoning"))
	return cmd
}

// listWidth is the width sim --list fits in (columns).
const listWidth = 100

// listProfiles writes every simulator profile in listWidth columns: its name, then indented its
// description and how far it is from published measurements — its own, or, for a profile never
// measured itself, those of the validated kind it borrows its fit from, said as such.
func listProfiles(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Simulator profiles (servebench run --sim-profile NAME); error = held-out published points\n")
	for _, p := range sim.Profiles() {
		v := p.Validation
		line := "not validated against published measurements: read its figures as trends"
		if v.Points > 0 {
			line = "validated: " + v.Summary()
			if ref, borrowed := strings.CutSuffix(v.Reference, " (nearest validated kind)"); borrowed {
				v.Reference = ref
				line = "not measured itself; fitted as the validated " + ref + ": " + v.Summary()
			}
		}
		b.WriteString("\n" + p.Name + "\n")
		for _, para := range []string{p.Description, line} {
			for _, l := range wrap(para, listWidth-4, listWidth-6) {
				b.WriteString(l + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap breaks s at spaces into lines of at most first columns (the first, indented by 4) and
// rest columns (the others, indented by 6); a word longer than a line stands alone.
func wrap(s string, first, rest int) []string {
	var out []string
	width, indent := first, "    "
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) > width {
			out = append(out, indent+cur)
			cur, width, indent = "", rest, "      "
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		out = append(out, indent+cur)
	}
	return out
}
