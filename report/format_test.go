package report

import "testing"

func TestFmtUSD(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "$0.00"},
		{12.345, "$12.35"},
		{1, "$1.00"},
		{0.5, "$0.50"},
		{0.03, "$0.030"},
		{0.0149, "$0.015"},
		{0.0025, "$0.0025"},
		{0.001, "$0.0010"},
		{0.00001234, "$0.000012"},
	} {
		if got := fmtUSD(tt.v); got != tt.want {
			t.Errorf("fmtUSD(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
