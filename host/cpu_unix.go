//go:build unix

package host

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used so far (user + system); false where unknown.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
