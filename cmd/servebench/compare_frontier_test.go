package main

import (
	"strings"
	"testing"
)

// TestLabelPrices: compare's --gpu-price LABEL=USD names a run by its label and a positive
// price; anything else is refused with the cause and the form to use.
func TestLabelPrices(t *testing.T) {
	labels := []string{"B200", "A100"}
	got, err := labelPrices([]string{"A100=1.50", " B200 = 3.1 "}, labels)
	if err != nil || got["A100"] != 1.50 || got["B200"] != 3.1 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{"A100", "want LABEL=USD"},              // no price
		{"H100=2", `no run is labelled "H100"`}, // not one of the runs
		{"A100=-1", "not a positive price"},     // negative
		{"A100=NaN", "not a positive price"},    // not a number a price can be
		{"A100=1.5$", "not a positive price"},   // a unit glued on
	} {
		if _, err := labelPrices([]string{c.in}, labels); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.in, err, c.want)
		}
	}
}
