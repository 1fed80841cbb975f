package validation

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// WriteText prints the table: every point (unless summaryOnly), then the median and worst
// |error| per configuration and metric over the held-out points, then the capacity limits.
func (t Table) WriteText(w io.Writer, summaryOnly bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Each published level is re-run in virtual time as its source measured it:")
	seen := map[string]bool{}
	for _, c := range Configs() {
		m := c.Method()
		if seen[m] {
			continue
		}
		seen[m] = true
		var ids []string
		for _, d := range Configs() {
			if d.Method() == m {
				ids = append(ids, d.ID)
			}
		}
		fmt.Fprintf(tw, "  %s: %s.\n", strings.Join(ids, ", "), m)
	}
	fmt.Fprintln(tw)
	if !summaryOnly {
		fmt.Fprintln(tw, "CONFIGURATION\tSECTION\tMETRIC\tWORKLOAD\tSET\tPUBLISHED\tSIMULATED\tERROR")
		for _, r := range t.Rows {
			set := "held out"
			if r.Fit {
				set = "fitted"
			}
			sim, e := r.simText(), errText(r.Err)
			if r.Skipped != "" {
				sim, e = "—", "not simulated ("+r.Skipped+")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Config, r.Section, r.Metric, r.workload(),
				set, r.pubText(), sim, e)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "ERROR OVER HELD-OUT POINTS\tMETRIC\tPOINTS\tMEDIAN |ERROR|\tWORST")
	for _, s := range t.Stats(true) {
		if s.Metric == "capacity" {
			continue
		}
		cfg := s.Config
		if cfg == "" {
			cfg = "all configurations"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f%%\t%s\n", cfg, s.Metric, s.Points, 100*s.MedianAbs, errText(s.Worst))
	}
	for _, c := range Configs() {
		if g := Gaps[c.ID]; g != "" {
			fmt.Fprintf(tw, "GAP %s: %s\n", c.ID, g)
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "CAPACITY LIMIT\tUSE CASE\tPUBLISHED\tSIMULATED\tFIRST FAILING\tERROR\tAGREES (±%.0f%% of either, or same N+ / not viable)\n", 100*CapacityBound)
	agree, limits := 0, 0
	for _, r := range t.Rows {
		if r.Metric != "capacity" {
			continue
		}
		limits++
		if r.Agrees() {
			agree++
		}
		fail := "—"
		if r.FirstFailing > 0 {
			fail = fmt.Sprintf("%.0f", r.FirstFailing)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Config, r.UseCase, r.pubText(), r.simText(), fail, errText(r.Err), yesNo(r.Agrees()))
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "TARGETS: held-out median |error| of %s within %.0f%% (all configurations); every capacity limit within ±%.0f%% or the same kind: %d of %d agree.\n",
		strings.Join(Headline, ", "), 100*MedianBound, 100*CapacityBound, agree, limits)
	v := t.Violations()
	if len(v) == 0 {
		fmt.Fprintln(tw, "All targets met.")
	}
	for _, line := range v {
		fmt.Fprintln(tw, "MISSED: "+line)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func errText(e float64) string {
	if math.IsNaN(e) {
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", 100*e)
}

func (r Row) workload() string {
	if r.Metric == "capacity" {
		return fmt.Sprintf("%s in, %d out", tokens(r.Context), r.Output)
	}
	if c, _ := ConfigByID(r.Config); c.Prompts > 0 {
		return fmt.Sprintf("%s in, %d out, %d conc., %d prompts", tokens(r.Context), r.Output, r.Concurrency, c.Prompts)
	}
	return fmt.Sprintf("%s in, %d out, %d conc.", tokens(r.Context), r.Output, r.Concurrency)
}

func tokens(n int) string {
	if n%1024 == 0 {
		return strconv.Itoa(n/1024) + "K"
	}
	return strconv.Itoa(n)
}

func (r Row) pubText() string { return valueText(r.Metric, r.Unit, r.Value, r.Qualifier) }

func (r Row) simText() string { return valueText(r.Metric, r.Unit, r.Simulated, r.SimKind) }

func valueText(metric, unit string, v float64, q string) string {
	if metric == "capacity" {
		return capacityLabel(v, q)
	}
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if v >= 1000 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if q == Approx {
		s = "~" + s
	}
	return s + " " + unit
}

// capacityLabel writes a capacity limit v of qualifier q as capacity.LimitLabel does: "24",
// "~35", "125+", "not viable".
func capacityLabel(v float64, q string) string {
	n := int(math.Round(v))
	r := servebench.CapacityResult{Limit: &n, LimitKind: servebench.LimitMeasured}
	switch q {
	case NotViable:
		r.LimitKind, r.Limit = servebench.LimitNotViable, nil
	case AtLeast:
		r.LimitKind = servebench.LimitLowerBound
	case Approx:
		r.LimitKind = servebench.LimitInterpolated
	}
	return capacity.LimitLabel(r)
}
