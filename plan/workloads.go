package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
)

// workloadFlags are the flags that shape what is sent: prompts from a dataset or a trace,
// request control, rate sweeps and objectives. --header may be given several times: its values
// arrive joined by newlines.
func workloadFlags() []Flag {
	s := func(p *servebench.Plan) *servebench.Sweep { return &p.Sweep }
	ds := func(p *servebench.Plan) *servebench.DatasetPlan {
		if p.Dataset == nil {
			p.Dataset = &servebench.DatasetPlan{}
		}
		return p.Dataset
	}
	tr := func(p *servebench.Plan) *servebench.TracePlan {
		if p.Trace == nil {
			p.Trace = &servebench.TracePlan{Speed: cells.DefaultTraceSpeed, BlockTokens: cells.DefaultTraceBlockTokens}
		}
		return p.Trace
	}
	return []Flag{
		{Name: "rate", Key: "sweep.rate", Kind: "string", Usage: "arrival rate in requests/s; a list (2,4,8) measures one open-loop cell per rate; auto searches the highest rate whose goodput against --slo stays ≥ --goodput-target (implies --mode rate)",
			apply: func(p *servebench.Plan, v string) error {
				if strings.EqualFold(strings.TrimSpace(v), "auto") {
					s(p).AutoRate, s(p).Rates = true, nil
					if s(p).Mode == servebench.ModeSustained || s(p).Mode == "" {
						s(p).Mode = servebench.ModeRate
					}
					return nil
				}
				var rates []float64 // their values are judged with the plan's (validate)
				for _, part := range strings.Split(v, ",") {
					x, err := parseFloat(part)
					if err != nil {
						return fmt.Errorf("%w: write requests per second, e.g. 4 or 2,4,8", err)
					}
					rates = append(rates, x)
				}
				sort.Float64s(rates)
				rates = slices.Compact(rates)
				s(p).Rate, s(p).Rates = rates[0], nil
				if len(rates) > 1 {
					s(p).Rate, s(p).Rates = 0, rates
				}
				if s(p).Mode == servebench.ModeSustained || s(p).Mode == "" {
					s(p).Mode = servebench.ModeRate // a rate alone means an open loop at that rate
				}
				return nil
			}},
		flag("goodput-target", "sweep.goodput_target", "float", fmt.Sprintf("with --rate auto: the goodput a rate must keep (default %g)", cells.DefaultGoodputTarget), parseFloat, func(p *servebench.Plan) *float64 { return &s(p).GoodputTarget }),
		flag("duration", "sweep.duration", "duration", "time bound per cell (rate mode without --requests sends rate × duration requests)", parseDuration, func(p *servebench.Plan) *servebench.Duration { return &s(p).Duration }),
		{Name: "slo", Key: "slo", Kind: "string", Usage: "per-request objectives for goodput, e.g. ttft=2s,itl=50ms,e2e=10s (itl: ITL per token, decode time / (output tokens − 1); also first_answer=, speed= tok/s)",
			apply: func(p *servebench.Plan, v string) error {
				slo, err := ParseSLO(v)
				p.SLO = &slo
				return err
			}},
		{Name: "header", Key: "request.headers", Kind: "strings", Usage: "HTTP header sent with every request, 'Name: value' (repeatable; ${ENV} in a value is expanded; secret values are redacted everywhere)",
			apply: func(p *servebench.Plan, v string) error {
				for _, h := range strings.Split(v, "\n") {
					name, value, err := ParseHeader(h)
					if err != nil {
						return err
					}
					if p.Request.Headers == nil {
						p.Request.Headers = map[string]string{}
					}
					p.Request.Headers[name] = value
				}
				return nil
			}},
		{Name: "extra-body", Key: "request.extra_body", Kind: "string", Usage: "JSON object merged into every request body, e.g. '{\"top_k\": 20}'",
			apply: func(p *servebench.Plan, v string) error {
				var m map[string]any
				if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
					return fmt.Errorf("%q is not a JSON object: write e.g. '{\"top_k\": 20}'", clipText(v, 60))
				}
				if p.Request.ExtraBody == nil {
					p.Request.ExtraBody = map[string]any{}
				}
				for k, x := range m {
					p.Request.ExtraBody[k] = x
				}
				return nil
			}},
		flag("temperature", "request.temperature", "float", "sampling temperature sent with every request", parseFloatPtr, func(p *servebench.Plan) **float64 { return &p.Request.Temperature }),
		flag("top-p", "request.top_p", "float", "nucleus sampling top_p sent with every request", parseFloatPtr, func(p *servebench.Plan) **float64 { return &p.Request.TopP }),
		{Name: "seed", Key: "request.seed", Kind: "int", Usage: "sampling seed sent with every request (and the --dataset-sample draw)",
			apply: func(p *servebench.Plan, v string) error {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return fmt.Errorf("%q is not a whole number", v)
				}
				p.Request.Seed = &n
				if p.Dataset != nil {
					p.Dataset.Seed = n
				}
				return nil
			}},
		flag("dataset", "dataset.path", "string", "replay prompts from a file: JSONL {\"messages\": [...]} or {\"prompt\": ...} lines with optional output_tokens, or ShareGPT JSON", parseString, func(p *servebench.Plan) *string { return &ds(p).Path }),
		flag("dataset-sessions", "dataset.sessions", "bool", "run each ShareGPT conversation of --dataset whole, as a multi-turn session with the prompt cache (levels from the plan's sessions:, default 1 and 4)", strconv.ParseBool, func(p *servebench.Plan) *bool { return &ds(p).Sessions }),
		flag("dataset-sample", "dataset.sample", "int", "replay this many dataset entries, drawn with --seed (file order kept)", parseInt[int], func(p *servebench.Plan) *int { return &ds(p).Sample }),
		flag("trace", "trace.path", "string", "replay a JSONL request trace on its schedule ({\"timestamp\": ms, \"input_length\", \"output_length\", \"hash_ids\"} lines, as the Mooncake traces)", parseString, func(p *servebench.Plan) *string { return &tr(p).Path }),
		flag("trace-speed", "trace.speed", "float", "replay the trace this many times faster than recorded (default 1)", parseFloat, func(p *servebench.Plan) *float64 { return &tr(p).Speed }),
	}
}

