package capacity

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
)

// Sizing defaults.
const (
	// DefaultUsersPerSlot: each concurrent request slot serves about 4 active users of a chat or
	// coding application (users read and type between requests); the reference reports say 4–5.
	DefaultUsersPerSlot = 4.0
	// HoursPerMonth = 8,760 hours a year / 12.
	HoursPerMonth = 730.0
)

// UsersPerSlot is the one definition of a user servebench sizes for: an active user, of whom one
// concurrent request slot (one request in flight at a time) serves plan.UsersPerSlot, else
// DefaultUsersPerSlot (users read and type between requests). Capacity Planning and the
// frontier's fleets and SLO tiers all count users by it.
func UsersPerSlot(plan servebench.SizingPlan) float64 {
	if plan.UsersPerSlot > 0 {
		return plan.UsersPerSlot
	}
	return DefaultUsersPerSlot
}

// DefaultTargetUsers is the user ladder sized when the plan names none.
func DefaultTargetUsers() []int { return []int{100, 1000, 10000} }

var gpuCount = regexp.MustCompile(`^\s*(\d+)\s*[x×*]\s*\S`)

// GPUsDeclared parses the GPU count of a declared GPU: "2x RTX Pro 6000" → 2, "8 × H100" → 8,
// "H100 SXM" → 0 (no count written). ok is false when no count is written.
func GPUsDeclared(gpu string) (n int, ok bool) {
	m := gpuCount.FindStringSubmatch(strings.ToLower(gpu))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// SizingInput is what Size needs besides the capacity results.
type SizingInput struct {
	// Plan holds the user's settings; zero values take the defaults.
	Plan servebench.SizingPlan
	// DeclaredGPU is metadata.gpu ("2x RTX Pro 6000"), used when Plan.GPUsPerReplica is 0.
	DeclaredGPU string
	// Cells are the run's cells, for the energy cost at the capacity limit (optional).
	Cells []servebench.CellResult
	// Users are the use cases' capacities in users (results' users), when the run measured
	// populations: a use case with a users' limit is sized from it (SizeBasisUsers).
	Users []servebench.UsersCapacity
}

// Size bases (servebench.UseCaseSizing.Basis).
const (
	// SizeBasisUsers: sized from the users' limit, measured with the server's prompt cache.
	SizeBasisUsers = "users"
	// SizeBasisCold: sized from the cold-prompt limit × users per slot in a run that measured
	// populations, but not this use case's users' limit.
	SizeBasisCold = "cold"
)

// Size answers "how many replicas, GPUs and dollars for N users of this use case" from the
// capacity limits. One replica is the measured system (GPUsPerReplica GPUs). Per use case with
// a users' limit of U (in.Users: populations of users measured with the server's prompt cache,
// each user thinking between turns as its profile does), or else a cold-prompt limit of L
// concurrent requests:
//
//	users per replica = U                      (Basis "users")
//	users per replica = L × users per slot     (Basis "cold" when in.Users is set, "" otherwise)
//	replicas          = ⌈users / users per replica⌉,   GPUs = replicas × GPUs per replica
//	monthly USD       = GPUs × GPU USD/hour × 730 h
//	hardware USD/1M output tokens = GPUs per replica × GPU USD/hour / (T × 3600 s) × 1e6
//
// where T is the replica's system output throughput (tokens/s) at the limit: at the limit's
// own measured level (or population), or for an interpolated limit at the highest passing one
// below it (a lower throughput, so the cost errs high). A users' limit is used when its search
// reached a verdict (measured, interpolated, a lower bound, or not viable); an interrupted or
// skipped users' search falls back to the cold-prompt limit and BasisNote says why. The total per 1M output tokens adds the measured
// electricity cost of that cell when there is one. A lower-bound limit ("125+": the ceiling
// still passed) gives upper bounds (AtMost): more users fit per replica than the ceiling
// proves. A use case that is not viable gets no size and a Note saying what would make it
// viable. Size is pure.
func Size(results []servebench.CapacityResult, in SizingInput) servebench.Sizing {
	s := servebench.Sizing{
		UsersPerSlot:  UsersPerSlot(in.Plan),
		GPUUSDPerHour: in.Plan.GPUUSDPerHour,
		HoursPerMonth: HoursPerMonth,
		TargetUsers:   append([]int(nil), in.Plan.TargetUsers...),
	}
	if len(s.TargetUsers) == 0 {
		s.TargetUsers = DefaultTargetUsers()
	}
	switch n, ok := GPUsDeclared(in.DeclaredGPU); {
	case in.Plan.GPUsPerReplica > 0:
		s.GPUsPerReplica, s.GPUsPerReplicaSource = in.Plan.GPUsPerReplica, "plan"
	case ok:
		s.GPUsPerReplica, s.GPUsPerReplicaSource = n, "declared GPU: "+strings.TrimSpace(in.DeclaredGPU)
	default:
		s.GPUsPerReplica, s.GPUsPerReplicaSource = 1, "default"
	}
	cells := map[string]servebench.CellResult{}
	for _, c := range in.Cells {
		cells[c.ID()] = c
	}
	users := map[string]servebench.UsersCapacity{}
	for _, u := range in.Users {
		users[u.UseCase] = u
	}
	for _, r := range results {
		u, ok := users[r.UseCase]
		switch {
		case len(in.Users) == 0:
			s.UseCases = append(s.UseCases, sizeOne(r, s, cells))
		case ok && usersDecided(u):
			s.UseCases = append(s.UseCases, sizeUsers(u, r, s, cells))
		default:
			one := sizeOne(r, s, cells)
			one.Basis, one.BasisNote = SizeBasisCold, coldBasisNote(u, ok)
			s.UseCases = append(s.UseCases, one)
		}
		delete(users, r.UseCase)
	}
	// a use case searched in users only (no cold-prompt search), in the order of in.Users
	for _, u := range in.Users {
		if _, left := users[u.UseCase]; left && usersDecided(u) {
			s.UseCases = append(s.UseCases, sizeUsers(u, servebench.CapacityResult{}, s, cells))
		}
	}
	return s
}

// Sizable reports whether a run's results give Size anything to size: a use case searched in
// cold prompts, or one whose users' search reached a verdict (a use case searched only in
// users is sized from its users' limit). Every caller that builds results' sizing asks it.
func Sizable(caps []servebench.CapacityResult, users []servebench.UsersCapacity) bool {
	if len(caps) > 0 {
		return true
	}
	for _, u := range users {
		if usersDecided(u) {
			return true
		}
	}
	return false
}

// usersDecided reports whether a users' search reached a verdict Size may rest on.
func usersDecided(u servebench.UsersCapacity) bool {
	return !u.Skipped && !u.Interrupted && u.LimitKind != ""
}

// coldBasisNote says why a use case of a run with populations is sized from its cold-prompt
// limit.
func coldBasisNote(u servebench.UsersCapacity, searched bool) string {
	switch {
	case !searched:
		return "not searched in users"
	case u.Interrupted:
		return "users' search interrupted"
	}
	return "users' limit not decided"
}

// sizeUsers sizes use case u from its users' limit (cold is its cold-prompt result, for the
// slots shown beside it; zero when none).
func sizeUsers(u servebench.UsersCapacity, cold servebench.CapacityResult, s servebench.Sizing, cells map[string]servebench.CellResult) servebench.UseCaseSizing {
	r := u.CapacityResult
	out := servebench.UseCaseSizing{UseCase: r.UseCase, Title: r.Title, LimitKind: r.LimitKind, Basis: SizeBasisUsers, UsersProfile: u.Profile}
	if cold.Limit != nil && *cold.Limit >= 1 && !cold.Skipped {
		out.SlotsPerReplica = servebench.Int(*cold.Limit)
	}
	if r.Limit == nil || *r.Limit < 1 {
		if r.LimitKind == servebench.LimitNotViable {
			out.Note = usersNotViable(r)
		} else {
			out.Note = "Not sized: the users' limit was not measured."
		}
		return out
	}
	out.UsersLimit = servebench.Int(*r.Limit)
	return sizeAt(out, r, float64(*r.Limit), s, cells)
}

// usersNotViable says why a use case is not viable in users: what 1 user's requests measured.
func usersNotViable(r servebench.CapacityResult) string {
	uc := servebench.UseCase{Statistic: r.Statistic, Thresholds: r.Thresholds}
	if p, ok := PointAt(r, 1); ok && len(p.Failing) > 0 {
		return "Not viable: even 1 user fails a threshold (" + failingText(uc, p) + "), so adding replicas does not help."
	}
	return "Not viable: even 1 user fails a threshold, so adding replicas does not help."
}

func sizeOne(r servebench.CapacityResult, s servebench.Sizing, cells map[string]servebench.CellResult) servebench.UseCaseSizing {
	u := servebench.UseCaseSizing{UseCase: r.UseCase, Title: r.Title, LimitKind: r.LimitKind}
	if r.Skipped || r.Limit == nil || *r.Limit < 1 {
		switch {
		case r.LimitKind == servebench.LimitNotViable && !r.Skipped:
			u.Note = NotViableAdvice(r)
		case r.Note != "":
			u.Note = "Not sized: " + strings.TrimSuffix(r.Note, ".") + "."
		default:
			u.Note = "Not sized: the capacity limit was not measured."
		}
		return u
	}
	limit := *r.Limit
	u.SlotsPerReplica = servebench.Int(limit)
	return sizeAt(u, r, float64(limit)*s.UsersPerSlot, s, cells)
}

// sizeAt fills u's targets and cost for perReplica users per replica, from r's limit (a
// cold-prompt limit or a users' limit) and the throughput measured at it.
func sizeAt(u servebench.UseCaseSizing, r servebench.CapacityResult, perReplica float64, s servebench.Sizing, cells map[string]servebench.CellResult) servebench.UseCaseSizing {
	limit := *r.Limit
	u.UsersPerReplica = servebench.Float(perReplica)
	u.AtMost = r.LimitKind == servebench.LimitLowerBound
	u.Approximate = r.LimitKind == servebench.LimitInterpolated
	for _, users := range s.TargetUsers {
		t := servebench.SizingTarget{Users: users, Replicas: int(math.Ceil(float64(users)/perReplica - 1e-9))}
		if t.Replicas < 1 {
			t.Replicas = 1
		}
		t.GPUs = t.Replicas * s.GPUsPerReplica
		if s.GPUUSDPerHour > 0 {
			t.MonthlyUSD = servebench.Float(float64(t.GPUs) * s.GPUUSDPerHour * s.HoursPerMonth)
		}
		u.Targets = append(u.Targets, t)
	}
	p, ok := throughputPoint(r, limit)
	if !ok {
		return u
	}
	u.ThroughputConcurrency = p.Concurrency
	tps, have := p.Values[MetricSystemThroughput]
	if !have || tps <= 0 {
		return u
	}
	u.ThroughputTPS = servebench.Float(tps)
	if c, ok := cells[p.CellID]; ok && c.EnergyJoules != nil && c.EnergyJoules.CostUSDPerMillionOutputTokens > 0 {
		u.ElectricityUSDPerMillionOutputTokens = servebench.Float(c.EnergyJoules.CostUSDPerMillionOutputTokens)
	}
	if s.GPUUSDPerHour > 0 {
		hw := float64(s.GPUsPerReplica) * s.GPUUSDPerHour / (tps * 3600) * 1e6
		u.HardwareUSDPerMillionOutputTokens = servebench.Float(hw)
		total := hw
		if u.ElectricityUSDPerMillionOutputTokens != nil {
			total += *u.ElectricityUSDPerMillionOutputTokens
		}
		u.TotalUSDPerMillionOutputTokens = servebench.Float(total)
	}
	return u
}

// throughputPoint is the passing measured point standing for the limit: the limit's own level
// when measured and passing, else the highest passing level below it.
func throughputPoint(r servebench.CapacityResult, limit int) (servebench.CapacityPoint, bool) {
	var best servebench.CapacityPoint
	found := false
	for _, p := range r.Points {
		if p.Pass && p.Concurrency <= limit && (!found || p.Concurrency > best.Concurrency) {
			best, found = p, true
		}
	}
	return best, found
}

// NotViableAdvice says why a use case is not viable and what would make it viable: each failing
// threshold relaxed to the value measured at 1 request, or a system that brings the value
// within the threshold at 1 request.
func NotViableAdvice(r servebench.CapacityResult) string {
	uc := servebench.UseCase{Statistic: r.Statistic, Thresholds: r.Thresholds}
	p, ok := PointAt(r, 1)
	if !ok || len(p.Failing) == 0 {
		return "Not viable: even 1 request fails a threshold; no replica count serves this use case as specified."
	}
	if AllFailed(p) {
		return "Not sized: every request failed at concurrency 1, so nothing is known about this use case's thresholds; fix the failures (the report's Notes give their error classes) and measure again."
	}
	var relax, within []string
	for _, m := range p.Failing {
		if m == MetricSuccessRate {
			within = append(within, "a success rate of at least "+formatThreshold(m, MinSuccessRate))
			continue
		}
		k, ok := checkFor(uc, m)
		v, have := p.Values[m]
		if !ok || !have {
			within = append(within, MetricLabel(m, uc.Statistic)+" measurable at 1 request")
			continue
		}
		bound := "at most"
		if !k.Upper {
			bound = "at least"
		}
		relax = append(relax, fmt.Sprintf("%s %s %s", MetricLabel(m, uc.Statistic), bound, formatValue(m, v, k.Limit)))
		within = append(within, fmt.Sprintf("%s %s %s at 1 request", MetricLabel(m, uc.Statistic), bound, formatValue(m, k.Limit, k.Limit)))
	}
	s := "Not viable: even at 1 request, " + failingText(uc, p) + ", so adding replicas does not help."
	if len(relax) > 0 {
		s += " It would be viable with thresholds of " + strings.Join(relax, " and ") + " (what 1 request measured),"
		s += " or on a system reaching " + strings.Join(within, " and ")
	} else {
		s += " It would be viable on a system reaching " + strings.Join(within, " and ")
	}
	return s + ": faster or more GPUs per replica, a smaller or quantized model, or prompt caching for long shared contexts."
}
