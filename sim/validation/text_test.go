package validation

import "testing"

// A published or simulated capacity limit is written as capacity.LimitLabel writes it.
func TestCapacityText(t *testing.T) {
	tests := []struct {
		q    string
		v    float64
		want string
	}{
		{Exact, 24, "24"},
		{Approx, 35, "~35"},
		{AtLeast, 125, "125+"},
		{NotViable, 0, "not viable"},
	}
	for _, tt := range tests {
		if got := valueText("capacity", "", tt.v, tt.q); got != tt.want {
			t.Errorf("capacity %v qualified %q reads %q, want %q", tt.v, tt.q, got, tt.want)
		}
	}
}
