package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/servebench/servebench/host"
)

// TestTimingScheduler: without GOMAXPROCS set, the runtime gets at least timingProcs Ps (and
// never fewer than it had); with it set, the user's value stands. CPU shares are still measured
// against the CPUs the process may use.
func TestTimingScheduler(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMAXPROCS" {
				return v
			}
			return ""
		}
	}
	runtime.GOMAXPROCS(1)
	timingScheduler(env("1"))
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS=1 set by the user: %d Ps, want 1", got)
	}
	timingScheduler(env(""))
	if got := runtime.GOMAXPROCS(0); got != timingProcs {
		t.Fatalf("one P and GOMAXPROCS unset: %d Ps, want %d", got, timingProcs)
	}
	runtime.GOMAXPROCS(timingProcs + 8)
	timingScheduler(env(""))
	if got := runtime.GOMAXPROCS(0); got != timingProcs+8 {
		t.Fatalf("%d Ps lowered to %d", timingProcs+8, got)
	}
	// The runtime's own default never exceeds the CPUs it may use; the variable can raise it.
	if c := host.CPUs(); c < 1 || c > runtime.NumCPU() && os.Getenv("GOMAXPROCS") == "" {
		t.Fatalf("host.CPUs() = %d with %d CPUs and GOMAXPROCS unset", c, runtime.NumCPU())
	}
}
