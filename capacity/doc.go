// Package capacity decides, per use case, how much load a target serves before a quality
// threshold breaks, and words the decision. It is pure (no I/O, no clock; Search's only effects
// are the Measure calls its caller supplies) and it is the only place that decides:
//
//   - Evaluate judges one measured cell against a use case's thresholds (checked in the order of
//     Checks); Settled says whether a cell's verdict is already sure at 95%.
//   - Search walks concurrency levels through a Measure function (the runner measures a real
//     cell; tests use a model); Decide reaches the same verdict from levels already measured
//     (report --recompute), Reconsider from a run's cells under other thresholds (the page's
//     what-if), KnownCells picks the cells a search may reuse.
//   - NextRate and DecideRate search a request rate; UsersEvidenceOf, UsersWhy and UsersRatio
//     state a capacity in users; Size turns the limits into replicas and GPUs for a number of
//     users (UsersPerSlot).
//   - LimitLabel, Explain, Headline, Verdict and Detail turn a result into its label, the facts
//     of its verdict and the sentences that state them; Words and KindWords are the vocabulary
//     the page shares.
//
// Package report lays out and draws what these return (its one-line guidance is worded from
// Explain); it decides nothing.
//
//	res, err := capacity.Search(ctx, uc, capacity.SearchConfig{Ceiling: 128, RequestsAt: cost}, measure)
//	fmt.Println(capacity.LimitLabel(res), capacity.Verdict(res))
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
