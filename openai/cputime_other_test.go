//go:build !unix

package openai

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
