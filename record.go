package servebench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// API names the wire protocol spoken to the target.
type API string

const (
	// APIChat is POST {base}/chat/completions with a single user message.
	APIChat API = "openai-chat"
	// APICompletions is POST {base}/completions with a raw prompt.
	APICompletions API = "openai-completions"
	// APIOllama is Ollama's native streaming POST /api/chat (newline-delimited JSON).
	APIOllama API = "ollama"
)

// LoadMode is how requests are released during a cell (see the README, "Load modes").
type LoadMode string

const (
	// ModeSustained keeps exactly N requests in flight (closed loop) after a warm-up.
	ModeSustained LoadMode = "sustained"
	// ModeDedicated releases N requests together and waits for all of them before the next burst.
	ModeDedicated LoadMode = "dedicated"
	// ModeFixed sends P prompts with at most N in flight, optionally paced by a Poisson rate.
	ModeFixed LoadMode = "fixed"
	// ModeRate sends on an open-loop schedule (constant or Poisson) whatever is in flight.
	ModeRate LoadMode = "rate"
)

// CellKey identifies one measured setting. Its fields are inlined into every Record and
// CellResult. On a line of requests.jsonl, output_tokens is the record's own (what the server
// produced; output_tokens_requested is what was asked) and the cell's is cell_output_tokens
// (see Record.MarshalJSON), so a record read back knows its whole cell.
type CellKey struct {
	// Kind says which part of the plan the cell belongs to (sweep, scenario, capacity …).
	Kind          CellKind `json:"kind,omitempty"`
	Scenario      string   `json:"scenario"`
	LoadMode      LoadMode `json:"load_mode"`
	ContextTokens int      `json:"context_tokens"`
	OutputTokens  int      `json:"output_tokens"`
	Concurrency   int      `json:"concurrency"`
	// RatePerSecond is the arrival rate of ModeRate and of a paced ModeFixed, 0 otherwise.
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	// Turn is the turn (from 1) of a multi-turn session's cell, and of the fresh-prompt cell
	// measured beside it at the same prompt length; 0 for every other cell.
	Turn int `json:"turn,omitempty"`
}

// OnSweepGrid reports whether the cell is a point of the sweep's context × concurrency grid
// (KindSweep; a request-rate sweep's open-loop cells are KindRate). This is the set the report's
// sweep tables and charts draw and stats.Peak takes the peak throughput from.
func (k CellKey) OnSweepGrid() bool { return k.Kind == KindSweep }

// SteadyLevel reports whether the cell is a concurrency level measured in steady state: a level
// of the sweep's grid or of a capacity search, under sustained load. Interpolated readings
// (stats.Interpolate) and the pages' charts across concurrency read these cells.
func (k CellKey) SteadyLevel() bool {
	return (k.Kind == KindSweep || k.Kind == KindCapacity) && k.LoadMode == ModeSustained
}

// CellKind says which part of a plan a cell measures.
type CellKind string

const (
	// KindSweep: a cell of the sweep's grid (contexts × concurrency levels).
	KindSweep CellKind = "sweep"
	// KindRate: an open-loop cell of a request-rate sweep (one per rate).
	KindRate CellKind = "rate"
	// KindDataset: a cell replaying the plan's dataset (the sweep's concurrency levels).
	KindDataset CellKind = "dataset"
	// KindTrace: the cell replaying the plan's trace on its schedule.
	KindTrace CellKind = "trace"
	// KindScenario: a dedicated-burst cell of one of the plan's scenarios.
	KindScenario CellKind = "scenario"
	// KindSession: a turn of the multi-turn sessions, or the fresh prompts measured beside it.
	KindSession CellKind = "session"
	// KindCapacity: a level of a use case's capacity search.
	KindCapacity CellKind = "capacity"
)

// kindOrder is the order of the kinds in a run's results and in reports: the sweep's grid
// first, then the plan's other workloads, then the capacity searches.
var kindOrder = [...]CellKind{KindSweep, KindRate, KindDataset, KindTrace, KindScenario, KindSession, KindCapacity, KindUsers}

