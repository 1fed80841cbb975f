package capacity_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// result builds a CapacityResult for uc from hand-written points (each a map of metric values).
func result(uc servebench.UseCase, kind servebench.LimitKind, limit, first, ceiling int, limiting string, pts ...servebench.CapacityPoint) servebench.CapacityResult {
	r := servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, Statistic: uc.Statistic, Thresholds: uc.Thresholds,
		LimitKind: kind, LimitingMetric: limiting, Ceiling: ceiling, Points: pts}
	if limit > 0 {
		r.Limit = servebench.Int(limit)
	}
	if first > 0 {
		r.FirstFailing = servebench.Int(first)
	}
	return r
}

// pt evaluates a point from metric values the way Search would.
func pt(uc servebench.UseCase, n int, ttft, speed, e2e, rate float64) servebench.CapacityPoint {
	c := servebench.CellResult{CellKey: servebench.CellKey{Concurrency: n}, RequestsTotal: 10, SuccessRate: rate}
	if ttft > 0 {
		c.TTFTSeconds = servebench.Summary{Count: 10, Mean: ttft, P99: servebench.Float(ttft)}
	}
	if speed > 0 {
		c.GenerationSpeedTPS = servebench.Summary{Count: 10, Mean: speed, P99: servebench.Float(speed)}
	}
	if e2e > 0 {
		c.E2ELatencySeconds = servebench.Summary{Count: 10, Mean: e2e, P99: servebench.Float(e2e)}
	}
	return capacity.Evaluate(uc, c)
}

// brief writes an Explanation compactly: "limit 23 [pass 0, fail 24] at limit: e2e_latency_seconds=1.98 ok |
// failing: e2e_latency_seconds=2.016".
func brief(ex capacity.Explanation) string {
	rd := func(r capacity.LevelReading) string {
		s := r.Metric + "="
		if !r.Measured {
			s += "?"
		} else {
			s += strconv.FormatFloat(r.Value, 'g', 4, 64)
		}
		if r.Approx {
			s = "~" + s
		}
		return s
	}
	var at, fail []string
	for _, r := range ex.AtLimit {
		ok := " fails"
		if r.Holds {
			ok = " ok"
		}
		at = append(at, rd(r)+ok)
	}
	for _, r := range ex.AtFailing {
		fail = append(fail, rd(r))
	}
	return fmt.Sprintf("limit %d [pass %d, fail %d] at limit: %s | failing: %s | limiting: %s", ex.Limit, ex.Passing, ex.Failing,
		strings.Join(at, ", "), strings.Join(fail, ", "), ex.LimitingMetric)
}

