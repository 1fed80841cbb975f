// Package plan turns a plan file (SPEC 7a) and command-line flags into one resolved
// servebench.Plan: defaults < file < flags, decided in one function (Resolve), strict decoding
// (unknown keys are errors), and every problem reported at once before any request is sent.
package plan

import (
	"errors"
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
)

// File is the YAML plan file as written by the user. Pointers distinguish "absent" from zero.
type File struct {
	Target    servebench.Target       `yaml:"target"`
	Sweep     fileSweep               `yaml:"sweep"`
	UseCases  *[]FileUseCase          `yaml:"use_cases"`
	Scenarios []servebench.Scenario   `yaml:"scenarios"`
	Capacity  servebench.CapacityPlan `yaml:"capacity"`
	Metadata  fileMetadata            `yaml:"metadata"`
}

type fileSweep struct {
	Contexts     []servebench.Tokens `yaml:"contexts"`
	Concurrency  []int               `yaml:"concurrency"`
	OutputTokens servebench.Tokens   `yaml:"output_tokens"`
	Mode         servebench.LoadMode `yaml:"mode"`
	MinRequests  int                 `yaml:"min_requests"`
	Rounds       int                 `yaml:"rounds"`
	MinDuration  servebench.Duration `yaml:"min_duration"`
	Requests     int                 `yaml:"requests"`
	Rate         float64             `yaml:"rate"`
	Arrivals     string              `yaml:"arrivals"`
	Bursts       int                 `yaml:"bursts"`
	ExactOutput  bool                `yaml:"exact_output"`
	SharedPrefix servebench.Tokens   `yaml:"shared_prefix"`
	TTFTTimeout  servebench.Duration `yaml:"ttft_timeout"`
	IdleTimeout  servebench.Duration `yaml:"idle_timeout"`
}

type fileMetadata struct {
	servebench.Metadata `yaml:",inline"`
	// ElectricityUSDPerKWh is a pointer here so that an explicit 0 is kept.
	ElectricityUSDPerKWh *float64 `yaml:"electricity_usd_per_kwh"`
}

// FileUseCase is a use case as written in the plan file.
type FileUseCase struct {
	Name         string                `yaml:"name"`
	Title        string                `yaml:"title"`
	Description  string                `yaml:"description"`
	Context      servebench.Tokens     `yaml:"context"`
	OutputTokens servebench.Tokens     `yaml:"output_tokens"`
	Statistic    servebench.Statistic  `yaml:"statistic"`
	Thresholds   servebench.Thresholds `yaml:"thresholds"`
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
	var f File
	if err := yaml.UnmarshalWithOptions(b, &f, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("plan file is invalid:\n%s", yaml.FormatError(err, false, true))
	}
	return &f, nil
}

// Overrides are the command-line flags that were given; nil/empty fields were not set.
type Overrides struct {
	URL, API, Model, MetricsURL, GPU, Tokenizer, SimProfile, APIKeyEnv *string
	Contexts                                                           *string
	Concurrency                                                        *string
	OutputTokens                                                       *int
	Mode                                                               *string
	Requests                                                           *int
	Rate                                                               *float64
	MinRequests, Rounds                                                *int
	UseCases                                                           *string
	Scenarios                                                          *string
	CapacityMax                                                        *int
	TTFTTimeout, IdleTimeout                                           *time.Duration
	ExactOutput                                                        *bool
}

// Problems is every validation problem found, reported together.
type Problems []string

func (p Problems) Error() string {
	return "the plan has " + strconv.Itoa(len(p)) + " problem(s):\n  - " + strings.Join(p, "\n  - ")
}

// DefaultContexts is SPEC 1's sweep: 1K, 8K, 32K, 64K, 96K, 128K, 256K (capped at the target's
// maximum model length at run time).
var DefaultContexts = []servebench.Tokens{1024, 8192, 32768, 65536, 98304, 131072, 262144}

