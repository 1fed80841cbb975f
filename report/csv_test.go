package report

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	servebench "github.com/servebench/servebench"
)

func readCSV(t *testing.T, b []byte) (header []string, rows []map[string]string) {
	t.Helper()
	all, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, b)
	}
	header = all[0]
	for _, rec := range all[1:] {
		if len(rec) != len(header) {
			t.Fatalf("row of %d fields under %d columns", len(rec), len(header))
		}
		m := map[string]string{}
		for i, h := range header {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return header, rows
}

// cells.csv has one row per cell (skipped included) and a column for every numeric field,
// with the values of results.json.
func TestCellsCSV(t *testing.T) {
	in := loadFixture(t)
	var buf bytes.Buffer
	if err := CellsCSV(&buf, in.Results.Cells); err != nil {
		t.Fatal(err)
	}
	header, rows := readCSV(t, buf.Bytes())
	if len(rows) != len(in.Results.Cells) {
		t.Fatalf("%d rows for %d cells", len(rows), len(in.Results.Cells))
	}
	if header[0] != "cell_id" || header[5] != "concurrency" {
		t.Errorf("identifying columns first, got %v", header[:6])
	}
	for _, col := range []string{"ttft_seconds.p99", "generation_speed_tps.mean", "system_output_throughput_tps", "chunk_gap_seconds.p50", "itl_seconds.mean", "requests_failed", "energy_joules.joules"} {
		found := false
		for _, h := range header {
			found = found || h == col
		}
		if !found {
			t.Errorf("no column %s", col)
		}
	}
	for i, c := range in.Results.Cells {
		r := rows[i]
		if r["cell_id"] != c.ID() {
			t.Errorf("row %d is %s, want %s", i, r["cell_id"], c.ID())
		}
		if c.Skipped {
			continue
		}
		got, err := strconv.ParseFloat(r["ttft_seconds.mean"], 64)
		if err != nil || got != c.TTFTSeconds.Mean {
			t.Errorf("%s: ttft mean %q, want %v", c.ID(), r["ttft_seconds.mean"], c.TTFTSeconds.Mean)
		}
		if n, _ := strconv.Atoi(r["requests_total"]); n != c.RequestsTotal {
			t.Errorf("%s: requests_total %q, want %d", c.ID(), r["requests_total"], c.RequestsTotal)
		}
	}
}

// requests.csv has one row per record, failures included; hostile text cannot become a
// spreadsheet formula.
func TestRequestsCSV(t *testing.T) {
	key := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 1024, OutputTokens: 128, Concurrency: 1}
	recs := []servebench.Record{
		{CellKey: key, Seq: 1, TTFTSeconds: 0.25, OutputTokens: 128},
		{CellKey: key, Seq: 2, ErrorClass: servebench.ErrHTTPStatus, Error: "=HYPERLINK(\"http://x\")"},
	}
	var buf bytes.Buffer
	if err := RequestsCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	_, rows := readCSV(t, buf.Bytes())
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	if rows[0]["cell_id"] != key.ID() {
		t.Errorf("cell_id %q, want %q", rows[0]["cell_id"], key.ID())
	}
	if rows[0]["seq"] != "1" || rows[0]["ttft_seconds"] != "0.25" || rows[0]["ok"] != "true" {
		t.Errorf("row 1: %v", rows[0])
	}
	if rows[1]["ok"] != "false" || rows[1]["error"] != "'=HYPERLINK(\"http://x\")" {
		t.Errorf("row 2: ok %q error %q", rows[1]["ok"], rows[1]["error"])
	}
}