func TestExplain(t *testing.T) {
	code := useCase("code_completion")
	general := useCase("general_chatbot")
	chat := useCase("short_form_chatbot")
	coding := useCase("automated_coding_assistant")
	tests := []struct {
		name  string
		r     servebench.CapacityResult
		label string
		brief string
	}{
		{
			name: "measured, e2e just above",
			r: result(code, servebench.LimitMeasured, 23, 24, 128, "e2e_latency_seconds",
				pt(code, 23, 0, 0, 1.98, 1), pt(code, 24, 0, 0, 2.016, 1)),
			label: "23",
			brief: "limit 23 [pass 23, fail 24] at limit: e2e_latency_seconds=1.98 ok | failing: e2e_latency_seconds=2.016 | limiting: e2e_latency_seconds",
		},
		{
			name: "interpolated: values at the limit interpolated, thresholds in TTFT-then-speed order",
			r: result(general, servebench.LimitInterpolated, 35, 36, 128, "ttft_seconds",
				pt(general, 32, 7.2, 22, 0, 1), pt(general, 36, 8.6, 19.4, 0, 1)),
			label: "~35",
			brief: "limit 35 [pass 32, fail 36] at limit: ~ttft_seconds=8.25 fails, ~generation_speed_tps=20.05 ok | failing: ttft_seconds=8.6 | limiting: ttft_seconds",
		},
		{
			name: "lower bound",
			r: result(chat, servebench.LimitLowerBound, 125, 0, 125, "",
				pt(chat, 1, 0.2, 184, 0, 1), pt(chat, 125, 5.7, 23.2, 0, 1)),
			label: "125+",
			brief: "limit 125 [pass 0, fail 0] at limit: ttft_seconds=5.7 ok, generation_speed_tps=23.2 ok | failing:  | limiting: ",
		},
		{
			name:  "not viable: the facts are at 1 request",
			r:     result(general, servebench.LimitNotViable, 0, 1, 64, "ttft_seconds", pt(general, 1, 11.2, 92, 0, 1)),
			label: "not viable",
			brief: "limit 0 [pass 0, fail 1] at limit: ttft_seconds=11.2 fails, generation_speed_tps=92 ok | failing: ttft_seconds=11.2 | limiting: ttft_seconds",
		},
		{
			name: "unmeasurable speed and failed requests",
			r: result(general, servebench.LimitMeasured, 4, 5, 64, "generation_speed_tps",
				pt(general, 4, 2, 30, 0, 1), pt(general, 5, 2.5, 0, 0, 0.95)),
			label: "4",
			brief: "limit 4 [pass 4, fail 5] at limit: ttft_seconds=2 ok, generation_speed_tps=30 ok | failing: generation_speed_tps=?, success_rate=0.95 | limiting: generation_speed_tps",
		},
		{
			name: "skipped for the target's maximum model length",
			r: servebench.CapacityResult{UseCase: "automated_coding_assistant", LimitKind: servebench.LimitNotViable, Skipped: true,
				Note: "not viable on this target"},
			label: "not viable",
			brief: "limit 0 [pass 0, fail 0] at limit:  | failing:  | limiting: ",
		},
		{
			name: "left out by the run's time budget before its first level: not \"0+\"",
			r: servebench.CapacityResult{UseCase: "long_document_processing", LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(0), Skipped: true,
				Note: "not searched: the run's time budget (--max-time) had no time left for this use case's first level; a longer budget searches it"},
			label: "not measured",
			brief: "limit 0 [pass 0, fail 0] at limit:  | failing:  | limiting: ",
		},
		{
			name:  "incomplete search",
			r:     servebench.CapacityResult{UseCase: "x"},
			label: "not measured",
			brief: "limit 0 [pass 0, fail 0] at limit:  | failing:  | limiting: ",
		},
		{
			name: "limit of one request",
			r: result(coding, servebench.LimitMeasured, 1, 2, 64, "ttft_seconds",
				pt(coding, 1, 9.7, 122, 0, 1), pt(coding, 2, 14.4, 84, 0, 1)),
			label: "1",
			brief: "limit 1 [pass 1, fail 2] at limit: ttft_seconds=9.7 ok, generation_speed_tps=122 ok | failing: ttft_seconds=14.4 | limiting: ttft_seconds",
		},
	}
	for _, tt := range tests {
		if got := capacity.LimitLabel(tt.r); got != tt.label {
			t.Errorf("%s: label %q, want %q", tt.name, got, tt.label)
		}
		ex := capacity.Explain(tt.r)
		if ex.Label != tt.label {
			t.Errorf("%s: Explain label %q, want %q", tt.name, ex.Label, tt.label)
		}
		if got := brief(ex); got != tt.brief {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.brief)
		}
	}
}

func TestMetricLabelNamesTheStatistic(t *testing.T) {
	for _, c := range []struct {
		m    string
		st   servebench.Statistic
		want string
	}{
		{capacity.MetricTTFT, servebench.StatMean, "TTFT"},
		{capacity.MetricTTFT, servebench.StatP99, "p99 TTFT"},
		{capacity.MetricGenerationSpeed, servebench.StatP90, "p90 generation speed"},
		{capacity.MetricSuccessRate, servebench.StatP99, "success rate"},
		{capacity.MetricSystemThroughput, "", "system throughput"},
	} {
		if got := capacity.MetricLabel(c.m, c.st); got != c.want {
			t.Errorf("%s/%s: %q, want %q", c.m, c.st, got, c.want)
		}
	}
}

func TestValueAtInterpolates(t *testing.T) {
	r := servebench.CapacityResult{Points: []servebench.CapacityPoint{
		{Concurrency: 30, Values: map[string]float64{capacity.MetricE2ELatency: 1.9}},
		{Concurrency: 40, Values: map[string]float64{capacity.MetricE2ELatency: 2.3}},
	}}
	v, approx, ok := capacity.ValueAt(r, capacity.MetricE2ELatency, 35)
	if !ok || !approx || math.Abs(v-2.1) > 1e-9 {
		t.Fatalf("got %v approx=%v ok=%v, want ~2.1", v, approx, ok)
	}
	if _, approx, _ := capacity.ValueAt(r, capacity.MetricE2ELatency, 30); approx {
		t.Fatal("a measured level must not be marked approximate")
	}
	if _, _, ok := capacity.ValueAt(r, capacity.MetricE2ELatency, 50); ok {
		t.Fatal("no extrapolation beyond the measured levels")
	}
}

