package host

import (
	"errors"
	"fmt"
	"syscall"
)

// ClientNice is the scheduling priority (nice value) a measuring client asks for: above other
// processes' default 0, so that a busy machine delays the reads that stamp responses less. The
// kernel's receive stamps do not depend on it; how soon the client reads does (a stream read
// after its next event arrived is stamped late by one gap between events).
const ClientNice = -10

// PrepareClient readies this process to measure, as every measuring command (run, worker,
// selfcheck) does before it sends: RaisePriority(ClientNice), then ShortSlices. It returns
// RaisePriority's sentence for run.json.
func PrepareClient() string {
	_, sentence := RaisePriority(ClientNice)
	ShortSlices()
	return sentence
}

// RaisePriority sets every thread of this process to nice value n when it is higher priority
// than the current one and the system allows it (root, CAP_SYS_NICE or RLIMIT_NICE). It
// returns the nice value in effect afterwards and a sentence for run.json saying what happened.
func RaisePriority(n int) (int, string) {
	cur, ok := nice()
	if !ok {
		return 0, "scheduling priority unknown on this system"
	}
	if cur <= n {
		return cur, fmt.Sprintf("nice %d (already at or above the %d servebench asks for)", cur, n)
	}
	if err := setNice(n); err != nil {
		why := err.Error()
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			why = "raising it needs root, CAP_SYS_NICE or a higher RLIMIT_NICE"
		}
		if now, ok := nice(); ok && now != cur {
			return now, fmt.Sprintf("nice %d (partly raised toward %d: %s)", now, n, why)
		}
		return cur, fmt.Sprintf("nice %d (not raised to %d: %s); other busy processes on this machine can delay the client's reads", cur, n, why)
	}
	return n, fmt.Sprintf("nice %d (raised from %d so that other processes delay the client's reads less)", n, cur)
}
