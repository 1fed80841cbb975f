package stats_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

func TestStudentT(t *testing.T) {
	// Reference values: R's qt(0.975, df).
	for _, tt := range []struct {
		df   int
		want float64
	}{{1, 12.706204736}, {2, 4.302652730}, {5, 2.570581836}, {10, 2.228138852}, {30, 2.042272456}, {1000, 1.962339081}} {
		if got := stats.StudentT(0.975, tt.df); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("StudentT(0.975, %d) = %.9f, want %.9f", tt.df, got, tt.want)
		}
	}
	if got := stats.StudentT(0.025, 10); math.Abs(got+2.228138852) > 1e-6 {
		t.Errorf("lower quantile = %g, want −2.228", got)
	}
	if !math.IsNaN(stats.StudentT(0.975, 0)) {
		t.Error("df 0 must give NaN")
	}
}

func TestBinomialCDF(t *testing.T) {
	// Against the direct sum Σ C(n,i) pⁱ (1−p)ⁿ⁻ⁱ.
	direct := func(k, n int, p float64) float64 {
		var s float64
		for i := 0; i <= k; i++ {
			lc, _ := math.Lgamma(float64(n + 1))
			la, _ := math.Lgamma(float64(i + 1))
			lb, _ := math.Lgamma(float64(n - i + 1))
			s += math.Exp(lc - la - lb + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
		}
		return s
	}
	for _, tt := range []struct {
		k, n int
		p    float64
	}{{1, 10, 0.5}, {8, 10, 0.5}, {95, 100, 0.99}, {40, 1000, 0.05}, {0, 7, 0.3}} {
		if got, want := stats.BinomialCDF(tt.k, tt.n, tt.p), direct(tt.k, tt.n, tt.p); math.Abs(got-want) > 1e-10 {
			t.Errorf("BinomialCDF(%d, %d, %g) = %.12f, want %.12f", tt.k, tt.n, tt.p, got, want)
		}
	}
	if stats.BinomialCDF(-1, 5, 0.5) != 0 || stats.BinomialCDF(5, 5, 0.5) != 1 {
		t.Error("CDF must be 0 below 0 and 1 at n")
	}
}

func TestPercentileCI95(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name      string
		n         int
		q         float64
		low, high float64
	}{
		// Bin(10, ½): P(B ≤ 1) = 11/1024 ≤ 2.5% < P(B ≤ 2) → x(2); P(B ≤ 8) = 1013/1024 ≥ 97.5% > P(B ≤ 7).
		{"median of 10", 10, 0.5, 2, 9},
		{"median of 5 is unbounded both sides", 5, 0.5, -inf, inf},
		{"median of 6 is bounded (1 − ½⁶ ≥ 97.5%)", 6, 0.5, 1, 6},
		{"p99 of 367 has no upper bound", 367, 0.99, 359, inf},
		{"p99 of 368 is bounded by the maximum", 368, 0.99, 360, 368},
	}
	for _, tt := range tests {
		got := stats.PercentileCI95(seq(tt.n), tt.q)
		if got.Low != tt.low || got.High != tt.high {
			t.Errorf("%s: PercentileCI95 = %v, want [%g, %g]", tt.name, got, tt.low, tt.high)
		}
	}
}

func TestMinSamples(t *testing.T) {
	for q, want := range map[float64]int{0.5: 2, 0.9: 10, 0.95: 20, 0.99: 100} {
		if got := stats.MinSamples(q); got != want {
			t.Errorf("MinSamples(%g) = %d, want %d", q, got, want)
		}
	}
}

func TestIntervalJSON(t *testing.T) {
	iv := servebench.Interval{Low: 0.25, High: math.Inf(1)}
	b, err := json.Marshal(iv)
	if err != nil || string(b) != "[0.25,null]" {
		t.Fatalf("marshal = %s, %v; want [0.25,null]", b, err)
	}
	var back servebench.Interval
	if err := json.Unmarshal(b, &back); err != nil || back.Low != 0.25 || !math.IsInf(back.High, 1) {
		t.Errorf("round trip = %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`"wide"`), &back); err == nil {
		t.Error("a string must not decode as an interval")
	}
	if w := (servebench.Interval{Low: 95, High: 105}).RelHalfWidth(100); w != 0.05 {
		t.Errorf("RelHalfWidth = %g, want 0.05", w)
	}
}

func TestValidityAdd(t *testing.T) {
	var v servebench.Validity
	v.Add(servebench.ReasonTooFewSamples, servebench.VerdictLowConfidence, "p99 needs 100")
	v.Add(servebench.ReasonServerRestart, servebench.VerdictInvalid, "")
	v.Add(servebench.ReasonTooFewSamples, servebench.VerdictLowConfidence, "again")
	if v.Verdict != servebench.VerdictInvalid || len(v.Reasons) != 2 || v.Notes[servebench.ReasonTooFewSamples] != "p99 needs 100" {
		t.Errorf("validity = %+v, want invalid with 2 reasons and the first note", v)
	}
	if v.Trusted() || !servebench.Valid().Trusted() || !v.Has(servebench.ReasonServerRestart) {
		t.Error("Trusted/Has disagree with the verdict")
	}
	b, _ := json.Marshal(servebench.Valid())
	if string(b) != `{"verdict":"valid","reasons":[]}` {
		t.Errorf("valid marshals as %s", b)
	}
}

// DifferenceCI95: half-widths add in quadrature, the larger side of a cut interval counts, and
// a missing or unbounded interval gives none.
func TestDifferenceCI95(t *testing.T) {
	iv := func(lo, hi float64) *servebench.Interval { return &servebench.Interval{Low: lo, High: hi} }
	for _, tc := range []struct {
		name     string
		a        float64
		ia       *servebench.Interval
		b        float64
		ib       *servebench.Interval
		lo, hi   float64
		ok       bool
		excludes bool // the interval excludes 0: a measured difference
	}{
		{"3-4-5", 100, iv(97, 103), 90, iv(86, 94), 5, 15, true, true},
		{"overlapping, no difference", 100, iv(90, 110), 95, iv(85, 105), 5 - math.Hypot(10, 10), 5 + math.Hypot(10, 10), true, false},
		{"cut at 0 counts its larger side", 10, iv(0, 30), 2, iv(1, 3), 8 - math.Hypot(20, 1), 8 + math.Hypot(20, 1), true, false},
		{"no interval", 100, nil, 90, iv(86, 94), 0, 0, false, false},
		{"unbounded", 100, iv(math.Inf(-1), 103), 90, iv(86, 94), 0, 0, false, false},
	} {
		got, ok := stats.DifferenceCI95(tc.a, tc.ia, tc.b, tc.ib)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if math.Abs(got.Low-tc.lo) > 1e-9 || math.Abs(got.High-tc.hi) > 1e-9 {
			t.Errorf("%s: [%g, %g], want [%g, %g]", tc.name, got.Low, got.High, tc.lo, tc.hi)
		}
		if ex := got.Low > 0 || got.High < 0; ex != tc.excludes {
			t.Errorf("%s: excludes 0 = %v, want %v", tc.name, ex, tc.excludes)
		}
	}
}
