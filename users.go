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
}
