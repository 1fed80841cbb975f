package servebench

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Tokens is a token count written as a plain integer or with a K suffix (K = 1024): "8k" = 8192.
type Tokens int

// ParseTokens parses "8k", "8K", "1.5k" or "8192".
func ParseTokens(s string) (Tokens, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	if strings.HasSuffix(t, "k") {
		mult, t = 1024, strings.TrimSuffix(t, "k")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*mult != float64(int(v*mult)) {
		return 0, fmt.Errorf("%q is not a token count: write a whole number of tokens (8192) or K = 1024 tokens (8k)", s)
	}
	return Tokens(v * mult), nil
}

// UnmarshalText implements encoding.TextUnmarshaler (used by YAML and JSON decoding).
func (t *Tokens) UnmarshalText(b []byte) error {
	v, err := ParseTokens(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// UnmarshalJSON accepts a JSON number (how Tokens is written: 8192) or a string ("8k").
func (t *Tokens) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	return t.UnmarshalText([]byte(s))
}

// String writes whole multiples of 1024 as "8K", others as plain integers.
func (t Tokens) String() string {
	if t > 0 && t%1024 == 0 {
		return fmt.Sprintf("%dK", t/1024)
	}
	return strconv.Itoa(int(t))
}

// Target is the server under test.
type Target struct {
	// URL is the API base, e.g. http://127.0.0.1:8000/v1. Empty means the built-in simulator.
	URL        string `json:"url" yaml:"url"`
	API        API    `json:"api" yaml:"api"`
	Model      string `json:"model" yaml:"model"`
	MetricsURL string `json:"metrics_url,omitempty" yaml:"metrics_url"`
	// GPU is the GPU telemetry source: auto | nvml | dcgm=URL | nvidia-smi | none.
	GPU string `json:"gpu,omitempty" yaml:"gpu"`
	// APIKeyEnv names the environment variable holding the API key (default OPENAI_API_KEY). The
	// key itself is never stored.
	APIKeyEnv string `json:"api_key_env,omitempty" yaml:"api_key_env"`
	// Tokenizer is a path to a Hugging Face tokenizer.json or a tiktoken encoding name, used
	// when the server has no /tokenize and calibration is impossible.
	Tokenizer string `json:"tokenizer,omitempty" yaml:"tokenizer"`
	// SimProfile is the simulator profile used when URL is empty.
	SimProfile string `json:"sim_profile,omitempty" yaml:"sim_profile"`
}

// Sweep is the grid of cells.
type Sweep struct {
	Contexts     []Tokens `json:"contexts" yaml:"contexts"`
	Concurrency  []int    `json:"concurrency" yaml:"concurrency"`
	OutputTokens Tokens   `json:"output_tokens" yaml:"output_tokens"`
	Mode         LoadMode `json:"mode" yaml:"mode"`
	// MinRequests, Rounds and MinDuration are floors of a sustained sweep cell: at least
	// max(MinRequests, Rounds × N) measured requests and a window of MinDuration. Every
	// sustained cell also measures a window of at least 2 × its mean end-to-end latency and
	// 2 × N requests.
	MinRequests int      `json:"min_requests" yaml:"min_requests"`
	Rounds      int      `json:"rounds" yaml:"rounds"`
	MinDuration Duration `json:"min_duration,omitempty" yaml:"min_duration"`
	// Precision is the relative half-width a sustained cell aims for in the 95% intervals of
	// its output throughput and mean TTFT (0.05 = ±5%); it keeps measuring until both are that
	// tight or MaxRequests measured requests / a MaxDuration window are reached.
	Precision   float64  `json:"precision,omitempty" yaml:"precision"`
	MaxRequests int      `json:"max_requests,omitempty" yaml:"max_requests"`
	MaxDuration Duration `json:"max_duration,omitempty" yaml:"max_duration"`
	// MaxTime > 0 is the whole run's time budget (the sweep and every capacity search): the
	// runner keeps it by measuring each cell less precisely and ending capacity searches early,
	// and says so in the results' notes (package runner, budget).
	MaxTime Duration `json:"max_time,omitempty" yaml:"max_time"`
	// Requests is the prompt count of fixed mode and the request count of rate mode.
	Requests int `json:"requests,omitempty" yaml:"requests"`
	// Rate is the arrival rate (requests/s) of rate mode and of a paced fixed mode; Poisson
	// arrivals when Arrivals is "poisson" (default), evenly spaced when "constant".
	Rate float64 `json:"rate,omitempty" yaml:"rate"`
	// Rates sweeps rate mode: one open-loop cell per rate (and context); Rate is then unused.
	Rates []float64 `json:"rates,omitempty" yaml:"rates"`
	// AutoRate searches, per context, the highest open-loop rate whose goodput (against the
	// plan's SLO) stays at or above GoodputTarget (default 0.99), starting at Rate (default 1)
	// and going no higher than MaxRate (default 256).
	AutoRate      bool    `json:"auto_rate,omitempty" yaml:"auto_rate"`
	GoodputTarget float64 `json:"goodput_target,omitempty" yaml:"goodput_target"`
	MaxRate       float64 `json:"max_rate,omitempty" yaml:"max_rate"`
	// Duration > 0 bounds each cell's time: no request starts later; rate mode without
	// Requests sends rate × Duration requests.
	Duration Duration `json:"duration,omitempty" yaml:"duration"`
	Arrivals string   `json:"arrivals,omitempty" yaml:"arrivals"`
	// Bursts is how many bursts a dedicated cell runs (default Rounds).
	Bursts int `json:"bursts,omitempty" yaml:"bursts"`
	// ExactOutput turns an output-length mismatch into a failure (class length-mismatch).
	ExactOutput bool `json:"exact_output,omitempty" yaml:"exact_output"`
	// SharedPrefix, when > 0, makes every prompt share its first SharedPrefix tokens (a cached
	// scenario on purpose); the cache check then does not flag hits.
	SharedPrefix Tokens `json:"shared_prefix,omitempty" yaml:"shared_prefix"`
	// TTFTTimeout and IdleTimeout bound a request (defaults 10m and 60s); idle is time without
	// a token. RequestTimeout bounds a request's whole life; 0 derives it from its output
	// length (ttft_timeout + 1 s per output token + idle_timeout).
	TTFTTimeout    Duration `json:"ttft_timeout" yaml:"ttft_timeout"`
	IdleTimeout    Duration `json:"idle_timeout" yaml:"idle_timeout"`
	RequestTimeout Duration `json:"request_timeout,omitempty" yaml:"request_timeout"`
	// OutageTimeout is how long the run waits, paused, for a server that stopped answering
	// before it stops (default 5m; the run can then be resumed).
	OutageTimeout Duration `json:"outage_timeout,omitempty" yaml:"outage_timeout"`
}

// CapacityPlan bounds the capacity search.
type CapacityPlan struct {
	MaxConcurrency int `json:"max_concurrency" yaml:"max_concurrency"`
	// Resolution is the share of the limit the capacity searches resolve it to: 0 (the default)
	// brackets every limit exactly, a passing level and the one above it failing (the reference
	// method); above 0 a search ends as the users' search does (capacity.SearchConfig.Resolution):
	// on a bracket within ⌈Resolution × limit⌉ levels, its limit interpolated, or at a passing
	// level within its noise of the threshold whose modelled crossing comes before the next level
	// that resolution allows, with no failing level measured. At most 0.5.
	Resolution float64 `json:"resolution,omitempty" yaml:"resolution"`
	// Headline names the use case the report's summary leads with (its capacity is the
	// headline figure); when it names no analysed use case, the first analysed one leads.
	Headline string `json:"headline,omitempty" yaml:"headline"`
}

// SizingPlan says how capacity limits become a deployment size (the report's Capacity
// Planning). Zero values take the defaults: 4 users per slot, 100 / 1,000 / 10,000 users, GPUs
// per replica from metadata.gpu ("2x RTX Pro 6000" → 2, else 1), no GPU price.
type SizingPlan struct {
	// UsersPerSlot: active users served by one concurrent request slot.
	UsersPerSlot float64 `json:"users_per_slot,omitempty" yaml:"users_per_slot"`
	// TargetUsers: the user counts to size for.
	TargetUsers []int `json:"target_users,omitempty" yaml:"target_users"`
	// GPUsPerReplica: GPUs in one replica of the measured system.
	GPUsPerReplica int `json:"gpus_per_replica,omitempty" yaml:"gpus_per_replica"`
	// GPUUSDPerHour: the price of one GPU-hour in USD.
	GPUUSDPerHour float64 `json:"gpu_usd_per_hour,omitempty" yaml:"gpu_usd_per_hour"`
}

// Metadata is what the user declares about the system under test, shown in the report.
type Metadata struct {
	// Label is the run's short name in compare and the runs index ("H100 tp1"); empty: the GPU,
	// else the model.
	Label                string  `json:"label,omitempty" yaml:"label"`
	ModelOrg             string  `json:"model_org,omitempty" yaml:"model_org"`
	ModelName            string  `json:"model_name,omitempty" yaml:"model_name"`
	Architecture         string  `json:"architecture,omitempty" yaml:"architecture"`
	Parameters           string  `json:"parameters,omitempty" yaml:"parameters"`
	Precision            string  `json:"precision,omitempty" yaml:"precision"`
	KVCache              string  `json:"kv_cache,omitempty" yaml:"kv_cache"`
	GPU                  string  `json:"gpu,omitempty" yaml:"gpu"`
	VRAM                 string  `json:"vram,omitempty" yaml:"vram"`
	Engine               string  `json:"engine,omitempty" yaml:"engine"`
	EngineFlags          string  `json:"engine_flags,omitempty" yaml:"engine_flags"`
	SpeculativeDecoding  string  `json:"speculative_decoding,omitempty" yaml:"speculative_decoding"`
	ElectricityUSDPerKWh float64 `json:"electricity_usd_per_kwh" yaml:"electricity_usd_per_kwh"`
}

// Scenario is a workload of the dedicated-capacity view.
type Scenario struct {
	Name          string `json:"name" yaml:"name"`
	Title         string `json:"title" yaml:"title"`
	ContextTokens Tokens `json:"context" yaml:"context"`
	OutputTokens  Tokens `json:"output_tokens" yaml:"output_tokens"`
	// Concurrency levels of the dedicated bursts (default 1, 2, 4).
	Concurrency []int `json:"concurrency,omitempty" yaml:"concurrency"`
}

// RequestControl is what every request carries besides its prompt (plan key request:).
type RequestControl struct {
	// Headers are sent with every request. A value may name environment variables as ${NAME}
	// (expanded when requests are sent, so a secret need not be written down); other values of
	// secret-looking headers (Authorization, *key*, *token*, *secret*, cookies) are redacted
	// wherever the plan is shown or saved.
	Headers map[string]string `json:"headers,omitempty" yaml:"headers"`
	// ExtraBody fields are merged into every request body (they win over servebench's own,
	// except model, messages, prompt and stream, which cannot be set).
	ExtraBody map[string]any `json:"extra_body,omitempty" yaml:"extra_body"`
	// Temperature, TopP and Seed are the sampling parameters, sent when set.
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature"`
	TopP        *float64 `json:"top_p,omitempty" yaml:"top_p"`
	Seed        *int64   `json:"seed,omitempty" yaml:"seed"`
}

// DatasetPlan replays prompts from a file instead of synthesising them (plan key dataset:).
type DatasetPlan struct {
	// Path is a JSONL file ({"messages": [...]} or {"prompt": "..."} lines, optional
	// output_tokens) or a ShareGPT JSON array.
	Path string `json:"path" yaml:"path"`
	// MinOutputTokens, MaxOutputTokens and MaxPromptChars filter entries (0 = no bound).
	MinOutputTokens int `json:"min_output_tokens,omitempty" yaml:"min_output_tokens"`
	MaxOutputTokens int `json:"max_output_tokens,omitempty" yaml:"max_output_tokens"`
	MaxPromptChars  int `json:"max_prompt_chars,omitempty" yaml:"max_prompt_chars"`
	// Sessions runs each ShareGPT conversation whole, as a multi-turn session (its human turns
	// one by one, the model's own answers in between) with the levels of the plan's sessions:
	// block, instead of replaying first turns.
	Sessions bool `json:"sessions,omitempty" yaml:"sessions"`
	// Sample > 0 replays that many entries drawn with Seed (kept in file order).
	Sample int   `json:"sample,omitempty" yaml:"sample"`
	Seed   int64 `json:"seed,omitempty" yaml:"seed"`
}

// TracePlan replays a request trace on its own schedule (plan key trace:).
type TracePlan struct {
	// Path is a JSONL trace: {"timestamp": ms, "input_length": N, "output_length": M,
	// "hash_ids": [...]} per line (the Mooncake format).
	Path string `json:"path" yaml:"path"`
	// Speed > 1 compresses time (2 = twice as fast as recorded); default 1.
	Speed float64 `json:"speed,omitempty" yaml:"speed"`
	// BlockTokens is the tokens of one hash id (default 512, as in the Mooncake traces).
	BlockTokens int `json:"block_tokens,omitempty" yaml:"block_tokens"`
}

// SessionPlan measures multi-turn conversations with the server's prompt cache (plan key
// sessions:). Every session is a real conversation: turn t sends the whole conversation so far,
// the model's own answers included, plus TurnTokens of new user text. At each concurrency level,
// Count sessions advance turn by turn, Concurrency of them in flight at a time; turn t of every
// session is one cell (CellKey.Turn), and beside each turn ≥ 2 a cell of fresh prompts of the
// same length is measured for comparison.
type SessionPlan struct {
	// Turns per session (at least 2). With dataset.sessions: at most this many of each
	// conversation's turns (0: all of them).
	Turns int `json:"turns" yaml:"turns"`
	// FirstTurnTokens is the prompt of turn 1; TurnTokens the new user text of each later turn.
	FirstTurnTokens Tokens `json:"first_turn_tokens" yaml:"first_turn_tokens"`
	TurnTokens      Tokens `json:"turn_tokens" yaml:"turn_tokens"`
	// OutputTokens is the answer length of every turn (default: the sweep's output_tokens).
	OutputTokens Tokens `json:"output_tokens" yaml:"output_tokens"`
	// Concurrency levels: sessions in flight at a time (default 1, 4).
	Concurrency []int `json:"concurrency" yaml:"concurrency"`
	// Count is how many sessions run at each level (default 2 × the level, at least 4).
	Count int `json:"count,omitempty" yaml:"count"`
	// ThinkTime is the least time between a session's answer and its next turn (a user
	// reading and typing); default 0.
	ThinkTime Duration `json:"think_time,omitempty" yaml:"think_time"`
}

// Plan is the whole resolved plan of a run: defaults < file < flags, saved in run.json. A plan
// file is this type in YAML (package plan decodes it over the defaults).
type Plan struct {
	Target    Target       `json:"target" yaml:"target"`
	Sweep     Sweep        `json:"sweep" yaml:"sweep"`
	UseCases  []UseCase    `json:"use_cases" yaml:"use_cases"`
	Scenarios []Scenario   `json:"scenarios,omitempty" yaml:"scenarios"`
	Capacity  CapacityPlan `json:"capacity" yaml:"capacity"`
	Sizing    SizingPlan   `json:"sizing,omitzero" yaml:"sizing"`
	Metadata  Metadata     `json:"metadata" yaml:"metadata"`
	// Request is what every request carries besides its prompt (headers, sampling, extra body).
	Request RequestControl `json:"request,omitempty" yaml:"request"`
	// Dataset, when set, replaces the synthetic prompts of the sweep by the file's.
	Dataset *DatasetPlan `json:"dataset,omitempty" yaml:"dataset"`
	// Trace, when set, replaces the sweep by one open-loop cell replaying the trace.
	Trace *TracePlan `json:"trace,omitempty" yaml:"trace"`
	// Sessions, when set, replaces the sweep's grid by multi-turn sessions with the prompt cache.
	Sessions *SessionPlan `json:"sessions,omitempty" yaml:"sessions"`
	// Users, when set, searches use cases' capacity in concurrent users with the prompt cache.
	Users *UsersPlan `json:"users,omitempty" yaml:"users"`
	// SLO sets per-request objectives; every cell then reports its goodput (the share of
	// requests meeting all of them).
	SLO *Thresholds `json:"slo,omitempty" yaml:"slo"`
}

// Duration is a time.Duration written as "10m", "1.5s" in YAML and JSON.
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write e.g. 90s, 10m, 1h", string(b))
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// SimulatedHeader is the response header servebench's simulated engine sets on every response
// ("servebench-sim; profile=NAME"): a client seeing it knows the target is simulated.
const SimulatedHeader = "X-Servebench-Sim"

// ServerInfo is what the target says about itself.
type ServerInfo struct {
	// Engine is the detected engine: vllm, sglang, tgi, tensorrt-llm, llamacpp, ollama, sim, or
	// unknown.
	Engine string `json:"engine"`
	// Version as /version (or equivalent) reports it.
	Version string `json:"version,omitempty"`
	// Models lists the ids /v1/models returned.
	Models []string `json:"models,omitempty"`
	// MaxModelLen is the maximum context the server accepts, 0 when it does not say.
	MaxModelLen int `json:"max_model_len,omitempty"`
	// KVCacheTokens is the server's KV-cache capacity in tokens (vLLM's cache_config_info:
	// num_gpu_blocks × block_size), 0 when its metrics do not say. A users' search reads it to
	// tell how many users' histories fit in the cache.
	KVCacheTokens int `json:"kv_cache_tokens,omitempty"`
	// TokenCounting says how prompts were sized: "tokenize-endpoint", "calibration",
	// "offline-tokenizer:<name>".
	TokenCounting string `json:"token_counting,omitempty"`
	// ForcesOutputLength is false when the server cannot be made to ignore end-of-sequence.
	ForcesOutputLength bool `json:"forces_output_length"`
	// Raw holds the raw /v1/models and /version bodies (truncated).
	Raw map[string]string `json:"raw,omitempty"`
}

// Manifest is run.json: what ran, against what, and how it ended.
type Manifest struct {
	SchemaVersion int        `json:"schema_version"`
	ID            string     `json:"id"`
	ToolVersion   string     `json:"tool_version"`
	Simulated     bool       `json:"simulated"`
	Plan          Plan       `json:"plan"`
	Server        ServerInfo `json:"server"`
	Command       []string   `json:"command,omitempty"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    time.Time  `json:"finished_at,omitempty"`
	// ClockSource is the clock the client stamps responses with: ClockKernel (receive
	// timestamps of the socket) or ClockUser; each record says which clock stamped it.
	ClockSource string `json:"clock_source,omitempty"`
	// ClientPriority says at which scheduling priority the client ran (e.g. "nice -10 (raised
	// from 0 …)"): a raised priority lets other processes delay its reads less.
	ClientPriority string `json:"client_priority,omitempty"`
	// Status: "running", "completed", "interrupted", "failed".
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Attempts lists every invocation on this run folder, the first run and each resume, in
	// order; StartedAt and Command above stay those of the first.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Imported, when set, says the run was not measured by servebench but read from another
	// tool's result file (servebench import); its results hold that tool's figures, mapped
	// field by field in docs/exchange.md.
	Imported *ImportSource `json:"imported,omitempty"`
}

// ImportSource names the result file an imported run was read from.
type ImportSource struct {
	// Tool is the tool that measured the run ("vllm bench serve", "GuideLLM", "AIPerf") and
	// ToolVersion its version where the file says it.
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version,omitempty"`
	// Format is the file's format as servebench import names it: vllm, guidellm, aiperf.
	Format string `json:"format"`
	// File is the file's base name and SHA256 the hex SHA-256 of its bytes.
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Target is the server the tool measured, where the file names it (a URL, credentials
	// removed).
	Target string `json:"target,omitempty"`
}

// TargetName is the target a run lists under: "URL (imported from TOOL)" or "imported from
// TOOL (FILE)" for an imported run, "simulator:PROFILE" for a simulated run, else the target URL
// without any credentials written into it.
func (m Manifest) TargetName() string {
	if im := m.Imported; im != nil {
		// an imported run lists under its tool, so it is never taken for a servebench measurement
		if im.Target != "" {
			return im.Target + " (imported from " + im.Tool + ")"
		}
		return "imported from " + im.Tool + " (" + im.File + ")"
	}
	if m.Simulated {
		return "simulator:" + m.Plan.Target.SimProfile
	}
	t := m.Plan.Target.URL
	if u, err := url.Parse(t); err == nil && u.User != nil {
		u.User = nil // never show credentials written into the URL
		t = u.String()
	}
	return t
}

// EngineName is the serving engine a run names: the plan's metadata.engine when declared, else
// the one the server was detected as, followed by the server's version ("vllm 0.6.3"); "" when
// neither is known.
func (m Manifest) EngineName() string {
	e := m.Plan.Metadata.Engine
	if e == "" {
		e = m.Server.Engine
	}
	if m.Server.Version != "" && e != "" {
		e += " " + m.Server.Version
	}
	return e
}

// Sample is one telemetry point (telemetry.jsonl): a server gauge or a GPU reading.
type Sample struct {
	OffsetSeconds float64 `json:"offset_seconds"`
	UnixNano      int64   `json:"unix_nano"`
	// Source: "server" or "gpu".
	Source string            `json:"source"`
	Name   string            `json:"name"`
	Value  float64           `json:"value"`
	Labels map[string]string `json:"labels,omitempty"`
	CellID string            `json:"cell_id,omitempty"`
}
