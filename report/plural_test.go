package report

import (
	"bytes"
	"regexp"
	"testing"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func TestCounted(t *testing.T) {
	for _, tt := range []struct{ label, noun, want string }{
		{"1", "user", "1 user"},
		{"0", "user", "0 users"},
		{"4.5", "user", "4.5 users"},
		{"1,000", "request", "1,000 requests"},
		{"8+", "user", "8+ users"},
		{"~1", "user", "~1 users"}, // about one is not exactly one
		{"1 and 4", "session", "1 and 4 sessions"},
	} {
		if got := counted(tt.label, tt.noun); got != tt.want {
			t.Errorf("counted(%q, %q) = %q, want %q", tt.label, tt.noun, got, tt.want)
		}
	}
	if got := plural(1, "request") + wasWere(1); got != "1 request was" {
		t.Errorf("got %q", got)
	}
	if got := plural(3, "request") + wasWere(3); got != "3 requests were" {
		t.Errorf("got %q", got)
	}
}

// pluralOne finds a count of exactly one followed by a plural noun ("1 users", "1 Concurrent
// Requests"); "1.5 users", "~1 …" and "21 users" are not counts of one.
var pluralOne = regexp.MustCompile(`(?i)(^|[^0-9.,~+])1 (concurrent |measured |active |output |input )?(requests|users|levels|cells|samples|scenarios|turns|prompts|sessions|replicas|gpus|tokens|runs)\b`)

// A run whose every count can be one: the headline use case's limit is 1, a request slot serves
// one user, and one of the sizing targets is one user. Every rendering says "1 request",
// "1 user", "1 Concurrent Request", never the plural.
func TestCountsOfOneAreSingular(t *testing.T) {
	in := loadFixture(t)
	found := false
	for i := range in.Results.Capacity {
		cr := &in.Results.Capacity[i]
		if cr.UseCase == in.Manifest.Plan.Capacity.Headline || (in.Manifest.Plan.Capacity.Headline == "" && cr.UseCase == "general_chatbot") {
			cr.Limit, cr.LimitKind, cr.FirstFailing, cr.LimitRange = servebench.Int(1), servebench.LimitMeasured, servebench.Int(2), nil
			found = true
		}
	}
	if !found {
		t.Fatal("the fixture has no headline use case")
	}
	in.Results.Sizing = new(capacity.Size(in.Results.Capacity, capacity.SizingInput{
		Plan:  servebench.SizingPlan{UsersPerSlot: 1, TargetUsers: []int{1, 100}, GPUUSDPerHour: 3.5},
		Cells: in.Results.Cells,
	}))
	r := Build(in)
	var md, term, page bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report.md": md.String(), "terminal": term.String(), "report.html": page.String()} {
		for _, m := range pluralOne.FindAllString(out, -1) {
			t.Errorf("%s: %q", name, m)
		}
	}
	for _, want := range []string{"1 Concurrent Request @ 32K Context", "≈ 1 user at 1 per request slot", "1 user → 1 replica", "1 user per request slot"} {
		if !bytes.Contains(term.Bytes(), []byte(want)) && !bytes.Contains(md.Bytes(), []byte(want)) {
			t.Errorf("neither the terminal nor report.md says %q", want)
		}
	}
}
