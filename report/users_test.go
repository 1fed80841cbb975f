package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// usersFixture is the report fixture's run with a population of chat users measured for the
// general chatbot (TTFT ≤ 3 s, ≥ 30 tok/s), as the runner records one: populations of 10, 20,
// 30, 31 and 40 users (the limit 30 measured: 31 drops to 29.5 tok/s; at 40 the prompt cache
// serves 41% and TTFT reaches 3.6 s), SLO tiers of 20, 30, 60 and 100 tok/s under TTFT ≤ 3 s
// (users.tiers), and the sizing redone from the users' limit. The other use cases have no
// population: they are sized from their cold-prompt limits, and say so.
func usersFixture(t *testing.T) Input {
	t.Helper()
	in := loadRun(t, "testdata/run")
	uc := servebench.UseCase{}
	for _, c := range in.Manifest.Plan.UseCases {
		if c.Name == "general_chatbot" {
			uc = c
		}
	}
	if uc.Name == "" {
		t.Fatal("the fixture has no general_chatbot")
	}
	tiers := &servebench.UsersTiers{TTFTSecondsMax: 3, SpeedsTPSMin: []float64{20, 30, 60, 100}}
	in.Manifest.Plan.Users = &servebench.UsersPlan{UseCases: []string{"general_chatbot"}, MaxUsers: 256, ThinkScale: 1, Tiers: tiers}
	sum := func(v float64) servebench.Summary {
		return servebench.Summary{Count: 120, Mean: v, CI95: &servebench.Interval{Low: 0.96 * v, High: 1.04 * v}, P50: servebench.Float(v), P90: servebench.Float(1.3 * v), P95: servebench.Float(1.4 * v), P99: servebench.Float(1.6 * v)}
	}
	pops := []struct {
		n                   int
		ttft, speed, cached float64
		kv                  float64
	}{{10, 0.6, 62, 0.93, 0.31}, {20, 1.1, 48, 0.92, 0.55}, {30, 2.2, 34, 0.88, 0.83}, {31, 2.4, 29.5, 0.86, 0.86}, {40, 3.6, 22, 0.41, 0.99}}
	var cells []servebench.CellResult
	var pts []servebench.CapacityPoint
	for _, p := range pops {
		c := servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindUsers, Scenario: uc.Name, LoadMode: servebench.ModeUsers, ContextTokens: 33792, Concurrency: p.n},
			RequestsTotal: 140, RequestsSucceeded: 140, WarmupRequests: 2 * p.n, SuccessRate: 1, InputTokensMean: 2900, OutputTokensMean: 350,
			TTFTSeconds: sum(p.ttft), GenerationSpeedTPS: sum(p.speed), E2ELatencySeconds: sum(p.ttft + 350/p.speed),
			SystemOutputThroughputTPS: float64(p.n) * p.speed * 0.2, CachedShare: servebench.Float(p.cached)}
		cells = append(cells, c)
		pt := capacity.Evaluate(uc, c)
		pt.Concurrency, pt.RequestsSpent = p.n, 140
		pts = append(pts, pt)
	}
	res := capacity.Decide(uc, 256, pts, nil)
	res.ContextTokens = 33792
	u := servebench.UsersCapacity{CapacityResult: res, Profile: "chat", ProfileText: "a person chatting (first turn median 800 tokens, 150 per later turn, answers median 350, 4 turns, 15 s between turns)"}
	for i, p := range pops {
		e := capacity.UsersEvidenceOf(cells[i], p.n, pts[i].Pass)
		e.KVCacheUsageMean, e.KVCacheUsageMax = servebench.Float(p.kv*0.9), servebench.Float(p.kv)
		e.Preemptions = new(int64)
		e.QueueWaitSeconds = servebench.Float(p.ttft / 10)
		u.Points = append(u.Points, e)
	}
	u.Why, u.WhyText = capacity.UsersWhy(res, u.Points)
	u.Tiers = capacity.UsersTiers(tiers, uc, 256, cells, u.Points)
	in.Results.Cells = append(in.Results.Cells, cells...)
	in.Results.Users = []servebench.UsersCapacity{u}
	sz := capacity.Size(in.Results.Capacity, capacity.SizingInput{Plan: in.Manifest.Plan.Sizing, DeclaredGPU: in.Manifest.Plan.Metadata.GPU, Cells: in.Results.Cells, Users: in.Results.Users})
	in.Results.Sizing = &sz
	return in
}

