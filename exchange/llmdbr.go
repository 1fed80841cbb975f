package exchange

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// BRVersion is the llm-d Benchmark Report version BenchmarkReports writes.
const BRVersion = "0.2.1"

// BR is one llm-d Benchmark Report v0.2.1 document: one load point (a servebench cell). The
// fields are those of the report's JSON schema (llm-d/llm-d-benchmark,
// br_v0_2_1_json_schema.json); a field servebench has no value for is left out (the schema
// makes every one of them optional or nullable).
type BR struct {
	Version  string      `json:"version"`
	Run      BRRun       `json:"run"`
	Scenario *BRScenario `json:"scenario,omitempty"`
	Results  BRResults   `json:"results"`
}

// BRRun identifies the report: uid the cell, eid the servebench run it belongs to.
type BRRun struct {
	UID         string     `json:"uid"`
	EID         string     `json:"eid,omitempty"`
	Time        *BRRunTime `json:"time,omitempty"`
	Description string     `json:"description,omitempty"`
	Keywords    []string   `json:"keywords,omitempty"`
}

// BRRunTime is the measured window: ISO-8601 start and end, and its length as an ISO-8601
// duration ("PT12.5S").
type BRRunTime struct {
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	Duration string `json:"duration,omitempty"`
}

// BRScenario is what was served and how it was loaded.
type BRScenario struct {
	Stack []BRComponent `json:"stack,omitempty"`
	Load  *BRLoad       `json:"load,omitempty"`
}

// BRComponent is the inference engine measured.
type BRComponent struct {
	Metadata     BRComponentMetadata `json:"metadata"`
	Standardized BREngine            `json:"standardized"`
	Native       BRNative            `json:"native"`
}

// BRComponentMetadata names a component.
type BRComponentMetadata struct {
	Label       string `json:"label"`
	CfgID       string `json:"cfg_id"`
	Description string `json:"description,omitempty"`
}

// BREngine is the schema's InferenceEngine.
type BREngine struct {
	Kind        string        `json:"kind"`
	Tool        string        `json:"tool"`
	ToolVersion string        `json:"tool_version"`
	Role        string        `json:"role"`
	Replicas    int           `json:"replicas"`
	Model       BRModel       `json:"model"`
	Accelerator BRAccelerator `json:"accelerator"`
}

// BRModel is the served model.
type BRModel struct {
	Name string `json:"name"`
}

// BRAccelerator is the accelerator the engine ran on; its parallelism is left at the schema's
// defaults (servebench does not know it).
type BRAccelerator struct {
	Model       string         `json:"model"`
	Count       int            `json:"count"`
	Parallelism map[string]int `json:"parallelism"`
}

// BRNative is the native configuration of a component or load: servebench's plan.
type BRNative struct {
	Args   map[string]any `json:"args,omitempty"`
	Config any            `json:"config,omitempty"`
}

// BRLoad is the load generator and the workload of the cell.
type BRLoad struct {
	Metadata     BRLoadMetadata     `json:"metadata"`
	Standardized BRLoadStandardized `json:"standardized"`
	Native       BRNative           `json:"native"`
}

// BRLoadMetadata describes the workload.
type BRLoadMetadata struct {
	SchemaVersion string `json:"schema_version"`
	CfgID         string `json:"cfg_id,omitempty"`
	Description   string `json:"description,omitempty"`
}

// BRLoadStandardized is the workload in the report's terms.
type BRLoadStandardized struct {
	Tool         string       `json:"tool"`
	ToolVersion  string       `json:"tool_version"`
	Parallelism  int          `json:"parallelism"`
	Source       string       `json:"source"`
	Stage        int          `json:"stage"`
	InputSeqLen  BRSeqLen     `json:"input_seq_len"`
	OutputSeqLen *BRSeqLen    `json:"output_seq_len,omitempty"`
	MultiTurn    *BRMultiTurn `json:"multi_turn,omitempty"`
	RateQPS      *float64     `json:"rate_qps,omitempty"`
	Concurrency  *int         `json:"concurrency,omitempty"`
}

// BRSeqLen is a sequence length and its distribution.
type BRSeqLen struct {
	Distribution string  `json:"distribution"`
	Value        float64 `json:"value"`
}

// BRMultiTurn marks a multi-turn workload.
type BRMultiTurn struct {
	Enabled bool `json:"enabled"`
}

// BRResults holds the cell's aggregate request performance.
type BRResults struct {
	RequestPerformance BRRequestPerformance `json:"request_performance"`
}

