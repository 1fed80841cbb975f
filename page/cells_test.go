package page

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/store"
)

// A run's page lists its cells with each one's validity, as the report's tables write it, and a
// cell the run planned but did not measure (its time budget ran out) says so once, with "—"
// for its figures: it read "skipped: skipped: the run's time budget …" beside 0.0% success,
// 0.000 s and 0.0 tok/s, and no cell's validity was shown.
func TestRunPageCellsShowValidityAndNotMeasured(t *testing.T) {
	tmp := t.TempDir()
	m := servebench.Manifest{ID: "20261126-141514-7e472a89", Status: "completed", Simulated: true, StartedAt: time.Date(2026, 11, 26, 14, 15, 14, 0, time.UTC)}
	m.Plan.Target.Model = "zai-org/GLM-4.7-Flash"
	low := servebench.Validity{Verdict: servebench.VerdictLowConfidence, Reasons: []servebench.Reason{servebench.ReasonTooFewSamples},
		Notes: map[servebench.Reason]string{servebench.ReasonTooFewSamples: "5 successful measured requests, fewer than the 10 a 95% interval is shown from"}}
	why := "skipped: the run's time budget (--max-time) had no time left for this cell"
	res := servebench.Results{SchemaVersion: servebench.SchemaVersion, Cells: []servebench.CellResult{
		{CellKey: servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 1024, Concurrency: 1},
			RequestsTotal: 5, RequestsSucceeded: 5, SuccessRate: 1, SystemOutputThroughputTPS: 189, Validity: low},
		{CellKey: servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 32768, OutputTokens: 1024, Concurrency: 8},
			Skipped: true, Note: why, Validity: servebench.NotMeasured(why)},
	}}
	dir := filepath.Join(tmp, m.ID)
	writeRunFolder(t, dir, m, res)
	p := &Pages{Source: Source{Index: fakeIndex{store.Entry(dir, m, res)}}}
	var buf bytes.Buffer
	if err := p.RunHTML(context.Background(), &buf, m.ID); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	start := strings.Index(page, `<table id="cells-table">`)
	if start < 0 {
		t.Fatal("no cells table")
	}
	table := page[start:]
	table = table[:strings.Index(table, "</table>")]
	rows := strings.Split(table, "<tr")
	if len(rows) != 4 { // the split's head, the header row, two cells
		t.Fatalf("cells table has %d rows, want a header and 2 cells:\n%s", len(rows)-1, table)
	}
	measured, skipped := rows[2], rows[3]
	for _, want := range []string{"low-confidence: too-few-samples", "5 successful measured requests", "189.0 tok/s"} {
		if !strings.Contains(measured, want) {
			t.Errorf("the measured cell's row lacks %q:\n%s", want, measured)
		}
	}
	for _, want := range []string{"not measured: the run&#39;s time budget (--max-time) had no time left for this cell", "invalid: not-measured", "<td class=\"num\">—</td>"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("the skipped cell's row lacks %q:\n%s", want, skipped)
		}
	}
	for _, bad := range []string{"skipped: skipped", "0.0%", "0.000 s", "0.0 tok/s"} {
		if strings.Contains(skipped, bad) {
			t.Errorf("the skipped cell's row reads %q:\n%s", bad, skipped)
		}
	}
}
