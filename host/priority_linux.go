package host

import (
	"os"
	"strconv"
	"syscall"
)

// setNice sets the nice value of every thread of this process (Linux keeps nice per thread;
// threads the runtime starts later inherit it from the thread that starts them).
func setNice(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice)
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// nice reads the calling thread's nice value. Linux's getpriority system call returns
// 20 − nice so that it is never negative (glibc undoes it; the syscall package does not).
func nice() (int, bool) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0, false
	}
	return 20 - p, true
}