// BRRequestPerformance is the schema's RequestPerformance (aggregates only).
type BRRequestPerformance struct {
	Aggregate BRAggregate `json:"aggregate"`
}

// BRAggregate is the schema's AggregateRequestPerformance.
type BRAggregate struct {
	Requests   BRRequests   `json:"requests"`
	Latency    BRLatency    `json:"latency"`
	Throughput BRThroughput `json:"throughput"`
}

// BRRequests counts the cell's measured requests and their lengths.
type BRRequests struct {
	Total        int     `json:"total"`
	Failures     int     `json:"failures"`
	InputLength  *BRStat `json:"input_length,omitempty"`
	OutputLength *BRStat `json:"output_length,omitempty"`
}

// BRLatency is the schema's AggregateLatency.
type BRLatency struct {
	TimeToFirstToken   *BRStat `json:"time_to_first_token,omitempty"`
	TimePerOutputToken *BRStat `json:"time_per_output_token,omitempty"`
	InterTokenLatency  *BRStat `json:"inter_token_latency,omitempty"`
	RequestLatency     *BRStat `json:"request_latency,omitempty"`
}

// BRThroughput is the schema's AggregateThroughput.
type BRThroughput struct {
	InputTokenRate  *BRStat `json:"input_token_rate,omitempty"`
	OutputTokenRate *BRStat `json:"output_token_rate,omitempty"`
	TotalTokenRate  *BRStat `json:"total_token_rate,omitempty"`
	RequestRate     *BRStat `json:"request_rate,omitempty"`
}

// BRStat is the schema's Statistics: units and mean required, the rest when known.
type BRStat struct {
	Units string   `json:"units"`
	Mean  float64  `json:"mean"`
	Min   *float64 `json:"min,omitempty"`
	P50   *float64 `json:"p50,omitempty"`
	P90   *float64 `json:"p90,omitempty"`
	P95   *float64 `json:"p95,omitempty"`
	P99   *float64 `json:"p99,omitempty"`
	Max   *float64 `json:"max,omitempty"`
}

// summaryStat is a servebench Summary as Statistics in units (the values as they are: seconds
// for "s"); nil for an empty summary. Withheld percentiles stay absent.
func summaryStat(s servebench.Summary, units string) *BRStat {
	if s.Count == 0 {
		return nil
	}
	// a minimum or maximum the summary does not know (an imported tool's file without them)
	// stays absent: the schema requires only units and mean
	return &BRStat{Units: units, Mean: s.Mean, Min: s.Min, P50: s.P50, P90: s.P90, P95: s.P95, P99: s.P99, Max: s.Max}
}

// meanStat is a single value as Statistics (its mean).
func meanStat(v float64, units string) *BRStat { return &BRStat{Units: units, Mean: v} }

// isoDuration writes seconds as an ISO-8601 duration.
func isoDuration(s float64) string {
	return "PT" + strconv.FormatFloat(s, 'f', -1, 64) + "S"
}

// loadSource is how the cell's prompts were made, in the schema's terms: servebench's own
// prompts are synthetic text of exact token counts ("random"), a dataset's or trace's are
// sampled from data.
func loadSource(k servebench.CellKind) string {
	switch k {
	case servebench.KindDataset, servebench.KindTrace:
		return "sampled"
	}
	return "random"
}