// Defaults is the plan before any file or flag. With no target URL the run is against the
// built-in simulator's fast profile, sized as the README demo: a short grid and a light
// capacity search that still shows every kind of verdict.
func Defaults(simulated bool) servebench.Plan {
	p := servebench.Plan{
		Target: servebench.Target{API: servebench.APIChat, GPU: "auto", APIKeyEnv: "OPENAI_API_KEY"},
		Sweep: servebench.Sweep{
			Contexts:     slices.Clone(DefaultContexts),
			Concurrency:  []int{1, 2, 3, 4, 5},
			OutputTokens: 1024,
			Mode:         servebench.ModeSustained,
			MinRequests:  10,
			Rounds:       3,
			Arrivals:     "poisson",
			TTFTTimeout:  servebench.Duration(10 * time.Minute),
			IdleTimeout:  servebench.Duration(60 * time.Second),
		},
		UseCases: capacity.DefaultUseCases(),
		Capacity: servebench.CapacityPlan{MaxConcurrency: 128},
		Metadata: servebench.Metadata{ElectricityUSDPerKWh: 0.10},
	}
	if simulated {
		p.Target.SimProfile = "fast"
		p.Target.GPU = "sim"
		p.Sweep.Contexts = []servebench.Tokens{1024, 8192, 32768}
		p.Sweep.Concurrency = []int{1, 2, 4}
		p.Sweep.MinRequests = 2
		p.Sweep.Rounds = 1
		p.Capacity.MaxConcurrency = 8
		p.Scenarios = DemoScenarios()
	}
	return p
}

