package validation

import (
	"flag"
	"fmt"
	"math"
	"testing"
)

func TestReferenceParsesAndCoversEveryConfig(t *testing.T) {
	pts, err := Points()
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]map[string]int{}
	for _, p := range pts {
		if per[p.Config] == nil {
			per[p.Config] = map[string]int{}
		}
		per[p.Config][p.Metric]++
		if p.Fit {
			per[p.Config]["fit"]++
		} else {
			per[p.Config]["holdout"]++
		}
	}
	for _, c := range Configs() {
		m := per[c.ID]
		if m["ttft_s"] == 0 || m["gen_tps"] == 0 || m["system_tps"] == 0 {
			t.Errorf("%s: needs TTFT, generation speed and throughput points, has %v", c.ID, m)
		}
		if m["holdout"] == 0 {
			t.Errorf("%s: no held-out point", c.ID)
		}
	}
	if len(pts) < 150 {
		t.Errorf("%d points; the four reports publish more", len(pts))
	}
}

var printFlag = flag.Bool("print", false, "print every compared point")

// TestPrintTable prints every point: go test ./sim/validation -run TestPrintTable -v -args -print
func TestPrintTable(t *testing.T) {
	if !*printFlag {
		t.Skip("set -print to print the table")
	}
	r, err := NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Points()
	tab, err := r.Run(pts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range tab.Rows {
		f := " "
		if row.Fit {
			f = "F"
		}
		fmt.Printf("%-38s %s %-11s %7d %5d %4d %10.4g %10.4g %+6.0f%% %s %s\n", row.Config, f, row.Metric, row.Context, row.Output, row.Concurrency, row.Value, row.Simulated, 100*row.Err, row.Qualifier, row.SimKind)
	}
	for _, s := range tab.Stats(true) {
		fmt.Printf("%-38s %-11s n=%2d median %5.0f%% worst %+5.0f%%\n", s.Config, s.Metric, s.Points, 100*s.MedianAbs, 100*s.Worst)
	}
	_ = math.NaN
}
