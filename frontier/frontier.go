package frontier

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// Point is one measured concurrency level of a workload, on the buyer's axes.
type Point struct {
	CellID      string `json:"cell_id"`
	Concurrency int    `json:"concurrency"`
	// PerUserTPS is the mean generation speed of a request (tokens/s per user: output tokens
	// after the first ÷ decode time, the "interactivity" axis), with its 95% interval.
	PerUserTPS     float64              `json:"per_user_tps"`
	PerUserTPSCI95 *servebench.Interval `json:"per_user_tps_ci95,omitempty"`
	// OutputTPSPerGPU is the cell's system output throughput ÷ the replica's GPUs (tokens/s
	// per GPU), with its 95% interval divided alike.
	OutputTPSPerGPU     float64              `json:"output_tps_per_gpu"`
	OutputTPSPerGPUCI95 *servebench.Interval `json:"output_tps_per_gpu_ci95,omitempty"`
	// PerUserCI95Withheld and OutputCI95Withheld are set where the cell had that interval but
	// fewer requests behind it than stats.MinIntervalSamples (the mean's values; the window's
	// successful requests for throughput): the interval is then left out (nil) and written
	// "n<min", as a percentile from too small a sample is.
	PerUserCI95Withheld bool `json:"per_user_tps_ci95_withheld,omitempty"`
	OutputCI95Withheld  bool `json:"output_tps_per_gpu_ci95_withheld,omitempty"`
	// InputTPSPerGPU is (total − output throughput) ÷ GPUs: prompt tokens/s per GPU.
	InputTPSPerGPU float64 `json:"input_tps_per_gpu"`
	// TTFTSeconds is the mean time to first token (s).
	TTFTSeconds float64 `json:"ttft_seconds"`
	// MeasuredJoulesPerOutputToken is the GPUs' sampled energy per output token (J), 0 when
	// GPU power was not sampled.
	MeasuredJoulesPerOutputToken float64 `json:"measured_joules_per_output_token,omitempty"`
	// Verdict is the cell's validity.
	Verdict servebench.Verdict `json:"verdict,omitempty"`
	// Pareto marks a point no other usable point beats on both axes (as fast per user and as
	// much per GPU, one of them strictly more). An invalid cell is never on the frontier.
	Pareto    bool      `json:"pareto"`
	Economics Economics `json:"economics"`
}

// Curve is the frontier of one workload (context × output tokens): its measured points by
// per-user speed, slowest first.
type Curve struct {
	ContextTokens int `json:"context_tokens"`
	OutputTokens  int `json:"output_tokens"`
	// Population names the use case of a curve of user populations (its points' Concurrency is
	// a number of users, each pausing between turns, not of requests in flight); "" for a curve
	// of concurrency levels.
	Population string  `json:"population,omitempty"`
	Points     []Point `json:"points"`
}

// usable: a point that may stand on the frontier and in a table of measured rows.
func usable(p Point) bool {
	return p.Verdict != servebench.VerdictInvalid && p.PerUserTPS > 0 && p.OutputTPSPerGPU > 0
}

// Frontier returns the Pareto-optimal points, slowest per user first (so the throughput per
// GPU falls along it).
func (c Curve) Frontier() []Point {
	var out []Point
	for _, p := range c.Points {
		if p.Pareto {
			out = append(out, p)
		}
	}
	return out
}

// eligible is a cell that measures a concurrency level in closed loop (the sweep's, a capacity
// search's, or a fixed-count run's levels) or a population of users (not dedicated bursts,
// arrival rates, or sessions).
func eligible(c *servebench.CellResult) bool {
	if c.Skipped || c.RequestsSucceeded == 0 || c.Concurrency <= 0 || c.RatePerSecond > 0 || c.Turn > 0 {
		return false
	}
	if c.GenerationSpeedTPS.Count == 0 {
		return false // its speed per user is unknown (not streamed, or a tool that did not report it), not 0
	}
	switch c.Kind {
	case servebench.KindSession, servebench.KindRate, servebench.KindDataset, servebench.KindTrace:
		return false
	}
	return c.LoadMode == servebench.ModeSustained || c.LoadMode == servebench.ModeFixed || c.LoadMode == servebench.ModeUsers
}

// population is the use case a population cell measures users of; "" for any other cell.
func population(c *servebench.CellResult) string {
	if c.LoadMode == servebench.ModeUsers {
		return c.Scenario
	}
	return ""
}

