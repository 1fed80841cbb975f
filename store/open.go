package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A run folder may come from anyone (sent by a colleague, downloaded, unpacked from an archive),
// so its files are read as hostile: each must be a regular file (a FIFO would block its reader
// forever, a link to /dev/zero or /dev/urandom would never end) no larger than its limit.
const (
	// MaxDocumentBytes is the largest run.json or results.json read, in bytes (256 MiB; a
	// large run's results.json is a few MiB).
	MaxDocumentBytes int64 = 256 << 20
	// MaxLinesBytes is the largest JSON-lines file (requests.jsonl, cells.jsonl,
	// telemetry.jsonl) read, in bytes (8 GiB; a million requests take about 1 GiB).
	MaxLinesBytes int64 = 8 << 30
)

// limitFor is the byte limit of a run-folder file by its name.
func limitFor(path string) int64 {
	switch filepath.Base(path) {
	case RecordsFile, CellsFile, TelemetryFile:
		return MaxLinesBytes
	}
	return MaxDocumentBytes
}

// openRunFile opens a run-folder file for reading: it must be a regular file (after following
// links) of at most limit bytes. Opening never blocks (a FIFO is opened without waiting for a
// writer, then refused). The reader returned stops with an error past limit, should the file
// grow while read. A missing file's error wraps os.ErrNotExist.
func openRunFile(path string, limit int64) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (it is a %s): a run folder holds only plain files; replace it with the file the run wrote", path, fileKind(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, tooLarge(path, limit)
	}
	return &limitedFile{f: f, path: path, limit: limit}, nil
}

// ReadRunFile reads a whole run-folder file: a regular file under its limit (MaxDocumentBytes,
// or MaxLinesBytes for a JSON-lines file), never blocking on a FIFO (see openRunFile).
func ReadRunFile(path string) ([]byte, error) {
	f, err := openRunFile(path, limitFor(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s is larger than %d MiB, the most servebench reads of a run folder's file: it is not a file a run wrote (or a copy of one cut short or grown); replace it with the run's own", path, limit>>20)
}

// fileKind names what a non-regular file is, for an error.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&os.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// limitedFile reads a file and fails once it has given more than limit bytes.
type limitedFile struct {
	f           *os.File
	path        string
	limit, read int64
}

func (l *limitedFile) Read(p []byte) (int, error) {
	if l.read > l.limit {
		return 0, tooLarge(l.path, l.limit)
	}
	if room := l.limit + 1 - l.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.f.Read(p)
	l.read += int64(n)
	if l.read > l.limit {
		return n, tooLarge(l.path, l.limit)
	}
	return n, err
}

func (l *limitedFile) Close() error { return l.f.Close() }
