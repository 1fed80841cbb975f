package servebench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Interval is a two-sided 95% confidence interval [Low, High] in the unit of the value it
// bounds. How it is computed depends on the value (Student t for means, batch means for
// throughput, order statistics for percentiles; package stats documents each). An end the data
// cannot bound yet is infinite (Low = −Inf or High = +Inf) and is written as null in JSON:
// [0.41, null] says "at least 0.41, no upper bound from this sample".
type Interval struct{ Low, High float64 }

// Bounded reports whether both ends are finite.
func (iv Interval) Bounded() bool {
	return !math.IsInf(iv.Low, 0) && !math.IsInf(iv.High, 0) && !math.IsNaN(iv.Low) && !math.IsNaN(iv.High)
}

// RelHalfWidth is the interval's half-width relative to center, (High − Low) / 2 / |center|
// (dimensionless; 0.05 = ±5%). It is +Inf when an end is unbounded or center is 0.
func (iv Interval) RelHalfWidth(center float64) float64 {
	if !iv.Bounded() || center == 0 {
		return math.Inf(1)
	}
	return (iv.High - iv.Low) / 2 / math.Abs(center)
}

// MarshalJSON writes [low, high], an infinite or NaN end as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	end := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "null"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return []byte("[" + end(iv.Low) + "," + end(iv.High) + "]"), nil
}

// UnmarshalJSON reads [low, high]; a null low is −Inf, a null high +Inf.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v [2]*float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("confidence interval %s: want [low, high]: %w", bytes.TrimSpace(b), err)
	}
	iv.Low, iv.High = math.Inf(-1), math.Inf(1)
	if v[0] != nil {
		iv.Low = *v[0]
	}
	if v[1] != nil {
		iv.High = *v[1]
	}
	return nil
}

// Verdict is how far a cell's numbers can be trusted, from best to worst: valid,
// low-confidence, invalid. The empty verdict means "not assessed" (results written before
// servebench assessed validity).
type Verdict string

const (
	// VerdictValid: every check passed; the numbers mean what they say.
	VerdictValid Verdict = "valid"
	// VerdictLowConfidence: usable, but at least one number is less certain than servebench
	// aims for (e.g. a wide interval, a percentile withheld); read it with its reasons.
	VerdictLowConfidence Verdict = "low-confidence"
	// VerdictInvalid: the cell does not measure what it claims (e.g. the server restarted, most
	// requests failed); no conclusion should rest on it.
	VerdictInvalid Verdict = "invalid"
)

// rank orders verdicts: not assessed < valid < low-confidence < invalid.
func (v Verdict) rank() int {
	switch v {
	case VerdictValid:
		return 1
	case VerdictLowConfidence:
		return 2
	case VerdictInvalid:
		return 3
	}
	return 0
}

// Worse returns the worse of v and w (not assessed < valid < low-confidence < invalid).
func (v Verdict) Worse(w Verdict) Verdict {
	if w.rank() > v.rank() {
		return w
	}
	return v
}

// Reason is one cause of a verdict worse than valid, a stable machine-readable code. Each
// constant's comment says what it means to a reader.
type Reason string