// Curves builds one Curve per workload from the cells, each point priced by h. Of two cells at
// the same workload and level (a sweep cell and a capacity search's), the one with more
// successful requests stands.
func Curves(cells []servebench.CellResult, h Hardware) []Curve {
	type key struct {
		ctx, out, conc int
		pop            string
	}
	best := map[key]*servebench.CellResult{}
	var order []key
	for i := range cells {
		c := &cells[i]
		if !eligible(c) {
			continue
		}
		k := key{c.ContextTokens, c.OutputTokens, c.Concurrency, population(c)}
		if prev, ok := best[k]; ok {
			if c.RequestsSucceeded > prev.RequestsSucceeded {
				best[k] = c
			}
			continue
		}
		best[k] = c
		order = append(order, k)
	}
	type wkey struct {
		ctx, out int
		pop      string
	}
	byWorkload := map[wkey]*Curve{}
	var curves []*Curve
	for _, k := range order {
		w := wkey{k.ctx, k.out, k.pop}
		cv, ok := byWorkload[w]
		if !ok {
			cv = &Curve{ContextTokens: k.ctx, OutputTokens: k.out, Population: k.pop}
			byWorkload[w] = cv
			curves = append(curves, cv)
		}
		cv.Points = append(cv.Points, point(best[k], h))
	}
	out := make([]Curve, 0, len(curves))
	for _, cv := range curves {
		slices.SortFunc(cv.Points, func(a, b Point) int {
			if a.PerUserTPS != b.PerUserTPS {
				if a.PerUserTPS < b.PerUserTPS {
					return -1
				}
				return 1
			}
			return a.Concurrency - b.Concurrency
		})
		markPareto(cv.Points)
		out = append(out, *cv)
	}
	slices.SortFunc(out, func(a, b Curve) int {
		if a.Population != b.Population { // concurrency levels first, then each use case's users
			return strings.Compare(a.Population, b.Population)
		}
		if a.ContextTokens != b.ContextTokens {
			return a.ContextTokens - b.ContextTokens
		}
		return a.OutputTokens - b.OutputTokens
	})
	return out
}

func point(c *servebench.CellResult, h Hardware) Point {
	p := Point{CellID: c.ID(), Concurrency: c.Concurrency, PerUserTPS: c.GenerationSpeedTPS.Mean,
		OutputTPSPerGPU: PerGPU(c.SystemOutputThroughputTPS, h.GPUs), InputTPSPerGPU: PerGPU(math.Max(0, c.TotalThroughputTPS-c.SystemOutputThroughputTPS), h.GPUs),
		TTFTSeconds: c.TTFTSeconds.Mean, Verdict: c.Validity.Verdict}
	if iv := c.GenerationSpeedTPS.CI95; iv != nil {
		if stats.IntervalShown(c.GenerationSpeedTPS.Count) {
			p.PerUserTPSCI95 = iv
		} else {
			p.PerUserCI95Withheld = true
		}
	}
	if iv := c.SystemOutputThroughputCI95; iv != nil {
		if stats.IntervalShown(c.RequestsSucceeded) {
			p.OutputTPSPerGPUCI95 = &servebench.Interval{Low: PerGPU(iv.Low, h.GPUs), High: PerGPU(iv.High, h.GPUs)}
		} else {
			p.OutputCI95Withheld = true
		}
	}
	if e := c.EnergyJoules; e != nil && e.JoulesPerOutputToken > 0 {
		p.MeasuredJoulesPerOutputToken = e.JoulesPerOutputToken
	}
	p.Economics = h.Economics(p.OutputTPSPerGPU, p.InputTPSPerGPU)
	return p
}

// markPareto sets Pareto on every usable point that no other usable point dominates: q
// dominates p when q.PerUserTPS ≥ p.PerUserTPS and q.OutputTPSPerGPU ≥ p.OutputTPSPerGPU, one
// of them strictly greater.
func markPareto(ps []Point) {
	for i := range ps {
		if !usable(ps[i]) {
			continue
		}
		dominated := false
		for j := range ps {
			if i == j || !usable(ps[j]) {
				continue
			}
			a, b := ps[i], ps[j]
			if b.PerUserTPS >= a.PerUserTPS && b.OutputTPSPerGPU >= a.OutputTPSPerGPU &&
				(b.PerUserTPS > a.PerUserTPS || b.OutputTPSPerGPU > a.OutputTPSPerGPU) {
				dominated = true
				break
			}
		}
		ps[i].Pareto = !dominated
	}
}

// ReadingKind says how a Reading was obtained.
type ReadingKind string

