package plan

import (
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/workload"
)

// validateUsers judges the section; fillDefaults filled use_cases (every use case of the plan),
// max_users and think_scale (cells.DefaultMaxUsers, DefaultThinkScale) only where the plan
// leaves them out, so an explicit empty list or 0 is refused here.
func validateUsers(p *servebench.Plan, add func(string, ...any)) {
	u := p.Users
	if u == nil {
		return
	}
	names := make([]string, 0, len(p.UseCases))
	for _, uc := range p.UseCases {
		names = append(names, uc.Name)
	}
	switch {
	case len(names) == 0:
		add("users: the plan has no use cases to search in users: list them under use_cases (their thresholds judge the users' requests)")
	case len(u.UseCases) == 0:
		add("users.use_cases is empty: it names the use cases searched in users; name some of %s, or leave the key out for all of them", strings.Join(names, ", "))
	}
	for _, name := range u.UseCases {
		if !slices.Contains(names, name) {
			add("users.use_cases names %q, which is not one of the plan's use cases (%s)", name, strings.Join(names, ", "))
		}
	}
	for name, prof := range u.Profiles {
		if !slices.Contains(u.UseCases, name) {
			add("users.profiles names %q, which users.use_cases does not list", name)
		}
		if _, err := workload.LookupProfile(prof); err != nil {
			add("users.profiles.%s: %v", name, err)
		}
	}
	if u.BlockTokens < 1 || u.BlockTokens > cells.MaxUserTokens {
		add("users.block_tokens %d must be a positive number of tokens; leave it out for %d tokens per hash id, as in the Mooncake traces", u.BlockTokens, cells.DefaultTraceBlockTokens)
	}
	if u.MaxUsers < 1 {
		add("users.max_users %d must be at least 1: it is the largest population the users' search measures; give one, or leave it out for %d", u.MaxUsers, cells.DefaultMaxUsers)
	}
	slices.Sort(u.Populations)
	u.Populations = slices.Compact(u.Populations)
	for _, n := range u.Populations {
		if n < 1 {
			add("users.populations has %d: a population has at least 1 user", n)
		}
	}
	if !(u.ThinkScale > 0) || math.IsInf(u.ThinkScale, 0) {
		add("users.think_scale %g must be positive: it multiplies the profiles' think and tool times, and users who never think are not users; give a factor (0.1 for a quick demo), or leave it out for %g (as profiled)", u.ThinkScale, cells.DefaultThinkScale)
	}
	validateTiers(u.Tiers, add)
	if p.Trace != nil || p.Dataset != nil {
		add("users and a dataset or trace are both set: measure one of them per run")
	}
}

// validateTiers judges users.tiers (SLO tiers: speed floors under one TTFT ceiling) and sorts
// its floors.
func validateTiers(t *servebench.UsersTiers, add func(string, ...any)) {
	if t == nil {
		return
	}
	if !(t.TTFTSecondsMax > 0) || math.IsInf(t.TTFTSecondsMax, 0) {
		add("users.tiers.ttft_seconds_max is %g: set the TTFT ceiling every tier shares, in seconds (e.g. 15)", t.TTFTSecondsMax)
	}
	if len(t.SpeedsTPSMin) == 0 {
		add("users.tiers.speeds_tps_min is empty: list the tiers' speed floors in tok/s per user, one tier each (e.g. [30, 100, 300])")
	}
	for _, v := range t.SpeedsTPSMin {
		if !(v > 0) || math.IsInf(v, 0) {
			add("users.tiers.speeds_tps_min has %g: a speed floor is a positive number of tok/s per user (e.g. [30, 100, 300])", v)
		}
	}
	slices.Sort(t.SpeedsTPSMin)
	for i := 1; i < len(t.SpeedsTPSMin); i++ {
		if t.SpeedsTPSMin[i] == t.SpeedsTPSMin[i-1] {
			add("users.tiers.speeds_tps_min lists %g twice: one tier per speed floor", t.SpeedsTPSMin[i])
		}
	}
	switch t.Statistic {
	case "", servebench.StatMean, servebench.StatP50, servebench.StatP90, servebench.StatP95, servebench.StatP99:
	default:
		add("users.tiers.statistic %q is unknown: use mean, p50, p90, p95 or p99 (or leave it out to read each use case's own)", t.Statistic)
	}
}

// checkTiersShape names the likely mistake of writing users.tiers as a list of tiers (each with
// its own TTFT ceiling), which the decoder would only call a sequence where a mapping is
// expected.
func checkTiersShape(b []byte) error {
	var shape struct {
		Users *struct {
			Tiers any `yaml:"tiers"`
		} `yaml:"users"`
	}
	if yaml.Unmarshal(b, &shape) != nil || shape.Users == nil {
		return nil // the typed decoder says what is wrong
	}
	if _, list := shape.Users.Tiers.([]any); list {
		return errors.New("plan file is invalid: users.tiers is a list, but it is one TTFT ceiling with the tiers' speed floors: " +
			"write tiers: {ttft_seconds_max: 15, speeds_tps_min: [30, 100, 300]} (for tiers under different TTFT ceilings, declare one use case per ceiling)")
	}
	return nil
}
