package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
)

// TestRateLimitingIsNamed: a server that answers most requests of a use case's first level
// with 429 (and some with 503) is named as rate limiting and overload, with the statuses, in the
// verdict, the guidance line, the terminal and the notes, not as "Success rate is the
// limitation" and "http-status: 14"; the longest Retry-After the server sent with them is kept
// in the cell and said in the notes.
func TestRateLimitingIsNamed(t *testing.T) {
	in := loadFixture(t)
	uc := in.Manifest.Plan.UseCases[0]
	key := servebench.CellKey{Kind: servebench.KindCapacity, Scenario: uc.Name, LoadMode: servebench.ModeSustained,
		ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens), Concurrency: 1}
	var recs []servebench.Record
	for i := range 20 {
		r := servebench.Record{CellKey: key, Seq: int64(i), StartOffsetSeconds: float64(i), EndOffsetSeconds: float64(i) + 0.5}
		switch {
		case i < 11:
			r.ErrorClass, r.HTTPStatus = servebench.ErrHTTPStatus, 429
			r.RetryAfterSeconds = servebench.Float(float64(1 + i%3)) // 1, 2 or 3 s
		case i < 14:
			r.ErrorClass, r.HTTPStatus = servebench.ErrHTTPStatus, 503
		default: // the few that get through are fast
			r.InputTokens, r.OutputTokens, r.TTFTSeconds, r.E2ELatencySeconds = int(uc.ContextTokens), int(uc.OutputTokens), 0.05, 0.4
			r.GenerationSpeedTPS, r.ITLSeconds, r.FirstContentSeconds = 400, 0.0025, 0.05
		}
		recs = append(recs, r)
	}
	c := stats.Cell(key, recs, stats.Window{Start: 0, End: 20})
	if c.ErrorsByHTTPStatus[429] != 11 || c.ErrorsByHTTPStatus[503] != 3 {
		t.Fatalf("errors by status %v, want 429: 11, 503: 3", c.ErrorsByHTTPStatus)
	}
	if ra := c.RetryAfterMaxSeconds; ra == nil || *ra != 3 {
		t.Fatalf("the cell's longest Retry-After is %v, want 3 s", ra)
	}
	p := capacity.Evaluate(uc, c)
	cr := capacity.Decide(uc, 64, []servebench.CapacityPoint{p}, nil)
	cr.UseCase, cr.Title, cr.ContextTokens, cr.OutputTokens = uc.Name, uc.Title, int(uc.ContextTokens), int(uc.OutputTokens)
	if cr.LimitKind != servebench.LimitNotViable {
		t.Fatalf("limit %s, want not viable", cr.LimitKind)
	}
	in.Results.Cells = append(in.Results.Cells, c)
	in.Results.Capacity = []servebench.CapacityResult{cr}
	r := Build(in)
	v := r.Capacity[0]
	for _, s := range []string{v.Analysis, v.Sentence} {
		if !strings.Contains(s, "rate limited (HTTP 429)") || strings.Contains(s, "Success rate is the limitation") {
			t.Errorf("verdict does not name the rate limiting: %q", s)
		}
	}
	if !strings.Contains(v.Sentence, "11 requests were rate limited (HTTP 429) and 3 overloaded (HTTP 503)") {
		t.Errorf("verdict sentence does not count the refusals: %q", v.Sentence)
	}
	var md, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "rate limited (HTTP 429)") {
		t.Errorf("terminal does not name the rate limiting:\n%s", term.String())
	}
	if !strings.Contains(md.String(), "rate limited (HTTP 429): 11") || !strings.Contains(md.String(), "overloaded (HTTP 503): 3") || strings.Contains(md.String(), "http-status: 14") {
		t.Errorf("notes do not name the statuses")
	}
	if !strings.Contains(md.String(), "The server rate limited 11 requests (HTTP 429)") {
		t.Errorf("notes do not say what the rate limiting means for the results")
	}
	if !strings.Contains(md.String(), "asked the client to wait up to 3.0s before trying again (Retry-After)") {
		t.Errorf("notes do not give the server's Retry-After")
	}
}
