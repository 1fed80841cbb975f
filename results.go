package servebench

import (
	"fmt"
	"math"
	"time"
)

// SchemaVersion is the version of the run folder's public files (run.json, requests.jsonl,
// results.json). Any incompatible change bumps it.
const SchemaVersion = 1

// Summary describes one per-request value over the successful measured requests of a cell.
// Percentiles use linear interpolation between closest ranks (NumPy's default "linear"
// method): for sorted x[0..n-1] and q in [0,1], h = (n−1)·q, p = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
//
// How sure each number is: CI95 is the 95% interval of the mean, and each percentile has its
// own 95% interval (P99CI95 …); package stats documents the methods. A percentile the sample
// is too small for (p99 needs 100 values, p95 20, p90 10, p50 2) is withheld: nil, null in
// JSON, never a number read off one or two samples.
type Summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	// CI95 is the 95% confidence interval of the mean; nil when Count < 2.
	CI95 *Interval `json:"ci95"`
	// Min and Max are the smallest and largest value; nil (absent from results.json) when
	// unknown: an empty summary, or a tool whose imported result file does not report them
	// (the cell's Unavailable says why under "NAME.min").
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	// P50CI95 … P99CI95 are the percentiles' 95% intervals; nil where the percentile is withheld.
	P50CI95 *Interval `json:"p50_ci95,omitempty"`
	P90CI95 *Interval `json:"p90_ci95,omitempty"`
	P95CI95 *Interval `json:"p95_ci95,omitempty"`
	P99CI95 *Interval `json:"p99_ci95,omitempty"`
}

// UnavailableValidity is the key of CellResult.Unavailable that says why a cell has no
// validity verdict: a cell imported from another tool's result file (servebench import) is not
// judged, since servebench judges only a window it measured itself.
const UnavailableValidity = "validity"

// Statistic names one field of Summary, used by use-case thresholds.
type Statistic string

const (
	StatMean Statistic = "mean"
	StatP50  Statistic = "p50"
	StatP90  Statistic = "p90"
	StatP95  Statistic = "p95"
	StatP99  Statistic = "p99"
)

