package plan

import (
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/workload"
)

// validateUsers fills the defaults of users: (every use case of the plan, 256 users at most,
// think times as profiled) and judges the rest.
func validateUsers(p *servebench.Plan, add func(string, ...any)) {
	u := p.Users
	if u == nil {
		return
	}
	names := make([]string, 0, len(p.UseCases))
	for _, uc := range p.UseCases {
		names = append(names, uc.Name)
	}
	if len(u.UseCases) == 0 {
		u.UseCases = slices.Clone(names)
	}
	if len(u.UseCases) == 0 {
		add("users: the plan has no use cases to search in users: list them under use_cases (their thresholds judge the users' requests)")
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
	if u.MaxUsers == 0 {
		u.MaxUsers = 256
	}
	if u.MaxUsers < 1 {
		add("users.max_users must be at least 1 (got %d)", u.MaxUsers)
	}
	slices.Sort(u.Populations)
	u.Populations = slices.Compact(u.Populations)
	for _, n := range u.Populations {
		if n < 1 {
			add("users.populations has %d: a population has at least 1 user", n)
		}
	}
	if u.ThinkScale == 0 {
		u.ThinkScale = 1
	}
	if !(u.ThinkScale > 0) || math.IsInf(u.ThinkScale, 0) {
		add("users.think_scale %g must be positive (1 keeps the profiles' think times)", u.ThinkScale)
	}
	if p.Trace != nil || p.Dataset != nil {
		add("users and a dataset or trace are both set: measure one of them per run")
	}
}
