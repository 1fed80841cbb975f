package host

import "runtime"

// cpus is the Go runtime's own GOMAXPROCS before main could change it: the CPUs this process may
// use (its affinity mask and container limit), or what the GOMAXPROCS variable says.
var cpus = runtime.GOMAXPROCS(0)

// CPUs is how many CPUs this process may use: what CPU shares are measured against. The
// scheduler's Ps may be more (servebench runs more Ps than CPUs so that arriving bytes are
// noticed at once).
func CPUs() int { return cpus }
