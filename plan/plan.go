// Package plan turns a plan file and command-line flags into one resolved servebench.Plan:
// defaults < file < flags. The file decodes straight into servebench.Plan over Defaults
// (strictly: unknown keys and wrong types are errors), each flag is one row of Flags, and
// Resolve validates the result once, so a value is judged the same whether it came from the
// file or a flag (an explicit 0 is refused, never replaced by a default), and every problem is
// reported at once before any request is sent.
package plan

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
)

// File is a parsed plan file: YAML with the keys of servebench.Plan.
type File struct {
	data []byte
	// url and simProfile are target.url and target.sim_profile as written: which defaults
	// apply depends on them.
	url, simProfile string
	// useCaseOutput[i] is whether use_cases[i] sets output_tokens; one that does not gets the
	// sweep's.
	useCaseOutput []bool
	// traceSpeed and traceBlock say whether the trace section writes speed and block_tokens;
	// one it leaves out gets its default (cells.DefaultTraceSpeed, DefaultTraceBlockTokens),
	// one it writes is judged as written (0 is refused).
	traceSpeed, traceBlock bool
	// given holds the keys of defaultedKeys the file writes (see fillDefaults).
	given map[string]bool
}

// LoadFile reads and strictly decodes a plan file. Unknown keys and wrong types are errors
// that name the line.
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan file: %w (check the --config path)", err)
	}
	return ParseFile(b)
}

// ParseFile strictly decodes plan YAML.
func ParseFile(b []byte) (*File, error) {
	if err := checkAliases(b); err != nil {
		return nil, err
	}
	if err := checkTiersShape(b); err != nil {
		return nil, err
	}
	var p servebench.Plan
	if err := decode(b, &p); err != nil {
		return nil, err
	}
	f := &File{data: b, url: p.Target.URL, simProfile: p.Target.SimProfile}
	// What the typed plan cannot say: whether a use case's output_tokens was written at all.
	var given struct {
		UseCases []struct {
			OutputTokens *servebench.Tokens `yaml:"output_tokens"`
		} `yaml:"use_cases"`
		Trace *struct {
			Speed       *float64 `yaml:"speed"`
			BlockTokens *int     `yaml:"block_tokens"`
		} `yaml:"trace"`
		Sweep struct {
			Rate          *float64 `yaml:"rate"`
			GoodputTarget *float64 `yaml:"goodput_target"`
			MaxRate       *float64 `yaml:"max_rate"`
		} `yaml:"sweep"`
		Sessions *struct {
			OutputTokens *servebench.Tokens `yaml:"output_tokens"`
			Concurrency  *[]int             `yaml:"concurrency"`
		} `yaml:"sessions"`
		Users *struct {
			UseCases    *[]string `yaml:"use_cases"`
			BlockTokens *int      `yaml:"block_tokens"`
			MaxUsers    *int      `yaml:"max_users"`
			ThinkScale  *float64  `yaml:"think_scale"`
		} `yaml:"users"`
	}
	if err := yaml.Unmarshal(b, &given); err != nil {
		return nil, fmt.Errorf("plan file is invalid: %w", err)
	}
	f.given = map[string]bool{
		"sweep.rate":           given.Sweep.Rate != nil,
		"sweep.goodput_target": given.Sweep.GoodputTarget != nil,
		"sweep.max_rate":       given.Sweep.MaxRate != nil,
	}
	if s := given.Sessions; s != nil {
		f.given["sessions.output_tokens"] = s.OutputTokens != nil
		f.given["sessions.concurrency"] = s.Concurrency != nil
	}
	if u := given.Users; u != nil {
		f.given["users.use_cases"] = u.UseCases != nil
		f.given["users.block_tokens"] = u.BlockTokens != nil
		f.given["users.max_users"] = u.MaxUsers != nil
		f.given["users.think_scale"] = u.ThinkScale != nil
	}
	for _, u := range given.UseCases {
		f.useCaseOutput = append(f.useCaseOutput, u.OutputTokens != nil)
	}
	if t := given.Trace; t != nil {
		f.traceSpeed, f.traceBlock = t.Speed != nil, t.BlockTokens != nil
	}
	return f, nil
}

// decode strictly decodes plan YAML over p: keys the file leaves out keep p's values.
func decode(b []byte, p *servebench.Plan) error {
	if err := yaml.UnmarshalWithOptions(b, p, yaml.Strict()); err != nil {
		return fmt.Errorf("plan file is invalid:\n%s", yaml.FormatError(err, false, true))
	}
	return nil
}

