package capacity_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func TestKindWords(t *testing.T) {
	tests := []struct {
		kind servebench.LimitKind
		want string
	}{
		{servebench.LimitMeasured, "measured"},
		{servebench.LimitInterpolated, "interpolated"},
		{servebench.LimitLowerBound, "lower bound: the highest level passed"},
		{servebench.LimitNotViable, capacity.LabelNotViable},
		{"", capacity.KindNotDecided},
	}
	for _, tt := range tests {
		if got := capacity.KindWords(tt.kind); got != tt.want {
			t.Errorf("KindWords(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}

// TestFields checks that the page's threshold fields are Thresholds' JSON keys, each bounding
// the metric Checks reads from it, in Checks' order: setting a field by its key and decoding
// it must give exactly that check.
func TestFields(t *testing.T) {
	fields := capacity.Fields()
	if len(fields) != 5 {
		t.Fatalf("%d fields, want one per Thresholds field (5): %+v", len(fields), fields)
	}
	captions := map[string]string{
		"ttft_seconds_max":          "TTFT max (s)",
		"generation_speed_tps_min":  "Generation speed min (tok/s)",
		"e2e_latency_seconds_max":   "End-to-end latency max (s)",
		"itl_seconds_max":           "ITL (per token) max (s)",
		"first_content_seconds_max": "Time to first answer max (s)",
	}
	var all servebench.Thresholds
	allJSON := map[string]float64{}
	for _, f := range fields {
		var th servebench.Thresholds
		if err := json.Unmarshal([]byte(`{"`+f.Key+`": 2.5}`), &th); err != nil {
			t.Fatal(err)
		}
		ks := capacity.Checks(th)
		if len(ks) != 1 || ks[0].Metric != f.Metric || ks[0].Upper != f.Upper || ks[0].Limit != 2.5 {
			t.Errorf("field %+v: decoding its key gives checks %+v", f, ks)
		}
		if captions[f.Key] != f.Caption || f.Label != capacity.MetricLabel(f.Metric, "") || f.Unit != capacity.MetricUnit(f.Metric) {
			t.Errorf("field %+v: caption want %q, label and unit from MetricLabel and MetricUnit", f, captions[f.Key])
		}
		allJSON[f.Key] = 1
	}
	b, _ := json.Marshal(allJSON)
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	for i, k := range capacity.Checks(all) {
		if fields[i].Metric != k.Metric {
			t.Errorf("field %d bounds %s, Checks' order has %s", i, fields[i].Metric, k.Metric)
		}
	}
	v := capacity.Words()
	for _, m := range []string{capacity.MetricTTFT, capacity.MetricSuccessRate, capacity.MetricSystemThroughput} {
		if v.Metrics[m] != capacity.MetricLabel(m, "") || v.Units[m] != capacity.MetricUnit(m) {
			t.Errorf("vocabulary of %s: %q %q", m, v.Metrics[m], v.Units[m])
		}
	}
}

// A check is described with ≤ and ≥: a value exactly at the threshold holds.
func TestDescribe(t *testing.T) {
	f := servebench.Float
	ks := capacity.Checks(servebench.Thresholds{TTFTSecondsMax: f(8), GenerationSpeedTPSMin: f(15), E2ELatencySecondsMax: f(0.3), ITLSecondsMax: f(0.05)})
	want := []string{"p99 TTFT ≤ 8s", "p99 generation speed ≥ 15 tok/s", "p99 end-to-end latency ≤ 300ms", "p99 ITL (per token) ≤ 50ms"}
	for i, k := range ks {
		if got := k.Describe(servebench.StatP99); got != want[i] {
			t.Errorf("check %d: %q, want %q", i, got, want[i])
		}
		if !k.Holds(k.Limit) {
			t.Errorf("%s: a value at the threshold must hold, as ≤/≥ say", want[i])
		}
	}
	if got := capacity.ThresholdValue(capacity.MetricSuccessRate, 0.99); got != "99.0%" {
		t.Errorf("success rate threshold %q", got)
	}
}

// "not viable" means one thing, failing at 1 request; a use case whose context does not fit the
// target's maximum model length has a word of its own, in the label, the phrase, the kind and
// the verdict (also for runs that recorded it as "not viable on this target").
func TestDoesNotFitIsNotNotViable(t *testing.T) {
	one := 1
	fails := servebench.CapacityResult{UseCase: "x", LimitKind: servebench.LimitNotViable, LimitingMetric: "ttft_seconds", Limit: nil,
		Points: []servebench.CapacityPoint{{Concurrency: one, Pass: false, Failing: []string{"ttft_seconds"}}}}
	for _, note := range []string{"does not fit this target: its maximum model length (34816 tokens) is below this use case's 65536 context + 1024 output tokens",
		"not viable on this target: its maximum model length (34816 tokens) is below this use case's 65536 context + 1024 output tokens"} {
		long := servebench.CapacityResult{UseCase: "y", LimitKind: servebench.LimitNotViable, LimitingMetric: capacity.MetricContextTokens, Skipped: true, Note: note}
		if !capacity.DoesNotFit(long) || capacity.DoesNotFit(fails) {
			t.Fatal("DoesNotFit must tell the two apart")
		}
		if got := capacity.LimitLabel(long); got != capacity.LabelDoesNotFit {
			t.Errorf("label %q, want %q", got, capacity.LabelDoesNotFit)
		}
		if got := capacity.LimitPhrase(long); got != capacity.LabelDoesNotFit {
			t.Errorf("phrase %q", got)
		}
		if got := capacity.KindWordsOf(long); !strings.Contains(got, "maximum model length") || strings.Contains(got, "not viable") {
			t.Errorf("kind %q", got)
		}
		if got := capacity.Verdict(long); !strings.HasPrefix(got, "Does not fit this target: its maximum model length (34816 tokens)") || strings.Contains(strings.ToLower(got), "not viable") {
			t.Errorf("verdict %q", got)
		}
	}
	if got := capacity.LimitLabel(fails); got != capacity.LabelNotViable {
		t.Errorf("failing at 1 request: label %q, want %q", got, capacity.LabelNotViable)
	}
}

// A lower bound names the level it rests on: the tested ceiling when the search reached it, else
// the highest level tested, never a ceiling the search did not reach (a run whose time budget
// ended General Chatbot's search at 6 of 128 said "the tested ceiling of 128").
func TestLowerBoundNamesTheLevelTested(t *testing.T) {
	six, eight := 6, 8
	short := servebench.CapacityResult{UseCase: "g", LimitKind: servebench.LimitLowerBound, Limit: &six, Ceiling: 128}
	full := servebench.CapacityResult{UseCase: "g", LimitKind: servebench.LimitLowerBound, Limit: &eight, Ceiling: 8}
	if v := capacity.Verdict(short); !strings.Contains(v, "higher than 6, the highest level tested") || strings.Contains(v, "tested ceiling of 128") {
		t.Errorf("stopped below the ceiling: %q", v)
	}
	if v := capacity.Verdict(full); !strings.Contains(v, "the tested ceiling of 8") {
		t.Errorf("reached the ceiling: %q", v)
	}
}