// DemoScenarios are the dedicated-capacity scenarios of the simulated demo: short outputs at
// three context lengths, each released in bursts of 1, 2 and 4 requests. Against a real target
// scenarios come only from the plan file (they cost GPU time).
func DemoScenarios() []servebench.Scenario {
	return []servebench.Scenario{
		{Name: "chatbot", Title: "Chatbot", ContextTokens: 1024, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
		{Name: "rag", Title: "Retrieval-Augmented Q&A", ContextTokens: 4096, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
		{Name: "tool_calling_agentic", Title: "Tool Calling Agentic", ContextTokens: 8192, OutputTokens: 128, Concurrency: []int{1, 2, 4}},
	}
}

// Resolve applies defaults < file < flags and validates the result. f may be nil.
func Resolve(f *File, ov Overrides) (servebench.Plan, error) {
	var probs Problems
	url := ""
	if f != nil {
		url = f.Target.URL
	}
	if ov.URL != nil {
		url = *ov.URL
	}
	p := Defaults(url == "")
	if f != nil {
		mergeFile(&p, f, &probs)
	}
	mergeFlags(&p, ov, &probs)
	validate(&p, &probs)
	if len(probs) > 0 {
		return p, probs
	}
	return p, nil
}

func mergeFile(p *servebench.Plan, f *File, probs *Problems) {
	t := f.Target
	setStr(&p.Target.URL, t.URL)
	if t.API != "" {
		p.Target.API = t.API
	}
	setStr(&p.Target.Model, t.Model)
	setStr(&p.Target.MetricsURL, t.MetricsURL)
	setStr(&p.Target.GPU, t.GPU)
	setStr(&p.Target.APIKeyEnv, t.APIKeyEnv)
	setStr(&p.Target.Tokenizer, t.Tokenizer)
	setStr(&p.Target.SimProfile, t.SimProfile)
	s := f.Sweep
	if s.Contexts != nil {
		p.Sweep.Contexts = s.Contexts
	}
	if s.Concurrency != nil {
		p.Sweep.Concurrency = s.Concurrency
	}
	setPos(&p.Sweep.OutputTokens, s.OutputTokens)
	if s.Mode != "" {
		p.Sweep.Mode = s.Mode
	}
	setPos(&p.Sweep.MinRequests, s.MinRequests)
	setPos(&p.Sweep.Rounds, s.Rounds)
	setPos(&p.Sweep.MinDuration, s.MinDuration)
	setPos(&p.Sweep.Requests, s.Requests)
	setPos(&p.Sweep.Rate, s.Rate)
	setStr(&p.Sweep.Arrivals, s.Arrivals)
	setPos(&p.Sweep.Bursts, s.Bursts)
	p.Sweep.ExactOutput = p.Sweep.ExactOutput || s.ExactOutput
	setPos(&p.Sweep.SharedPrefix, s.SharedPrefix)
	setPos(&p.Sweep.TTFTTimeout, s.TTFTTimeout)
	setPos(&p.Sweep.IdleTimeout, s.IdleTimeout)
	if f.UseCases != nil {
		p.UseCases = nil
		for i, u := range *f.UseCases {
			uc := servebench.UseCase{Name: u.Name, Title: u.Title, Description: u.Description,
				ContextTokens: int(u.Context), OutputTokens: int(u.OutputTokens), Statistic: u.Statistic, Thresholds: u.Thresholds}
			if uc.Statistic == "" {
				uc.Statistic = servebench.StatMean
			}
			if uc.Title == "" {
				uc.Title = uc.Name
			}
			if uc.OutputTokens == 0 {
				uc.OutputTokens = int(p.Sweep.OutputTokens)
			}
			if uc.Name == "" {
				*probs = append(*probs, fmt.Sprintf("use_cases[%d].name is empty: give every use case a name", i))
			}
			p.UseCases = append(p.UseCases, uc)
		}
	}
	if f.Scenarios != nil {
		p.Scenarios = f.Scenarios
	}
	setPos(&p.Capacity.MaxConcurrency, f.Capacity.MaxConcurrency)
	price := p.Metadata.ElectricityUSDPerKWh
	p.Metadata = f.Metadata.Metadata
	p.Metadata.ElectricityUSDPerKWh = price
	if f.Metadata.ElectricityUSDPerKWh != nil {
		p.Metadata.ElectricityUSDPerKWh = *f.Metadata.ElectricityUSDPerKWh
	}
}

func mergeFlags(p *servebench.Plan, ov Overrides, probs *Problems) {
	str := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	str(&p.Target.URL, ov.URL)
	if ov.API != nil {
		p.Target.API = servebench.API(*ov.API)
	}
	str(&p.Target.Model, ov.Model)
	str(&p.Target.MetricsURL, ov.MetricsURL)
	str(&p.Target.GPU, ov.GPU)
	str(&p.Target.Tokenizer, ov.Tokenizer)
	str(&p.Target.SimProfile, ov.SimProfile)
	str(&p.Target.APIKeyEnv, ov.APIKeyEnv)
	if ov.Contexts != nil {
		c, err := ParseContexts(*ov.Contexts)
		if err != nil {
			*probs = append(*probs, "--contexts: "+err.Error())
		} else {
			p.Sweep.Contexts = c
		}
	}
	if ov.Concurrency != nil {
		c, err := ParseConcurrency(*ov.Concurrency)
		if err != nil {
			*probs = append(*probs, "--concurrency: "+err.Error())
		} else {
			p.Sweep.Concurrency = c
		}
	}
	if ov.OutputTokens != nil {
		p.Sweep.OutputTokens = servebench.Tokens(*ov.OutputTokens)
	}
	if ov.Mode != nil {
		p.Sweep.Mode = servebench.LoadMode(*ov.Mode)
	}
	if ov.Requests != nil {
		p.Sweep.Requests = *ov.Requests
	}
	if ov.Rate != nil {
		p.Sweep.Rate = *ov.Rate
	}
	if ov.MinRequests != nil {
		p.Sweep.MinRequests = *ov.MinRequests
	}
	if ov.Rounds != nil {
		p.Sweep.Rounds = *ov.Rounds
	}
	if ov.CapacityMax != nil {
		p.Capacity.MaxConcurrency = *ov.CapacityMax
	}
	if ov.TTFTTimeout != nil {
		p.Sweep.TTFTTimeout = servebench.Duration(*ov.TTFTTimeout)
	}
	if ov.IdleTimeout != nil {
		p.Sweep.IdleTimeout = servebench.Duration(*ov.IdleTimeout)
	}
	if ov.ExactOutput != nil {
		p.Sweep.ExactOutput = *ov.ExactOutput
	}
	if ov.Scenarios != nil {
		sel, err := selectScenarios(p.Scenarios, *ov.Scenarios)
		if err != nil {
			*probs = append(*probs, "--scenarios: "+err.Error())
		} else {
			p.Scenarios = sel
		}
	}
	if ov.UseCases != nil {
		ucs, err := SelectUseCases(p.UseCases, *ov.UseCases)
		if err != nil {
			*probs = append(*probs, "--use-cases: "+err.Error())
		} else {
			p.UseCases = ucs
		}
	}
}

// SelectUseCases applies --use-cases: "default" (all configured), "none", or a comma list of
// names from the configured ones.
func SelectUseCases(all []servebench.UseCase, sel string) ([]servebench.UseCase, error) {
	sel = strings.TrimSpace(sel)
	switch sel {
	case "", "default", "all":
		return all, nil
	case "none":
		return []servebench.UseCase{}, nil
	}
	var out []servebench.UseCase
	var unknown []string
	for _, name := range strings.Split(sel, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(u servebench.UseCase) bool { return u.Name == name })
		if i < 0 {
			unknown = append(unknown, name)
			continue
		}
		out = append(out, all[i])
	}
	if len(unknown) > 0 {
		var names []string
		for _, u := range all {
			names = append(names, u.Name)
		}
		return nil, fmt.Errorf("unknown use case %s: choose default, none, or from %s", strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// selectScenarios applies --scenarios: "default" (the configured ones), "none", or names.
func selectScenarios(all []servebench.Scenario, sel string) ([]servebench.Scenario, error) {
	switch strings.TrimSpace(sel) {
	case "", "default", "all":
		return all, nil
	case "none":
		return nil, nil
	}
	var out []servebench.Scenario
	for _, name := range strings.Split(sel, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(s servebench.Scenario) bool { return s.Name == name })
		if i < 0 {
			var names []string
			for _, s := range all {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("unknown scenario %q: choose default, none, or from [%s]", name, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// ParseContexts parses "1k,8k,32k" or "1024,8192".
func ParseContexts(s string) ([]servebench.Tokens, error) {
	var out []servebench.Tokens
	var errs []error
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		t, err := servebench.ParseTokens(part)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, errors.New("no context lengths given: write e.g. 1k,8k,32k")
	}
	return out, nil
}

// ParseConcurrency parses "1,2,4", "1-5" or a mix ("1-4,8,16").
func ParseConcurrency(s string) ([]int, error) {
	var out []int
	bad := func(p string) error {
		return fmt.Errorf("%q is not a concurrency level: write positive integers or ranges, e.g. 1,2,4 or 1-5", p)
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err1 := strconv.Atoi(strings.TrimSpace(lo))
			b, err2 := strconv.Atoi(strings.TrimSpace(hi))
			if err1 != nil || err2 != nil || a < 1 || b < a || b-a > 4096 {
				return nil, bad(part)
			}
			for i := a; i <= b; i++ {
				out = append(out, i)
			}
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 {
			return nil, bad(part)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no concurrency levels given: write e.g. 1,2,4 or 1-5")
	}
	sort.Ints(out)
	return slices.Compact(out), nil
}

func validate(p *servebench.Plan, probs *Problems) {
	add := func(format string, a ...any) { *probs = append(*probs, fmt.Sprintf(format, a...)) }
	switch p.Target.API {
	case servebench.APIChat, servebench.APICompletions, servebench.APIOllama:
	default:
		add("target.api %q is unknown: use openai-chat, openai-completions or ollama", p.Target.API)
	}
	if why := apiKeyEnvProblem(p.Target.APIKeyEnv); why != "" {
		add("%s", why)
	}
	if p.Target.URL != "" {
		u, err := url.Parse(p.Target.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("target.url %q is not an http(s) URL: write the API base, e.g. http://127.0.0.1:8000/v1", p.Target.URL)
		}
	}
	if p.Target.MetricsURL != "" {
		if u, err := url.Parse(p.Target.MetricsURL); err != nil || u.Host == "" {
			add("target.metrics_url %q is not a URL: write e.g. http://127.0.0.1:8000/metrics", p.Target.MetricsURL)
		}
	}
	g := p.Target.GPU
	if !(g == "" || g == "auto" || g == "none" || g == "nvml" || g == "nvidia-smi" || g == "sim" || strings.HasPrefix(g, "dcgm=")) {
		add("target.gpu %q is unknown: use auto, nvml, dcgm=URL, nvidia-smi or none", g)
	}
	if len(p.Sweep.Contexts) == 0 {
		add("sweep.contexts is empty: give at least one context length, e.g. [1k, 8k]")
	}
	for _, c := range p.Sweep.Contexts {
		if c < 1 {
			add("sweep.contexts has %d: context lengths must be positive", c)
		}
	}
	if len(p.Sweep.Concurrency) == 0 {
		add("sweep.concurrency is empty: give at least one level, e.g. [1, 2, 4]")
	}
	for _, c := range p.Sweep.Concurrency {
		if c < 1 {
			add("sweep.concurrency has %d: levels must be at least 1", c)
		}
	}
	slices.Sort(p.Sweep.Concurrency)
	p.Sweep.Concurrency = slices.Compact(p.Sweep.Concurrency)
	slices.Sort(p.Sweep.Contexts)
	p.Sweep.Contexts = slices.Compact(p.Sweep.Contexts)
	if p.Sweep.OutputTokens < 1 {
		add("sweep.output_tokens must be at least 1 (got %d)", p.Sweep.OutputTokens)
	}
	switch p.Sweep.Mode {
	case servebench.ModeSustained, servebench.ModeDedicated:
	case servebench.ModeFixed:
		if p.Sweep.Requests < 1 {
			add("sweep.mode fixed needs sweep.requests (--requests) >= 1: the number of prompts to send")
		}
	case servebench.ModeRate:
		if p.Sweep.Rate <= 0 {
			add("sweep.mode rate needs sweep.rate (--rate) > 0 requests per second")
		}
		if p.Sweep.Requests < 1 {
			add("sweep.mode rate needs sweep.requests (--requests) >= 1: how many requests to send")
		}
	default:
		add("sweep.mode %q is unknown: use sustained, dedicated, fixed or rate", p.Sweep.Mode)
	}
	if p.Sweep.Arrivals != "poisson" && p.Sweep.Arrivals != "constant" {
		add("sweep.arrivals %q is unknown: use poisson or constant", p.Sweep.Arrivals)
	}
	if p.Sweep.Rate < 0 {
		add("sweep.rate must not be negative")
	}
	if p.Sweep.MinRequests < 1 {
		add("sweep.min_requests must be at least 1")
	}
	if p.Sweep.Rounds < 1 {
		add("sweep.rounds must be at least 1")
	}
	if p.Sweep.TTFTTimeout <= 0 || p.Sweep.IdleTimeout <= 0 {
		add("sweep.ttft_timeout and sweep.idle_timeout must be positive durations, e.g. 10m and 60s")
	}
	if p.Capacity.MaxConcurrency < 1 {
		add("capacity.max_concurrency must be at least 1 (got %d)", p.Capacity.MaxConcurrency)
	}
	if p.Metadata.ElectricityUSDPerKWh < 0 {
		add("metadata.electricity_usd_per_kwh must not be negative")
	}
	seen := map[string]bool{}
	for i, u := range p.UseCases {
		where := fmt.Sprintf("use_cases[%d] (%s)", i, u.Name)
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
		for _, c := range s.Concurrency {
			if c < 1 {
				add("scenarios[%d] (%s): concurrency levels must be at least 1", i, s.Name)
			}
		}
	}
	sort.Strings(*probs)
}

func setStr(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setPos[T ~int | ~float64 | ~int64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}