const (
	// ReadMeasured: a measured frontier point meets the target speed; its throughput is the
	// answer (the fastest-throughput point at least as fast per user as the target).
	ReadMeasured ReadingKind = "measured"
	// ReadInterpolated: the target lies between two frontier points; the answer is read on the
	// straight line between them and is not a measurement.
	ReadInterpolated ReadingKind = "interpolated"
	// ReadOutOfRange: no measured point is as fast per user as the target.
	ReadOutOfRange ReadingKind = "out_of_range"
)

// Reading is a curve read at a target per-user speed.
type Reading struct {
	TargetPerUserTPS float64     `json:"target_per_user_tps"`
	Kind             ReadingKind `json:"kind"`
	// OutputTPSPerGPU (with its interval) is the throughput per GPU at the target: a measured
	// point's, or for ReadInterpolated the linear interpolation between Below (slower, more
	// throughput) and Above (faster, less), the interval's ends interpolated alike.
	OutputTPSPerGPU     float64              `json:"output_tps_per_gpu,omitempty"`
	OutputTPSPerGPUCI95 *servebench.Interval `json:"output_tps_per_gpu_ci95,omitempty"`
	// OutputCI95Withheld is set when a point the reading rests on had its interval withheld
	// (Point.OutputCI95Withheld): the reading then has none either, and says "n<min".
	OutputCI95Withheld bool    `json:"output_tps_per_gpu_ci95_withheld,omitempty"`
	InputTPSPerGPU     float64 `json:"input_tps_per_gpu,omitempty"`
	// Level is the concurrency level the reading stands for: the measured point's, or
	// interpolated between Below's and Above's like the throughput (requests in flight on one
	// replica at the target speed; users, for a curve of user populations). Fleet turns it into
	// users by UsersPerLevel.
	Level float64 `json:"level,omitempty"`
	// Below and Above are the frontier points either side of an interpolated reading.
	Below *Point `json:"below,omitempty"`
	Above *Point `json:"above,omitempty"`
	// Measured is the measured frontier point that meets the target with the most throughput
	// (for an interpolated reading, Above): the answer when only measured rows may be cited.
	Measured  *Point    `json:"measured,omitempty"`
	Economics Economics `json:"economics"`
	// Verdict is the worst validity of the points the reading rests on.
	Verdict servebench.Verdict `json:"verdict,omitempty"`
	Note    string             `json:"note,omitempty"`
}

// At reads the curve's frontier at targetTPS tokens/s per user, priced by h. Along the
// frontier throughput per GPU falls as per-user speed rises, so below the slowest frontier
// point the answer is that point (measured: it is faster than asked), between two points it is
// interpolated linearly, and above the fastest it does not exist (no extrapolation).
func (c Curve) At(targetTPS float64, h Hardware) Reading {
	r := Reading{TargetPerUserTPS: targetTPS}
	f := c.Frontier()
	if len(f) == 0 {
		r.Kind, r.Note = ReadOutOfRange, "no usable measured point"
		return r
	}
	// the first frontier point at least as fast as the target: the most throughput that meets it
	i := slices.IndexFunc(f, func(p Point) bool { return p.PerUserTPS >= targetTPS })
	if i < 0 {
		r.Kind = ReadOutOfRange
		r.Note = fmt.Sprintf("the fastest measured point gives %.1f tok/s per user (concurrency %d); nothing measured reaches %.1f", f[len(f)-1].PerUserTPS, f[len(f)-1].Concurrency, targetTPS)
		return r
	}
	hi := f[i]
	r.Measured = &hi
	if i == 0 || hi.PerUserTPS == targetTPS {
		r.Kind = ReadMeasured
		r.OutputTPSPerGPU, r.OutputTPSPerGPUCI95, r.InputTPSPerGPU, r.Verdict = hi.OutputTPSPerGPU, hi.OutputTPSPerGPUCI95, hi.InputTPSPerGPU, hi.Verdict
		r.OutputCI95Withheld = hi.OutputCI95Withheld
		r.Level = float64(hi.Concurrency)
		r.Economics = h.Economics(r.OutputTPSPerGPU, r.InputTPSPerGPU)
		return r
	}
	lo := f[i-1]
	t := (targetTPS - lo.PerUserTPS) / (hi.PerUserTPS - lo.PerUserTPS)
	r.Kind, r.Below, r.Above = ReadInterpolated, &lo, &hi
	r.OutputTPSPerGPU = Lerp(lo.OutputTPSPerGPU, hi.OutputTPSPerGPU, t)
	r.InputTPSPerGPU = Lerp(lo.InputTPSPerGPU, hi.InputTPSPerGPU, t)
	r.Level = Lerp(float64(lo.Concurrency), float64(hi.Concurrency), t)
	r.OutputCI95Withheld = lo.OutputCI95Withheld || hi.OutputCI95Withheld
	if lo.OutputTPSPerGPUCI95 != nil && hi.OutputTPSPerGPUCI95 != nil {
		r.OutputTPSPerGPUCI95 = &servebench.Interval{Low: Lerp(lo.OutputTPSPerGPUCI95.Low, hi.OutputTPSPerGPUCI95.Low, t), High: Lerp(lo.OutputTPSPerGPUCI95.High, hi.OutputTPSPerGPUCI95.High, t)}
	}
	r.Verdict = lo.Verdict.Worse(hi.Verdict)
	r.Economics = h.Economics(r.OutputTPSPerGPU, r.InputTPSPerGPU)
	return r
}

