// Package host answers what the measuring machine itself can carry: how many files (sockets)
// the process may open, and how late its goroutines start running (the Go scheduler's latency,
// read from runtime/metrics). A benchmark is only as good as the client that runs it; these are
// the client's own limits, checked before a run and watched during each cell.
package host
