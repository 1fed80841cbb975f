//go:build unix

package openai

import (
	"syscall"
	"time"
)

// processCPU is the user + system CPU time this process has used.
func processCPU() (time.Duration, bool) {
	u, ok := processUsage()
	return u.cpu, ok
}

// usage is what this process has used so far: CPU time (user + system), context switches (the
// times one of its threads slept or was descheduled) and minor page faults.
type usage struct {
	cpu       time.Duration
	csw, flts int64
}

func (u usage) sub(v usage) usage { return usage{u.cpu - v.cpu, u.csw - v.csw, u.flts - v.flts} }

func processUsage() (usage, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return usage{}, false
	}
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), csw: ru.Nvcsw + ru.Nivcsw, flts: ru.Minflt}, true
}