// Lerp is a + t·(b − a): the straight line between two frontier points, t ∈ [0, 1] the
// fraction of the way in per-user speed.
func Lerp(a, b, t float64) float64 { return a + t*(b-a) }

// Fleet is the deployment a reading gives for a number of users (capacity.UsersPerSlot's
// users: active users, usersPerSlot of them per request in flight).
type Fleet struct {
	Users int `json:"users"`
	// UsersPerReplica = the reading's Level × UsersPerLevel: users one replica serves at the
	// target speed.
	UsersPerReplica float64 `json:"users_per_replica"`
	// UsersPerSlot is the users one request in flight serves (0 for a curve of user
	// populations, whose level already counts users).
	UsersPerSlot float64 `json:"users_per_slot,omitempty"`
	Replicas     int     `json:"replicas"`
	GPUs         int     `json:"gpus"`
	// MonthlyUSD is MonthlyUSD of the GPUs at the primary price; 0 without one.
	MonthlyUSD float64 `json:"monthly_usd,omitempty"`
	// Interpolated is set when the reading is.
	Interpolated bool `json:"interpolated,omitempty"`
}

// UsersPerLevel is how many users one unit of a curve's level stands for: usersPerSlot
// (capacity.UsersPerSlot: active users per request in flight) for a curve of concurrency
// levels, 1 for a curve of user populations (pop ≠ ""), whose level counts users already. It
// makes the frontier's users Capacity Planning's users.
func UsersPerLevel(pop string, usersPerSlot float64) float64 {
	if pop != "" {
		return 1
	}
	return usersPerSlot
}

// UsersDefinition says what a user is, beside a figure counted in users: Capacity Planning's
// active user, usersPerSlot of them per request in flight (capacity.UsersPerSlot), or for a
// population curve (pop ≠ "") the measured users themselves.
func UsersDefinition(pop string, usersPerSlot float64) string {
	if pop != "" {
		return "the population's own users, each pausing between turns"
	}
	n := strconv.FormatFloat(usersPerSlot, 'f', -1, 64)
	noun := "active users"
	if n == "1" {
		noun = "active user"
	}
	return "as in Capacity Planning, " + n + " " + noun + " per request in flight, --users-per-slot"
}

// Fleet sizes users users at the reading's speed on h, for a reading of a curve whose
// population is pop ("" for concurrency levels) and usersPerSlot active users per request in
// flight (capacity.UsersPerSlot):
//
//	users per replica = Level × UsersPerLevel(pop, usersPerSlot)
//	replicas          = ⌈users ÷ users per replica⌉
//
// (ReplicasFor, MonthlyUSD); ok is false for a reading out of range.
func (r Reading) Fleet(users int, h Hardware, pop string, usersPerSlot float64) (Fleet, bool) {
	perLevel := UsersPerLevel(pop, usersPerSlot)
	if r.Kind == ReadOutOfRange || r.Level <= 0 || perLevel <= 0 {
		return Fleet{}, false
	}
	perReplica := r.Level * perLevel
	f := Fleet{Users: users, UsersPerReplica: perReplica, Replicas: ReplicasFor(users, perReplica), Interpolated: r.Kind == ReadInterpolated}
	if pop == "" {
		f.UsersPerSlot = usersPerSlot
	}
	f.GPUs = f.Replicas * h.GPUs
	if p, ok := h.Primary(); ok {
		f.MonthlyUSD = MonthlyUSD(f.GPUs, p.USDPerGPUHour)
	}
	return f, true
}