func kindRank(k CellKind) int {
	for i, x := range kindOrder {
		if x == k {
			return i
		}
	}
	return len(kindOrder)
}

// Compare orders cells by kind (the sweep, rate, dataset, trace, scenario, session, capacity and
// users cells, in that order), then by scenario, load mode, context, output length,
// concurrency, rate and turn: the order of results.json and of every table of cells, so the
// sweep's cells never interleave with a capacity search's or a scenario's.
func (k CellKey) Compare(o CellKey) int {
	if a, b := kindRank(k.Kind), kindRank(o.Kind); a != b {
		return cmp.Compare(a, b)
	}
	return cmp.Or(
		cmp.Compare(k.Scenario, o.Scenario),
		cmp.Compare(k.LoadMode, o.LoadMode),
		cmp.Compare(k.ContextTokens, o.ContextTokens),
		cmp.Compare(k.OutputTokens, o.OutputTokens),
		cmp.Compare(k.Concurrency, o.Concurrency),
		cmp.Compare(k.RatePerSecond, o.RatePerSecond),
		cmp.Compare(k.Turn, o.Turn),
	)
}

// Scenario names the runner gives the cells of the plan's parts that have no name of their
// own (a dedicated scenario's cells and a use case's levels carry its name).
const (
	// SweepScenario: the sweep's grid and its request rates.
	SweepScenario = "sweep"
	// DatasetScenario: the replay of the plan's dataset.
	DatasetScenario = "dataset"
	// TraceScenario: the replay of the plan's trace.
	TraceScenario = "trace"
	// SessionScenario: the turns of the multi-turn sessions.
	SessionScenario = "session"
	// FreshScenario: the fresh prompts measured beside each session turn.
	FreshScenario = "session-fresh"
)

// FillKind sets the kind of a cell recorded before cells named theirs (a run folder written
// before CellKey.Kind existed), from the scenario name and load mode it was recorded under;
// a cell that has a kind keeps it. It is the one place a cell's kind is decided from those:
// the writer sets Kind on every cell it measures, store fills it once when it reads a run
// folder or the index's copy of one (results.json, cells.jsonl, requests.jsonl), and every
// reader after that switches on Kind.
func (k *CellKey) FillKind() {
	switch {
	case k.Kind != "":
	case k.Scenario == SweepScenario && k.LoadMode == ModeRate:
		k.Kind = KindRate
	case k.Scenario == SweepScenario:
		k.Kind = KindSweep
	case k.Scenario == DatasetScenario:
		k.Kind = KindDataset
	case k.Scenario == TraceScenario:
		k.Kind = KindTrace
	case k.Scenario == SessionScenario || k.Scenario == FreshScenario:
		k.Kind = KindSession
	case k.LoadMode == ModeDedicated:
		k.Kind = KindScenario
	case k.LoadMode == ModeUsers:
		k.Kind = KindUsers
	case k.Scenario != "":
		k.Kind = KindCapacity
	}
}

// FillKinds is FillKind of every cell of the results.
func (r *Results) FillKinds() {
	for i := range r.Cells {
		r.Cells[i].FillKind()
	}
}

// ID is a stable, human-readable key for the cell, e.g. "sweep/sustained/ctx=8192/out=1024/c=4".
func (k CellKey) ID() string {
	s := fmt.Sprintf("%s/%s/ctx=%d/out=%d/c=%d", k.Scenario, k.LoadMode, k.ContextTokens, k.OutputTokens, k.Concurrency)
	if k.RatePerSecond > 0 {
		s += fmt.Sprintf("/rate=%g", k.RatePerSecond)
	}
	if k.Turn > 0 {
		s += fmt.Sprintf("/turn=%d", k.Turn)
	}
	return s
}

