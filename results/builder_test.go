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

// A run whose use cases were searched only in users (no cold-prompt search) is sized from their
// users' limits; an undecided users' search (interrupted) alone gives nothing to size.
func TestBuilderSizesUseCasesSearchedOnlyInUsers(t *testing.T) {
	users := servebench.UsersCapacity{Profile: "chat", CapacityResult: servebench.CapacityResult{UseCase: "chat", Title: "Chat",
		LimitKind: servebench.LimitMeasured, Limit: servebench.Int(30), FirstFailing: servebench.Int(31)}}
	var b Builder
	b.AddUsers(users)
	res := b.Results(Run{Plan: servebench.Plan{Sizing: servebench.SizingPlan{TargetUsers: []int{100}}}})
	if res.Sizing == nil || len(res.Sizing.UseCases) != 1 {
		t.Fatalf("sizing %+v, want the users-only use case sized", res.Sizing)
	}
	// 30 users per replica: 100 users → ⌈3.33⌉ = 4 replicas
	if u := res.Sizing.UseCases[0]; u.Basis != "users" || u.UsersLimit == nil || *u.UsersLimit != 30 || u.Targets[0].Replicas != 4 {
		t.Errorf("sized %+v, want from the users' limit 30: 4 replicas for 100 users", u)
	}
	var idle Builder
	idle.AddUsers(servebench.UsersCapacity{CapacityResult: servebench.CapacityResult{UseCase: "chat", LimitKind: servebench.LimitLowerBound, Limit: servebench.Int(8), Interrupted: true}})
	if s := idle.Results(Run{}).Sizing; s != nil {
		t.Errorf("an interrupted users' search alone sized %+v, want no sizing", s)
	}
}