// Pick returns the summary's value for the statistic (mean when unknown) and whether it is
// available: false for a withheld percentile or an empty summary.
func (s Summary) Pick(st Statistic) (float64, bool) {
	var p *float64
	switch st {
	case StatP50:
		p = s.P50
	case StatP90:
		p = s.P90
	case StatP95:
		p = s.P95
	case StatP99:
		p = s.P99
	default:
		return s.Mean, s.Count > 0
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

// CI95RelHalfWidth is the mean interval's half-width relative to the mean (0.05 = ±5%); +Inf
// when there is no interval.
func (s Summary) CI95RelHalfWidth() float64 {
	if s.CI95 == nil {
		return math.Inf(1)
	}
	return s.CI95.RelHalfWidth(s.Mean)
}

// PickCI95 returns the 95% interval of the statistic (of the mean when unknown); nil when
// there is none (a withheld percentile, fewer than two values).
func (s Summary) PickCI95(st Statistic) *Interval {
	switch st {
	case StatP50:
		return s.P50CI95
	case StatP90:
		return s.P90CI95
	case StatP95:
		return s.P95CI95
	case StatP99:
		return s.P99CI95
	}
	return s.CI95
}

// ServerValue is a per-cell value that comes from the server, not the client: a mean over the
// cell's measured requests and where it came from. A nil *ServerValue means "not available";
// the reason is in CellResult.Unavailable under the field's JSON name.
type ServerValue struct {
	Mean float64 `json:"mean"`
	// Source: "server-timings:<kind>" (per-request timings), "prometheus:<metric>" (histogram
	// _sum/_count delta over the cell), or "sim".
	Source string `json:"source"`
	// Requests is how many requests the value covers.
	Requests int `json:"requests"`
}

// Power is GPU power over a cell's measured window.
type Power struct {
	// MeanWatts = energy over the window / window length where an energy counter exists,
	// otherwise the time-weighted mean of sampled power.
	MeanWatts float64 `json:"mean"`
	PeakWatts float64 `json:"peak"`
	GPUs      int     `json:"gpus"`
	// Source: "nvml", "dcgm", "nvidia-smi", "sim-dcgm".
	Source string `json:"source"`
}

// Energy is GPU energy and its cost over a cell's measured window.
type Energy struct {
	Joules float64 `json:"joules"`
	// JoulesPerOutputToken = Joules / output tokens completed in the window.
	JoulesPerOutputToken float64 `json:"joules_per_output_token"`
	// CostUSDPerHour = MeanWatts / 1000 × electricity price (USD/kWh).
	CostUSDPerHour float64 `json:"cost_usd_per_hour"`
	// CostUSDPerMillionOutputTokens = (Joules / 3.6e6 kWh) × price / output tokens × 1e6.
	CostUSDPerMillionOutputTokens float64 `json:"cost_usd_per_million_output_tokens"`
	ElectricityUSDPerKWh          float64 `json:"electricity_usd_per_kwh"`
	// Source: "energy-counter" (counter difference) or "integrated-power" (sampled power).
	Source string `json:"source"`
}

// CellResult is one computed cell of results.json.
type CellResult struct {
	CellKey
	// Skipped cells were not run (Note says why, e.g. context above the model's maximum).
	Skipped bool   `json:"skipped,omitempty"`
	Note    string `json:"note,omitempty"`
	// Attempt is which attempt of the cell this result measured (0 = the first); earlier
	// attempts were discarded because of an outage (Results.Outages). The records that count
	// are those of this cell with Record.CellAttempt == Attempt.
	Attempt int `json:"attempt,omitempty"`

	RequestsTotal     int                `json:"requests_total"`
	RequestsSucceeded int                `json:"requests_succeeded"`
	RequestsFailed    int                `json:"requests_failed"`
	WarmupRequests    int                `json:"warmup_requests"`
	ErrorsByClass     map[ErrorClass]int `json:"errors_by_class,omitempty"`
	// ErrorsByHTTPStatus splits ErrorsByClass's "http-status" by the status the server answered
	// (429: rate limited, 503: overloaded …; HTTPStatusCause names each).
	ErrorsByHTTPStatus map[int]int `json:"errors_by_http_status,omitempty"`
	// RetryAfterMaxSeconds is the longest Retry-After (Record.RetryAfterSeconds) the server sent
	// with a refusal among the cell's measured requests (s); absent when it sent none.
	RetryAfterMaxSeconds *float64 `json:"retry_after_max_seconds,omitempty"`
	// SuccessRate = requests_succeeded / requests_total over measured requests.
	SuccessRate float64 `json:"success_rate"`
	// LengthMismatches counts successful requests whose output length differed from the request.
	LengthMismatches int `json:"length_mismatches"`
	Retries          int `json:"retries"`
	// LateSends counts open-loop requests sent later than scheduled by more than the tolerance.
	LateSends    int `json:"late_sends,omitempty"`
	DroppedSends int `json:"dropped_sends,omitempty"`

	InputTokensMean  float64 `json:"input_tokens_mean"`
	OutputTokensMean float64 `json:"output_tokens_mean"`
	// Goodput is the fraction of measured requests meeting every objective of the plan's SLO
	// and GoodputRPS how many such requests completed per second of the window (the formulas
	// are in package stats); nil when the plan sets no SLO.
	Goodput    *float64 `json:"goodput,omitempty"`
	GoodputRPS *float64 `json:"goodput_rps,omitempty"`
	// AchievedRatePerSecond is the arrival rate an open-loop cell really sent at (stats), to
	// compare with RatePerSecond; Saturated says the target could not keep up with the
	// requested rate, so the cell measured a growing queue rather than a steady state.
	AchievedRatePerSecond float64 `json:"achieved_rate_per_second,omitempty"`
	Saturated             bool    `json:"saturated,omitempty"`
	// ReasoningTokensMean and ReasoningShare describe a reasoning model's thinking (the formula
	// is in package stats); zero when nothing reasoned.
	ReasoningTokensMean float64 `json:"reasoning_tokens_mean,omitempty"`
	ReasoningShare      float64 `json:"reasoning_share,omitempty"`
	// InputTokensMaxDeviation is max |input_tokens − requested| over successful requests.
	InputTokensMaxDeviation int `json:"input_tokens_max_deviation"`

	// WindowStartSeconds/WindowSeconds: the measured window, offsets from the run origin.
	WindowStartSeconds float64 `json:"window_start_seconds"`
	WindowSeconds      float64 `json:"window_seconds"`
	// SystemOutputThroughputTPS = output tokens produced inside the window / window length (a
	// request straddling an edge counts in proportion; the exact rule is in package stats).
	SystemOutputThroughputTPS float64 `json:"system_output_throughput_tps"`
	// TotalThroughputTPS = (input + output tokens) processed inside the window / window length.
	TotalThroughputTPS float64 `json:"total_throughput_tps"`
	// ScalingEfficiency = throughput(N) / (N × throughput(1)) at the same scenario, context and
	// output length; nil when concurrency 1 was not measured.
	ScalingEfficiency *float64 `json:"scaling_efficiency"`
	// SystemOutputThroughputCI95 and TotalThroughputCI95 are the throughputs' 95% intervals
	// (batch means over the window, see package stats); nil when the window is too short.
	SystemOutputThroughputCI95 *Interval `json:"system_output_throughput_tps_ci95"`
	TotalThroughputCI95        *Interval `json:"total_throughput_tps_ci95"`
	// RequestThroughputRPS = successful requests completed in the window / window length.
	RequestThroughputRPS float64 `json:"request_throughput_rps"`

	TTFTSeconds         Summary `json:"ttft_seconds"`
	FirstContentSeconds Summary `json:"first_content_seconds"`
	ITLSeconds          Summary `json:"itl_seconds"`
	E2ELatencySeconds   Summary `json:"e2e_latency_seconds"`
	GenerationSpeedTPS  Summary `json:"generation_speed_tps"`
	// ChunkGapSeconds summarises the raw gaps between token-carrying events (not tokens).
	ChunkGapSeconds Summary `json:"chunk_gap_seconds"`
	TokensPerChunk  float64 `json:"tokens_per_chunk"`
	// EffectivePrefillSpeedTPS = mean(input tokens / TTFT): includes queueing, always available.
	EffectivePrefillSpeedTPS float64 `json:"effective_prefill_speed_tps"`

	QueueWaitSeconds *ServerValue `json:"queue_wait_seconds"`
	PrefillSeconds   *ServerValue `json:"prefill_seconds"`
	// PrefillSpeedTPS = mean input tokens / mean prefill time (server-side).
	PrefillSpeedTPS *ServerValue `json:"prefill_speed_tps"`
	GPUPowerWatts   *Power       `json:"gpu_power_watts"`
	EnergyJoules    *Energy      `json:"energy_joules"`
	// CacheHitTokens counts prompt tokens the server served from its prefix cache during the
	// cell; CacheContaminated is set when the plan forbids caching and hits were seen.
	CacheHitTokens    *int `json:"cache_hit_tokens,omitempty"`
	CacheContaminated bool `json:"cache_contaminated,omitempty"`
	// CachedTokensMean is the mean number of prompt tokens per request the server served from
	// its prefix cache and CachedShare their share of the input tokens (formulas in package
	// stats); nil when the server reported neither per-request cached tokens nor cache counters.
	CachedTokensMean *float64 `json:"cached_tokens_mean,omitempty"`
	CachedShare      *float64 `json:"cached_share,omitempty"`
	// Validity says how far the cell's numbers can be trusted, and why not where they cannot.
	Validity Validity `json:"validity,omitzero"`
	// Client says how the cell was timed and whether the client kept up (package stats,
	// ClientTiming); nil in results from before it existed.
	Client *ClientTiming `json:"client,omitempty"`
	// Unavailable maps a field's JSON name to why it is null (or, for a summary, empty), and
	// UnavailableValidity to why the cell has no verdict.
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// ClientTiming is how a cell's responses were stamped and how far behind the client ran.
type ClientTiming struct {
	// ClockSource: ClockKernel when every measured request was stamped by the kernel,
	// ClockUser when none was, "mixed" otherwise.
	ClockSource string `json:"clock_source"`
	// LagSeconds summarises Record.ClientLagSeconds (first-token client lag) over the
	// successful measured requests that have one; nil when none has.
	LagSeconds *Summary `json:"lag_seconds,omitempty"`
	// LagMaxSeconds is the largest Record.ClientLagMaxSeconds over the measured requests.
	LagMaxSeconds *float64 `json:"lag_max_seconds,omitempty"`
	// CoalescedTTFTSeconds summarises, over the records with a kernel-stamped first token and a
	// second event, how late that stamp could be: see stats.ClientTiming.
	CoalescedTTFTSeconds *Summary `json:"coalesced_ttft_seconds,omitempty"`
	// SchedLatency is the Go scheduler latency of the client process over the cell: how long
	// goroutines waited, runnable, before they ran (a read or a send waits this long).
	SchedLatency *HistogramSummary `json:"sched_latency_seconds,omitempty"`
}

// HistogramSummary describes a bucketed histogram (seconds): quantiles are the upper bound of
// the bucket holding them, so they never understate.
type HistogramSummary struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Histogram is a bucketed histogram: Counts[i] values fell in [Buckets[i], Buckets[i+1]); the
// first and last bounds may be infinite (runtime/metrics' Float64Histogram layout).
type Histogram struct {
	Counts  []uint64
	Buckets []float64
}

// Thresholds of a use case; nil fields are not checked.
type Thresholds struct {
	TTFTSecondsMax        *float64 `json:"ttft_seconds_max,omitempty" yaml:"ttft_seconds_max,omitempty"`
	GenerationSpeedTPSMin *float64 `json:"generation_speed_tps_min,omitempty" yaml:"generation_speed_tps_min,omitempty"`
	E2ELatencySecondsMax  *float64 `json:"e2e_latency_seconds_max,omitempty" yaml:"e2e_latency_seconds_max,omitempty"`
	ITLSecondsMax         *float64 `json:"itl_seconds_max,omitempty" yaml:"itl_seconds_max,omitempty"`
	// FirstContentSecondsMax bounds the time to the first answer token (after any reasoning):
	// "time to first answer", what a chat user waits for with a reasoning model.
	FirstContentSecondsMax *float64 `json:"first_content_seconds_max,omitempty" yaml:"first_content_seconds_max,omitempty"`
}

// UseCase is a named workload with quality thresholds (see docs/plan.md, use_cases). In a plan file its
// context is written as "context" (e.g. 32k).
type UseCase struct {
	Name          string     `json:"name" yaml:"name"`
	Title         string     `json:"title" yaml:"title"`
	Description   string     `json:"description,omitempty" yaml:"description"`
	ContextTokens Tokens     `json:"context_tokens" yaml:"context"`
	OutputTokens  Tokens     `json:"output_tokens" yaml:"output_tokens"`
	Statistic     Statistic  `json:"statistic" yaml:"statistic"`
	Thresholds    Thresholds `json:"thresholds" yaml:"thresholds"`
}

// LimitKind says how a capacity limit was established.
type LimitKind string

const (
	// LimitMeasured: the limit passed and limit+1 failed, both measured.
	LimitMeasured LimitKind = "measured"
	// LimitInterpolated: the limit lies between two measured levels more than one apart; the
	// value is interpolated on the limiting metric ("~35").
	LimitInterpolated LimitKind = "interpolated"
	// LimitLowerBound: the ceiling (capacity.max_concurrency) still passed ("125+").
	LimitLowerBound LimitKind = "lower_bound"
	// LimitNotViable: concurrency 1 already fails.
	LimitNotViable LimitKind = "not_viable"
)

// CapacityPoint is one measured concurrency level of a use case.
type CapacityPoint struct {
	Concurrency int `json:"concurrency"`
	// Values holds the thresholded metrics at the use case's statistic, keyed by the threshold's
	// metric name ("ttft_seconds", "generation_speed_tps", "e2e_latency_seconds", "itl_seconds"),
	// plus "system_output_throughput_tps" and "success_rate".
	Values map[string]float64 `json:"values"`
	Pass   bool               `json:"pass"`
	// Failing lists the metrics whose threshold failed at this level.
	Failing []string `json:"failing,omitempty"`
	// CI95 holds the 95% interval of each thresholded metric's value (same keys as Values;
	// absent where there is none, e.g. a withheld percentile).
	CI95 map[string]Interval `json:"ci95,omitempty"`
	// Settled is set when the level's verdict cannot change with more requests at 95%
	// confidence (every interval wholly on one side of its threshold, or one wholly failing).
	Settled bool `json:"settled"`
	// ErrorsByHTTPStatus is the level's CellResult.ErrorsByHTTPStatus: the failed requests the
	// server refused with a status, by status, so a verdict names rate limiting (429) or
	// overload (503) instead of a bare success rate.
	ErrorsByHTTPStatus map[int]int `json:"errors_by_http_status,omitempty"`
	// NotStreamed lists the thresholded metrics that could not be measured at this level
	// because its responses arrived in one piece, not streamed (ITL, generation speed): unknown,
	// not failed on their merits.
	NotStreamed []string `json:"not_streamed,omitempty"`
	// Reused is set when the point came from a cell measured for something else at the use
	// case's shape (a sweep cell, another use case's search level: CellID says which) instead
	// of this search; it cost the search nothing.
	Reused bool `json:"reused,omitempty"`
	// Resumed is set when an earlier attempt of the run (before a --resume) measured this
	// level of this search; RequestsSpent is what that attempt sent there.
	Resumed bool   `json:"resumed,omitempty"`
	CellID  string `json:"cell_id"`
	// E2ESeconds is the level's mean end-to-end latency (s), used to estimate server time.
	E2ESeconds float64 `json:"e2e_latency_seconds_mean,omitempty"`
	// RequestsSpent and ServerSeconds are what measuring this level cost the search (0 when
	// reused): requests sent, warm-up included, and the estimated time the server was busy,
	// requests × mean end-to-end latency / concurrency (s).
	RequestsSpent int     `json:"requests_spent,omitempty"`
	ServerSeconds float64 `json:"server_seconds,omitempty"`
}

// CapacityResult is one use case's verdict.
type CapacityResult struct {
	UseCase       string     `json:"use_case"`
	Title         string     `json:"title"`
	ContextTokens int        `json:"context_tokens"`
	OutputTokens  int        `json:"output_tokens"`
	Statistic     Statistic  `json:"statistic"`
	Thresholds    Thresholds `json:"thresholds"`
	// Limit is the largest concurrency at which every threshold holds (interpolated when
	// LimitKind is "interpolated"); nil when not viable or skipped.
	Limit     *int      `json:"limit"`
	LimitKind LimitKind `json:"limit_kind"`
	// LimitingMetric is the first metric whose threshold fails above the limit (or at 1 when not
	// viable); empty for a lower bound.
	LimitingMetric string `json:"limiting_metric"`
	// FirstFailing is the lowest measured failing concurrency (nil for a lower bound, and for
	// a limit decided at a crossing, Crossing).
	FirstFailing *int `json:"first_failing"`
	// Crossing is set when a users' search decided its limit with no failing level: its highest
	// passing level did not settle (the metric within its noise of the threshold) and the model
	// through the two highest passing levels crosses LimitingMetric's threshold at Crossing
	// (users, a real number), below the next level the search's resolution would measure. The
	// limit is then that passing level, "about" it (LimitInterpolated), nothing above it
	// claimed (capacity.DecideWithin).
	Crossing *float64 `json:"crossing,omitempty"`
	// Resolution is the search's resolution (capacity.SearchConfig.Resolution; 0: every limit
	// bracketed exactly), kept so that a what-if decides again by the search's own rule.
	Resolution float64         `json:"resolution,omitempty"`
	Ceiling    int             `json:"ceiling"`
	Points     []CapacityPoint `json:"points"`
	// LimitRange is [low, high], the concurrency levels the data cannot tell apart from the
	// limit at 95% confidence: low is the highest level at or below the limit whose pass is
	// settled, high is one below the lowest level above the limit whose failure is settled
	// (Ceiling when none). [limit, limit] when both sides of the boundary are settled; nil for a
	// lower bound or a use case not viable.
	LimitRange *[2]int `json:"limit_range,omitempty"`
	// RequestsSpent counts requests sent by the search (warm-up included, requests still
	// running when a level stopped included, reused cells not); DenseGridRequests counts the
	// same for measuring every level 1 … first failing (Ceiling for a lower bound), less the
	// reused levels: at least the sweep's cell sizing at each level, and at least what the
	// search sent at a level it measured (capacity.Decide).
	RequestsSpent     int `json:"requests_spent"`
	DenseGridRequests int `json:"dense_grid_requests"`
	// ServerSecondsSpent is the estimated time the server was busy with the search's levels
	// (Σ CapacityPoint.ServerSeconds; × the server's GPUs for GPU time), and
	// DenseGridServerSeconds the same estimate for the dense grid, each unmeasured level
	// costing requests × end-to-end latency / concurrency with the latency interpolated
	// linearly between measured levels.
	ServerSecondsSpent     float64 `json:"server_seconds_spent,omitempty"`
	DenseGridServerSeconds float64 `json:"dense_grid_server_seconds,omitempty"`
	Skipped                bool    `json:"skipped,omitempty"`
	Note                   string  `json:"note,omitempty"`
	// Interrupted is set when the search stopped before its verdict (Ctrl-C, a server that went
	// away): Points holds the levels measured so far, and when one passed, Limit is the highest
	// passing level below any failure, LimitKind "lower_bound" (the limit is at least Limit so
	// far) and FirstFailing the lowest failing level, if any. A resume finishes the search.
	Interrupted bool `json:"interrupted,omitempty"`
}

// RunInfo identifies a run in results.json.
type RunInfo struct {
	ID         string    `json:"id"`
	Target     string    `json:"target"`
	API        API       `json:"api"`
	Model      string    `json:"model"`
	Simulated  bool      `json:"simulated"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

// Results is results.json.
type Results struct {
	SchemaVersion int              `json:"schema_version"`
	Run           RunInfo          `json:"run"`
	Cells         []CellResult     `json:"cells"`
	Capacity      []CapacityResult `json:"capacity"`
	// Users holds the use cases' capacity in concurrent users (the plan's users:); absent when
	// none was measured.
	Users []UsersCapacity `json:"users,omitempty"`
	// Sizing turns the capacity limits into a deployment size and cost (Capacity Planning); nil
	// when no use case was searched.
	Sizing *Sizing `json:"sizing,omitempty"`
	// Notes are run-level facts the report must state (e.g. "the server cannot force output
	// length: 12 requests stopped short").
	Notes []string `json:"notes,omitempty"`
	// Outages lists the periods the server stopped answering; each discarded a cell attempt.
	Outages []Outage `json:"outages,omitempty"`
	// Workers lists the processes that generated the load of a distributed run (absent in a
	// local run) and how well their clocks agreed with the coordinator's.
	Workers []Worker `json:"workers,omitempty"`
	// RateSearches are the results of --rate auto, one per context.
	RateSearches []RateSearchResult `json:"rate_searches,omitempty"`
}

// Worker is one load-generating process of a distributed run (`servebench worker`).
type Worker struct {
	Name string `json:"name"`
	Host string `json:"host,omitempty"`
	// JoinedAt is when it joined; LostAt, when set, when it died or disconnected (LostCause says how).
	JoinedAt  time.Time  `json:"joined_at"`
	LostAt    *time.Time `json:"lost_at,omitempty"`
	LostCause string     `json:"lost_cause,omitempty"`
	// Requests counts the records it sent (failures included).
	Requests int `json:"requests"`
	// Priority is the scheduling priority it sent requests at, as it reported it when it joined
	// (e.g. "nice -10 (raised from 0 …)"; empty from workers that did not say).
	Priority string `json:"priority,omitempty"`
	// Clock lists the measurements of its clock against the coordinator's, one at its join and
	// one before every cell it took part in.
	Clock []ClockSample `json:"clock,omitempty"`
}

// ClockSample is one NTP-style measurement of a worker's clock against the coordinator's (the
// formula is stats.ClockOffset).
type ClockSample struct {
	// At is the coordinator's time of the measurement.
	At time.Time `json:"at"`
	// OffsetSeconds = worker clock − coordinator clock (s); UncertaintySeconds bounds its error
	// (half the round trip of the exchange it came from).
	OffsetSeconds      float64 `json:"offset_seconds"`
	UncertaintySeconds float64 `json:"uncertainty_seconds"`
}

// RateSearchResult is what a rate search (--rate auto) found at one context: the highest
// open-loop arrival rate whose goodput stayed at or above the target (package capacity decides).
type RateSearchResult struct {
	ContextTokens int     `json:"context_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	GoodputTarget float64 `json:"goodput_target"`
	// RatePerSecond is the highest measured rate that passed (goodput ≥ target and the server
	// kept pace); 0 when none did.
	RatePerSecond float64 `json:"rate_per_second"`
	// FailingRatePerSecond is the lowest measured rate above it that did not pass; 0 when every
	// measured rate passed (MaxRate reached).
	FailingRatePerSecond float64 `json:"failing_rate_per_second,omitempty"`
	// Rates lists every measured rate, in the order measured.
	Rates []float64 `json:"rates"`
	Note  string    `json:"note,omitempty"`
}

// HTTPStatusCause names what a non-2xx status says about the server, with the status:
// "rate limited (HTTP 429)", "overloaded (HTTP 503)", "gateway error (HTTP 502)", "server error
// (HTTP 500)", "request refused (HTTP 400)"; "failed (HTTP N)" for anything else.
func HTTPStatusCause(status int) string {
	what := "failed"
	switch {
	case status == 429:
		what = "rate limited"
	case status == 503:
		what = "overloaded"
	case status == 502 || status == 504:
		what = "gateway error"
	case status >= 500 && status <= 599:
		what = "server error"
	case status >= 400 && status <= 499:
		what = "request refused"
	}
	return fmt.Sprintf("%s (HTTP %d)", what, status)
}

// MainHTTPStatus is the status most of the failed requests in byStatus got (the lowest status
// of equals) and how many got it; 0 when byStatus is empty.
func MainHTTPStatus(byStatus map[int]int) (status, count int) {
	for s, n := range byStatus {
		if n > count || (n == count && s < status) {
			status, count = s, n
		}
	}
	return status, count
}

// Float returns a pointer to v (for optional result fields).
func Float(v float64) *float64 { return &v }

// Int returns a pointer to v.
func Int(v int) *int { return &v }

// Sizing is the Capacity Planning answer: how many replicas of the measured system (and GPUs,
// and dollars) serve a number of users of each use case. The formulas are in package capacity
// (capacity.Size).
type Sizing struct {
	// UsersPerSlot is how many active users one concurrent request slot serves (users pause to
	// read and type between requests).
	UsersPerSlot float64 `json:"users_per_slot"`
	// GPUsPerReplica is the GPU count of one replica, i.e. of the measured system.
	GPUsPerReplica int `json:"gpus_per_replica"`
	// GPUsPerReplicaSource says where GPUsPerReplica came from: "plan", "declared GPU: 2x RTX Pro
	// 6000", or "default".
	GPUsPerReplicaSource string `json:"gpus_per_replica_source"`
	// GPUUSDPerHour is the price of one GPU-hour in USD; 0 when not given (no dollar figures).
	GPUUSDPerHour float64 `json:"gpu_usd_per_hour"`
	// HoursPerMonth converts hourly into monthly cost (730 = 8,760 h / 12).
	HoursPerMonth float64         `json:"hours_per_month"`
	TargetUsers   []int           `json:"target_users"`
	UseCases      []UseCaseSizing `json:"use_cases"`
}

// UseCaseSizing is the sizing of one use case.
type UseCaseSizing struct {
	UseCase   string    `json:"use_case"`
	Title     string    `json:"title"`
	LimitKind LimitKind `json:"limit_kind"`
	// SlotsPerReplica is the capacity limit: concurrent requests one replica serves within the
	// thresholds; nil when not viable or not measured.
	SlotsPerReplica *int `json:"slots_per_replica"`
	// UsersPerReplica = SlotsPerReplica × UsersPerSlot, or the users' limit when Basis is
	// "users"; nil when not sized.
	UsersPerReplica *float64 `json:"users_per_replica"`
	// Basis says which limit the size rests on, in a run that measured populations of users:
	// "users" (the users' limit, with the server's prompt cache: UsersLimit users per replica,
	// UsersPerSlot not applied) or "cold" (the cold-prompt limit × UsersPerSlot, the use case's
	// users' limit being unmeasured; BasisNote says why). Empty in a run with no population: the
	// cold-prompt limit, as always.
	Basis     string `json:"basis,omitempty"`
	BasisNote string `json:"basis_note,omitempty"`
	// UsersLimit is the users' limit sized from (Basis "users"), UsersProfile its users.
	UsersLimit   *int   `json:"users_limit,omitempty"`
	UsersProfile string `json:"users_profile,omitempty"`
	// AtMost is set for a lower-bound limit ("125+"): the true limit is higher, so replica counts
	// and costs are upper bounds.
	AtMost bool `json:"at_most,omitempty"`
	// Approximate is set for an interpolated limit ("~35").
	Approximate bool           `json:"approximate,omitempty"`
	Targets     []SizingTarget `json:"targets,omitempty"`
	// ThroughputConcurrency is the measured level whose system output throughput stands for the
	// capacity limit (the limit itself, or the highest passing level below an interpolated one;
	// a population of users when Basis is "users").
	ThroughputConcurrency int `json:"throughput_concurrency,omitempty"`
	// ThroughputTPS is the system output throughput (tokens/s) of one replica at that level.
	ThroughputTPS *float64 `json:"throughput_tps"`
	// HardwareUSDPerMillionOutputTokens = GPUsPerReplica × GPUUSDPerHour / (ThroughputTPS × 3600)
	// × 1e6: GPU rental per million output tokens with the replica fully used at the limit.
	HardwareUSDPerMillionOutputTokens *float64 `json:"hardware_usd_per_million_output_tokens"`
	// ElectricityUSDPerMillionOutputTokens is the measured energy cost of the same cell, nil when
	// it has no energy figure.
	ElectricityUSDPerMillionOutputTokens *float64 `json:"electricity_usd_per_million_output_tokens"`
	// TotalUSDPerMillionOutputTokens = hardware + electricity (hardware alone when electricity is
	// unknown); nil without a GPU price.
	TotalUSDPerMillionOutputTokens *float64 `json:"total_usd_per_million_output_tokens"`
	// Note explains a use case without a size: not viable (and what would make it viable) or not
	// measured.
	Note string `json:"note,omitempty"`
}

// SizingTarget is the deployment for one target user count.
type SizingTarget struct {
	Users int `json:"users"`
	// Replicas = ⌈Users / UsersPerReplica⌉; GPUs = Replicas × GPUsPerReplica.
	Replicas int `json:"replicas"`
	GPUs     int `json:"gpus"`
	// MonthlyUSD = GPUs × GPUUSDPerHour × HoursPerMonth; nil without a GPU price.
	MonthlyUSD *float64 `json:"monthly_usd"`
}