// Request is one request to send. Prompt holds exactly the text whose token count (as the
// server counts it, chat template included) is ContextTokens; the chat flavour sends it as a
// single user message, the completions flavour as the prompt.
type Request struct {
	Cell CellKey
	// Seq numbers requests within a run, from 0, in the order they are created.
	Seq int64
	// Warmup marks requests excluded from the statistics (still recorded).
	Warmup bool
	// Prompt is the text to send.
	Prompt string
	// ContextTokens is the prompt length asked for (the cell's context tokens, a trace entry's
	// input length), which the prompt builder aimed at and believes it achieved; 0 when unknown
	// (a dataset conversation). The record keeps it as InputTokensRequested.
	ContextTokens int
	// MaxOutputTokens is the exact output length asked for (max_tokens, min_tokens, ignore_eos).
	MaxOutputTokens int
	// ScheduledAt is the offset from the run origin at which an open-loop schedule wanted this
	// request sent; zero for closed-loop modes.
	ScheduledAt time.Duration
	// Messages, when set, is the conversation to send instead of one user message holding
	// Prompt (a dataset entry or a multi-turn session); the completions flavour sends their
	// contents joined by blank lines.
	Messages []Message
	// DatasetIndex is the dataset entry the request replays (0-based), nil when synthetic.
	DatasetIndex *int
	// Answer, when set, receives the text of the response's content deltas as they arrive (a
	// multi-turn session sends it back in its next turn). It is nil for every other request,
	// which then costs the client nothing: the text is read only after the event is stamped.
	Answer *strings.Builder
}

// Message is one message of a chat conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Client sends one request and returns its one Record, whatever happens (failures included).
// It never returns without a record and never retries silently: a retry is counted in
// Record.Retries.
type Client interface {
	Do(ctx context.Context, req *Request) Record
}

// ClientFunc adapts a function to Client.
type ClientFunc func(ctx context.Context, req *Request) Record

// Do calls f.
func (f ClientFunc) Do(ctx context.Context, req *Request) Record { return f(ctx, req) }

// ErrorClass classifies a failed request. The empty class means success.
type ErrorClass string

const (
	ErrNone ErrorClass = ""
	// ErrConnect: the TCP/TLS connection could not be made or broke before any response byte.
	ErrConnect ErrorClass = "connect"
	// ErrHTTPStatus: the server answered with a non-2xx status (Record.HTTPStatus says which).
	ErrHTTPStatus ErrorClass = "http-status"
	// ErrTimeoutFirstToken: no token arrived within the time-to-first-token limit.
	ErrTimeoutFirstToken ErrorClass = "timeout-first-token"
	// ErrTimeoutIdle: no token arrived for longer than the idle limit after the first one
	// (bytes without a token, such as keep-alive comments or events without a delta, do not
	// count as activity).
	ErrTimeoutIdle ErrorClass = "timeout-idle"
	// ErrTimeoutTotal: the request lasted longer than its total bound (see
	// openai.Config.RequestTimeout: derived from its output length unless set).
	ErrTimeoutTotal ErrorClass = "timeout-total"
	// ErrStreamTruncated: the stream ended (EOF, reset, an in-stream error event, or a 200 that
	// simply stops) before the server signalled the end (`data: [DONE]`, or Ollama's done:true),
	// or it ended without carrying a single token.
	ErrStreamTruncated ErrorClass = "stream-truncated"
	// ErrMalformedEvent: an event could not be parsed, was larger than the client's line or
	// event limit, or the body was not an event stream (for example an HTML page with status
	// 200).
	ErrMalformedEvent ErrorClass = "malformed-event"
	// ErrLengthMismatch: the output length differed from the one asked for and the plan
	// requires exact lengths (otherwise a mismatch is only flagged in Record.LengthMismatch).
	ErrLengthMismatch ErrorClass = "length-mismatch"
	// ErrCanceled: the run was stopped while the request was in flight (or, a population's
	// warm-up request, its cell's measured window had ended: see load's users mode).
	ErrCanceled ErrorClass = "canceled"
	// ErrWorkerLost: the worker of a distributed run that was sending the request died or
	// disconnected while it was in flight, so its outcome is unknown.
	ErrWorkerLost ErrorClass = "worker-lost"
)

