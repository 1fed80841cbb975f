package stats

import (
	"math"

	"github.com/servebench/servebench"
)

// ClockOffset is one NTP-style exchange between a coordinator and a worker: the coordinator
// sends at t1 (its clock), the worker receives at t2 and answers at t3 (its clock), the answer
// arrives at t4 (the coordinator's clock); all in nanoseconds.
//
//	offset      = ((t2 − t1) + (t3 − t4)) / 2   worker clock − coordinator clock (s)
//	uncertainty = ((t4 − t1) − (t3 − t2)) / 2   half the network round trip (s)
//
// The true offset lies within ±uncertainty of offset whatever the split of the round trip
// between the two directions.
func ClockOffset(t1, t2, t3, t4 int64) (offset, uncertainty float64) {
	offset = (float64(t2-t1) + float64(t3-t4)) / 2 / 1e9
	uncertainty = math.Max(0, (float64(t4-t1)-float64(t3-t2))/2/1e9)
	return offset, uncertainty
}

// ClockAgreement says how well the workers' clocks were put on the coordinator's axis:
// drift is the largest change of one worker's measured offset between two of its
// measurements (s), uncertainty the largest uncertainty of any measurement (s). A request's
// own times never cross machines; drift + uncertainty bounds the error of placing a worker's
// request on the shared axis (windows, throughput) between two measurements.
func ClockAgreement(workers []servebench.Worker) (drift, uncertainty float64) {
	for _, w := range workers {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range w.Clock {
			lo, hi = math.Min(lo, c.OffsetSeconds), math.Max(hi, c.OffsetSeconds)
			uncertainty = math.Max(uncertainty, c.UncertaintySeconds)
		}
		if hi > lo {
			drift = math.Max(drift, hi-lo)
		}
	}
	return drift, uncertainty
}
