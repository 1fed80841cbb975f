//go:build !unix

package openai

import "time"

func processCPU() (time.Duration, bool) { return 0, false }

type usage struct {
	cpu       time.Duration
	csw, flts int64
}

func (u usage) sub(v usage) usage { return usage{u.cpu - v.cpu, u.csw - v.csw, u.flts - v.flts} }

func processUsage() (usage, bool) { return usage{}, false }