// Clock sources recorded in Record.ClockSource and RunInfo.ClockSource.
const (
	// ClockKernel: every response read was stamped by the kernel when the bytes reached the
	// socket (Linux receive timestamps), mapped onto the run's monotonic clock.
	ClockKernel = "kernel"
	// ClockUser: reads were stamped with the time they returned in user space (other systems,
	// or a socket that refused receive timestamps); scheduling delays in the client show up in
	// the measured times.
	ClockUser = "user"
)

// Token-count sources recorded in Record.OutputTokensSource and Record.InputTokensSource.
const (
	// SourceUsage: the server's usage object (usage.completion_tokens / usage.prompt_tokens,
	// or Ollama's eval_count / prompt_eval_count).
	SourceUsage = "usage"
	// SourceClientCount: counted by the client because the server gave no usage; for output
	// tokens it is the number of non-empty content/reasoning/tool-call deltas, for input tokens
	// the prompt builder's own count.
	SourceClientCount = "client-count"
)

// ServerTimings are per-request timings reported by the server itself (llama.cpp `timings`,
// vLLM per-request metrics, Ollama's native durations). Nil fields were not reported.
type ServerTimings struct {
	// Source names where they came from: "llamacpp-timings", "vllm-request-metrics",
	// "ollama-native", "sim".
	Source string `json:"source"`
	// ArrivalSeconds is the server's own arrival time of the request (vLLM's arrival_time)
	// − the request start, both wall-clock (s): how long the request took to reach the server's
	// engine, its accept queue and its read of the request included. It is only as exact as the
	// two clocks agree (the same machine, or clocks synchronised to within a millisecond).
	ArrivalSeconds *float64 `json:"arrival_seconds,omitempty"`
	// QueueSeconds is the time from arrival at the server to the start of prefill.
	QueueSeconds *float64 `json:"queue_seconds,omitempty"`
	// PrefillSeconds is the time spent processing the prompt.
	PrefillSeconds *float64 `json:"prefill_seconds,omitempty"`
	// DecodeSeconds is the time spent generating output tokens.
	DecodeSeconds *float64 `json:"decode_seconds,omitempty"`
	// LoadSeconds is model load time charged to this request (Ollama load_duration).
	LoadSeconds *float64 `json:"load_seconds,omitempty"`
	// PromptTokens and CachedTokens as the server's timing object reports them.
	PromptTokens *int `json:"prompt_tokens,omitempty"`
	CachedTokens *int `json:"cached_tokens,omitempty"`
}

