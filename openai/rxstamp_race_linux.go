//go:build race

package openai

import "syscall"

// raceIOSync gives the race detector the happens-before edge it models for every socket read:
// the standard library's reads (syscall.Read) mark "this data was written before it was read",
// recvmsg does not. A zero-byte read on the same socket consumes nothing and carries the mark.
// Only race-detector builds pay this extra system call.
func raceIOSync(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }

// raceWriteSync is raceIOSync's other half, for a write that is a raw system call (sendNow): the
// standard library's writes mark "what was written before is visible to the reader"; a zero-byte
// write on the same socket sends nothing and carries the mark.
func raceWriteSync(fd uintptr) { _, _ = syscall.Write(int(fd), nil) }