func parseFloatPtr(v string) (*float64, error) {
	x, err := parseFloat(v)
	return &x, err
}

func validateWorkloads(p *servebench.Plan, add func(string, ...any)) {
	if len(p.Sweep.Rates) == 1 {
		p.Sweep.Rate, p.Sweep.Rates = p.Sweep.Rates[0], nil
	}
	if d := p.Dataset; d != nil && d.Seed == 0 && p.Request.Seed != nil {
		d.Seed = *p.Request.Seed // --seed also draws --dataset-sample
	}
	for _, r := range p.Sweep.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			add("sweep.rates has %g: every rate must be a positive number of requests per second", r)
		}
	}
	if r := p.Sweep.Rate; math.IsInf(r, 0) || math.IsNaN(r) {
		add("sweep.rate (--rate) %g is not a rate: write requests per second, e.g. 4", r)
	}
	if sw := &p.Sweep; sw.AutoRate {
		if !(sw.Rate > 0) || math.IsInf(sw.Rate, 0) {
			add("sweep.rate (--rate) %g must be a positive number of requests per second with sweep.auto_rate: the rate the search starts at; leave it out to start at %g", sw.Rate, cells.DefaultAutoRateStart)
		}
		if p.SLO == nil {
			add("--rate auto needs objectives (--slo ttft=2s,... or the plan's slo:): goodput counts the requests that meet them")
		}
		if !(sw.GoodputTarget > 0 && sw.GoodputTarget <= 1) {
			add("sweep.goodput_target (--goodput-target) %g must be in (0, 1], e.g. 0.99; leave it out for %g", sw.GoodputTarget, cells.DefaultGoodputTarget)
		}
		if !(sw.MaxRate > 0) || math.IsInf(sw.MaxRate, 0) {
			add("sweep.max_rate %g must be a positive number of requests per second; leave it out for %g", sw.MaxRate, cells.DefaultMaxRate)
		}
		if len(sw.Rates) > 0 {
			add("sweep.auto_rate and sweep.rates both set: search the rate or list the rates")
		}
		if sw.Mode != servebench.ModeRate {
			add("sweep.auto_rate needs sweep.mode rate (--rate auto sets it)")
		}
	}
	if len(p.Sweep.Rates) > 0 && p.Sweep.Mode != servebench.ModeRate {
		add("sweep.rates needs sweep.mode rate (--mode rate): a rate sweep is open loop")
	}
	if p.Sweep.Duration < 0 {
		add("sweep.duration must not be negative")
	}
	for name := range p.Request.Headers {
		if name == "" || strings.ContainsAny(name, " :\r\n") {
			add("request.headers has the name %q: a header name has no spaces or colons", name)
		}
	}
	for _, k := range []string{"model", "messages", "prompt", "stream"} {
		if _, ok := p.Request.ExtraBody[k]; ok {
			add("request.extra_body cannot set %q: servebench sets model, messages, prompt and stream itself", k)
		}
	}
	if t := p.Request.Temperature; t != nil && (*t < 0 || math.IsNaN(*t)) {
		add("request.temperature must not be negative")
	}
	if t := p.Request.TopP; t != nil && !(*t > 0 && *t <= 1) {
		add("request.top_p must be in (0, 1]")
	}
	if d := p.Dataset; d != nil {
		if d.Path == "" {
			add("dataset.path is empty: name a JSONL or ShareGPT JSON file")
		} else if _, err := os.Stat(d.Path); err != nil {
			add("dataset.path: %v", err)
		}
		if d.Sample < 0 || d.MinOutputTokens < 0 || d.MaxOutputTokens < 0 || d.MaxPromptChars < 0 {
			add("dataset: sample and the length filters must not be negative")
		}
	}
	if tr := p.Trace; tr != nil {
		if tr.Path == "" {
			add("trace.path is empty: name a JSONL trace")
		} else if _, err := os.Stat(tr.Path); err != nil {
			add("trace.path: %v", err)
		}
		if !(tr.Speed > 0) || math.IsInf(tr.Speed, 0) {
			add("trace.speed %g must be a positive finite factor (2 replays twice as fast as recorded); leave it out to replay as recorded (%g×)", tr.Speed, cells.DefaultTraceSpeed)
		}
		if tr.BlockTokens < 1 {
			add("trace.block_tokens %d must be at least 1; leave it out for %d tokens per hash id, as in the Mooncake traces", tr.BlockTokens, cells.DefaultTraceBlockTokens)
		}
		if p.Dataset != nil {
			add("trace and dataset both set: replay one of them")
		}
	}
	validateSessions(p, add)
	if s := p.SLO; s != nil {
		if *s == (servebench.Thresholds{}) {
			add("slo sets no objective: give at least one of ttft, first_answer, itl, e2e, speed")
		}
		for name, v := range map[string]*float64{"ttft_seconds_max": s.TTFTSecondsMax, "first_content_seconds_max": s.FirstContentSecondsMax,
			"itl_seconds_max": s.ITLSecondsMax, "e2e_latency_seconds_max": s.E2ELatencySecondsMax, "generation_speed_tps_min": s.GenerationSpeedTPSMin} {
			if v != nil && !(*v > 0) {
				add("slo.%s must be positive", name)
			}
		}
	}
}

