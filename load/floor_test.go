package load

import (
	"fmt"
	"testing"
)

// MeasuredFloorText is MeasuredFloor written out: evaluated at N = 1…64 it gives the floor
// itself, and it names the fixed term only where that term binds for some N ≥ 1.
func TestMeasuredFloorTextIsTheFloor(t *testing.T) {
	for _, tt := range []struct {
		s    Sizing
		want string
	}{
		{Sizing{MinRequests: 10, Rounds: 3}, "max(10, 3 × N)"},
		{Sizing{MinRequests: 2, Rounds: 1}, "2 × N"},         // the window rule's 2 × N beats both
		{Sizing{}, "2 × N"},                                  // no floors: the window rule alone
		{Sizing{MinRequests: 3, Rounds: 2}, "max(3, 2 × N)"}, // 3 binds at N = 1
		{Sizing{MinRequests: 4, Rounds: 5}, "5 × N"},         // 5 × N ≥ 5 > 4 always
		{Sizing{MinRequests: 5, Rounds: 5}, "5 × N"},         // equal at N = 1, below after
	} {
		got := tt.s.MeasuredFloorText()
		if got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
		for n := 1; n <= 64; n++ {
			var fixed, perSlot int
			if _, err := fmt.Sscanf(got, "max(%d, %d × N)", &fixed, &perSlot); err != nil {
				if _, err := fmt.Sscanf(got, "%d × N", &perSlot); err != nil {
					t.Fatalf("%q is not a floor formula", got)
				}
			}
			if v := max(fixed, perSlot*n); v != tt.s.MeasuredFloor(n) || v != tt.s.Minimum(n)-n {
				t.Errorf("%+v at N = %d: %q reads %d, MeasuredFloor %d, Minimum − N %d", tt.s, n, got, v, tt.s.MeasuredFloor(n), tt.s.Minimum(n)-n)
			}
		}
	}
}
