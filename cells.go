package servebench

import (
	"encoding/json"
	"fmt"
	"math"
)

// CellLog is one line of cells.jsonl: what a run keeps, beside the records in requests.jsonl, of
// each thing that happened to a cell, in the order it happened. With run.json and the records
// it is enough to compute results.json again (servebench report --recompute) by the same code
// that computed it during the run: the records say what each request saw; a CellLog says what
// only the run knew — the measured window, the server's histogram deltas, the GPU's readings,
// the client's scheduler latency, and which records belong to the cell.
type CellLog struct {
	// Event is LogCell, LogSkipped, LogOutage, LogSession or LogNote.
	Event string `json:"event"`
	// Phase is PhaseSweep (the sweep and the dedicated scenarios), PhaseSessions (multi-turn
	// sessions) or CapacityPhase(use case) (a level of its capacity search).
	Phase string  `json:"phase,omitempty"`
	Cell  CellKey `json:"cell,omitzero"`

	// Attempt is the cell's attempt these lines describe (Record.CellAttempt).
	Attempt int `json:"attempt,omitempty"`
	// The attempt's records are those with FirstSeq ≤ Record.Seq < EndSeq, in the order of
	// requests.jsonl (a cell's requests are numbered from one counter, one cell at a time).
	FirstSeq int64 `json:"first_seq,omitempty"`
	EndSeq   int64 `json:"end_seq,omitempty"`
	// RequestsSent counts the requests the cell sent over all its attempts, warm-up included
	// (what a capacity level cost).
	RequestsSent int `json:"requests_sent,omitempty"`
	// WindowStartSeconds and WindowEndSeconds bound the measured window (offsets from the run
	// origin, like the records' offsets).
	WindowStartSeconds float64 `json:"window_start_seconds,omitempty"`
	WindowEndSeconds   float64 `json:"window_end_seconds,omitempty"`

	// Metrics is what the server's Prometheus metrics said about the cell; nil when they were
	// not read (ServerNote says why, when known).
	Metrics *MetricsDelta `json:"metrics,omitempty"`
	// ServerNote says why server-side values are missing: no metrics endpoint, or a scrape
	// that failed.
	ServerNote string `json:"server_note,omitempty"`
	// Power holds the GPU readings taken during the cell; PowerSource names where they came
	// from ("" when there was no GPU telemetry, PowerNote then says why; with a source,
	// PowerNote counts the readings refused as impossible, gpu.Check).
	Power       []PowerReading `json:"power,omitempty"`
	PowerSource string         `json:"power_source,omitempty"`
	PowerNote   string         `json:"power_note,omitempty"`
	// SchedLatency is the client process's scheduler-latency histogram over the cell (s).
	SchedLatency *Histogram `json:"sched_latency_seconds,omitempty"`

	// Note says why a LogSkipped cell was not run.
	Note string `json:"note,omitempty"`
	// Outage is the outage of a LogOutage line.
	Outage *Outage `json:"outage,omitempty"`
	// Notes are the run-level facts a LogSession line (one per run command: the first run and
	// each resume) knew before measuring, e.g. how far the simulator is from published
	// measurements, or those a LogNote line's command learnt at its end.
	Notes []string `json:"notes,omitempty"`
	// Run identifies the run in results.json, as a LogSession line's command saw it.
	Run *RunInfo `json:"run,omitempty"`
}

// The events of cells.jsonl.
const (
	// LogCell: a cell attempt was measured to its end; its result is computed from this line.
	LogCell = "cell"
	// LogSkipped: a cell was not run.
	LogSkipped = "skipped"
	// LogOutage: the server stopped answering and the cell's attempt was discarded.
	LogOutage = "outage"
	// LogSession: a run command started measuring.
	LogSession = "session"
	// LogNote: a run command ended with run-level notes no cell carries (how it kept its time
	// budget); results.json lists them after every other note.
	LogNote = "note"
)

// The phases of a run, in order: the sweep, the multi-turn sessions, then one capacity search
// per use case.
const (
	PhaseSweep    = "sweep"
	PhaseSessions = "sessions"
	PhaseCapacity = "capacity"
)