// Problems is every validation problem found, reported together.
type Problems []string

func (p Problems) Error() string {
	n := strconv.Itoa(len(p)) + " problems"
	if len(p) == 1 {
		n = "1 problem"
	}
	return "the plan has " + n + ":\n  - " + strings.Join(p, "\n  - ")
}

// Resolve applies defaults < file < flags and validates the result. f may be nil.
func Resolve(f *File, ov Overrides) (servebench.Plan, error) {
	var probs Problems
	target, profile := "", ""
	if f != nil {
		target, profile = f.url, f.simProfile
	}
	if v, ok := ov["url"]; ok {
		target = v
	}
	if v, ok := ov["sim-profile"]; ok {
		profile = v
	}
	// the demo's defaults without a target or a profile; a named profile gets a real server's
	p := Defaults(target == "" && profile == "")
	if target == "" && profile != "" {
		p = SimDefaults(profile)
	}
	if f != nil {
		if err := decode(f.data, &p); err != nil {
			return p, err
		}
		for i, given := range f.useCaseOutput {
			if !given && i < len(p.UseCases) {
				p.UseCases[i].OutputTokens = p.Sweep.OutputTokens
			}
		}
		if t := p.Trace; t != nil {
			if !f.traceSpeed {
				t.Speed = cells.DefaultTraceSpeed
			}
			if !f.traceBlock {
				t.BlockTokens = cells.DefaultTraceBlockTokens
			}
		}
	}
	given := map[string]bool{} // the keys the file or a flag sets (fillDefaults)
	if f != nil {
		for key, ok := range f.given {
			given[key] = ok
		}
	}
	known := map[string]bool{}
	for _, fl := range Flags() {
		known[fl.Name] = true
		if v, ok := ov[fl.Name]; ok {
			if err := fl.apply(&p, v); err != nil {
				probs = append(probs, "--"+fl.Name+": "+err.Error())
			}
			// --rate auto turns the search on and leaves its start (sweep.rate) as it was
			given[fl.Key] = given[fl.Key] || !(fl.Name == "rate" && strings.EqualFold(strings.TrimSpace(v), "auto"))
		}
	}
	for name := range ov {
		if !known[name] {
			probs = append(probs, "--"+name+" is not a plan setting")
		}
	}
	fillDefaults(&p, given)
	complete(&p)
	validate(&p, &probs)
	if len(probs) > 0 {
		return p, probs
	}
	return p, nil
}

// complete fills what a use case or scenario may leave out: a use case's statistic (mean) and
// title (its name), a scenario's burst sizes (cells.DefaultScenarioLevels).
func complete(p *servebench.Plan) {
	for i := range p.UseCases {
		u := &p.UseCases[i]
		if u.Statistic == "" {
			u.Statistic = servebench.StatMean
		}
		if u.Title == "" {
			u.Title = u.Name
		}
	}
	for i := range p.Scenarios {
		if p.Scenarios[i].Concurrency == nil {
			p.Scenarios[i].Concurrency = slices.Clone(cells.DefaultScenarioLevels)
		}
	}
}

// MetricsURL is where the target's Prometheus metrics are read: target.metrics_url when given,
// otherwise the API base without its /v1 plus /metrics; "" for Ollama, which has none.
func MetricsURL(t servebench.Target) string {
	if t.MetricsURL != "" || t.API == servebench.APIOllama {
		return t.MetricsURL
	}
	return strings.TrimSuffix(strings.TrimSuffix(t.URL, "/"), "/v1") + "/metrics"
}

