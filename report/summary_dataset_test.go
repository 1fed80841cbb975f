package report

import (
	"testing"

	"github.com/servebench/servebench"
)

// A run that replays a dataset in fixed mode has one cell, and the summary table shows it once,
// as the dataset's row (it used to show it a second time as a sweep row of context 0).
func TestSummaryShowsADatasetCellOnce(t *testing.T) {
	cell := servebench.CellResult{CellKey: servebench.CellKey{Kind: servebench.KindDataset, Scenario: "dataset", LoadMode: servebench.ModeFixed, Concurrency: 4, OutputTokens: 128},
		RequestsTotal: 20, RequestsSucceeded: 20, SuccessRate: 1, Validity: servebench.Valid()}
	r := Build(Input{Manifest: servebench.Manifest{ID: "ds", Status: "completed"}, Results: servebench.Results{Cells: []servebench.CellResult{cell}}})
	if len(r.Summary.Rows) != 1 || r.Summary.Rows[0][0] != "dataset" {
		t.Errorf("summary rows %q, want the dataset's row once", r.Summary.Rows)
	}
}
