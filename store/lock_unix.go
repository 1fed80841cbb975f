//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock (flock) on the run folder itself, without waiting:
// nothing is written into the folder, and the lock is released when the process ends, however
// it ends.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil
}

// unlockDir releases the lock.
func unlockDir(f *os.File) error { return f.Close() }

// staleHint is what the refusal adds about a stale lock: nothing, a dead process's lock is gone.
func staleHint(string) string { return "" }