// Record is one finished request: the unit everything downstream reads. Exactly one Record is
// written per Request, failures included. Times are seconds; offsets are from the run origin
// on the monotonic clock.
type Record struct {
	CellKey
	Seq    int64 `json:"seq"`
	Warmup bool  `json:"warmup"`
	// CellAttempt numbers the attempts at measuring this cell (0 = the first); an attempt an
	// outage interrupted is discarded (see Outage, CellResult.Attempt).
	CellAttempt int `json:"cell_attempt,omitempty"`
	// Worker names the worker of a distributed run that sent the request (empty in a local run).
	Worker string `json:"worker,omitempty"`
	// User numbers the user of a population (ModeUsers, from 1) who sent the request; its Turn
	// is the turn of that user's conversation. 0 in every other mode.
	User int `json:"user,omitempty"`
	// StartUnixNano is the wall-clock time the request started (for correlating with logs).
	StartUnixNano int64 `json:"start_unix_nano"`
	// StartOffsetSeconds is request start (just before the request is written) relative to the
	// run origin, monotonic.
	StartOffsetSeconds float64 `json:"start_offset_seconds"`
	// EndOffsetSeconds is the last byte of the response (or the failure) relative to the origin.
	EndOffsetSeconds float64 `json:"end_offset_seconds"`
	// ConnectSeconds is how long the connection this request opened took to open (TCP, and TLS
	// for https), before the request start and so outside TTFT (s); nil when the request used a
	// connection already open (kept alive, or opened ahead of its cell).
	ConnectSeconds *float64 `json:"connect_seconds,omitempty"`
	// WriteSeconds is request start → the request's last byte handed to the kernel (the time
	// the write returned; on loopback and on a link with room the bytes have reached the
	// server's socket by then) (s): the client's share of TTFT. The rest, ttft_seconds −
	// write_seconds, is the server's and the way back: its accept queue and its read of the
	// request, its queue and prefill, the first token's transit. Server.ArrivalSeconds, where
	// the server reports its arrival time, splits that rest once more.
	WriteSeconds float64 `json:"write_seconds,omitempty"`
	// ScheduledOffsetSeconds is when an open-loop schedule wanted the request sent; the send lag
	// is StartOffsetSeconds − ScheduledOffsetSeconds. Zero in closed-loop modes.
	ScheduledOffsetSeconds float64 `json:"scheduled_offset_seconds,omitempty"`
	// DatasetIndex is the dataset entry the request replayed (0-based), absent when the prompt
	// was synthetic.
	DatasetIndex *int `json:"dataset_index,omitempty"`
	// ResponseID is the server's id of the response.
	ResponseID string `json:"response_id"`
	HTTPStatus int    `json:"http_status,omitempty"`
	// RetryAfterSeconds is how long a refusing server asked the client to wait before trying
	// again (its Retry-After header on a non-2xx answer, in seconds: delta-seconds as sent, an
	// HTTP date less the time the answer arrived; at most a day); absent when
	// the answer had none.
	RetryAfterSeconds *float64 `json:"retry_after_seconds,omitempty"`

	// TTFTSeconds, ITLSeconds, E2ELatencySeconds, DecodeSeconds and GenerationSpeedTPS are
	// defined in metrics.go (see Derive). Zero when not measurable (failure, one token).
	TTFTSeconds float64 `json:"ttft_seconds"`
	// FirstContentSeconds is start → first non-empty content delta, when reasoning came first;
	// otherwise equal to TTFTSeconds.
	FirstContentSeconds float64 `json:"first_content_seconds,omitempty"`
	ITLSeconds          float64 `json:"itl_seconds"`
	E2ELatencySeconds   float64 `json:"e2e_latency_seconds"`
	DecodeSeconds       float64 `json:"decode_seconds"`
	GenerationSpeedTPS  float64 `json:"generation_speed_tps"`

	// InputTokens is the server's prompt_tokens (or the builder's count, see InputTokensSource).
	InputTokens          int    `json:"input_tokens"`
	InputTokensRequested int    `json:"input_tokens_requested"`
	InputTokensSource    string `json:"input_tokens_source"`
	// OutputTokens is the server's completion_tokens, or a client count (OutputTokensSource).
	OutputTokens          int    `json:"output_tokens"`
	OutputTokensRequested int    `json:"output_tokens_requested"`
	OutputTokensSource    string `json:"output_tokens_source"`
	// OutputTokensCap is the max_tokens the request sent (OutputTokensRequested, or the value an
	// extra body set instead); 0 when none was sent or it is unknown. CheckWire holds the
	// server's usage to it.
	OutputTokensCap int `json:"output_tokens_cap,omitempty"`
	// LengthMismatch is OutputTokens != OutputTokensRequested on an otherwise successful request.
	LengthMismatch bool `json:"length_mismatch,omitempty"`
	// CachedTokens is usage.prompt_tokens_details.cached_tokens when the server reports it.
	CachedTokens *int `json:"cached_tokens,omitempty"`
	// ReasoningTokens is how many of OutputTokens were reasoning (a reasoning model's thinking
	// before its answer): usage.completion_tokens_details.reasoning_tokens (source "usage"), else
	// the number of stream events that carried a reasoning delta ("client-count", a lower bound
	// when a chunk carries several tokens). Zero with no source when nothing reasoned.
	ReasoningTokens       int    `json:"reasoning_tokens,omitempty"`
	ReasoningTokensSource string `json:"reasoning_tokens_source,omitempty"`
	FinishReason          string `json:"finish_reason,omitempty"`

	// Chunks counts stream events that carried a token delta. ChunkGapsSeconds are the raw gaps
	// between consecutive such events (first gap = second event − first event); TokensPerChunk is
	// OutputTokens / Chunks (above 1 under speculative decoding or multi-token chunks).
	Chunks           int       `json:"chunks"`
	ChunkGapsSeconds []float64 `json:"chunk_gaps_seconds,omitempty"`
	TokensPerChunk   float64   `json:"tokens_per_chunk,omitempty"`

	// OutputTextBytes is the size of the text the token events carried: the raw JSON of their
	// content, reasoning, text and tool-call values, quotes excluded (bytes; see
	// MaxPlausibleOutputTokens). PromptBytes is the size of the prompt text sent, all messages
	// together (bytes; see MaxPlausiblePromptTokens). Zero when not measured.
	OutputTextBytes int `json:"output_text_bytes,omitempty"`
	PromptBytes     int `json:"prompt_bytes,omitempty"`
	// NotStreamed says the token events arrived all at once (see Derive): a buffering proxy
	// delivered the response in one piece, so ITL and generation speed are unknown (never zero)
	// and TTFT is the time to the whole answer, as a user behind that proxy waits for it.
	NotStreamed bool `json:"not_streamed,omitempty"`
	// Violations are the ways the response contradicted the wire or the request (see
	// CheckWire); ViolationNote gives the numbers and what was counted instead.
	Violations    []Violation `json:"server_violations,omitempty"`
	ViolationNote string      `json:"server_violation_note,omitempty"`
	// ServedModel is the model the response named when it was not the one asked for.
	ServedModel string `json:"served_model,omitempty"`

	// Retries counts transparent resends of a request that failed before any byte was written
	// (a kept-alive connection the server had closed). At most 1.
	Retries int `json:"retries,omitempty"`

	Server *ServerTimings `json:"server,omitempty"`

	// ClockSource says which clock stamped the response: ClockKernel or ClockUser.
	ClockSource string `json:"clock_source,omitempty"`
	// ClientLagSeconds = the time the read that delivered the first token returned in user
	// space − the kernel's receive stamp of that read (seconds): how far behind the network
	// the client was when the first token arrived. Nil with the user clock, where it cannot be
	// known. ClientLagMaxSeconds is the largest such lag over every read of the response.
	ClientLagSeconds    *float64 `json:"client_lag_seconds,omitempty"`
	ClientLagMaxSeconds *float64 `json:"client_lag_max_seconds,omitempty"`

	ErrorClass ErrorClass `json:"error_class"`
	Error      string     `json:"error"`
}

