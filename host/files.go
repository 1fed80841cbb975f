package host

import "fmt"

// SpareFiles is how many files a run needs beside one socket per concurrent request: the run
// folder, telemetry scrapes, the discovery and tokenizer connections, pre-dialled connections
// waiting for a retry, and the runtime's own descriptors.
const SpareFiles = 64

// EnsureOpenFiles makes sure the process may hold need open files. It raises the soft limit
// (RLIMIT_NOFILE) towards the hard one where the system allows it, and otherwise returns an
// error that names the numbers and the fix, so that a run never fails request by request with
// "too many open files". On systems without the limit it returns nil.
func EnsureOpenFiles(need int) error {
	soft, hard, ok := openFileLimit()
	if !ok || uint64(need) <= soft {
		return nil
	}
	if uint64(need) <= hard {
		if err := setOpenFileLimit(uint64(need)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("this process may open at most %d files, sockets included (hard limit %d), but the plan needs about %d (%d sockets for requests + %d spare): raise the limit before running (ulimit -n %d; LimitNOFILE=%d for a systemd service; nofile in /etc/security/limits.conf) or lower the concurrency",
		soft, hard, need, need-SpareFiles, SpareFiles, need, need)
}
