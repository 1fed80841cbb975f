package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// The odd runs in testdata/odd are small runs recorded against the built-in simulator, one per
// shape of run that the happy-path fixture does not have. Their Markdown and terminal renderings
// are golden files, read by a person when they change: every sentence must hold for that shape.
//
// Re-record one with the command in its run.json (servebench run … --out report/testdata/odd/NAME),
// keeping run.json, results.json and telemetry.jsonl.
var oddRuns = []struct {
	name string
	// must and mustNot are phrases the renderings must (not) contain, the bugs each shape had.
	must, mustNot []string
}{
	// one context length (1K), three concurrency levels, a code-completion search to a ceiling
	// of 6 that still passes: a lower-bound limit ("6+").
	{"one-context", []string{"One context length: 1K tokens.", "6+", "at most"},
		[]string{"1K - 1K", "→ 39ms", "ranges from 60% (1K context) down to", "regardless of context length", "still rises at the longest", "a 1K conversation that adds 1K"}},
	// one concurrency level (2) at two contexts, no capacity search.
	{"one-concurrency", []string{"One concurrency level: 2 concurrent requests.", "no use case was analysed"},
		[]string{"at 1 concurrency levels", "from 2 - 2", "chatbot capacity not measured", "at every concurrency level", "The highest was"}},
	// open-loop request rates 2 and 4 req/s: no concurrency anywhere.
	{"rate", []string{"Arrival rates 2 req/s and 4 req/s", "open loop at 2 and 4 requests/s", "@ 4 req/s", "measured request rates"},
		[]string{"0 concurrent", "open loop at 0 requests/s", "No sweep cell completed a request", "(none measured)"}},
	// every request failed (a 1 ms TTFT limit): no statistics at all.
	{"all-failed", []string{"every request failed at concurrency 1", "no request at concurrency 1 succeeded"},
		[]string{"add concurrency 1 to the sweep", "faster or more GPUs", "measurable at 1 request"}},
	// the capacity ceiling (2) still passes: "2+", sized as "at most".
	{"top-limit", []string{"2+", "at most"}, nil},
	// a simulated server (servebench sim --listen) whose plan declares 1x H100 SXM and vLLM.
	{"simulated", []string{"SIMULATED", "1x H100 SXM"}, []string{"Performance analysis on 1x H100 SXM"}},
}

func TestGoldenOddRuns(t *testing.T) {
	for _, odd := range oddRuns {
		t.Run(odd.name, func(t *testing.T) {
			r := Build(loadRun(t, filepath.Join("testdata", "odd", odd.name)))
			var md, term bytes.Buffer
			if err := Markdown(&md, r); err != nil {
				t.Fatal(err)
			}
			if err := Terminal(&term, r); err != nil {
				t.Fatal(err)
			}
			golden(t, "odd-"+odd.name+".md", md.Bytes())
			golden(t, "odd-"+odd.name+".txt", term.Bytes())
			all := md.String() + term.String()
			for _, w := range odd.must {
				if !strings.Contains(all, w) {
					t.Errorf("the report lacks %q", w)
				}
			}
			for _, w := range odd.mustNot {
				if strings.Contains(all, w) {
					t.Errorf("the report says %q", w)
				}
			}
		})
	}
}
