//go:build !unix

package store

import (
	"errors"
	"os"
	"path/filepath"
)

// lockDir creates the folder's LockFile exclusively: it exists while a process writes the run
// folder.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, ErrLocked
	}
	return f, err
}

// unlockDir closes and removes the lock file.
func unlockDir(f *os.File) error {
	return errors.Join(f.Close(), os.Remove(f.Name()))
}

// staleHint tells how to clear a lock a killed process left behind.
func staleHint(dir string) string {
	return "; if no servebench process is running, a killed one left " + filepath.Join(dir, LockFile) + " behind: delete it"
}
