package servebench

import "time"

// Outage is a period during which the server stopped answering (connections refused or reset)
// while a cell was measured (results.json "outages"). The cell's attempt during the outage is
// discarded: its records stay in requests.jsonl with that cell_attempt, and the cell is measured
// again from its start once the server answers; only the attempt named by the cell's result
// counts.
type Outage struct {
	Cell CellKey `json:"cell"`
	// Attempt is the discarded attempt of the cell (Record.CellAttempt of its records).
	Attempt int `json:"attempt"`
	// StartedAt is when the first failed connection was seen; EndedAt when the server answered
	// a probe again (zero when it never did before the outage timeout).
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// DownSeconds = EndedAt − StartedAt (s): how long the run was paused.
	DownSeconds float64 `json:"down_seconds"`
	Recovered   bool    `json:"recovered"`
	// Requests is how many requests the discarded attempt sent; Failed how many of them failed.
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// Cause is the failure that revealed the outage.
	Cause string `json:"cause,omitempty"`
	// Worker, when set, names the worker of a distributed run that was lost (died or
	// disconnected): the server was not at fault, and the cell was measured again with the
	// workers that remained.
	Worker string `json:"worker,omitempty"`
}

// Attempt is one invocation of `servebench run` on a run folder (run.json "attempts"): the
// first run, then each --resume.
type Attempt struct {
	// ID is unique per attempt; it goes into every prompt's marker with the run id, so no
	// prompt of one attempt is ever sent again by another.
	ID         string    `json:"id"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Command    []string  `json:"command,omitempty"`
	// Server is the target's identity as this attempt found it.
	Server ServerIdentity `json:"server"`
	Status string         `json:"status"`
	Error  string         `json:"error,omitempty"`
	// FirstSeq is the first request number this attempt used.
	FirstSeq int64 `json:"first_seq"`
}

// ServerIdentity is what must not change between the attempts of one run: the engine, the model
// served and its maximum length.
type ServerIdentity struct {
	Engine      string `json:"engine"`
	Model       string `json:"model"`
	MaxModelLen int    `json:"max_model_len,omitempty"`
}
