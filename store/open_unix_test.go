//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// A run folder is read as hostile: each of its files that is not a regular file (a FIFO, which
// would block its reader forever; a link to /dev/zero, which never ends) or is larger than its
// limit is refused at once, with an error naming the file and what is wrong, by every reader
// (report and compare's Load, serve's ReadRun, resume, recompute's records, cells, telemetry).
func TestRunFolderFilesMustBeRegularAndBounded(t *testing.T) {
	plant := map[string]func(t *testing.T, path string){
		// a FIFO nobody writes: opening it for reading blocks until a writer comes
		"fifo": func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		},
		// a link to an endless device
		"zero": func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		},
		// a sparse regular file one byte past the limit (costs no disk)
		"huge": func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(limitFor(path) + 1); err != nil {
				t.Skip("no sparse files here:", err)
			}
		},
	}
	want := map[string]string{"fifo": "not a regular file (it is a named pipe (FIFO))", "zero": "not a regular file (it is a character device)", "huge": "MiB, the most servebench reads"}
	readers := []struct {
		file string
		read func(dir string) error
	}{
		{ResultsFile, func(dir string) error { _, _, err := Load(dir); return err }},
		{ResultsFile, func(dir string) error { _, _, err := ReadRun(dir); return err }},
		{ManifestFile, func(dir string) error { _, _, err := ReadRun(dir); return err }},
		{ManifestFile, func(dir string) error { _, _, err := ReadForResume(dir); return err }},
		{RecordsFile, func(dir string) error { _, err := ReadRecords(filepath.Join(dir, RecordsFile)); return err }},
		{RecordsFile, func(dir string) error { _, _, err := ReadForResume(dir); return err }},
		{RecordsFile, func(dir string) error { _, err := Reopen(dir); return err }},
		{CellsFile, func(dir string) error { _, err := ReadCellLogs(filepath.Join(dir, CellsFile)); return err }},
		{TelemetryFile, func(dir string) error { _, err := ReadSamples(filepath.Join(dir, TelemetryFile)); return err }},
	}
	for kind, place := range plant {
		for _, rd := range readers {
			t.Run(kind+"/"+rd.file, func(t *testing.T) {
				dir := t.TempDir()
				r, err := Create(dir, manifest("a"))
				if err != nil {
					t.Fatal(err)
				}
				if err := r.WriteResults(servebench.Results{}); err != nil {
					t.Fatal(err)
				}
				r.Close()
				path := filepath.Join(dir, rd.file)
				os.Remove(path)
				place(t, path)
				done := make(chan error, 1)
				go func() { done <- rd.read(dir) }()

				select {
				case err = <-done:
				case <-time.After(20 * time.Second): // a failure detector, not a wait: a refusal takes microseconds
					t.Fatalf("reading a run folder whose %s is a %s did not return", rd.file, kind)
				}
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want[kind]) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, path, want[kind])
				}
			})
		}
	}
}
