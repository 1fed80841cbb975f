//go:build linux

package openai

import (
	_ "unsafe" // go:linkname
)

// The runtime's own bracket for a system call known to sleep (ppollBlocking, epollWaitBlocking):
// entersyscallblock hands the goroutine's P to another thread at once. syscall.Syscall's
// entersyscall keeps it until the runtime's monitor thread takes it back, 20 µs to 10 ms later,
// and meanwhile every goroutine that needs that P waits. Both functions are kept for programs
// outside the standard library (go.dev/issue/67401). Between the two a caller must not grow
// its stack or allocate (nosplit, a raw system call only).
//
//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// nanotime is the runtime's monotonic clock (CLOCK_MONOTONIC, the clock of the reactor's
// timerfds), read through the vDSO without a system call; kept for programs outside the
// standard library like the two above.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