// The explanation of a result straight from Search agrees with its points.
func TestExplainFromSearch(t *testing.T) {
	uc := useCase("code_completion")
	p := &probe{t: t, uc: uc, m: model{e2e: func(n int) float64 { return 0.5 + float64(n)/8 }}}
	res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 64}, p.measure)
	if err != nil {
		t.Fatal(err)
	}
	want := "limit 12 [pass 12, fail 13] at limit: e2e_latency_seconds=2 ok | failing: e2e_latency_seconds=2.125 | limiting: e2e_latency_seconds"
	if got := brief(capacity.Explain(res)); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestVerdict(t *testing.T) {
	code := useCase("code_completion")
	general := useCase("general_chatbot")
	chat := useCase("short_form_chatbot")
	coding := useCase("automated_coding_assistant")
	p99 := general
	p99.Statistic = servebench.StatP99
	tests := []struct {
		name    string
		r       servebench.CapacityResult
		label   string
		verdict string
	}{
		{
			// The reference's code-completion case, with the limit at the last passing level.
			name: "measured, e2e just above",
			r: result(code, servebench.LimitMeasured, 23, 24, 128, "e2e_latency_seconds",
				pt(code, 23, 0, 0, 1.98, 1), pt(code, 24, 0, 0, 2.016, 1)),
			label:   "23",
			verdict: "Capacity limit: 23 concurrent requests. At 24 concurrent requests, end-to-end latency reaches 2,016ms, just above the 2,000ms threshold.",
		},
		{
			name: "interpolated, TTFT above, speed still fine",
			r: result(general, servebench.LimitInterpolated, 35, 36, 128, "ttft_seconds",
				pt(general, 32, 7.2, 22, 0, 1), pt(general, 36, 8.6, 19.4, 0, 1)),
			label: "~35",
			verdict: "Capacity limit: ~35 concurrent requests, interpolated on TTFT between 32 (passes) and 36 (fails). " +
				"At 36 concurrent requests, TTFT reaches 8.6 seconds, above the 8-second threshold. " +
				"At this concurrency, generation speed is 19 tok/s, above the 15 tok/s minimum.",
		},
		{
			name: "lower bound, two thresholds",
			r: result(chat, servebench.LimitLowerBound, 125, 0, 125, "",
				pt(chat, 1, 0.2, 184, 0, 1), pt(chat, 125, 5.7, 23.2, 0, 1)),
			label: "125+",
			verdict: "Capacity limit: 125+ concurrent requests. At 125 concurrent requests, TTFT is 5.7 seconds and generation speed " +
				"is 23 tok/s, both within the thresholds. Capacity likely extends higher than the tested ceiling of 125.",
		},
		{
			name:  "lower bound, one threshold right at it",
			r:     result(code, servebench.LimitLowerBound, 64, 0, 64, "", pt(code, 64, 0, 0, 2.0, 1)),
			label: "64+",
			verdict: "Capacity limit: 64+ concurrent requests. At 64 concurrent requests, end-to-end latency is 2,000ms, right at the " +
				"2,000ms threshold. Capacity likely extends higher than the tested ceiling of 64.",
		},
		{
			name:  "not viable, TTFT",
			r:     result(general, servebench.LimitNotViable, 0, 1, 64, "ttft_seconds", pt(general, 1, 11.2, 92, 0, 1)),
			label: "not viable",
			verdict: "Not viable: even at 1 request, TTFT reaches 11.2 seconds, above the 8-second threshold. " +
				"At this concurrency, generation speed is 92 tok/s, above the 15 tok/s minimum.",
		},
		{
			name: "limit of one request",
			r: result(coding, servebench.LimitMeasured, 1, 2, 64, "ttft_seconds",
				pt(coding, 1, 9.7, 122, 0, 1), pt(coding, 2, 14.4, 84, 0, 1)),
			label: "1",
			verdict: "Capacity limit: 1 request. At 2 concurrent requests, TTFT reaches 14.4 seconds, above the 12-second threshold. " +
				"At this concurrency, generation speed is 84 tok/s, above the 20 tok/s minimum.",
		},
		{
			name: "p99 statistic names the percentile; speed just below",
			r: result(p99, servebench.LimitMeasured, 7, 8, 64, "generation_speed_tps",
				pt(p99, 7, 3, 15.5, 0, 1), pt(p99, 8, 3.5, 14.6, 0, 1)),
			label: "7",
			verdict: "Capacity limit: 7 concurrent requests. At 8 concurrent requests, p99 generation speed drops to 14.6 tok/s, " +
				"just below the 15 tok/s minimum. At this concurrency, p99 TTFT is 3.5 seconds, within the 8-second threshold.",
		},
		{
			// 12.04 s would print as the threshold "12.0": a decimal is added; 11.98 likewise.
			name: "values that round to the threshold get more decimals",
			r: result(useCase("long_document_processing"), servebench.LimitMeasured, 4, 5, 64, "ttft_seconds",
				pt(useCase("long_document_processing"), 4, 11.98, 66, 0, 1), pt(useCase("long_document_processing"), 5, 12.04, 60, 0, 1)),
			label: "4",
			verdict: "Capacity limit: 4 concurrent requests. At 5 concurrent requests, TTFT reaches 12.04 seconds, just above the " +
				"12-second threshold. At this concurrency, generation speed is 60 tok/s, above the 15 tok/s minimum.",
		},
		{
			name: "unmeasurable speed and failed requests",
			r: result(general, servebench.LimitMeasured, 4, 5, 64, "generation_speed_tps",
				pt(general, 4, 2, 30, 0, 1), pt(general, 5, 2.5, 0, 0, 0.95)),
			label: "4",
			verdict: "Capacity limit: 4 concurrent requests. At 5 concurrent requests, generation speed could not be measured " +
				"(no request qualified), so its threshold cannot be shown to hold; success rate drops to 95.0%, below the 99% minimum. " +
				"At this concurrency, TTFT is 2.5 seconds, within the 8-second threshold.",
		},
		{
			name: "skipped with the runner's note",
			r: servebench.CapacityResult{UseCase: "automated_coding_assistant", LimitKind: servebench.LimitNotViable, Skipped: true,
				Note: "not viable on this target: its maximum model length (32768 tokens) is below this use case's 98304 context + 1024 output tokens"},
			label:   "not viable",
			verdict: "Not viable on this target: its maximum model length (32768 tokens) is below this use case's 98304 context + 1024 output tokens.",
		},
		{
			name:    "incomplete search",
			r:       servebench.CapacityResult{UseCase: "x"},
			label:   "not measured",
			verdict: "Capacity limit: not measured.",
		},
	}
	for _, tt := range tests {
		if got := capacity.LimitLabel(tt.r); got != tt.label {
			t.Errorf("%s: label %q, want %q", tt.name, got, tt.label)
		}
		if got := capacity.Verdict(tt.r); got != tt.verdict {
			t.Errorf("%s: verdict\n got %q\nwant %q", tt.name, got, tt.verdict)
		}
	}
}

