// Package store keeps a run on disk (SPEC section 7): run.json, requests.jsonl (one record per
// line, appended the moment a request ends), telemetry.jsonl and results.json, plus an SQLite
// index of runs. JSON-lines files are written with one write(2) per line to an O_APPEND file,
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
	ResultsFile   = "results.json"
)

// Run is an open run folder.
type Run struct {
	dir       string
	mu        sync.Mutex
	records   *os.File
	telemetry *os.File
	redact    func(string) string
}

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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &Run{dir: dir}
	if err := r.WriteManifest(m); err != nil {
		return nil, err
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) open() error {
	var err error
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if r.records, err = os.OpenFile(filepath.Join(r.dir, RecordsFile), flags, 0o644); err != nil {
		return err
	}
	if r.telemetry, err = os.OpenFile(filepath.Join(r.dir, TelemetryFile), flags, 0o644); err != nil {
		r.records.Close()
		return err
	}
	return nil
}

// OpenForResume reopens an interrupted run: its manifest and the records it has. A torn last
// line (a crash in the middle of a write) is cut away so appends continue on a clean line.
func OpenForResume(dir string) (*Run, servebench.Manifest, []servebench.Record, error) {
	var m servebench.Manifest
	if err := readJSON(filepath.Join(dir, ManifestFile), &m); err != nil {
		return nil, m, nil, fmt.Errorf("%s has no readable %s: %w", dir, ManifestFile, err)
	}
	path := filepath.Join(dir, RecordsFile)
	recs, good, err := readRecords(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, m, nil, err
	}
	if err == nil {
		if st, err := os.Stat(path); err == nil && st.Size() > good {
			if err := os.Truncate(path, good); err != nil {
				return nil, m, nil, err
			}
		}
	}
	r := &Run{dir: dir}
	if err := r.open(); err != nil {
		return nil, m, nil, err
	}
	return r, m, recs, nil
}

// Dir is the run folder.
func (r *Run) Dir() string { return r.dir }

// Append writes one record as one line. It is safe for concurrent use.
func (r *Run) Append(rec servebench.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.writeLine(r.records, b)
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
	_, err := r.telemetry.Write(b)
	return err
}

func (r *Run) writeLine(f *os.File, b []byte) error {
	line := append(r.clean(b), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := f.Write(line)
	return err
}

// WriteManifest replaces run.json atomically.
func (r *Run) WriteManifest(m servebench.Manifest) error {
	return writeAtomic(filepath.Join(r.dir, ManifestFile), m, r.clean)
}

// WriteResults replaces results.json atomically.
func (r *Run) WriteResults(res servebench.Results) error {
	return writeAtomic(filepath.Join(r.dir, ResultsFile), res, r.clean)
}

// Close closes the append files.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.records.Close(), r.telemetry.Close())
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
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Load reads a run folder for reporting.
func Load(dir string) (servebench.Manifest, servebench.Results, []servebench.Record, error) {
	var m servebench.Manifest
	var res servebench.Results
	if err := readJSON(filepath.Join(dir, ManifestFile), &m); err != nil {
		return m, res, nil, err
	}
	if err := readJSON(filepath.Join(dir, ResultsFile), &res); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m, res, nil, fmt.Errorf("the run has no %s: it may still be running or was stopped before its first cell; continue it with servebench run --resume %s", ResultsFile, dir)
		}
		return m, res, nil, err
	}
	recs, err := ReadRecords(filepath.Join(dir, RecordsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return m, res, nil, err
	}
	return m, res, recs, nil
}

// ReadRecords reads requests.jsonl. A torn last line is ignored.
func ReadRecords(path string) ([]servebench.Record, error) {
	recs, _, err := readRecords(path)
	return recs, err
}

// readRecords returns the records and the byte length of the well-formed prefix of the file.
func readRecords(path string) ([]servebench.Record, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []servebench.Record
	var good int64
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var rec servebench.Record
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return out, good, fmt.Errorf("%s: line %d: %w", path, len(out)+1, jerr)
			}
			out = append(out, rec)
			good += int64(len(line))
		}
		if err == io.EOF {
			return out, good, nil // a last line without '\n' is torn: not counted
		}
		if err != nil {
			return out, good, err
		}
	}
}

// ReadSamples reads telemetry.jsonl; a missing file is no samples.
func ReadSamples(path string) ([]servebench.Sample, error) {
	f, err := os.Open(path)
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