// recordJSON is a Record as requests.jsonl and the distributed protocol carry it: the record's
// own output_tokens (what the server produced) would hide the embedded CellKey's, so the cell's
// output length travels as cell_output_tokens.
type recordJSON struct {
	plainRecord
	CellOutputTokens *int `json:"cell_output_tokens,omitempty"`
}

type plainRecord Record

// MarshalJSON writes the record with its cell's output length as cell_output_tokens.
func (r Record) MarshalJSON() ([]byte, error) {
	out := r.CellKey.OutputTokens
	return json.Marshal(recordJSON{plainRecord(r), &out})
}

// UnmarshalJSON reads a record back with its whole cell key: the cell's output length from
// cell_output_tokens and, for a line written before records carried it, from what the request
// asked (output_tokens_requested) where every request of the cell asks the cell's length (every
// kind but a dataset's, a trace's and a users' population, whose key then reads 0). The kind of
// a record written before cells named theirs is filled in (CellKey.FillKind).
func (r *Record) UnmarshalJSON(b []byte) error {
	var w struct {
		*plainRecord
		CellOutputTokens *int `json:"cell_output_tokens"`
	}
	*r = Record{}
	w.plainRecord = (*plainRecord)(r)
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.CellKey.FillKind()
	switch {
	case w.CellOutputTokens != nil:
		r.CellKey.OutputTokens = *w.CellOutputTokens
	case r.Kind == KindDataset || r.Kind == KindTrace || r.Kind == KindUsers:
		r.CellKey.OutputTokens = 0
	default:
		r.CellKey.OutputTokens = r.OutputTokensRequested
	}
	return nil
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.ErrorClass == ErrNone }
