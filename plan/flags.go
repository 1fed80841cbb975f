package plan

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// Flag is one plan setting that can also be given on the command line. Adding a setting takes
// its field in servebench.Plan (with its YAML key) and, when it has a flag, one row in Flags;
// Resolve validates it once, whichever way it came.
type Flag struct {
	// Name is the flag without dashes: "min-requests".
	Name string
	// Key is the plan-file key it sets: "sweep.min_requests".
	Key string
	// Kind is the flag's value type: "string", "int", "float", "duration" or "bool".
	Kind  string
	Usage string
	apply func(p *servebench.Plan, v string) error
}

// Overrides are the plan flags given on the command line: flag name → value as typed. Flags
// that were not given are absent.
type Overrides map[string]string

// Names lists the given flags as "--name", in the order of Flags.
func (ov Overrides) Names() []string {
	var out []string
	for _, f := range Flags() {
		if _, ok := ov[f.Name]; ok {
			out = append(out, "--"+f.Name)
		}
	}
	return out
}

// Flags are the plan's command-line flags, applied over the plan file in this order (the use
// case and scenario selections last, so they select from what the file configured).
func Flags() []Flag {
	d := Defaults(false)
	t := func(p *servebench.Plan) *servebench.Target { return &p.Target }
	s := func(p *servebench.Plan) *servebench.Sweep { return &p.Sweep }
	return slices.Concat([]Flag{
		flag("url", "target.url", "string", "API base of the target, e.g. http://127.0.0.1:8000/v1 (default: the built-in simulator)", parseString, func(p *servebench.Plan) *string { return &t(p).URL }),
		flag("api", "target.api", "string", "API flavour: openai-chat (default), openai-completions, ollama", parseString[servebench.API], func(p *servebench.Plan) *servebench.API { return &t(p).API }),
		flag("model", "target.model", "string", "model name (default: the first model /v1/models lists)", parseString, func(p *servebench.Plan) *string { return &t(p).Model }),
		flag("contexts", "sweep.contexts", "string", "context lengths, K = 1024: 1k,8k,32k or 1024,8192", ParseContexts, func(p *servebench.Plan) *[]servebench.Tokens { return &s(p).Contexts }),
		flag("concurrency", "sweep.concurrency", "string", "concurrency levels: 1,2,4 or 1-5", ParseConcurrency, func(p *servebench.Plan) *[]int { return &s(p).Concurrency }),
		flag("output-tokens", "sweep.output_tokens", "int", "output tokens per request (forced with ignore_eos where the server allows)", parseInt[servebench.Tokens], func(p *servebench.Plan) *servebench.Tokens { return &s(p).OutputTokens }),
		flag("mode", "sweep.mode", "string", "load mode: sustained (default), dedicated, fixed, rate", parseString[servebench.LoadMode], func(p *servebench.Plan) *servebench.LoadMode { return &s(p).Mode }),
		flag("requests", "sweep.requests", "int", "prompts to send in fixed mode / requests in rate mode", parseInt[int], func(p *servebench.Plan) *int { return &s(p).Requests }),
		flag("min-requests", "sweep.min_requests", "int", fmt.Sprintf("sustained: at least this many measured requests per cell (default %d)", d.Sweep.MinRequests), parseInt[int], func(p *servebench.Plan) *int { return &s(p).MinRequests }),
		flag("rounds", "sweep.rounds", "int", fmt.Sprintf("sustained: at least rounds × concurrency measured requests per cell (default %d)", d.Sweep.Rounds), parseInt[int], func(p *servebench.Plan) *int { return &s(p).Rounds }),
		flag("precision", "sweep.precision", "float", fmt.Sprintf("sustained: keep measuring until throughput and mean TTFT are known within ± this fraction at 95%% (default %g)", d.Sweep.Precision), parseFloat, func(p *servebench.Plan) *float64 { return &s(p).Precision }),
		flag("max-requests", "sweep.max_requests", "int", fmt.Sprintf("sustained: stop aiming for --precision after this many measured requests per cell (default %d)", d.Sweep.MaxRequests), parseInt[int], func(p *servebench.Plan) *int { return &s(p).MaxRequests }),
		flag("max-duration", "sweep.max_duration", "duration", fmt.Sprintf("sustained: stop aiming for --precision after a measured window this long (default %s; 12s for the demo)", shortDuration(d.Sweep.MaxDuration)), parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).MaxDuration }),
		flag("max-time", "sweep.max_time", "duration", "total time budget of the run (sweep and capacity searches), e.g. 10m: each cell measures only the window rule's minimum and aims for --precision within its share of the time left, capacity searches stop at what the time allows; the report says what was cut", parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).MaxTime }),
		flag("ttft-timeout", "sweep.ttft_timeout", "duration", fmt.Sprintf("time-to-first-token limit per request (default %s)", shortDuration(d.Sweep.TTFTTimeout)), parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).TTFTTimeout }),
		flag("idle-timeout", "sweep.idle_timeout", "duration", fmt.Sprintf("limit on the time without a token once the first came (default %s)", shortDuration(d.Sweep.IdleTimeout)), parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).IdleTimeout }),
		flag("request-timeout", "sweep.request_timeout", "duration", "limit on a request's whole life (default: ttft-timeout + 1s per output token + idle-timeout)", parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).RequestTimeout }),
		flag("outage-timeout", "sweep.outage_timeout", "duration", fmt.Sprintf("how long to wait, paused, for a server that stopped answering before stopping the run (default %s)", shortDuration(d.Sweep.OutageTimeout)), parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).OutageTimeout }),
		flag("exact-output", "sweep.exact_output", "bool", "count a request whose output length differs from --output-tokens as failed", strconv.ParseBool, func(p *servebench.Plan) *bool { return &s(p).ExactOutput }),
		flag("capacity-max", "capacity.max_concurrency", "int", fmt.Sprintf("ceiling of the capacity search (default %d)", d.Capacity.MaxConcurrency), parseInt[int], func(p *servebench.Plan) *int { return &p.Capacity.MaxConcurrency }),
		flag("capacity-resolution", "capacity.resolution", "float", "share of the limit the capacity searches resolve it to: 0 brackets every limit exactly (default); 0.0625 ends a search within a sixteenth of its limit", parseFloat, func(p *servebench.Plan) *float64 { return &p.Capacity.Resolution }),
		flag("metrics-url", "target.metrics_url", "string", "Prometheus endpoint of the target (default <base without /v1>/metrics)", parseString, func(p *servebench.Plan) *string { return &t(p).MetricsURL }),
		flag("gpu", "target.gpu", "string", "GPU telemetry: auto, nvml, dcgm=URL, nvidia-smi, none", parseString, func(p *servebench.Plan) *string { return &t(p).GPU }),
		flag("sim-profile", "target.sim_profile", "string", "simulator profile when no --url is given (see servebench sim --list)", parseString, func(p *servebench.Plan) *string { return &t(p).SimProfile }),
		flag("tokenizer", "target.tokenizer", "string", "offline tokenizer when the server cannot count tokens: cl100k_base, o200k_base", parseString, func(p *servebench.Plan) *string { return &t(p).Tokenizer }),
		flag("api-key-env", "target.api_key_env", "string", fmt.Sprintf("environment variable holding the API key (default %s)", d.Target.APIKeyEnv), parseString, func(p *servebench.Plan) *string { return &t(p).APIKeyEnv }),
		flag("label", "metadata.label", "string", "the run's short name in compare and runs (default: the GPU, else the model)", parseString, func(p *servebench.Plan) *string { return &p.Metadata.Label }),
		{Name: "metadata", Key: "metadata", Kind: "strings", Usage: "declare a metadata key=value, as in the plan's metadata (repeatable): --metadata gpu=\"2x H100 SXM\" --metadata engine=vLLM",
			apply: func(p *servebench.Plan, v string) error { return applyMetadata(&p.Metadata, strings.Split(v, "\n")) }},
		flag("gpu-price", "sizing.gpu_usd_per_hour", "float", "GPU price in USD per GPU-hour, for monthly cost and cost per 1M output tokens in Capacity Planning", parseFloat, func(p *servebench.Plan) *float64 { return &p.Sizing.GPUUSDPerHour }),
		flag("users-per-slot", "sizing.users_per_slot", "float", fmt.Sprintf("active users one concurrent request slot serves, for Capacity Planning (default %g)", capacity.DefaultUsersPerSlot), parseFloat, func(p *servebench.Plan) *float64 { return &p.Sizing.UsersPerSlot }),
		flag("gpus-per-replica", "sizing.gpus_per_replica", "int", "GPUs in one replica of the measured system (default: the count in metadata.gpu, e.g. \"2x H100\" → 2, else 1)", parseInt[int], func(p *servebench.Plan) *int { return &p.Sizing.GPUsPerReplica }),
		flag("target-users", "sizing.target_users", "string", "user counts to size for in Capacity Planning: 100,1000,10000", parseUserCounts, func(p *servebench.Plan) *[]int { return &p.Sizing.TargetUsers }),
	}, workloadFlags(), []Flag{
		{Name: "scenarios", Key: "scenarios", Kind: "string", Usage: "dedicated-capacity scenarios: default, none, or scenario names (comma separated)",
			apply: func(p *servebench.Plan, v string) (err error) {
				p.Scenarios, err = selectScenarios(p.Scenarios, v)
				return err
			}},
		{Name: "use-cases", Key: "use_cases", Kind: "string", Usage: "capacity analysis: default, none, or use-case names (comma separated)",
			apply: func(p *servebench.Plan, v string) (err error) {
				p.UseCases, err = SelectUseCases(p.UseCases, v)
				return err
			}},
	})
}

