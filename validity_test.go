package servebench

import "testing"

func TestVerdictWorse(t *testing.T) {
	for _, tc := range []struct{ a, b, want Verdict }{
		{"", "", ""},
		{"", VerdictValid, VerdictValid},
		{VerdictValid, VerdictLowConfidence, VerdictLowConfidence},
		{VerdictLowConfidence, VerdictValid, VerdictLowConfidence},
		{VerdictInvalid, VerdictLowConfidence, VerdictInvalid},
		{VerdictLowConfidence, VerdictInvalid, VerdictInvalid},
	} {
		if got := tc.a.Worse(tc.b); got != tc.want {
			t.Errorf("%q.Worse(%q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	var v Validity
	v.Add(ReasonTooFewSamples, VerdictLowConfidence, "")
	v.Add(ReasonWindowTooShort, VerdictValid, "")
	if v.Verdict != VerdictLowConfidence {
		t.Errorf("Add kept %q, want the worse verdict low-confidence", v.Verdict)
	}
}