// A verdict straight from Search on the controlled model reads consistently with its numbers.
func TestVerdictFromSearch(t *testing.T) {
	uc := useCase("code_completion")
	p := &probe{t: t, uc: uc, m: model{e2e: func(n int) float64 { return 0.5 + float64(n)/8 }}}
	res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 64}, p.measure)
	if err != nil {
		t.Fatal(err)
	}
	want := "Capacity limit: 12 concurrent requests. At 13 concurrent requests, end-to-end latency reaches 2,125ms, above the 2,000ms threshold."
	if got := capacity.Verdict(res); got != want {
		t.Errorf("verdict\n got %q\nwant %q", got, want)
	}
	if got := capacity.Headline(res); got != "Capacity limit: 12 concurrent requests" {
		t.Errorf("headline %q", got)
	}
}

// Detail is Verdict without the headline: the interpolation clause becomes its own sentence.
func TestDetail(t *testing.T) {
	general := useCase("general_chatbot")
	r := result(general, servebench.LimitInterpolated, 35, 36, 128, "ttft_seconds",
		pt(general, 32, 7.2, 22, 0, 1), pt(general, 36, 8.6, 19.4, 0, 1))
	want := "Interpolated on TTFT between 32 (passes) and 36 (fails). At 36 concurrent requests, TTFT reaches 8.6 seconds, above the 8-second threshold. " +
		"At this concurrency, generation speed is 19 tok/s, above the 15 tok/s minimum."
	if got := capacity.Detail(r); got != want {
		t.Errorf("detail\n got %q\nwant %q", got, want)
	}
	if got := capacity.Headline(r) + ", " + strings.ToLower(want[:1]) + want[1:]; got != capacity.Verdict(r) {
		t.Errorf("headline + detail %q != verdict %q", got, capacity.Verdict(r))
	}
	if got := capacity.Detail(servebench.CapacityResult{UseCase: "x"}); got != "" {
		t.Errorf("a verdict that is only a headline has no detail: %q", got)
	}
}
