// Package store keeps a run on disk: run.json, requests.jsonl (one record per
// line, appended the moment a request ends), cells.jsonl (what the run knew of each cell beside
// its records: windows, server and GPU telemetry, outages), telemetry.jsonl and results.json,
// plus an SQLite index of runs. JSON-lines files are written with one write(2) per line to an O_APPEND file,
// so a crash loses nothing that already ended; whole files are replaced atomically.
package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/servebench/servebench"
)

// File names inside a run folder.
const (
	ManifestFile  = "run.json"
	RecordsFile   = "requests.jsonl"
	TelemetryFile = "telemetry.jsonl"
	CellsFile     = "cells.jsonl"
	ResultsFile   = "results.json"
)

// appendFile is what Run needs of an append-only file (an *os.File; a failing one in tests).
type appendFile interface {
	Write(b []byte) (int, error)
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// Run is an open run folder.
type Run struct {
	dir       string
	mu        sync.Mutex
	records   appendFile
	telemetry appendFile
	cells     appendFile
	redact    func(string) string
	// lock is the folder's lock (DirLock), held from Create or Reopen until Close.
	lock *DirLock
	// failed is the first append that failed: after it nothing more is appended (a disk that
	// frees up again must not get lines after a torn one), every later append returns it.
	failed error
}

// ErrWriteFailed marks the error of an append after which the run folder takes no more lines.
var ErrWriteFailed = errors.New("writing to the run folder failed")

// SetRedactor makes every later write pass through f (which removes secrets).
func (r *Run) SetRedactor(f func(string) string) {
	r.mu.Lock()
	r.redact = f
	r.mu.Unlock()
}

// clean applies the redactor, if any, to b.
func (r *Run) clean(b []byte) []byte {
	r.mu.Lock()
	f := r.redact
	r.mu.Unlock()
	if f == nil {
		return b
	}
	return []byte(f(string(b)))
}

// Create makes dir (and parents) and starts a run in it. A folder that already holds a run is
// refused, so nothing measured is ever overwritten.
func Create(dir string, m servebench.Manifest) (*Run, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a run: choose another --out, or continue it with --resume %s", dir, dir)
	}
	// a folder of the user's own files is never written into (report.html, appends)
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return nil, fmt.Errorf("%s is not empty and holds no servebench run: choose a new or empty folder for --out", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lk, err := Lock(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{dir: dir, lock: lk}
	if err := r.WriteManifest(m); err != nil {
		lk.Release()
		return nil, err
	}
	if err := r.open(); err != nil {
		lk.Release()
		return nil, err
	}
	return r, nil
}

func (r *Run) open() error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	rec, err := os.OpenFile(filepath.Join(r.dir, RecordsFile), flags, 0o644)
	if err != nil {
		return err
	}
	tel, err := os.OpenFile(filepath.Join(r.dir, TelemetryFile), flags, 0o644)
	if err != nil {
		rec.Close()
		return err
	}
	cells, err := os.OpenFile(filepath.Join(r.dir, CellsFile), flags, 0o644)
	if err != nil {
		rec.Close()
		tel.Close()
		return err
	}
	r.records, r.telemetry, r.cells = rec, tel, cells
	return nil
}

// ReadForResume reads a run folder's manifest and records without writing anything. A folder
// whose run.json is missing or is not a servebench manifest is refused.
func ReadForResume(dir string) (servebench.Manifest, []servebench.Record, error) {
	var m servebench.Manifest
	b, err := ReadRunFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m, nil, fmt.Errorf("%s is not a servebench run folder (it has no %s)", dir, ManifestFile)
		}
		return m, nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.ID == "" || m.SchemaVersion < 1 || m.Status == "" {
		return m, nil, fmt.Errorf("%s is not a servebench run folder: its %s is not a servebench run manifest (no id, schema_version or status)", dir, ManifestFile)
	}
	recs, _, _, err := readRecords(filepath.Join(dir, RecordsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return m, nil, err
	}
	return m, recs, nil
}

// Reopen opens a run folder for appending. A torn last line (a crash in the middle of a
// write) is cut away, and a torn line in the middle repaired, so appends continue on a clean
// line.
func Reopen(dir string) (*Run, error) {
	lk, err := Lock(dir)
	if err != nil {
		return nil, err
	}
	r, err := ReopenLocked(dir, lk)
	if err != nil {
		lk.Release()
	}
	return r, err
}

// ReopenLocked is Reopen of a folder whose lock the caller already holds (taken before it read
// the folder, so nothing could write it in between); the Run releases lk when it closes.
func ReopenLocked(dir string, lk *DirLock) (*Run, error) {
	path := filepath.Join(dir, RecordsFile)
	_, good, torn, err := readRecords(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if torn > 0 {
			// a torn line in the middle (a write that failed, then later appends): rewrite the
			// file with only whole records, so appends never follow a broken line
			if err := repairRecords(path); err != nil {
				return nil, fmt.Errorf("repairing %s: %w", path, err)
			}
		} else if st, err := os.Stat(path); err == nil && st.Size() > good {
			if err := os.Truncate(path, good); err != nil {
				return nil, err
			}
		}
	}
	r := &Run{dir: dir, lock: lk}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// Dir is the run folder.
func (r *Run) Dir() string { return r.dir }

// Append writes one record as one line. It is safe for concurrent use.
func (r *Run) Append(rec servebench.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.writeLine(r.records, RecordsFile, b)
}

// AppendSamples writes telemetry samples, one per line.
func (r *Run) AppendSamples(s []servebench.Sample) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range s {
		if err := enc.Encode(&s[i]); err != nil {
			return err
		}
	}
	b := r.clean(buf.Bytes())
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.appendLocked(r.telemetry, TelemetryFile, b)
}

// AppendCellLog writes one line of cells.jsonl.
func (r *Run) AppendCellLog(l servebench.CellLog) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return r.writeLine(r.cells, CellsFile, b)
}