// BenchmarkReports is the run as llm-d Benchmark Reports v0.2.1, one per measured cell (a
// skipped cell has none), in the order of results.json. The mapping, field by field, is in
// docs/exchange.md.
func BenchmarkReports(m servebench.Manifest, res servebench.Results) []BR {
	var out []BR
	engine := m.Plan.Metadata.Engine
	if engine == "" {
		engine = m.Server.Engine
	}
	model := m.Plan.Target.Model
	keywords := []string{"servebench"}
	if m.Simulated {
		keywords = append(keywords, "simulated")
	}
	if m.Plan.Metadata.Label != "" {
		keywords = append(keywords, m.Plan.Metadata.Label)
	}
	var stack []BRComponent
	if engine != "" && model != "" && m.Plan.Metadata.GPU != "" {
		gpus, gpu := gpuCount(m.Plan.Metadata.GPU)
		stack = []BRComponent{{
			Metadata: BRComponentMetadata{Label: engine, CfgID: m.ID, Description: m.TargetName()},
			Standardized: BREngine{Kind: "inference_engine", Tool: engine, ToolVersion: orUnknown(m.Server.Version), Role: "replica", Replicas: 1,
				Model: BRModel{Name: model}, Accelerator: BRAccelerator{Model: gpu, Count: gpus, Parallelism: map[string]int{}}},
			Native: BRNative{},
		}}
	}
	for i, c := range res.Cells {
		if c.Skipped || c.RequestsTotal == 0 {
			continue
		}
		start := m.StartedAt.Add(time.Duration(c.WindowStartSeconds * float64(time.Second))).UTC()
		end := start.Add(time.Duration(c.WindowSeconds * float64(time.Second)))
		load := BRLoadStandardized{Tool: "servebench", ToolVersion: orUnknown(m.ToolVersion), Parallelism: 1, Source: loadSource(c.Kind), Stage: i,
			InputSeqLen: BRSeqLen{Distribution: "fixed", Value: float64(c.ContextTokens)}}
		if c.ContextTokens == 0 { // a dataset or trace: lengths vary; the mean is what was sent
			load.InputSeqLen = BRSeqLen{Distribution: "other", Value: c.InputTokensMean}
		}
		if c.OutputTokens > 0 {
			load.OutputSeqLen = &BRSeqLen{Distribution: "fixed", Value: float64(c.OutputTokens)}
		}
		if c.Concurrency > 0 {
			conc := c.Concurrency
			load.Concurrency = &conc
		}
		if c.RatePerSecond > 0 {
			r := c.RatePerSecond
			load.RateQPS = &r
		}
		if c.Turn > 0 {
			load.MultiTurn = &BRMultiTurn{Enabled: true}
		}
		kind := string(c.Kind)
		if kind == "" {
			kind = string(servebench.KindSweep)
		}
		desc := fmt.Sprintf("servebench %s cell: %d-token prompts, %d output tokens, concurrency %d (%s load)", kind, c.ContextTokens, c.OutputTokens, c.Concurrency, c.LoadMode)
		br := BR{Version: BRVersion,
			Run: BRRun{UID: fmt.Sprintf("%s-cell-%d", m.ID, i), EID: m.ID,
				Time:        &BRRunTime{Start: start.Format(time.RFC3339Nano), End: end.Format(time.RFC3339Nano), Duration: isoDuration(c.WindowSeconds)},
				Description: desc, Keywords: keywords},
			Scenario: &BRScenario{Stack: stack, Load: &BRLoad{
				Metadata:     BRLoadMetadata{SchemaVersion: "0.0.1", CfgID: m.ID, Description: desc},
				Standardized: load,
				Native:       BRNative{Config: m.Plan},
			}},
		}
		agg := &br.Results.RequestPerformance.Aggregate
		agg.Requests = BRRequests{Total: c.RequestsTotal, Failures: c.RequestsFailed}
		if c.RequestsSucceeded > 0 {
			agg.Requests.InputLength = meanStat(c.InputTokensMean, "count")
			agg.Requests.OutputLength = meanStat(c.OutputTokensMean, "count")
		}
		agg.Latency = BRLatency{
			TimeToFirstToken:   summaryStat(c.TTFTSeconds, "s"),
			TimePerOutputToken: summaryStat(c.ITLSeconds, "s/token"),
			InterTokenLatency:  summaryStat(c.ChunkGapSeconds, "s"),
			RequestLatency:     summaryStat(c.E2ELatencySeconds, "s"),
		}
		if c.WindowSeconds > 0 {
			agg.Throughput = BRThroughput{
				InputTokenRate:  meanStat(c.TotalThroughputTPS-c.SystemOutputThroughputTPS, "tokens/s"),
				OutputTokenRate: meanStat(c.SystemOutputThroughputTPS, "tokens/s"),
				TotalTokenRate:  meanStat(c.TotalThroughputTPS, "tokens/s"),
				RequestRate:     meanStat(c.RequestThroughputRPS, "queries/s"),
			}
		}
		out = append(out, br)
	}
	return out
}

// gpuCountRE matches the count a GPU description starts with ("8x H100 SXM", "2 × B200").
var gpuCountRE = regexp.MustCompile(`^\s*(\d+)\s*[x×]\s*(.+)$`)

// gpuCount splits the plan's metadata.gpu into a count and the accelerator's name; a
// description without a count is one accelerator.
func gpuCount(desc string) (int, string) {
	if m := gpuCountRE.FindStringSubmatch(desc); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n, strings.TrimSpace(m[2])
		}
	}
	return 1, strings.TrimSpace(desc)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
