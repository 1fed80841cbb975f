package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// TestOnePeakThroughput: the fixture's capacity search measured 1665 tok/s at 32 requests with
// 128-token answers, above the sweep's 1024-token peak (401.5 tok/s at 4). Every "peak
// throughput" the report writes (highlight, Key Findings, System Throughput, terminal) is the one
// stats.Peak names, the sweep's; the faster search cell is named as what it is, never as the peak.
func TestOnePeakThroughput(t *testing.T) {
	in := loadFixture(t)
	pk := stats.Peak(in.Results.Cells)
	if pk == nil || !pk.OnSweepGrid() {
		t.Fatalf("peak %+v is not a sweep cell", pk)
	}
	off := stats.HigherOffGrid(in.Results.Cells)
	if off == nil || off.Kind == servebench.KindSweep || off.OutputTokens == pk.OutputTokens {
		t.Fatalf("the fixture must hold a faster cell of another shape than the sweep's peak; got %+v", off)
	}
	want := fmtNum(pk.SystemOutputThroughputTPS, 1)
	r := Build(in)
	var md, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	num := regexp.MustCompile(`[0-9][0-9,]*\.[0-9]`)
	seen := 0
	for _, out := range []string{md.String(), term.String()} {
		for _, line := range strings.Split(out, "\n") {
			l := strings.ToLower(line)
			if !strings.Contains(l, "peak throughput") && !strings.Contains(l, "peak system throughput") && !strings.HasPrefix(l, "| peak (") {
				continue
			}
			if strings.HasPrefix(l, "peak throughput is the highest") || strings.Contains(l, "tokens per hour") {
				continue // the sentence naming the faster off-grid cell; the per-hour volume at the peak
			}
			n := num.FindString(line)
			if n == "" {
				continue
			}
			seen++
			if strings.ReplaceAll(n, ",", "") != want {
				t.Errorf("peak throughput %s, want %s (stats.Peak), in %q", n, want, line)
			}
		}
	}
	if seen < 4 { // highlight, Key Findings, System Throughput table, terminal highlight
		t.Errorf("found %d peak throughputs, want at least 4:\n%s", seen, md.String())
	}
	if !strings.Contains(md.String(), "A cell of another shape ran faster: "+fmtTPS(off.SystemOutputThroughputTPS)) {
		t.Errorf("the faster capacity-search cell is not named beside the peak")
	}
}
