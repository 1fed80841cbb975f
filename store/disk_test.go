package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/servebench/servebench"
)

// fullDisk writes part of the first failing write, then fails with ENOSPC; once freed (free =
// true) it writes normally, like a disk someone cleaned up.
type fullDisk struct {
	*os.File
	full bool
}

func (d *fullDisk) Write(b []byte) (int, error) {
	if d.full {
		d.full = false // the disk frees up right after
		n, _ := d.File.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return d.File.Write(b)
}

// A failed write leaves no torn line, and nothing is appended after it even when the disk frees
// up: every later append reports the first failure.
func TestFailedAppendStopsAppendingAndLeavesNoTornLine(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, manifest("a"))
	if err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{File: r.records.(*os.File)}
	r.records = disk
	if err := r.Append(servebench.Record{Seq: 0}); err != nil {
		t.Fatal(err)
	}
	disk.full = true
	err = r.Append(servebench.Record{Seq: 1, Error: strings.Repeat("x", 200)})
	if !errors.Is(err, ErrWriteFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("failed append: %v", err)
	}
	if err := r.Append(servebench.Record{Seq: 2}); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("append after a failure: %v, want the first failure again", err)
	}
	if err := r.AppendSamples([]servebench.Sample{{Name: "x"}}); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("telemetry after a failure: %v", err)
	}
	r.Close()
	b, _ := os.ReadFile(filepath.Join(dir, RecordsFile))
	if bytes.Count(b, []byte("\n")) != 1 || b[len(b)-1] != '\n' {
		t.Fatalf("requests.jsonl after the failure: %q", b)
	}
	recs, err := ReadRecords(filepath.Join(dir, RecordsFile))
	if err != nil || len(recs) != 1 || recs[0].Seq != 0 {
		t.Fatalf("records: %v %+v", err, recs)
	}
}

// A torn line in the middle of requests.jsonl (written by an older version, or a crash between
// a partial write and later appends) is repaired by readers and by resume: the record after the
// torn part is kept, whole lines stay byte for byte, and appends continue on a clean line.
func TestTornLineInTheMiddleIsRepaired(t *testing.T) {
	dir := t.TempDir()
	r, _ := Create(dir, manifest("a"))
	r.Append(servebench.Record{Seq: 0, Server: &servebench.ServerTimings{Source: "x"}})
	r.Close()
	path := filepath.Join(dir, RecordsFile)
	first, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"scenario":"sweep","seq":1,"server":{"sour`) // torn by a full disk
	f.Close()
	r, _, _, err := openForResume(dir) // an old resume would have appended after the torn part
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"scenario":"sweep","seq":1,"server":{"sour`)
	f.WriteString(`{"scenario":"sweep","seq":2,"server":{"source":"y"}}` + "\n")
	f.WriteString(`{"seq":3}` + "\n")
	f.Close()

	recs, err := ReadRecords(path)
	if err != nil || len(recs) != 3 || recs[1].Seq != 2 || recs[1].Server == nil || recs[1].Server.Source != "y" || recs[2].Seq != 3 {
		t.Fatalf("reader: %v, %+v", err, recs)
	}
	r, _, recs, err = openForResume(dir)
	if err != nil || len(recs) != 3 {
		t.Fatalf("resume: %v, %d records", err, len(recs))
	}
	r.Append(servebench.Record{Seq: 4})
	r.Close()
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, first) || bytes.Contains(b, []byte(`"sour{`)) {
		t.Fatalf("after repair:\n%s", b)
	}
	recs, err = ReadRecords(path)
	if err != nil || len(recs) != 4 {
		t.Fatalf("after repair: %v, %d records", err, len(recs))
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if _, whole, _ := parseRecordLine(append(line, '\n')); !whole {
			t.Errorf("torn line left: %s", line)
		}
	}
}
