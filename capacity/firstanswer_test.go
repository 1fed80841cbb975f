package capacity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// A use case can bound the time to the first answer token (after reasoning) instead of TTFT: a
// reasoning model whose first token comes fast but whose answer comes late fails it.
func TestEvaluateTimeToFirstAnswer(t *testing.T) {
	uc := servebench.UseCase{Name: "chat", Statistic: servebench.StatMean,
		Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(1), FirstContentSecondsMax: servebench.Float(3)}}
	c := servebench.CellResult{CellKey: servebench.CellKey{Concurrency: 2}, RequestsTotal: 10, SuccessRate: 1,
		TTFTSeconds: servebench.Summary{Count: 10, Mean: 0.2}, FirstContentSeconds: servebench.Summary{Count: 10, Mean: 4.5}}
	p := capacity.Evaluate(uc, c)
	if p.Pass || !slices.Equal(p.Failing, []string{capacity.MetricFirstContent}) || p.Values[capacity.MetricFirstContent] != 4.5 {
		t.Errorf("pass %v failing %v values %v: want a failure on time to first answer at 4.5 s", p.Pass, p.Failing, p.Values)
	}
	c.FirstContentSeconds.Mean = 2.5
	if p := capacity.Evaluate(uc, c); !p.Pass {
		t.Errorf("first answer 2.5 s ≤ 3 s: failing %v", p.Failing)
	}
	res := servebench.CapacityResult{UseCase: "chat", Title: "Chat", Statistic: servebench.StatMean, Thresholds: uc.Thresholds,
		LimitKind: servebench.LimitNotViable, LimitingMetric: capacity.MetricFirstContent,
		Points: []servebench.CapacityPoint{{Concurrency: 1, Values: map[string]float64{capacity.MetricFirstContent: 4.5}, Failing: []string{capacity.MetricFirstContent}}}}
	if v := capacity.Verdict(res); !strings.Contains(v, "time to first answer") {
		t.Errorf("verdict %q does not name the time to first answer", v)
	}
}