func (r *Run) writeLine(f appendFile, name string, b []byte) error {
	line := append(r.clean(b), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.appendLocked(f, name, line)
}

// appendLocked writes whole lines to f. A failed or short write is undone (the file is cut back
// to its length before it, so no torn line stays) and stops every later append. r.mu is held.
func (r *Run) appendLocked(f appendFile, name string, b []byte) error {
	if r.failed != nil {
		return r.failed
	}
	var size int64 = -1
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	n, err := f.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err == nil {
		return nil
	}
	if n > 0 && size >= 0 {
		if terr := f.Truncate(size); terr != nil {
			err = fmt.Errorf("%w (and cutting the torn line failed: %v; --resume cuts it)", err, terr)
		}
	}
	r.failed = fmt.Errorf("%w: %s: %w", ErrWriteFailed, name, err)
	return r.failed
}

// WriteManifest replaces run.json atomically.
func (r *Run) WriteManifest(m servebench.Manifest) error {
	return writeAtomic(filepath.Join(r.dir, ManifestFile), m, r.clean)
}

// WriteResults replaces results.json atomically.
func (r *Run) WriteResults(res servebench.Results) error {
	return writeAtomic(filepath.Join(r.dir, ResultsFile), res, r.clean)
}

// SaveResults replaces dir's results.json atomically (a run folder not open for a run).
func SaveResults(dir string, res servebench.Results) error {
	return writeAtomic(filepath.Join(dir, ResultsFile), res, func(b []byte) []byte { return b })
}

// Close closes the append files.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.records.Close(), r.telemetry.Close(), r.cells.Close(), r.lock.Release())
}

func writeAtomic(path string, v any, clean func([]byte) []byte) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = clean(b)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := ReadRunFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadRecords reads requests.jsonl. A torn last line is ignored; a torn line in the middle (a
// write that failed part-way, followed by later appends) is repaired: the whole record that
// follows the torn part on the same line is kept, the torn part dropped.
func ReadRecords(path string) ([]servebench.Record, error) {
	recs, _, _, err := readRecords(path)
	return recs, err
}

// readRecords returns the records, the byte length of the file up to its last complete line and
// the number of torn lines met before it.
func readRecords(path string) ([]servebench.Record, int64, int, error) {
	f, err := openRunFile(path, limitFor(path))
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	var out []servebench.Record
	var good int64
	torn := 0
	err = eachLine(f, func(line []byte) {
		good += int64(len(line))
		rec, whole, ok := parseRecordLine(line)
		if !whole {
			torn++
		}
		if ok {
			out = append(out, rec)
		}
	})
	return out, good, torn, err
}

// eachLine calls fn for every complete line ('\n' included); a last line without '\n' is torn
// and not passed.
func eachLine(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			fn(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseRecordLine decodes one line. whole is false for a torn line; ok says whether a record
// was found (on a torn line: the record appended after the torn part, from the last '{' at
// which the rest of the line decodes).
func parseRecordLine(line []byte) (rec servebench.Record, whole, ok bool) {
	if json.Unmarshal(line, &rec) == nil {
		return rec, true, true
	}
	for i := bytes.LastIndexByte(line, '{'); i > 0; i = bytes.LastIndexByte(line[:i], '{') {
		var r servebench.Record
		if json.Unmarshal(line[i:], &r) == nil {
			// the earliest start that decodes is the appended record (a later '{' would be
			// a nested object, which does not decode as a whole record ending the line)
			rec, ok = r, true
		}
	}
	return rec, false, ok
}

// repairRecords rewrites requests.jsonl with whole lines only: whole lines are kept byte for
// byte, a torn line is replaced by the record that followed its torn part (if any).
func repairRecords(path string) error {
	f, err := openRunFile(path, limitFor(path))
	if err != nil {
		return err
	}
	defer f.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	rerr := eachLine(f, func(line []byte) {
		rec, whole, ok := parseRecordLine(line)
		switch {
		case whole:
			bw.Write(line)
		case ok:
			b, _ := json.Marshal(rec)
			bw.Write(append(b, '\n'))
		}
	})
	werr := bw.Flush()
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(rerr, werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadCellLogs reads cells.jsonl in order; a torn last line is ignored. A cell recorded before
// cells named their kind gets it here (CellKey.FillKind).
func ReadCellLogs(path string) ([]servebench.CellLog, error) {
	f, err := openRunFile(path, limitFor(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []servebench.CellLog
	var bad error
	err = eachLine(f, func(line []byte) {
		var l servebench.CellLog
		if jerr := json.Unmarshal(line, &l); jerr != nil {
			bad = errors.Join(bad, fmt.Errorf("%s: a line does not decode: %w", path, jerr))
			return
		}
		l.Cell.FillKind()
		out = append(out, l)
	})
	return out, errors.Join(err, bad)
}

// ReadSamples reads telemetry.jsonl; a missing file is no samples.
func ReadSamples(path string) ([]servebench.Sample, error) {
	f, err := openRunFile(path, limitFor(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []servebench.Sample
	br := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var s servebench.Sample
			if jerr := json.Unmarshal(line, &s); jerr == nil {
				out = append(out, s)
			}
		}
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
	}
}
