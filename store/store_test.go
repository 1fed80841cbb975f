package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

func manifest(id string) servebench.Manifest {
	return servebench.Manifest{SchemaVersion: 1, ID: id, Status: "running", StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Plan: servebench.Plan{Sweep: servebench.Sweep{Contexts: []servebench.Tokens{1024, 2000}}}}
}

func TestConcurrentAppendsAreWholeLines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r, err := Create(dir, manifest("a"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				gaps := make([]float64, 50)
				if err := r.Append(servebench.Record{Seq: int64(g*1000 + i), ChunkGapsSeconds: gaps}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	r.Close()
	recs, err := ReadRecords(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3200 {
		t.Fatalf("%d records, want 3200", len(recs))
	}
	seen := map[int64]bool{}
	for _, rec := range recs {
		if seen[rec.Seq] {
			t.Fatalf("seq %d twice", rec.Seq)
		}
		seen[rec.Seq] = true
	}
}

func TestCreateRefusesAnExistingRun(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, manifest("a"))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := Create(dir, manifest("b")); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("want a refusal naming --resume, got %v", err)
	}
}

func TestResumeCutsATornLastLine(t *testing.T) {
	dir := t.TempDir()
	r, _ := Create(dir, manifest("a"))
	for i := range 3 {
		r.Append(servebench.Record{Seq: int64(i)})
	}
	r.Close()
	f, _ := os.OpenFile(filepath.Join(dir, RecordsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":3,"scen`) // a crash in the middle of a write
	f.Close()
	r2, m, recs, err := openForResume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "a" || len(recs) != 3 {
		t.Fatalf("manifest %q, %d records", m.ID, len(recs))
	}
	r2.Append(servebench.Record{Seq: 4})
	r2.Close()
	recs, err = ReadRecords(filepath.Join(dir, RecordsFile))
	if err != nil || len(recs) != 4 || recs[3].Seq != 4 {
		t.Fatalf("after resume: %d records, err %v", len(recs), err)
	}
}

func TestLoadRoundTripAndAtomicWrites(t *testing.T) {
	dir := t.TempDir()
	r, _ := Create(dir, manifest("a"))
	key := servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1000, OutputTokens: 64, Concurrency: 2}
	r.Append(servebench.Record{CellKey: key, Seq: 7, ResponseID: "cmpl-1", OutputTokens: 60, OutputTokensRequested: 64})
	res := servebench.Results{SchemaVersion: 1, Cells: []servebench.CellResult{{SystemOutputThroughputTPS: 12.5, RequestsTotal: 4, RequestsSucceeded: 3}}}
	if err := r.WriteResults(res); err != nil {
		t.Fatal(err)
	}
	r.AppendSamples([]servebench.Sample{{Name: "num_requests_running", Value: 2}})
	r.Close()
	m, got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	// the record's own output_tokens (60) once hid its cell's (64): the cell read back as out=60
	if len(recs) == 1 && (recs[0].CellKey.ID() != key.ID() || recs[0].OutputTokens != 60) {
		t.Errorf("record read back in cell %s with %d output tokens, want %s and 60", recs[0].CellKey.ID(), recs[0].OutputTokens, key.ID())
	}
	if m.ID != "a" || len(m.Plan.Sweep.Contexts) != 2 || m.Plan.Sweep.Contexts[1] != 2000 {
		t.Fatalf("manifest %+v", m)
	}
	if len(got.Cells) != 1 || got.Cells[0].SystemOutputThroughputTPS != 12.5 || len(recs) != 1 || recs[0].ResponseID != "cmpl-1" {
		t.Fatalf("results %+v records %+v", got, recs)
	}
	s, err := ReadSamples(filepath.Join(dir, TelemetryFile))
	if err != nil || len(s) != 1 || s[0].Value != 2 {
		t.Fatalf("samples %+v %v", s, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	os.Remove(filepath.Join(dir, ResultsFile))
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("missing results.json: %v", err)
	}
}

func TestReadRecordsLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordsFile)
	rec := servebench.Record{Seq: 1, ChunkGapsSeconds: make([]float64, 600_000)} // > 1 MiB
	b, _ := json.Marshal(rec)
	if len(b) < 1<<20 {
		t.Fatalf("line only %d bytes", len(b))
	}
	os.WriteFile(path, append(b, '\n'), 0o644)
	recs, err := ReadRecords(path)
	if err != nil || len(recs) != 1 || len(recs[0].ChunkGapsSeconds) != 600_000 {
		t.Fatalf("%d records, err %v", len(recs), err)
	}
}

func TestIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, location string) {
		ix, err := OpenIndex(location)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		testIndex(t, ix)
	})
}

func testIndex(t *testing.T, ix *Index) {
	ctx := context.Background()
	res := servebench.Results{Cells: []servebench.CellResult{
		{SystemOutputThroughputTPS: 10, RequestsTotal: 10, RequestsSucceeded: 9},
		{SystemOutputThroughputTPS: 30, RequestsTotal: 10, RequestsSucceeded: 10},
	}}
	older, newer := manifest("20260101-aaa"), manifest("20260102-bbb")
	newer.StartedAt = older.StartedAt.Add(24 * time.Hour)
	if err := ix.Put("/runs/a", older, res); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put("/runs/b", newer, res); err != nil {
		t.Fatal(err)
	}
	older.Status = "completed"
	if err := ix.Put("/runs/a2", older, res); err != nil { // upsert by id
		t.Fatal(err)
	}
	list, err := ix.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "20260102-bbb" || list[1].Dir != "/runs/a2" || list[1].Status != "completed" {
		t.Fatalf("list %+v", list)
	}
	if list[0].PeakThroughputTPS != 30 || list[0].SuccessRate != 0.95 || list[0].Cells != 2 {
		t.Fatalf("aggregates %+v", list[0])
	}
	if e, err := ix.Lookup(ctx, "20260102"); err != nil || e.ID != "20260102-bbb" {
		t.Fatalf("prefix lookup %+v %v", e, err)
	}
	if _, err := ix.Lookup(ctx, "2026"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	if _, err := ix.Lookup(ctx, "zzz"); err == nil {
		t.Fatal("unknown id must fail")
	}
}

// openForResume reopens an interrupted run as run --resume does: its manifest and records
// (ReadForResume), then the folder for appending (Reopen).
func openForResume(dir string) (*Run, servebench.Manifest, []servebench.Record, error) {
	m, recs, err := ReadForResume(dir)
	if err != nil {
		return nil, m, nil, err
	}
	r, err := Reopen(dir)
	return r, m, recs, err
}
