package stats

import "testing"

// TestMemo: an answer is computed once, a different key computes its own, and the memo starts
// over when it is full rather than growing.
func TestMemo(t *testing.T) {
	var m memo[int, int]
	calls := 0
	sq := func(k int) int { return m.get(k, func() int { calls++; return k * k }) }
	first, second := sq(3), sq(3)
	if first != 9 || second != 9 || calls != 1 {
		t.Fatalf("calls %d after asking for 3 twice, want 1", calls)
	}
	for k := range memoLimit + 10 {
		if sq(k) != k*k {
			t.Fatalf("sq(%d) = %d", k, sq(k))
		}
	}
	if len(m.m) > memoLimit {
		t.Fatalf("memo holds %d answers, limit %d", len(m.m), memoLimit)
	}
}

// TestCachedAnswersAreTheComputedOnes: the memoised StudentT and PercentileCI95 ranks equal a
// fresh computation, including on a second call.
func TestCachedAnswersAreTheComputedOnes(t *testing.T) {
	for _, df := range []int{1, 2, 9, 30, 1000} {
		for range 2 {
			if got, want := StudentT(0.975, df), studentT(0.975, df); got != want {
				t.Errorf("StudentT(0.975, %d) = %v, uncached %v", df, got, want)
			}
		}
	}
	for _, n := range []int{1, 6, 100, 368, 5000} {
		sorted := make([]float64, n)
		for i := range sorted {
			sorted[i] = float64(i + 1)
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			r := percentileRanks(n, q)
			for range 2 {
				iv := PercentileCI95(sorted, q)
				if (r[0] >= 1) != (iv.Low == sorted[max(r[0], 1)-1]) || (r[1] <= n) != (iv.High == sorted[min(r[1], n)-1]) {
					t.Errorf("n=%d q=%v: interval %v, ranks %v", n, q, iv, r)
				}
			}
		}
	}
}