func validate(p *servebench.Plan, probs *Problems) {
	add := func(format string, a ...any) { *probs = append(*probs, fmt.Sprintf(format, a...)) }
	k := flagFor
	switch p.Target.API {
	case servebench.APIChat, servebench.APICompletions, servebench.APIOllama:
	default:
		add("%s %q is unknown: use openai-chat, openai-completions or ollama", k("target.api"), p.Target.API)
	}
	if why := apiKeyEnvProblem(p.Target.APIKeyEnv); why != "" {
		add("%s", why)
	}
	if p.Target.URL != "" {
		u, err := url.Parse(p.Target.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("%s %q is not an http(s) URL: write the API base, e.g. http://127.0.0.1:8000/v1", k("target.url"), p.Target.URL)
		}
	}
	if p.Target.MetricsURL != "" {
		if u, err := url.Parse(p.Target.MetricsURL); err != nil || u.Host == "" {
			add("%s %q is not a URL: write e.g. http://127.0.0.1:8000/metrics", k("target.metrics_url"), p.Target.MetricsURL)
		}
	}
	g := p.Target.GPU
	if !(g == "" || g == "auto" || g == "none" || g == "nvml" || g == "nvidia-smi" || g == "sim" || strings.HasPrefix(g, "dcgm=")) {
		add("%s %q is unknown: use auto, nvml, dcgm=URL, nvidia-smi or none", k("target.gpu"), g)
	}
	if len(p.Sweep.Contexts) == 0 {
		add("%s is empty: give at least one context length, e.g. [1k, 8k]", k("sweep.contexts"))
	}
	for _, c := range p.Sweep.Contexts {
		if c < 1 {
			add("%s has %d: context lengths must be positive", k("sweep.contexts"), c)
		}
	}
	if len(p.Sweep.Concurrency) == 0 {
		add("%s is empty: give at least one level, e.g. [1, 2, 4]", k("sweep.concurrency"))
	}
	for _, c := range p.Sweep.Concurrency {
		if c < 1 {
			add("%s has %d: levels must be at least 1", k("sweep.concurrency"), c)
		}
	}
	slices.Sort(p.Sweep.Concurrency)
	p.Sweep.Concurrency = slices.Compact(p.Sweep.Concurrency)
	slices.Sort(p.Sweep.Contexts)
	p.Sweep.Contexts = slices.Compact(p.Sweep.Contexts)
	if p.Sweep.OutputTokens < 1 {
		add("%s must be at least 1 (got %d)", k("sweep.output_tokens"), p.Sweep.OutputTokens)
	}
	switch p.Sweep.Mode {
	case servebench.ModeSustained, servebench.ModeDedicated:
	case servebench.ModeFixed:
		if p.Sweep.Requests < 1 {
			add("sweep.mode fixed needs %s >= 1: the number of prompts to send", k("sweep.requests"))
		}
	case servebench.ModeRate:
		if p.Sweep.Rate <= 0 && len(p.Sweep.Rates) == 0 && p.Trace == nil && !p.Sweep.AutoRate {
			add("sweep.mode rate needs %s > 0 requests per second", k("sweep.rate"))
		}
		if p.Sweep.Requests < 1 && p.Sweep.Duration <= 0 && p.Trace == nil {
			add("sweep.mode rate needs %s >= 1 or sweep.duration (--duration): how many requests to send, or for how long", k("sweep.requests"))
		}
	default:
		add("%s %q is unknown: use sustained, dedicated, fixed or rate", k("sweep.mode"), p.Sweep.Mode)
	}
	validateWorkloads(p, add)
	validateUsers(p, add)
	if p.Sweep.Arrivals != "poisson" && p.Sweep.Arrivals != "constant" {
		add("sweep.arrivals %q is unknown: use poisson or constant", p.Sweep.Arrivals)
	}
	if p.Sweep.Requests < 0 {
		add("%s must not be negative (got %d)", k("sweep.requests"), p.Sweep.Requests)
	}
	if p.Sweep.Rate < 0 {
		add("%s must not be negative (got %g)", k("sweep.rate"), p.Sweep.Rate)
	}
	if p.Sweep.MinRequests < 1 {
		add("%s must be at least 1 (got %d)", k("sweep.min_requests"), p.Sweep.MinRequests)
	}
	if p.Sweep.Rounds < 1 {
		add("%s must be at least 1 (got %d)", k("sweep.rounds"), p.Sweep.Rounds)
	}
	if p.Sweep.Precision < 0 || p.Sweep.Precision >= 1 {
		add("%s %g is out of range: write the relative half-width aimed for, e.g. 0.05 for ±5%%", k("sweep.precision"), p.Sweep.Precision)
	}
	if p.Sweep.MaxTime < 0 || (p.Sweep.MaxTime > 0 && p.Sweep.MaxTime < servebench.Duration(time.Minute)) {
		add("%s %s is too short: give the whole run at least 1m, e.g. --max-time 10m", k("sweep.max_time"), time.Duration(p.Sweep.MaxTime))
	}
	if p.Sweep.MaxRequests < 0 || p.Sweep.MaxDuration < 0 {
		add("%s and %s must not be negative", k("sweep.max_requests"), k("sweep.max_duration"))
	}
	if p.Sweep.Bursts < 0 {
		add("sweep.bursts must not be negative (got %d); leave it out to use sweep.rounds", p.Sweep.Bursts)
	}
	if p.Sweep.MinDuration < 0 {
		add("sweep.min_duration must not be negative")
	}
	if p.Sweep.TTFTTimeout <= 0 {
		add("%s must be a positive duration, e.g. 10m", k("sweep.ttft_timeout"))
	}
	if p.Sweep.IdleTimeout <= 0 {
		add("%s must be a positive duration, e.g. 60s", k("sweep.idle_timeout"))
	}
	if p.Sweep.RequestTimeout < 0 {
		add("%s must not be negative (0 derives it from the output length)", k("sweep.request_timeout"))
	}
	if p.Sweep.OutageTimeout <= 0 {
		add("%s must be a positive duration, e.g. 5m", k("sweep.outage_timeout"))
	}
	if p.Capacity.MaxConcurrency < 1 {
		add("%s must be at least 1 (got %d)", k("capacity.max_concurrency"), p.Capacity.MaxConcurrency)
	}
	if r := p.Capacity.Resolution; !capacity.ValidResolution(r) {
		add("%s must be from 0 (exact limits) to %g, a share of the limit, e.g. 0.0625 for a sixteenth (got %g)", k("capacity.resolution"), capacity.MaxResolution, r)
	}
	if p.Metadata.ElectricityUSDPerKWh < 0 {
		add("metadata.electricity_usd_per_kwh must not be negative")
	}
	seen := map[string]bool{}
	for i, u := range p.UseCases {
		where := fmt.Sprintf("use_cases[%d] (%s)", i, u.Name)
		if u.Name == "" {
			add("use_cases[%d].name is empty: give every use case a name", i)
		}
		if seen[u.Name] {
			add("%s: duplicate name: use case names must be unique", where)
		}
		seen[u.Name] = true
		if u.ContextTokens < 1 {
			add("%s: context must be a positive token count, e.g. 32k", where)
		}
		if u.OutputTokens < 1 {
			add("%s: output_tokens must be at least 1", where)
		}
		switch u.Statistic {
		case servebench.StatMean, servebench.StatP50, servebench.StatP90, servebench.StatP95, servebench.StatP99:
		default:
			add("%s: statistic %q is unknown: use mean, p50, p90, p95 or p99", where, u.Statistic)
		}
		th := u.Thresholds
		if th.TTFTSecondsMax == nil && th.GenerationSpeedTPSMin == nil && th.E2ELatencySecondsMax == nil && th.ITLSecondsMax == nil && th.FirstContentSecondsMax == nil {
			add("%s: no thresholds: set at least one of ttft_seconds_max, first_content_seconds_max, generation_speed_tps_min, e2e_latency_seconds_max, itl_seconds_max", where)
		}
		for name, v := range map[string]*float64{"ttft_seconds_max": th.TTFTSecondsMax, "generation_speed_tps_min": th.GenerationSpeedTPSMin,
			"e2e_latency_seconds_max": th.E2ELatencySecondsMax, "itl_seconds_max": th.ITLSecondsMax, "first_content_seconds_max": th.FirstContentSecondsMax} {
			if v != nil && *v <= 0 {
				add("%s: thresholds.%s must be positive", where, name)
			}
		}
	}
	for i, s := range p.Scenarios {
		if s.Name == "" || s.ContextTokens < 1 || s.OutputTokens < 1 {
			add("scenarios[%d]: needs a name, a positive context and output_tokens", i)
		}
		if len(s.Concurrency) == 0 {
			add("scenarios[%d] (%s): concurrency is empty: leave it out for %v or give burst sizes", i, s.Name, DefaultScenarioConcurrency)
		}
		for _, c := range s.Concurrency {
			if c < 1 {
				add("scenarios[%d] (%s): concurrency levels must be at least 1", i, s.Name)
			}
		}
	}
	sort.Strings(*probs)
}

// MaxConcurrency is the most requests the plan ever has in flight: the largest sweep level or
// the capacity search's ceiling.
func MaxConcurrency(p servebench.Plan) int {
	n := p.Capacity.MaxConcurrency
	for _, c := range p.Sweep.Concurrency {
		n = max(n, c)
	}
	for _, s := range p.Scenarios {
		for _, c := range s.Concurrency {
			n = max(n, c)
		}
	}
	return n
}

// TargetURL is target.url as written in the file ("" when it names none).
func (f *File) TargetURL() string { return f.url }
