//go:build linux

package host

import (
	"runtime"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestShortSlices: ShortSlices leaves every thread with the short slice, and threads started
// afterwards inherit it, on a kernel that keeps custom slices (6.12 and later); the nice value
// stays as it was.
func TestShortSlices(t *testing.T) {
	slices := func() (short, all int) {
		_ = eachThread(func(tid int) error {
			attr, err := unix.SchedGetAttr(tid, 0)
			if err != nil {
				return nil // exited meanwhile
			}
			all++
			if attr.Runtime == shortSlice {
				short++
			}
			return nil
		})
		return short, all
	}
	nice, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !kernelKeepsSlices(t) {
		t.Skip("this kernel keeps no custom slice for SCHED_NORMAL threads (before 6.12)")
	}
	ShortSlices()
	short, all := slices()
	if short != all {
		t.Fatalf("%d of %d threads have the short slice", short, all)
	}
	// New threads: each goroutine locked to its thread and blocked holds that thread, so
	// all + 4 of them at once need at least 4 threads more than there were.
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	for range all + 4 {
		ready.Add(1)
		done.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-release
		})
	}
	ready.Wait()
	short2, all2 := slices()
	close(release)
	done.Wait()
	if all2 < all+4 {
		t.Fatalf("%d threads with %d goroutines locked to theirs: no new threads to look at", all2, all+4)
	}
	if short2 != all2 {
		t.Errorf("after %d new threads started, %d of %d threads have the short slice", all2-all, short2, all2)
	}
	if after, _ := syscall.Getpriority(syscall.PRIO_PROCESS, 0); after != nice {
		t.Errorf("priority %d after, %d before", after, nice)
	}
}

// kernelKeepsSlices asks for a custom slice on this goroutine's thread and reads it back, then
// restores what the thread had.
func kernelKeepsSlices(t *testing.T) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	was, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Skip(err)
	}
	try := *was
	try.Runtime, try.Flags = 300_000, 0
	if err := unix.SchedSetAttr(0, &try, 0); err != nil {
		t.Skip(err)
	}
	got, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	restore := *was
	restore.Runtime, restore.Flags = 0, 0 // 0: the kernel's default slice again
	if err := unix.SchedSetAttr(0, &restore, 0); err != nil {
		t.Fatal(err)
	}
	return got.Runtime == 300_000
}
