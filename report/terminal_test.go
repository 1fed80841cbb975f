package report

import (
	"bytes"
	"strings"
	"testing"
)

// hostileTitle is a use-case title from a plan or a received run folder that would clear the
// screen, retitle the terminal (OSC … BEL), forge a line after a carriage return and reverse
// the rest of the line (U+202E) if printed raw.
const hostileTitle = "Chat\x1b[2J\x1b[H\x1b]0;owned\x07\r\u202eFORGED\u009b31m\x7f"

// Every line of the terminal summary passes the sanitiser, the Capacity planning lines (which
// carry each use case's title) included; the title's printable text stays.
func TestTerminalSummarySanitisesEveryLine(t *testing.T) {
	in := loadFixture(t)
	if in.Results.Sizing == nil || len(in.Results.Capacity) == 0 {
		t.Fatal("the fixture has no sizing or capacity: the planning lines would not be printed")
	}
	for i := range in.Results.Capacity {
		in.Results.Capacity[i].Title = hostileTitle
	}
	for i := range in.Manifest.Plan.UseCases {
		in.Manifest.Plan.UseCases[i].Title = hostileTitle
	}
	var buf bytes.Buffer
	if err := Terminal(&buf, Build(in)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "Capacity planning") || !strings.Contains(out, "Chat[2J[H]0;ownedFORGED31m") {
		t.Fatalf("the planning lines or the title's text are missing:\n%s", out)
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) {
			t.Fatalf("%U reaches the terminal:\n%q", r, out)
		}
	}
}
