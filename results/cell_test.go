package results

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// A cell whose prompts the server served from its prefix cache is cache-contaminated only where
// the plan meant every prompt to be unique; the note that says so comes from the cell's value.
func TestCellCacheContamination(t *testing.T) {
	sweep := servebench.CellKey{Kind: servebench.KindSweep, Scenario: servebench.SweepScenario, LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 16, Concurrency: 1}
	session := sweep
	session.Kind, session.Scenario, session.Turn = servebench.KindSession, "session", 2
	users := sweep
	users.Kind, users.Scenario, users.LoadMode = servebench.KindUsers, "chat", servebench.ModeUsers
	for _, tc := range []struct {
		name  string
		plan  func(*servebench.Plan)
		key   servebench.CellKey
		dirty bool
	}{
		// unique prompts meant, 600 tokens cached: contaminated
		{"sweep", func(*servebench.Plan) {}, sweep, true},
		// a shared prefix is cached on purpose
		{"shared prefix", func(p *servebench.Plan) { p.Sweep.SharedPrefix = 512 }, sweep, false},
		// a dataset's and a trace's prompts repeat on purpose
		{"dataset", func(p *servebench.Plan) { p.Dataset = &servebench.DatasetPlan{} }, sweep, false},
		{"trace", func(p *servebench.Plan) { p.Trace = &servebench.TracePlan{} }, sweep, false},
		// a session resends its conversation; a user population continues its own
		{"session turn", func(*servebench.Plan) {}, session, false},
		{"users", func(*servebench.Plan) {}, users, false},
	} {
		var p servebench.Plan
		tc.plan(&p)
		cached := 300
		var recs []servebench.Record
		for i := range 2 {
			recs = append(recs, servebench.Record{Seq: int64(i), StartOffsetSeconds: float64(i), EndOffsetSeconds: float64(i) + 0.5,
				InputTokens: 1024, OutputTokens: 16, CachedTokens: &cached})
		}
		c := Cell(p, servebench.CellLog{Cell: tc.key, WindowStartSeconds: 0, WindowEndSeconds: 2}, recs)
		if c.CacheHitTokens == nil || *c.CacheHitTokens != 600 {
			t.Errorf("%s: cache hits %v, want 600", tc.name, c.CacheHitTokens)
		}
		if c.CacheContaminated != tc.dirty {
			t.Errorf("%s: contaminated %v, want %v", tc.name, c.CacheContaminated, tc.dirty)
		}
		notes := Notes(c)
		if said := len(notes) == 1 && strings.Contains(notes[0], "cache-contaminated: the server served 600 input tokens"); said != tc.dirty {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
	}
}
