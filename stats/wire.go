package stats

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/servebench/servebench"
)

// Sanitize returns recs with servebench.CheckWire applied to every record, so that no value a
// server claimed and could not have been true enters a statistic, whoever wrote the records (a
// run folder from before the client checked them, a worker). The records are not modified:
// when a check changes one, Sanitize returns a copy of the slice; otherwise recs itself.
func Sanitize(recs []servebench.Record) []servebench.Record {
	var out []servebench.Record
	for i := range recs {
		c := recs[i]
		c.Violations = slices.Clip(c.Violations)
		if c.Server != nil {
			s := *c.Server
			c.Server = &s
		}
		servebench.CheckWire(&c)
		if len(c.Violations) == len(recs[i].Violations) {
			continue
		}
		if out == nil {
			out = slices.Clone(recs)
		}
		out[i] = c
	}
	if out == nil {
		return recs
	}
	return out
}

// wireNotes counts, over the measured records, the responses that contradicted the wire (by
// violation) and those that were not streamed.
func wireNotes(recs []servebench.Record) (inconsistent int, byViolation map[servebench.Violation]int, notStreamed, streamedOK, measured int) {
	byViolation = map[servebench.Violation]int{}
	for i := range recs {
		r := &recs[i]
		if r.Warmup {
			continue
		}
		measured++
		if len(r.Violations) > 0 {
			inconsistent++
			for _, v := range r.Violations {
				byViolation[v]++
			}
		}
		if r.OK() {
			if r.NotStreamed {
				notStreamed++
			} else {
				streamedOK++
			}
		}
	}
	return
}

// assessWire adds server-inconsistent and not-streamed to v (see Assess).
func assessWire(v *servebench.Validity, recs []servebench.Record) {
	n, by, ns, ok, measured := wireNotes(recs)
	if n > 0 {
		kinds := make([]string, 0, len(by))
		for k, c := range by {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, c))
		}
		sort.Strings(kinds)
		v.Add(servebench.ReasonServerInconsistent, servebench.VerdictLowConfidence,
			fmt.Sprintf("%d of %d responses claimed what cannot be true (%s); the client's own counts replaced the claims, impossible server timings were dropped", n, measured, strings.Join(kinds, ", ")))
	}
	if ns > 0 {
		what := "their ITL and generation speed are unknown"
		if ok == 0 {
			what = "ITL and generation speed are unknown"
		}
		v.Add(servebench.ReasonNotStreamed, servebench.VerdictLowConfidence,
			fmt.Sprintf("%d of %d successful responses arrived in one piece, not streamed (a buffering proxy between client and server?): %s, and TTFT is the wait for the whole answer", ns, ns+ok, what))
	}
}
