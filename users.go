package servebench

// ModeUsers is the load mode of a population of users: N users, each a conversation that sends
// a turn, waits for the answer, thinks, and sends the next turn with the whole history, replaced
// by a new conversation when its turns end (package load, Population).
const ModeUsers LoadMode = "users"

// KindUsers: a population of users measured for a use case's capacity in users.
const KindUsers CellKind = "users"

// PhaseUsers is the phase of the capacity searches in users (PhaseUsers + " " + use case).
const PhaseUsers = "users"

// UsersPhase is the phase name of the users' search of use case name.
func UsersPhase(name string) string { return PhaseUsers + " " + name }

// UsersPlan measures each named use case's capacity in concurrent users with the server's
// prompt cache (plan key users): populations of users of a profile (a chat user, a coding agent)
// searched like the use case's capacity, the use case's thresholds judging every request.
type UsersPlan struct {
	// UseCases names the use cases searched in users (default: every use case of the plan).
	UseCases []string `json:"use_cases,omitempty" yaml:"use_cases"`
	// Profiles maps a use case to the users who run it: "chat" or "agent" (default: agent for a
	// use case whose name says coding or agent, chat otherwise), or users who replay a file:
	// "dataset:PATH" (real conversations) or "trace:PATH" (an agent trace's sessions).
	Profiles map[string]string `json:"profiles,omitempty" yaml:"profiles"`
	// Populations, when set, measures these fixed numbers of users for each use case instead
	// of searching (each judged against the thresholds).
	Populations []int `json:"populations,omitempty" yaml:"populations"`
	// MaxUsers is the highest population the search may measure (default 256).
	MaxUsers int `json:"max_users,omitempty" yaml:"max_users"`
	// ThinkScale multiplies every think and tool time of the profiles (default 1; a demo may
	// shorten them, which raises each user's request rate and lowers the limit).
	ThinkScale float64 `json:"think_scale,omitempty" yaml:"think_scale"`
	// Seed draws the users' sessions (the same seed sends the same conversations).
	Seed int64 `json:"seed,omitempty" yaml:"seed"`
	// BlockTokens is the tokens of one hash id of a "trace:PATH" profile's trace (default 512,
	// as in the Mooncake traces).
	BlockTokens int `json:"block_tokens,omitempty" yaml:"block_tokens"`
	// Tiers, when set, decides one users' limit per SLO tier from the measured populations
	// (UsersCapacity.Tiers).
	Tiers *UsersTiers `json:"tiers,omitempty" yaml:"tiers"`
}

// UsersTiers are SLO tiers in the manner of AA-AgentPerf's "maximum concurrent agents per SLO
// tier" (plan key users.tiers): several per-user speed floors under one TTFT ceiling, one tier
// per floor. Each tier's limit is decided from the populations the users' search measured,
// judged by that tier's two thresholds alone (the use case's others do not apply; the success
// rate always does); nothing is measured for a tier.
type UsersTiers struct {
	// TTFTSecondsMax is the TTFT ceiling every tier shares (s).
	TTFTSecondsMax float64 `json:"ttft_seconds_max" yaml:"ttft_seconds_max"`
	// SpeedsTPSMin are the tiers' floors of generation speed per user (tok/s), one tier each,
	// in ascending order.
	SpeedsTPSMin []float64 `json:"speeds_tps_min" yaml:"speeds_tps_min"`
	// Statistic is the statistic both thresholds are read at (default: each use case's own).
	Statistic Statistic `json:"statistic,omitempty" yaml:"statistic"`
}

// UsersTier is one SLO tier's users' limit, decided from the measured populations.
type UsersTier struct {
	// GenerationSpeedTPSMin and TTFTSecondsMax are the tier's thresholds, read at Statistic.
	GenerationSpeedTPSMin float64   `json:"generation_speed_tps_min"`
	TTFTSecondsMax        float64   `json:"ttft_seconds_max"`
	Statistic             Statistic `json:"statistic"`
	// Limit, LimitKind, LimitRange and FirstFailing are as a capacity result's, in users: the
	// most users whose requests meet the tier, with its 95% range. A tier the measured
	// populations do not bracket says so: every population passes (LimitKind lower_bound:
	// at least Limit, the highest one measured), or the lowest one measured fails above 1 user
	// (LimitKind empty, Limit nil, Below = that population: fewer users than Below).
	Limit        *int      `json:"limit"`
	LimitKind    LimitKind `json:"limit_kind,omitempty"`
	LimitRange   *[2]int   `json:"limit_range,omitempty"`
	FirstFailing *int      `json:"first_failing,omitempty"`
	Below        *int      `json:"below,omitempty"`
	// LimitingMetric is the tier's binding constraint at FirstFailing (ttft_seconds,
	// generation_speed_tps, success_rate); Why and WhyText say what the server showed there, as
	// UsersCapacity's.
	LimitingMetric string `json:"limiting_metric,omitempty"`
	Why            string `json:"why,omitempty"`
	WhyText        string `json:"why_text,omitempty"`
	// Label is the limit as a table shows it ("24", "~24", "64+", "below 4", "not viable");
	// Verdict says it in a sentence, with the populations it rests on.
	Label   string `json:"label"`
	Verdict string `json:"verdict"`
}

// UsersEvidence is what the server showed at one measured population: why it passed or failed.
type UsersEvidence struct {
	Users int  `json:"users"`
	Pass  bool `json:"pass"`
	// CachedShare is the share of the measured requests' prompt tokens the server served from
	// its prefix cache (usage cached_tokens or its counters); nil when it reported neither.
	CachedShare *float64 `json:"cached_share,omitempty"`
	// QueueWaitSeconds is the server's mean queue wait; nil when unavailable.
	QueueWaitSeconds *float64 `json:"queue_wait_seconds,omitempty"`
	// KVCacheUsageMean and KVCacheUsageMax summarise the server's KV-cache usage gauge (0..1),
	// scraped every second while the population ran (warm-up included); Preemptions is how many
	// requests the server preempted meanwhile (its counter's increase). Nil when the server's
	// metrics do not have them.
	KVCacheUsageMean *float64 `json:"kv_cache_usage_mean,omitempty"`
	KVCacheUsageMax  *float64 `json:"kv_cache_usage_max,omitempty"`
	Preemptions      *int64   `json:"preemptions,omitempty"`
	// TTFTSeconds and GenerationSpeedTPS are the cell's means; InputTokensMean the mean prompt.
	TTFTSeconds        float64 `json:"ttft_seconds"`
	GenerationSpeedTPS float64 `json:"generation_speed_tps"`
	InputTokensMean    float64 `json:"input_tokens_mean"`
}

// UsersCapacity is a use case's capacity in concurrent users: the search's result (Limit and its
// range are users; the points' Concurrency is the population), the users' profile, and why the
// limit is where it is (package capacity, UsersWhy).
type UsersCapacity struct {
	CapacityResult
	// Profile names the users ("chat", "agent"); ProfileText describes their distributions.
	Profile     string `json:"profile"`
	ProfileText string `json:"profile_text,omitempty"`
	// Why says, from the server, what binds the limit: "eviction", "queueing", "batch" (the
	// batch's speed), or "" for a lower bound; WhyText says it in words with the figures.
	Why     string          `json:"why,omitempty"`
	WhyText string          `json:"why_text,omitempty"`
	Points  []UsersEvidence `json:"evidence,omitempty"`
	// Tiers are the plan's SLO tiers (users.tiers), one limit each; absent without tiers.
	Tiers []UsersTier `json:"tiers,omitempty"`
}