// A run with a population: Capacity Planning sizes the general chatbot from its users' limit
// (30 users per replica, not 10 × 4) and says so in a SIZED FROM column, the other use cases
// from their cold-prompt limits with the reason; Capacity in Users shows the SLO tiers, each
// with its limit, range, binding constraint and why. Golden in Markdown and HTML.
func TestUsersReport(t *testing.T) {
	in := usersFixture(t)
	r := Build(in)
	var md, html bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	// the fixture as a run folder, for the pages' browser test (page: TestUsersWhatIfInBrowser)
	for name, v := range map[string]any{"run.json": in.Manifest, "results.json": in.Results} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "../users/"+name, append(b, '\n'))
	}
	tel, err := os.ReadFile("testdata/run/telemetry.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "../users/telemetry.jsonl", tel)
	golden(t, "users.md", md.Bytes())
	golden(t, "users.html", []byte(htmlGolden(html.String())))
	text := md.String()
	for _, want := range []string{
		"| SIZED FROM |",
		// the Key Findings say what the sizing used per use case, in its own words, not 4 users per slot
		"Capacity Planning sizes each use case from what this run measured: Code Completion from the cold-prompt limit × 4 (not searched in users);",
		"; General Chatbot from the users' limit 30 (chat users, prompt cache);",
		"users' limit 30 (chat users, prompt cache)",
		"| Code Completion (1K Context) | 24 | cold-prompt limit × 4 (not searched in users) | 96 |",
		"| General Chatbot | generation speed ≥ 20 tok/s, TTFT ≤ 3s | ~35 | 31–39 | TTFT | eviction |",
		"| General Chatbot | generation speed ≥ 30 tok/s, TTFT ≤ 3s | 30 | 30–39 | generation speed | batch |",
		"| General Chatbot | generation speed ≥ 100 tok/s, TTFT ≤ 3s | below 10 | — | generation speed | batch |",
		"General Chatbot at generation speed ≥ 100 tok/s, TTFT ≤ 3s: Fewer than 10 users: the smallest population measured, 10, fails",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}

// A users' search that ended at a crossing (no failing population; capacity.DecideWithin): the
// report gives the limit as "~N" with its range to the search's ceiling, the crossing metric as
// the binding constraint, the why read at the population within its noise, and the note that no
// failing population was measured. Populations of 10 (62 tok/s, 93% cached) and 20 (30.8 ± 4%
// tok/s against ≥ 30: passing, unsettled; 35% cached): 1/speed through them crosses 1/30 at 20.5
// users, before 22, the next population a sixteenth allows.
func TestUsersReportCrossing(t *testing.T) {
	in := usersFixture(t)
	uc := servebench.UseCase{}
	for _, c := range in.Manifest.Plan.UseCases {
		if c.Name == "general_chatbot" {
			uc = c
		}
	}
	var pts []servebench.CapacityPoint
	var ev []servebench.UsersEvidence
	var cells []servebench.CellResult
	for _, c := range in.Results.Cells {
		if c.Kind != servebench.KindUsers || (c.Concurrency != 10 && c.Concurrency != 20) {
			continue
		}
		if c.Concurrency == 20 {
			c.GenerationSpeedTPS.Mean, c.CachedShare = 30.8, servebench.Float(0.35)
			c.GenerationSpeedTPS.CI95 = &servebench.Interval{Low: 0.96 * 30.8, High: 1.04 * 30.8}
		}
		cells = append(cells, c)
		p := capacity.Evaluate(uc, c)
		p.Concurrency, p.RequestsSpent = c.Concurrency, 140
		pts = append(pts, p)
		ev = append(ev, capacity.UsersEvidenceOf(c, c.Concurrency, p.Pass))
	}
	res := capacity.DecideWithin(uc, 256, pts, nil, capacity.UsersResolution)
	if res.Crossing == nil {
		t.Fatalf("the fixture's populations do not end at a crossing: %+v", res)
	}
	u := in.Results.Users[0]
	u.CapacityResult, u.Points, u.Tiers = res, ev, nil
	u.Why, u.WhyText = capacity.UsersWhy(res, ev)
	in.Results.Users = []servebench.UsersCapacity{u}
	var md bytes.Buffer
	if err := Markdown(&md, Build(in)); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	for _, want := range []string{
		"| ~20 | 10–256 |",
		"| generation speed | eviction |",
		"at 20 users, which pass within their noise of the threshold, the prefix cache served 35% of the prompt tokens (93% at 10)",
		"No failing level was measured: at 20 the verdict did not settle (generation speed 30.8 tok/s against 30 tok/s)",
		"crosses the threshold at 20.5, before 22",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
}