// fillDefaults fills the settings that given (the keys the plan file or a flag sets) leaves
// out and that have a default only where their section applies: the rate search's start,
// goodput target and highest rate (with sweep.auto_rate: cells.DefaultAutoRateStart,
// DefaultGoodputTarget, DefaultMaxRate), and the multi-turn sessions' answer length (the
// sweep's) and levels (cells.DefaultSessionLevels), and the users' use cases (every use case
// of the plan), largest population, think time scale and tokens of a trace's hash id (cells.DefaultMaxUsers, DefaultThinkScale,
// DefaultTraceBlockTokens); dataset.sessions brings a sessions section of defaults when
// the plan has none. A key that is given keeps its value, so an explicit 0
// is judged by validate (and refused), never replaced by the default.
func fillDefaults(p *servebench.Plan, given map[string]bool) {
	if sw := &p.Sweep; sw.AutoRate {
		if !given["sweep.rate"] && sw.Rate == 0 {
			sw.Rate = cells.DefaultAutoRateStart
		}
		if !given["sweep.goodput_target"] {
			sw.GoodputTarget = cells.DefaultGoodputTarget
		}
		if !given["sweep.max_rate"] {
			sw.MaxRate = cells.DefaultMaxRate
		}
	}
	if p.Dataset != nil && p.Dataset.Sessions && p.Sessions == nil {
		p.Sessions = &servebench.SessionPlan{}
	}
	if u := p.Users; u != nil {
		if !given["users.use_cases"] {
			for _, uc := range p.UseCases {
				u.UseCases = append(u.UseCases, uc.Name)
			}
		}
		if !given["users.block_tokens"] {
			u.BlockTokens = cells.DefaultTraceBlockTokens
		}
		if !given["users.max_users"] {
			u.MaxUsers = cells.DefaultMaxUsers
		}
		if !given["users.think_scale"] {
			u.ThinkScale = cells.DefaultThinkScale
		}
	}
	if ss := p.Sessions; ss != nil {
		if !given["sessions.output_tokens"] {
			ss.OutputTokens = p.Sweep.OutputTokens
		}
		if !given["sessions.concurrency"] {
			ss.Concurrency = slices.Clone(cells.DefaultSessionLevels)
		}
	}
}

