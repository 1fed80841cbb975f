package frontier

import (
	"slices"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// DefaultTTFTCaps are the TTFT caps (s) of the measured-rows-only table: InferenceX's
// "first-token limits" (2, 5, 10, 15 and 20 s).
func DefaultTTFTCaps() []float64 { return []float64{2, 5, 10, 15, 20} }

// DefaultMinPerUserTPS is the per-user speed (tokens/s) a row of the first-token table must
// also reach: InferenceX's floor for fixed-length workloads (35 tok/s per user).
const DefaultMinPerUserTPS = 35.0

// DefaultSpeedFloors are the SLO tiers' per-user speed floors (tokens/s): Artificial Analysis
// AA-AgentPerf's DeepSeek V3.2 tiers (30, 100, 300) and two from its V4 Pro range (20, 50). A
// use case's own speed threshold is added to them.
func DefaultSpeedFloors() []float64 { return []float64{20, 30, 50, 100, 300} }

// DefaultTTFTCeiling is the SLO tiers' TTFT ceiling (s) where no use case of the workload sets
// one: AA-AgentPerf's 15 s.
const DefaultTTFTCeiling = 15.0

// FirstTokenRow is the measured-rows-only answer for one TTFT cap: the cheapest measured cell
// (most output tokens/s per GPU) whose mean TTFT is within the cap and whose mean per-user
// speed reaches MinPerUserTPS. Never interpolated.
type FirstTokenRow struct {
	TTFTCapSeconds float64 `json:"ttft_cap_seconds"`
	MinPerUserTPS  float64 `json:"min_per_user_tps"`
	// Point is the cell; nil when no measured cell meets the cap.
	Point *Point `json:"point,omitempty"`
}

// FirstTokenLimits answers each cap from the curve's usable measured points (low-confidence
// ones included and marked by their Verdict; invalid ones never).
func (c Curve) FirstTokenLimits(caps []float64, minPerUserTPS float64) []FirstTokenRow {
	var rows []FirstTokenRow
	for _, cp := range caps {
		row := FirstTokenRow{TTFTCapSeconds: cp, MinPerUserTPS: minPerUserTPS}
		for i, p := range c.Points {
			if !usable(p) || p.TTFTSeconds > cp || p.PerUserTPS < minPerUserTPS {
				continue
			}
			if row.Point == nil || p.OutputTPSPerGPU > row.Point.OutputTPSPerGPU {
				row.Point = &c.Points[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// Tier is one SLO tier of a workload: the most users whose requests keep the speed floor and
// the TTFT ceiling, from measured cells only. Users are capacity.UsersPerSlot's (active users,
// usersPerSlot per request in flight), as in Capacity Planning and Fleet.
type Tier struct {
	// UseCase names the use case whose ceiling (and statistic) the tier takes; "" for the
	// defaults.
	UseCase           string               `json:"use_case,omitempty"`
	Statistic         servebench.Statistic `json:"statistic"`
	SpeedFloorTPS     float64              `json:"speed_floor_tps"`
	TTFTCeilingSecond float64              `json:"ttft_ceiling_seconds"`
	// Level is the highest measured concurrency level meeting both (requests in flight; users
	// of a population curve); 0 when none does. CellID names it. Lower is set when the highest
	// level measured still meets both: the capacity is at least Users.
	Level  int    `json:"level"`
	CellID string `json:"cell_id,omitempty"`
	Lower  bool   `json:"at_least,omitempty"`
	// Users = Level × UsersPerLevel: the users a replica holds at the tier.
	Users float64 `json:"users"`
	// UsersPerGPU = Users ÷ GPUs; UsersPerMW = Users ÷ (GPUs × all-in kW ÷ 1000) (0 when the
	// kW is unknown); UsersPerUSDHour = Users ÷ (GPUs × primary $/GPU·h) (0 without a price).
	UsersPerGPU     float64            `json:"users_per_gpu"`
	UsersPerMW      float64            `json:"users_per_mw,omitempty"`
	UsersPerUSDHour float64            `json:"users_per_usd_hour,omitempty"`
	Verdict         servebench.Verdict `json:"verdict,omitempty"`
}

// Tiers computes the SLO tiers of one workload from its cells (pop: the use case of a curve of
// user populations, "" for concurrency levels). uc is the use case measured at this workload
// (nil when none): its TTFT ceiling, speed floor and statistic replace the defaults.
// usersPerSlot is capacity.UsersPerSlot of the run.
func Tiers(cells []servebench.CellResult, ctx, out int, pop string, uc *servebench.CapacityResult, floors []float64, h Hardware, usersPerSlot float64) []Tier {
	st, ceiling, name := servebench.StatMean, DefaultTTFTCeiling, ""
	floors = slices.Clone(floors)
	if uc != nil {
		name = uc.UseCase
		if uc.Statistic != "" {
			st = uc.Statistic
		}
		if t := uc.Thresholds.TTFTSecondsMax; t != nil {
			ceiling = *t
		}
		if f := uc.Thresholds.GenerationSpeedTPSMin; f != nil && !slices.Contains(floors, *f) {
			floors = append(floors, *f)
		}
	}
	slices.Sort(floors)
	var levels []*servebench.CellResult
	byLevel := map[int]*servebench.CellResult{}
	for i := range cells {
		c := &cells[i]
		if !eligible(c) || c.ContextTokens != ctx || c.OutputTokens != out || population(c) != pop || c.Validity.Verdict == servebench.VerdictInvalid {
			continue
		}
		if prev, ok := byLevel[c.Concurrency]; !ok || c.RequestsSucceeded > prev.RequestsSucceeded {
			byLevel[c.Concurrency] = c
		}
	}
	for _, c := range byLevel {
		levels = append(levels, c)
	}
	slices.SortFunc(levels, func(a, b *servebench.CellResult) int { return a.Concurrency - b.Concurrency })
	var tiers []Tier
	for _, f := range floors {
		t := Tier{UseCase: name, Statistic: st, SpeedFloorTPS: f, TTFTCeilingSecond: ceiling}
		for i, c := range levels {
			ttft, ok1 := c.TTFTSeconds.Pick(st)
			speed, ok2 := pickSpeed(c.GenerationSpeedTPS, st)
			if !ok1 || !ok2 || ttft > ceiling || speed < f {
				continue
			}
			t.Level, t.CellID, t.Verdict, t.Lower = c.Concurrency, c.ID(), c.Validity.Verdict, i == len(levels)-1
		}
		if t.Level > 0 {
			t.Users = float64(t.Level) * UsersPerLevel(pop, usersPerSlot)
			t.UsersPerGPU = PerGPU(t.Users, h.GPUs)
			if h.AllInKWPerGPU > 0 {
				t.UsersPerMW = t.Users / (float64(h.GPUs) * h.AllInKWPerGPU / 1000)
			}
			if p, ok := h.Primary(); ok {
				t.UsersPerUSDHour = t.Users / (float64(h.GPUs) * p.USDPerGPUHour)
			}
		}
		tiers = append(tiers, t)
	}
	return tiers
}

// pickSpeed reads the per-user speed at a statistic the way a use case's threshold reads it.
func pickSpeed(s servebench.Summary, st servebench.Statistic) (float64, bool) {
	if s.Count == 0 {
		return 0, false
	}
	return s.Pick(st)
}

// Analysis is the buyer's frontier of one run: the hardware inputs, each workload's curve, its
// measured-rows-only table and its SLO tiers.
type Analysis struct {
	Hardware Hardware `json:"hardware"`
	// UsersPerSlot is the run's capacity.UsersPerSlot: the active users one request in flight
	// serves, by which fleets and SLO tiers count users (as Capacity Planning does).
	UsersPerSlot float64    `json:"users_per_slot"`
	Curves       []Workload `json:"workloads"`
}

// Workload is one context × output workload's frontier, first-token table and tiers.
type Workload struct {
	Curve
	FirstToken []FirstTokenRow `json:"first_token_limits"`
	Tiers      []Tier          `json:"slo_tiers"`
}

// Input is what Analyze needs from a run.
type Input struct {
	Cells       []servebench.CellResult
	Capacity    []servebench.CapacityResult
	Plan        servebench.SizingPlan
	DeclaredGPU string
}

// Analyze builds the run's Analysis with the default caps, floors and ceiling. It is pure.
func Analyze(in Input) Analysis {
	h := Resolve(in.Plan, in.DeclaredGPU)
	a := Analysis{Hardware: h, UsersPerSlot: capacity.UsersPerSlot(in.Plan)}
	for _, cv := range Curves(in.Cells, h) {
		w := Workload{Curve: cv, FirstToken: cv.FirstTokenLimits(DefaultTTFTCaps(), DefaultMinPerUserTPS)}
		var uc *servebench.CapacityResult
		for i := range in.Capacity {
			r := &in.Capacity[i]
			if r.Skipped {
				continue
			}
			if (cv.Population == "" && r.ContextTokens == cv.ContextTokens && r.OutputTokens == cv.OutputTokens) || (cv.Population != "" && r.UseCase == cv.Population) {
				uc = r
				break
			}
		}
		w.Tiers = Tiers(in.Cells, cv.ContextTokens, cv.OutputTokens, cv.Population, uc, DefaultSpeedFloors(), h, a.UsersPerSlot)
		a.Curves = append(a.Curves, w)
	}
	return a
}

// Answer is one workload's answer at a target speed per user: the reading on its frontier and
// the fleet for a number of users (nil when the reading is out of range).
type Answer struct {
	ContextTokens int     `json:"context_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	Population    string  `json:"population,omitempty"`
	Reading       Reading `json:"reading"`
	Fleet         *Fleet  `json:"fleet,omitempty"`
}

// Answers reads every workload of a at targetTPS tokens/s per user and sizes users users
// (a.UsersPerSlot per request in flight) on each: what the report's readings, compare and the
// page's calculator all print.
func (a Analysis) Answers(targetTPS float64, users int) []Answer {
	var out []Answer
	for _, w := range a.Curves {
		ans := Answer{ContextTokens: w.ContextTokens, OutputTokens: w.OutputTokens, Population: w.Population, Reading: w.At(targetTPS, a.Hardware)}
		if f, ok := ans.Reading.Fleet(users, a.Hardware, w.Population, a.UsersPerSlot); ok {
			ans.Fleet = &f
		}
		out = append(out, ans)
	}
	return out
}
