package store

import (
	"errors"
	"fmt"
	"os"
)

// LockFile is the file that stands for a run folder's lock on systems without advisory locks
// (not Unix); on Unix the folder itself is locked and nothing is written into it.
const LockFile = ".servebench.lock"

// ErrLocked marks the error of Lock when another process is writing the run folder.
var ErrLocked = errors.New("run folder in use")

// DirLock is a run folder held by this process: while it is held no other servebench process
// can take it (a second --resume of the folder, a recomputation that would replace its
// results). On Unix it is an advisory lock (flock) on the folder itself, which dies with the
// process, so a killed run leaves nothing to clean up; elsewhere LockFile is created exclusively
// and removed by Release, and one a killed process left must be deleted by hand.
type DirLock struct {
	f *os.File
}

// Lock takes dir's lock for this process, or refuses with ErrLocked when another holds it.
func Lock(dir string) (*DirLock, error) {
	f, err := lockDir(dir)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("%w: %s is being written by another servebench process; wait for it to finish or stop it, then try again (two processes writing one run folder would mix their requests)%s",
			ErrLocked, dir, staleHint(dir))
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return &DirLock{f: f}, nil
}

// Release gives the lock up. It is safe on a nil lock and more than once.
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockDir(l.f)
	l.f = nil
	return err
}
