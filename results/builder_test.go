package results

import (
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

func TestBuilderFoldsCellNotesAndDropsThemWithTheCell(t *testing.T) {
	sat := servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindRate, Scenario: "sweep", LoadMode: servebench.ModeRate, ContextTokens: 1024, OutputTokens: 64, RatePerSecond: 8},
		Saturated: true, AchievedRatePerSecond: 7.5, RequestThroughputRPS: 5, LateSends: 3}
	hits := 900
	dirty := servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindSweep, Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 64, Concurrency: 2},
		CacheContaminated: true, CacheHitTokens: &hits}
	var b Builder
	b.AddNote("before")
	b.AddCell(sat)
	b.AddCell(dirty)
	b.AddNote("after")
	got := b.Results(Run{Notes: []string{"run"}}).Notes
	if len(got) != 5 || got[0] != "run" || got[1] != "before" || !strings.Contains(got[2], "past saturation") ||
		!strings.Contains(got[3], "cache-contaminated: the server served 900 input tokens") || got[4] != "after" {
		t.Fatalf("notes in the wrong order or missing:\n%s", strings.Join(got, "\n"))
	}
	// a cell measured again replaces the old one, and the old one's note goes with it
	b.DropCells(func(k servebench.CellKey) bool { return k == sat.CellKey })
	res := b.Results(Run{})
	if len(res.Cells) != 1 || len(res.Notes) != 3 || strings.Contains(strings.Join(res.Notes, "\n"), "saturation") {
		t.Fatalf("after dropping the saturated cell: %d cells, notes %q", len(res.Cells), res.Notes)
	}
}

func TestBuilderCountsShortOutputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forced bool
		want   string
	}{
		// no ignore_eos: the server could not be told
		{"not forced", false, "cannot be forced to produce an exact output length (no ignore_eos): 1 request(s)"},
		// ignore_eos sent and still a different length
		{"forced", true, "1 request(s) returned a different number of output tokens"},
	} {
		var b Builder
		b.Count(servebench.Record{LengthMismatch: true})
		b.Count(servebench.Record{LengthMismatch: true, Warmup: true})                              // a warm-up does not count
		b.Count(servebench.Record{LengthMismatch: true, ErrorClass: servebench.ErrStreamTruncated}) // nor a failure
		notes := b.Results(Run{Server: servebench.ServerInfo{ForcesOutputLength: tc.forced}}).Notes
		if len(notes) != 1 || !strings.Contains(notes[0], tc.want) {
			t.Errorf("%s: notes %q, want one containing %q", tc.name, notes, tc.want)
		}
	}
}

func TestUnsearchedKeepsEveryUseCase(t *testing.T) {
	p := servebench.Plan{UseCases: []servebench.UseCase{{Name: "a"}, {Name: "b", Statistic: servebench.StatP90}}}
	p.Capacity.MaxConcurrency = 64
	var b Builder
	b.AddCapacity(servebench.CapacityResult{UseCase: "a"})
	if !b.Unsearched(p) || b.Unsearched(p) {
		t.Fatal("Unsearched should add b once, then nothing")
	}
	caps := b.Results(Run{Plan: p}).Capacity
	if len(caps) != 2 || caps[1].UseCase != "b" || !caps[1].Interrupted || caps[1].Statistic != servebench.StatP90 || caps[1].Ceiling != 64 {
		t.Fatalf("capacity results %+v", caps)
	}
}