const (
	// ReasonTooFewSamples: too few measured requests for a statistic the cell reports: fewer
	// than 2 successes (invalid: no interval exists), 2 to 9 (low-confidence: an interval is
	// shown only from 10, so the cell's means and throughput have none; the note names the
	// count and the minimum), or an interval wider than the target at the request cap.
	ReasonTooFewSamples Reason = "too-few-samples"
	// ReasonWindowTooShort: the measured window is shorter than 2 × the cell's mean end-to-end
	// latency or holds fewer than 2 × N completions, so throughput reflects where requests
	// happened to start and end rather than the steady state.
	ReasonWindowTooShort Reason = "window-too-short"
	// ReasonUnstable: the first and second halves of the window disagree (throughput or TTFT
	// drifted), so the server was not in a steady state.
	ReasonUnstable Reason = "unstable"
	// ReasonCacheContaminated: the server answered prompt tokens from its prefix cache although
	// the plan asked for uncached prompts, so prefill and TTFT look better than they are.
	ReasonCacheContaminated Reason = "cache-contaminated"
	// ReasonFailures: failed requests above the tolerated share; latency of the requests that
	// succeeded says nothing about those that did not.
	ReasonFailures Reason = "failures"
	// ReasonServerRestart: the server restarted during the cell (its counters went back).
	ReasonServerRestart Reason = "server-restart"
	// ReasonOutage: the server stopped answering during the cell.
	ReasonOutage Reason = "outage"
	// ReasonClientBound: the load generator, not the server, limited the measurement (the
	// client lagged behind the socket or could not send on time).
	ReasonClientBound Reason = "client-bound"
	// ReasonServerInconsistent: some responses claimed what cannot be true (usage above
	// max_tokens or beyond what the stream carried, negative counts, server timings outside the
	// request, another model; see Violation); the impossible values were replaced by the
	// client's own counts or dropped. The note says how many and which.
	ReasonServerInconsistent Reason = "server-inconsistent"
	// ReasonNotStreamed: some responses arrived in one piece (a buffering proxy between the
	// client and the server), so their ITL and generation speed are unknown and their TTFT is
	// the time to the whole answer.
	ReasonNotStreamed Reason = "not-streamed"
	// ReasonNotMeasured: the cell was planned but not measured (e.g. its context does not fit the
	// target's maximum model length); it has no numbers. The note says why.
	ReasonNotMeasured Reason = "not-measured"
)

// Validity is a cell's verdict and the reasons for it, as written to results.json:
//
//	"validity": {"verdict": "low-confidence", "reasons": ["too-few-samples"],
//	             "notes": {"too-few-samples": "p99 needs 100 successful requests, has 42"}}
//
// The verdict is the worst level any reason was added at (Add); a cell with no reasons is
// valid. Which reasons apply and at which level is decided in package stats (per-cell data)
// and by the stages that observe outages, restarts and client lag.
type Validity struct {
	Verdict Verdict  `json:"verdict"`
	Reasons []Reason `json:"reasons"`
	// Notes says, per reason, what was seen in numbers a reader can check.
	Notes map[Reason]string `json:"notes,omitempty"`
}

// NotMeasured returns the validity of a planned cell that was skipped, with why as its note.
func NotMeasured(why string) Validity {
	return Validity{Verdict: VerdictInvalid, Reasons: []Reason{ReasonNotMeasured}, Notes: map[Reason]string{ReasonNotMeasured: why}}
}

// Valid returns the validity of a cell with nothing against it.
func Valid() Validity { return Validity{Verdict: VerdictValid, Reasons: []Reason{}} }

// Add records reason r at level (VerdictLowConfidence or VerdictInvalid) with an optional
// note; the verdict becomes the worse of the current one and level. A reason already present
// keeps its first note and is not repeated. Add on a not-assessed Validity assesses it.
func (v *Validity) Add(r Reason, level Verdict, note string) {
	if v.Verdict == "" {
		v.Verdict = VerdictValid
	}
	v.Verdict = v.Verdict.Worse(level)
	if v.Reasons == nil {
		v.Reasons = []Reason{}
	}
	if slices.Contains(v.Reasons, r) {
		return
	}
	v.Reasons = append(v.Reasons, r)
	if note != "" {
		if v.Notes == nil {
			v.Notes = make(map[Reason]string)
		}
		v.Notes[r] = note
	}
}

// Has reports whether reason r was added.
func (v Validity) Has(r Reason) bool { return slices.Contains(v.Reasons, r) }

// Trusted reports whether conclusions may rest on the cell without a caveat: the verdict is
// valid, or not assessed (results from before validity existed are read as they were).
func (v Validity) Trusted() bool { return v.Verdict == VerdictValid || v.Verdict == "" }
