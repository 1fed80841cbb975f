package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/store"
)

// A real run (the simulator over HTTP, with its metrics and GPU telemetry) through a run
// folder: the sweep, a dedicated scenario and a capacity search. Computing the results again
// from the folder (run.json, requests.jsonl, cells.jsonl) gives the results.json the run
// wrote, number for number.
func TestRecomputeEqualsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		prof.Engine.MaxNumSeqs = 2 // queueing from 3 in flight: the capacity limit is low
		tg := startSim(t, prof, sim.Options{Seed: 9})
		p := smallPlan(t, "1k,2k", "1,3", 16)
		p.Scenarios = []servebench.Scenario{{Name: "burst", ContextTokens: 1024, OutputTokens: 16, Concurrency: []int{2}}}
		p.UseCases = []servebench.UseCase{{Name: "chat", Title: "Chat", ContextTokens: 1024, OutputTokens: 16, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.05)}}}
		p.Capacity.MaxConcurrency = 6
		_, man, wrote, recs, logs := runThroughFolder(t, tg, p)
		if len(wrote.Capacity) != 1 || len(wrote.Capacity[0].Points) == 0 || wrote.Capacity[0].RequestsSpent == 0 {
			t.Fatalf("the test needs a capacity search that measured levels: %+v", wrote.Capacity)
		}
		measured := 0
		for _, c := range wrote.Cells {
			if c.GPUPowerWatts == nil || c.QueueWaitSeconds == nil || c.Client == nil || c.Client.SchedLatency == nil {
				t.Fatalf("cell %s lacks server, GPU or client telemetry (%v): the test would not cover it", c.ID(), c.Unavailable)
			}
			measured++
		}
		if measured < 6 {
			t.Fatalf("%d cells: want the sweep's 4, the scenario's and capacity levels", measured)
		}
		sameResults(t, man, recs, logs, wrote)
		// a record left out changes the recomputed cell: the comparison can fail
		for i := range recs {
			if !recs[i].Warmup && recs[i].OK() {
				recs = append(recs[:i], recs[i+1:]...)
				break
			}
		}
		fewer, err := runner.Recompute(man, recs, logs)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(fewer.Cells)
		w, _ := json.Marshal(wrote.Cells)
		if string(g) == string(w) {
			t.Error("recomputing without one record gave the same cells")
		}
	})
}

// Multi-turn sessions (one cell per turn, then fresh prompts as long as each turn's) are
// recomputed like the sweep: their cached tokens and cells equal the run's.
func TestRecomputeSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 4})
		p := sessionsPlan(t)
		p.Sessions.Concurrency = []int{2}
		_, man, wrote, recs, logs := runThroughFolder(t, tg, p)
		if len(wrote.Cells) != 7 {
			t.Fatalf("%d cells, want 4 session turns and 3 fresh", len(wrote.Cells))
		}
		sameResults(t, man, recs, logs, wrote)
	})
}

// A run under a time budget (--max-time) is recomputed like any other: the budget's note, kept
// in cells.jsonl, is said again, and the capacity search's dense grid is sized without the count
// floors the budget dropped, as the run sized it (before, both differed from the run's).
func TestRecomputeBudgetedRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		prof.Engine.MaxNumSeqs = 2 // queueing from 3 in flight: the capacity limit is low
		tg := startSim(t, prof, sim.Options{Seed: 5})
		p := smallPlan(t, "1k", "1", 16)
		p.Sweep.MinRequests = 12 // a floor above the window rule's 2 × N, which the budget drops
		p.Sweep.MaxTime = servebench.Duration(10 * time.Minute)
		p.UseCases = []servebench.UseCase{{Name: "chat", Title: "Chat", ContextTokens: 1024, OutputTokens: 16, Statistic: servebench.StatMean,
			Thresholds: servebench.Thresholds{TTFTSecondsMax: servebench.Float(0.05)}}}
		p.Capacity.MaxConcurrency = 8
		_, man, wrote, recs, logs := runThroughFolder(t, tg, p)
		if len(wrote.Capacity) != 1 || wrote.Capacity[0].DenseGridRequests == 0 {
			t.Fatalf("the test needs a capacity search with a dense grid: %+v", wrote.Capacity)
		}
		budgeted := false
		for _, n := range wrote.Notes {
			budgeted = budgeted || strings.HasPrefix(n, "Time budget 10m")
		}
		if !budgeted {
			t.Fatalf("the run's notes do not say how it kept its time budget: %q", wrote.Notes)
		}
		sameResults(t, man, recs, logs, wrote)
	})
}

// A rate search (--rate auto) is recomputed over the cells it measured: the same cells and the
// same decision.
func TestRecomputeRateSearch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := startSim(t, sim.FastProfile, sim.Options{Seed: 9})
		p := rateSearchPlan(t, 16, 8)
		_, man, wrote, recs, logs := runThroughFolder(t, tg, p)
		if len(wrote.RateSearches) != 1 || len(wrote.Cells) < 2 {
			t.Fatalf("searches %+v over %d cells", wrote.RateSearches, len(wrote.Cells))
		}
		sameResults(t, man, recs, logs, wrote)
	})
}

// runThroughFolder runs p against tg into a run folder, as servebench run does, and returns
// the folder, its manifest, the results.json the run wrote, its records and its cell logs.
func runThroughFolder(t *testing.T, tg target, p servebench.Plan) (string, servebench.Manifest, servebench.Results, []servebench.Record, []servebench.CellLog) {
	t.Helper()
	r, _ := newRunner(t, tg, p, nil)
	dir := filepath.Join(t.TempDir(), "run")
	man := servebench.Manifest{SchemaVersion: servebench.SchemaVersion, ID: "test", Plan: p, Server: r.Server, Status: "running"}
	run, err := store.Create(dir, man)
	if err != nil {
		t.Fatal(err)
	}
	r.Recorder = run
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteResults(r.Results()); err != nil {
		t.Fatal(err)
	}
	run.Close()

	var wrote servebench.Results
	b, err := os.ReadFile(filepath.Join(dir, store.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &wrote); err != nil {
		t.Fatal(err)
	}
	recs, err := store.ReadRecords(filepath.Join(dir, store.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := store.ReadCellLogs(filepath.Join(dir, store.CellsFile))
	if err != nil {
		t.Fatal(err)
	}
	return dir, man, wrote, recs, logs
}

// sameResults recomputes the results from the folder's contents and compares them with want.
func sameResults(t *testing.T, man servebench.Manifest, recs []servebench.Record, logs []servebench.CellLog, wrote servebench.Results) {
	t.Helper()
	got, err := runner.Recompute(man, recs, logs)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		name      string
		got, want any
	}{
		{"cells", got.Cells, wrote.Cells}, {"capacity", got.Capacity, wrote.Capacity}, {"sizing", got.Sizing, wrote.Sizing},
		{"notes", got.Notes, wrote.Notes}, {"run", got.Run.ID, wrote.Run.ID}, {"rate searches", got.RateSearches, wrote.RateSearches},
	} {
		g, _ := json.MarshalIndent(part.got, "", " ")
		w, _ := json.MarshalIndent(part.want, "", " ")
		if string(g) != string(w) {
			t.Errorf("recomputed %s differ from the run's:\n%s\nwant\n%s", part.name, g, w)
		}
	}
}
