// Package capacity decides, per use case, how many concurrent requests a target serves before a
// quality threshold breaks. It is pure and it is the only place that decides: Evaluate judges
// one measured cell against a use case's thresholds (checked in the order of Checks), Search
// walks concurrency levels through a Measure function the caller supplies (the runner measures
// a real cell; tests use a model), and LimitLabel and Explain turn a result into the label and
// the facts a verdict sentence states. Package report only words and draws what they return.
//
//	res, err := capacity.Search(ctx, uc, capacity.SearchConfig{Ceiling: 128, RequestsAt: cost}, measure)
//	fmt.Println(capacity.LimitLabel(res))
package capacity

// Metric names used in CapacityPoint.Values, CapacityPoint.Failing and
// CapacityResult.LimitingMetric: the JSON names of the CellResult fields they come from.
const (
	MetricTTFT            = "ttft_seconds"
	MetricGenerationSpeed = "generation_speed_tps"
	MetricE2ELatency      = "e2e_latency_seconds"
	MetricITL             = "itl_seconds"
	// MetricFirstContent is the time to the first answer token, after any reasoning.
	MetricFirstContent     = "first_content_seconds"
	MetricSuccessRate      = "success_rate"
	MetricSystemThroughput = "system_output_throughput_tps"
)
