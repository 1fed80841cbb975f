package load

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench/stats"
)

// Sizing is how long a sustained cell measures: floors it always meets, a precision it aims
// for, and caps that end the aiming. Zero fields are "no floor" / "no cap"; RelHalfWidth 0 is
// stats.DefaultRelHalfWidth.
type Sizing struct {
	// MinRequests and Rounds are floors: at least max(MinRequests, Rounds × N) measured
	// requests. MinDuration is a floor on the window.
	MinRequests, Rounds int
	MinDuration         time.Duration
	// RelHalfWidth is the precision aimed for: the 95% intervals of output throughput and of
	// mean TTFT within ±RelHalfWidth of their value (0.05 = ±5%).
	RelHalfWidth float64
	// MaxRequests caps the measured requests and MaxDuration the window while aiming for
	// the precision; neither ever cuts the floors.
	MaxRequests int
	MaxDuration time.Duration
}

// Progress is what a sustained cell has measured so far.
type Progress struct {
	// Measured counts measured requests sent so far (finished or in flight; failures
	// included); WindowSeconds is the window so far; MeanE2ESeconds the mean end-to-end
	// latency of the finished successes (0 when none yet).
	Measured       int
	WindowSeconds  float64
	MeanE2ESeconds float64
	// ThroughputRelHalfWidth and TTFTRelHalfWidth are the current 95% intervals' relative
	// half-widths (+Inf when not yet known).
	ThroughputRelHalfWidth, TTFTRelHalfWidth float64
	// A Judge leaves both at 0 when it does not track them (then the floors are enough).
	//
	// Settled is set by a caller whose question is already answered with 95% confidence (a
	// capacity level whose threshold verdict cannot change): precision is then not needed.
	Settled bool
}

// Enough is the rule that ends a sustained cell of concurrency n (the only definition of it;
// the runner's estimates, the capacity search's cost accounting and the simulator use it):
//
//  1. floors, always: Measured ≥ max(MinRequests, Rounds × n), WindowSeconds ≥ MinDuration,
//     and the window rule stats.WindowLongEnough (window ≥ 2 × mean end-to-end latency,
//     ≥ 2 × n measured requests);
//  2. then it is enough when the caller's question is Settled, or both intervals are within
//     ±RelHalfWidth, or a cap is reached (Measured ≥ MaxRequests, WindowSeconds ≥ MaxDuration);
//     with no cap set at all the precision loop is off and the floors are enough.
//
// While no request has succeeded the window rule cannot be judged; the count floors and
// 2 × n requests are then enough (a failing target is not hammered without end).
func (s Sizing) Enough(n int, p Progress) bool {
	if p.Measured < max(s.MinRequests, s.Rounds*n) || p.WindowSeconds < s.MinDuration.Seconds() {
		return false
	}
	if p.MeanE2ESeconds <= 0 {
		// Nothing succeeded yet: more failures teach nothing once the count floors are met.
		return p.Measured >= stats.MinRequestsPerSlot*n
	}
	if !stats.WindowLongEnough(p.WindowSeconds, p.MeanE2ESeconds, p.Measured, n) {
		return false
	}
	target := s.RelHalfWidth
	if target <= 0 {
		target = stats.DefaultRelHalfWidth
	}
	switch {
	case s.MaxRequests <= 0 && s.MaxDuration <= 0:
		return true // no cap: the precision loop is off
	case p.Settled:
		return true
	case p.ThroughputRelHalfWidth <= target && p.TTFTRelHalfWidth <= target:
		return true
	case s.MaxRequests > 0 && p.Measured >= s.MaxRequests:
		return true
	case s.MaxDuration > 0 && p.WindowSeconds >= s.MaxDuration.Seconds():
		return true
	}
	return false
}

// EnoughBursts is the rule that ends a dedicated cell of concurrency n after measured bursts of
// n requests each (the dedicated counterpart of Enough; p's WindowSeconds is the time since the
// first measured burst was released):
//
//  1. the floor, always: measured ≥ floor bursts (the plan's bursts);
//  2. then it is enough when the caller's question is Settled, or the mean-TTFT interval is
//     within ±RelHalfWidth (the precision stats.Assess judges a dedicated cell by; its
//     throughput is not judged) and rests on at least stats.MinIntervalSamples requests (an
//     interval from fewer is not shown, and the cell would be low-confidence for it), or a cap
//     is reached (measured × n ≥ MaxRequests,
//     WindowSeconds ≥ MaxDuration); with no cap set at all the floor is enough.
//
// Before this rule, a dedicated cell stopped at its floor whatever its TTFT interval, and the
// validity rule then marked it low-confidence for the very interval it had not aimed for.
func (s Sizing) EnoughBursts(n, measured, floor int, p Progress) bool {
	if measured < floor {
		return false
	}
	target := s.RelHalfWidth
	if target <= 0 {
		target = stats.DefaultRelHalfWidth
	}
	switch {
	case s.MaxRequests <= 0 && s.MaxDuration <= 0:
		return true
	case p.Settled:
		return true
	case p.TTFTRelHalfWidth <= target && stats.IntervalShown(measured*n):
		return true
	case s.MaxRequests > 0 && measured*n >= s.MaxRequests:
		return true
	case s.MaxDuration > 0 && p.WindowSeconds >= s.MaxDuration.Seconds():
		return true
	}
	return false
}

// Minimum is the fewest requests Enough lets a sustained cell of concurrency n send, warm-up
// included, when every interval is already tight: n warm-up + MeasuredFloor(n) measured. It is
// the estimate behind progress ETAs and the dense-grid cost the capacity search compares itself
// with.
func (s Sizing) Minimum(n int) int {
	return n + s.MeasuredFloor(n)
}

// MeasuredFloor is the fewest measured requests (warm-up excluded) a sustained cell of
// concurrency n takes: max(MinRequests, Rounds × n, stats.MinRequestsPerSlot × n), the count
// floors and the window rule's count together. MeasuredFloorText writes the same formula.
func (s Sizing) MeasuredFloor(n int) int {
	fixed, perSlot := s.floorTerms()
	return max(fixed, perSlot*n)
}

// floorTerms are MeasuredFloor's two terms: a fixed count (MinRequests) and a count per slot
// (the larger of Rounds and stats.MinRequestsPerSlot, times N).
func (s Sizing) floorTerms() (fixed, perSlot int) {
	return s.MinRequests, max(s.Rounds, stats.MinRequestsPerSlot)
}

// MeasuredFloorText writes MeasuredFloor as a formula of the concurrency N, leaving out the
// fixed term where it never binds for N ≥ 1: "2 × N", "max(10, 3 × N)".
func (s Sizing) MeasuredFloorText() string {
	fixed, perSlot := s.floorTerms()
	if fixed <= perSlot {
		return fmt.Sprintf("%d × N", perSlot)
	}
	return fmt.Sprintf("max(%d, %d × N)", fixed, perSlot)
}

// Cap is the most measured requests the rule may ask for at concurrency n when the cap is a
// request count (MaxRequests, at least the floor); math.MaxInt when only time caps it.
func (s Sizing) Cap(n int) int {
	if s.MaxRequests <= 0 {
		return math.MaxInt
	}
	return max(s.MaxRequests, s.Minimum(n)-n)
}