// validateSessions judges the multi-turn sessions (fillDefaults filled what the plan leaves
// out: answer length from the sweep, levels 1 and 4; sessions.count 0 is 2 × level sessions, at
// least 4).
func validateSessions(p *servebench.Plan, add func(string, ...any)) {
	fromData := p.Dataset != nil && p.Dataset.Sessions
	ss := p.Sessions
	if ss == nil {
		return
	}
	if len(ss.Concurrency) == 0 {
		add("sessions.concurrency is empty: leave it out for %v or give levels", cells.DefaultSessionLevels)
	}
	slices.Sort(ss.Concurrency)
	ss.Concurrency = slices.Compact(ss.Concurrency)
	switch {
	case fromData && ss.Turns < 0:
		add("sessions.turns must not be negative (0: every turn of each conversation)")
	case fromData:
		if ss.FirstTurnTokens != 0 || ss.TurnTokens != 0 {
			add("sessions.first_turn_tokens and turn_tokens do not apply to dataset.sessions: the conversations' own turns are sent")
		}
	case ss.Turns < 2:
		add("sessions.turns must be at least 2 (got %d): a session's later turns are what hit the prompt cache", ss.Turns)
	case ss.FirstTurnTokens < 1 || ss.TurnTokens < 1:
		add("sessions.first_turn_tokens and sessions.turn_tokens must be positive token counts, e.g. 2k and 256")
	}
	if ss.OutputTokens < 1 {
		add("sessions.output_tokens must be at least 1 (got %d)", ss.OutputTokens)
	}
	for _, n := range ss.Concurrency {
		if n < 1 {
			add("sessions.concurrency has %d: levels must be at least 1", n)
		}
	}
	if ss.Count < 0 {
		add("sessions.count must not be negative (0: %d × the level, at least %d)", cells.SessionsPerLevel, cells.MinSessions)
	}
	if ss.ThinkTime < 0 {
		add("sessions.think_time must not be negative")
	}
	if p.Trace != nil || (p.Dataset != nil && !fromData) {
		add("sessions and a dataset or trace are both set: measure one of them per run (dataset.sessions runs a ShareGPT dataset's conversations as the sessions)")
	}
}

// ParseSLO parses --slo: comma-separated objectives ttft=2s, first_answer=3s, itl=50ms,
// e2e=10s (durations) and speed=20 (tokens/s per user, a minimum).
func ParseSLO(s string) (servebench.Thresholds, error) {
	var t servebench.Thresholds
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok {
			return t, fmt.Errorf("%q: write name=value, e.g. ttft=2s,itl=50ms,e2e=10s", part)
		}
		switch k {
		case "speed", "ttft", "first_answer", "first_content", "itl", "tpot", "e2e":
		default:
			return t, fmt.Errorf("unknown objective %q: use ttft, first_answer, itl, e2e or speed", k)
		}
		if k == "speed" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) {
				return t, fmt.Errorf("speed=%s: write a positive generation speed in tokens/s, e.g. speed=20", v)
			}
			t.GenerationSpeedTPSMin = &x
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return t, fmt.Errorf("%s=%s: write a positive duration, e.g. %s=2s or 500ms", k, v, k)
		}
		secs := d.Seconds()
		switch k {
		case "ttft":
			t.TTFTSecondsMax = &secs
		case "first_answer", "first_content":
			t.FirstContentSecondsMax = &secs
		case "itl", "tpot":
			t.ITLSecondsMax = &secs
		case "e2e":
			t.E2ELatencySecondsMax = &secs
		}
	}
	if t == (servebench.Thresholds{}) {
		return t, fmt.Errorf("no objective given: write e.g. ttft=2s,itl=50ms,e2e=10s")
	}
	return t, nil
}

// ParseHeader parses --header 'Name: value'.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return "", "", fmt.Errorf("%q is not a header: write 'Name: value', e.g. 'X-Tenant: acme'", clipText(s, 60))
	}
	return name, value, nil
}

var secretHeader = regexp.MustCompile(`(?i)auth|key|token|secret|cookie|password|credential`)

// SecretHeader reports whether a header's value should never be shown or saved: its name
// mentions auth, key, token, secret, cookie, password or credential.
func SecretHeader(name string) bool { return secretHeader.MatchString(name) }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
