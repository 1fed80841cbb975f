package host

import "runtime"

// cpus is the Go runtime's GOMAXPROCS as the process starts: the CPUs this process may
// use (its affinity mask and container limit), or what the GOMAXPROCS variable says.
var cpus = runtime.GOMAXPROCS(0)

// CPUs is how many CPUs this process may use: what CPU shares are measured against.
func CPUs() int { return cpus }
