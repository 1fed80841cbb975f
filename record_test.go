package servebench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A record read back from its JSON line keeps its cell's whole key: the record's own
// output_tokens (what the server produced) used to hide the cell's output length, so a record
// of cell out=1024 that produced 1000 tokens read back as out=1000.
func TestRecordKeepsItsCellKey(t *testing.T) {
	key := CellKey{Kind: KindSweep, Scenario: SweepScenario, LoadMode: ModeSustained, ContextTokens: 8192, OutputTokens: 1024, Concurrency: 4}
	rec := Record{CellKey: key, Seq: 7, OutputTokens: 1000, OutputTokensRequested: 1024}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"output_tokens":1000`) || !strings.Contains(string(b), `"cell_output_tokens":1024`) {
		t.Fatalf("the line should carry the record's output_tokens and the cell's cell_output_tokens: %s", b)
	}
	var got Record
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.CellKey.ID() != key.ID() || got.OutputTokens != 1000 || got.Seq != 7 {
		t.Fatalf("read back %s with %d output tokens, seq %d; want %s, 1000, 7", got.CellKey.ID(), got.OutputTokens, got.Seq, key.ID())
	}
	// a pointer inside another document (the distributed protocol's messages) travels the same way
	var msg struct {
		Rec *Record `json:"rec"`
	}
	b, _ = json.Marshal(struct {
		Rec *Record `json:"rec"`
	}{&rec})
	if err := json.Unmarshal(b, &msg); err != nil || msg.Rec.CellKey != key {
		t.Fatalf("inside a message: %+v (%v)", msg.Rec, err)
	}
}

// A line written before records carried cell_output_tokens (and before cells named their kind)
// reads back with its kind filled in and, where every request of the cell asks the cell's
// length, the cell's output length from output_tokens_requested.
func TestRecordOldLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want CellKey
	}{
		// a sweep cell: the request asked the cell's length
		{`{"scenario":"sweep","load_mode":"sustained","context_tokens":1024,"output_tokens":90,"output_tokens_requested":128,"concurrency":2}`,
			CellKey{Kind: KindSweep, Scenario: "sweep", LoadMode: ModeSustained, ContextTokens: 1024, OutputTokens: 128, Concurrency: 2}},
		// a dataset's request asked its entry's length, not the cell's: unknown, 0
		{`{"scenario":"dataset","load_mode":"sustained","output_tokens":90,"output_tokens_requested":77,"concurrency":2}`,
			CellKey{Kind: KindDataset, Scenario: "dataset", LoadMode: ModeSustained, Concurrency: 2}},
	} {
		var r Record
		if err := json.Unmarshal([]byte(c.line), &r); err != nil {
			t.Fatal(err)
		}
		if r.CellKey != c.want || r.OutputTokens != 90 {
			t.Errorf("%s\nread %+v (%d output tokens), want %+v", c.line, r.CellKey, r.OutputTokens, c.want)
		}
	}
}

func TestFillKind(t *testing.T) {
	for _, c := range []struct {
		key  CellKey
		want CellKind
	}{
		{CellKey{Scenario: "sweep", LoadMode: ModeSustained, Concurrency: 4}, KindSweep},
		{CellKey{Scenario: "sweep", LoadMode: ModeDedicated, Concurrency: 4}, KindSweep},        // the sweep run in dedicated mode
		{CellKey{Scenario: "sweep", LoadMode: ModeRate, RatePerSecond: 2}, KindRate},            // a request-rate sweep
		{CellKey{Scenario: "dataset", LoadMode: ModeSustained, Concurrency: 2}, KindDataset},    // a dataset replay
		{CellKey{Scenario: "trace", LoadMode: ModeRate, RatePerSecond: 1.5}, KindTrace},         // a trace replay
		{CellKey{Scenario: "session", LoadMode: ModeFixed, Turn: 2}, KindSession},               // a session turn
		{CellKey{Scenario: "session-fresh", LoadMode: ModeFixed, Turn: 2}, KindSession},         // fresh prompts beside it
		{CellKey{Scenario: "long-doc", LoadMode: ModeDedicated, Concurrency: 2}, KindScenario},  // a dedicated scenario
		{CellKey{Scenario: "chat", LoadMode: ModeSustained, Concurrency: 8}, KindCapacity},      // a use case's level
		{CellKey{Scenario: "chat", LoadMode: ModeUsers, Concurrency: 8}, KindUsers},             // a users' population
		{CellKey{Kind: KindCapacity, Scenario: "sweep", LoadMode: ModeSustained}, KindCapacity}, // a kind already set is kept
	} {
		k := c.key
		k.FillKind()
		if k.Kind != c.want {
			t.Errorf("%s: kind %q, want %q", c.key.ID(), k.Kind, c.want)
		}
	}
}

// Cells order by kind first: the sweep's cells are never interleaved with a capacity search's
// (named "chat", before "sweep" alphabetically) or a scenario's.
func TestCompareOrdersByKind(t *testing.T) {
	keys := []CellKey{
		{Kind: KindCapacity, Scenario: "chat", LoadMode: ModeSustained, ContextTokens: 1024, Concurrency: 8},
		{Kind: KindScenario, Scenario: "a-burst", LoadMode: ModeDedicated, Concurrency: 2},
		{Kind: KindSweep, Scenario: "sweep", LoadMode: ModeSustained, ContextTokens: 8192, Concurrency: 1},
		{Kind: KindSweep, Scenario: "sweep", LoadMode: ModeSustained, ContextTokens: 1024, Concurrency: 4},
		{Kind: KindSweep, Scenario: "sweep", LoadMode: ModeSustained, ContextTokens: 1024, Concurrency: 1},
	}
	slices.SortStableFunc(keys, CellKey.Compare)
	var got []string
	for _, k := range keys {
		got = append(got, k.ID())
	}
	want := []string{"sweep/sustained/ctx=1024/out=0/c=1", "sweep/sustained/ctx=1024/out=0/c=4", "sweep/sustained/ctx=8192/out=0/c=1",
		"a-burst/dedicated/ctx=0/out=0/c=2", "chat/sustained/ctx=1024/out=0/c=8"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
}
