package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// resumeState is what a run folder says before it is resumed.
type resumeState struct {
	man servebench.Manifest
	// nextSeq is one past the highest request number ever written: numbering continues there.
	nextSeq int64
}

func newResumeState(man servebench.Manifest, recs []servebench.Record) resumeState {
	st := resumeState{man: man}
	for _, r := range recs {
		st.nextSeq = max(st.nextSeq, r.Seq+1)
	}
	for _, a := range man.Attempts {
		st.nextSeq = max(st.nextSeq, a.FirstSeq)
	}
	return st
}

// attempts returns the run's attempts so far; a run.json from before attempts were kept gets
// its first attempt from its start time, command and server.
func (st resumeState) attempts() []servebench.Attempt {
	if len(st.man.Attempts) > 0 {
		atts := append([]servebench.Attempt(nil), st.man.Attempts...)
		for i := range atts {
			if atts[i].Status == "running" { // it never closed the run: killed, or the machine stopped
				atts[i].Status, atts[i].Error = "interrupted", "the process ended without closing the run (killed?)"
			}
		}
		return atts
	}
	m := st.man
	return []servebench.Attempt{{ID: "1", StartedAt: m.StartedAt, FinishedAt: m.FinishedAt, Command: m.Command,
		Server: identity(m.Server, m.Plan.Target.Model), Status: m.Status, Error: m.Error}}
}

// identity is what must stay the same across a run's attempts.
func identity(info servebench.ServerInfo, model string) servebench.ServerIdentity {
	return servebench.ServerIdentity{Engine: info.Engine, Model: model, MaxModelLen: info.MaxModelLen}
}

// identityChanges lists how the target now differs from the one the run started against.
func identityChanges(was, now servebench.ServerIdentity) []string {
	var d []string
	if was.Engine != now.Engine {
		d = append(d, fmt.Sprintf("engine %q, now %q", was.Engine, now.Engine))
	}
	if was.Model != now.Model {
		d = append(d, fmt.Sprintf("model %q, now %q", was.Model, now.Model))
	}
	if was.MaxModelLen != now.MaxModelLen {
		d = append(d, fmt.Sprintf("maximum model length %d, now %d", was.MaxModelLen, now.MaxModelLen))
	}
	return d
}

// checkSameExperiment refuses to resume against another server unless anyway is set.
func checkSameExperiment(dir string, st resumeState, now servebench.ServerIdentity, anyway bool) error {
	atts := st.attempts()
	was := atts[len(atts)-1].Server
	d := identityChanges(was, now)
	if len(d) == 0 || anyway {
		return nil
	}
	for i := range d {
		d[i] = servebench.TerminalText(d[i], 2*termLine, false)
	}
	return fmt.Errorf("%s was measured against another server (%s): resuming would mix two experiments in one report; measure this server in a new run (--out), or pass --resume-anyway to continue regardless",
		dir, strings.Join(d, "; "))
}

// markerRunID is the id that goes into the prompt markers of an attempt: the run id for the
// first attempt, the run id and the attempt number for each resume, so no prompt of one
// attempt is ever sent again by another (not even by a request a kill left unrecorded).
func markerRunID(runID string, attempt int) string {
	if attempt <= 1 {
		return runID
	}
	return runID + "#" + strconv.Itoa(attempt)
}

// finishAttempt closes the last attempt of m.
func finishAttempt(m *servebench.Manifest, at time.Time) {
	if n := len(m.Attempts); n > 0 {
		a := &m.Attempts[n-1]
		a.FinishedAt, a.Status, a.Error = at, m.Status, m.Error
	}
}
