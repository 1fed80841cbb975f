package store

import (
	"errors"
	"strings"
	"testing"
)

// A run folder's lock is held once: a second Lock (another process, or this one through another
// open file) is refused with ErrLocked and says why; after Release it can be taken
// again.
func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	a, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another servebench process") {
		t.Fatalf("second lock: %v, want ErrLocked saying why", err)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil { // twice is fine
		t.Fatal(err)
	}
	b, err := Lock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	b.Release()
}
