//go:build !unix

package host

import "time"

// CPUTime is unknown here.
func CPUTime() (time.Duration, bool) { return 0, false }