// CapacityPhase is the phase of use case name's capacity search.
func CapacityPhase(name string) string { return PhaseCapacity + " " + name }

// IsCapacityPhase reports whether phase is a capacity search's.
func IsCapacityPhase(phase string) bool {
	return len(phase) > len(PhaseCapacity) && phase[:len(PhaseCapacity)+1] == PhaseCapacity+" "
}

// MetricsDelta is what a server's Prometheus metrics said about one cell: how each histogram's
// _sum and _count, and the prefix-cache token counters, changed between a scrape before the
// cell and one after it. Package promscrape reads it; package stats turns it into values.
type MetricsDelta struct {
	// QueueWait and Prefill are the deltas of the queue-time and prefill-time histograms (s);
	// nil when absent (Unavailable says why, under "queue_wait_seconds" / "prefill_seconds").
	QueueWait *HistogramDelta `json:"queue_wait_seconds,omitempty"`
	Prefill   *HistogramDelta `json:"prefill_seconds,omitempty"`
	// PrefixCacheQueries and PrefixCacheHits are token counter deltas; nil when absent.
	PrefixCacheQueries *int64            `json:"prefix_cache_queries,omitempty"`
	PrefixCacheHits    *int64            `json:"prefix_cache_hits,omitempty"`
	Unavailable        map[string]string `json:"unavailable,omitempty"`
	// Restarted says why the server evidently restarted between the scrapes; "" when nothing
	// says it did. A restart makes every value of the delta meaningless.
	Restarted string `json:"restarted,omitempty"`
	// Wait says when the scrape after the cell was taken and why then: at once (the figures
	// needed no histograms, or the server has none), once the histograms counted the cell's
	// requests, or when they stopped moving (the figures may then miss requests).
	Wait string `json:"wait,omitempty"`
}

// HistogramDelta is the change of one Prometheus histogram (or summary) between two scrapes.
type HistogramDelta struct {
	// Metric is the family's name.
	Metric string `json:"metric"`
	// Sum is the change of _sum (s), Count the change of _count (observations).
	Sum   float64 `json:"sum"`
	Count float64 `json:"count"`
}

// PowerReading is the GPUs' power at one moment of a run.
type PowerReading struct {
	// AtSeconds is the reading's time as an offset from the run origin (s).
	AtSeconds float64 `json:"at_seconds"`
	// Watts is each GPU's power draw (W).
	Watts []float64 `json:"watts"`
	// EnergyJoules is each GPU's cumulative energy counter (J); nil where a GPU has none.
	EnergyJoules []*float64 `json:"energy_joules,omitempty"`
}

// histogramJSON is Histogram on disk: infinite bucket bounds as the strings "+Inf" and "-Inf".
type histogramJSON struct {
	Counts  []uint64 `json:"counts"`
	Buckets []any    `json:"buckets"`
}

// MarshalJSON writes the histogram with infinite bounds as "+Inf" / "-Inf".
func (h Histogram) MarshalJSON() ([]byte, error) {
	out := histogramJSON{Counts: h.Counts, Buckets: make([]any, len(h.Buckets))}
	for i, b := range h.Buckets {
		switch {
		case math.IsInf(b, 1):
			out.Buckets[i] = "+Inf"
		case math.IsInf(b, -1):
			out.Buckets[i] = "-Inf"
		default:
			out.Buckets[i] = b
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var in struct {
		Counts  []uint64          `json:"counts"`
		Buckets []json.RawMessage `json:"buckets"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	h.Counts, h.Buckets = in.Counts, make([]float64, len(in.Buckets))
	for i, raw := range in.Buckets {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			switch s {
			case "+Inf":
				h.Buckets[i] = math.Inf(1)
			case "-Inf":
				h.Buckets[i] = math.Inf(-1)
			default:
				return fmt.Errorf("histogram bucket bound %q is not a number", s)
			}
			continue
		}
		if err := json.Unmarshal(raw, &h.Buckets[i]); err != nil {
			return err
		}
	}
	return nil
}
