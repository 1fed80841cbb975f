package main

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// One interrupt that arrives twice at once (timeout -s INT signals the process and its group)
// counts once: the run stops sending and writes what it measured instead of exiting at once.
// A second interrupt a second or more later still quits at once. On virtual time.
func TestRepeatedSignalWithinASecondCountsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan os.Signal, 4)
		var first, second atomic.Int32
		done := make(chan struct{})
		go func() {
			watchInterrupts(ch, func() { first.Add(1) }, func() { second.Add(1) })
			close(done)
		}()
		ch <- os.Interrupt // to the process
		ch <- os.Interrupt // and again to its group
		synctest.Wait()
		if first.Load() != 1 || second.Load() != 0 {
			t.Fatalf("two signals at once: first %d, second %d; want one interrupt, no exit", first.Load(), second.Load())
		}
		time.Sleep(999 * time.Millisecond)
		ch <- syscall.SIGTERM // still within the second: the same interrupt
		synctest.Wait()
		if second.Load() != 0 {
			t.Fatal("a signal 999 ms after the first exited")
		}
		time.Sleep(time.Millisecond)
		ch <- os.Interrupt // a person pressing Ctrl-C again
		<-done
		if first.Load() != 1 || second.Load() != 1 {
			t.Fatalf("a second Ctrl-C 1 s later: first %d, second %d; want it to quit", first.Load(), second.Load())
		}
	})
}