// flag makes the row of a setting whose flag value parses into the plan field at returns.
func flag[T any](name, key, kind, usage string, parse func(string) (T, error), at func(*servebench.Plan) *T) Flag {
	return Flag{Name: name, Key: key, Kind: kind, Usage: usage, apply: func(p *servebench.Plan, v string) error {
		x, err := parse(v)
		if err != nil {
			return err
		}
		*at(p) = x
		return nil
	}}
}

func parseString[T ~string](v string) (T, error) { return T(v), nil }

func parseInt[T ~int](v string) (T, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", v)
	}
	return T(n), nil
}

func parseFloat(v string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	return x, nil
}

func parseDuration(v string) (servebench.Duration, error) {
	var d servebench.Duration
	err := d.UnmarshalText([]byte(v))
	return d, err
}

// shortDuration writes 10m0s as "10m" and 1m0s as "60s" for help texts.
func shortDuration(d servebench.Duration) string {
	td := time.Duration(d)
	if td%time.Minute == 0 && td > time.Minute {
		return strconv.Itoa(int(td/time.Minute)) + "m"
	}
	return strconv.Itoa(int(td/time.Second)) + "s"
}

// flagFor names where a plan key may be set, for problems: "sweep.rounds (--rounds)".
func flagFor(key string) string {
	for _, f := range Flags() {
		if f.Key == key {
			return key + " (--" + f.Name + ")"
		}
	}
	return key
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

// parseUserCounts parses --target-users: positive whole numbers, comma separated.
func parseUserCounts(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a user count: write positive whole numbers, e.g. 100,1000,10000", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// MetadataKeys lists the plan's metadata keys (their YAML names, in declaration order): what
// --metadata key=value accepts.
func MetadataKeys() []string {
	rt := reflect.TypeFor[servebench.Metadata]()
	keys := make([]string, 0, rt.NumField())
	for i := 0; i < rt.NumField(); i++ {
		keys = append(keys, strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0])
	}
	return keys
}

// applyMetadata sets metadata keys from "key=value" pairs; the keys are the plan's metadata
// keys (its YAML names), so --metadata gpu="2x H100" is metadata.gpu.
func applyMetadata(m *servebench.Metadata, pairs []string) error {
	rv := reflect.ValueOf(m).Elem()
	known := MetadataKeys()
	for _, kv := range pairs {
		key, val, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return fmt.Errorf("%q is not key=value (e.g. gpu=\"1x H100 SXM\")", kv)
		}
		i := slices.Index(known, key)
		if i < 0 {
			return fmt.Errorf("%q is not a metadata key: use one of %s", key, strings.Join(known, ", "))
		}
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(strings.TrimSpace(val))
		case reflect.Float64:
			x, err := parseFloat(val)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			f.SetFloat(x)
		default:
			return fmt.Errorf("%s cannot be set with --metadata", key)
		}
	}
	return nil
}
