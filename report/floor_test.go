package report

import (
	"testing"

	"github.com/servebench/servebench"
)

// The request floor names only the terms that can bind for some N ≥ 1.
func TestRequestFloor(t *testing.T) {
	for _, tt := range []struct {
		minReq, rounds int
		want           string
	}{
		{10, 3, "max(10, 3 × N)"},
		{2, 1, "2 × N"}, // 2 ≤ 2 × N and 1 × N ≤ 2 × N always
		{0, 0, "2 × N"},
		{3, 2, "max(3, 2 × N)"}, // 3 binds at N = 1
		{2, 5, "5 × N"},
	} {
		if got := requestFloor(servebench.Sweep{MinRequests: tt.minReq, Rounds: tt.rounds}); got != tt.want {
			t.Errorf("min_requests %d, rounds %d: %q, want %q", tt.minReq, tt.rounds, got, tt.want)
		}
	}
}
