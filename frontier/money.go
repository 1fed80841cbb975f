package frontier

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
)

// HoursPerMonth converts an hourly price into a monthly one: 8,760 hours a year / 12 = 730 h
// (the figure Capacity Planning uses too).
const HoursPerMonth = 730.0

// USDPerMillionTokens is the price of one million tokens (USD per 1M tokens) when one GPU
// produces tokensPerSecondPerGPU tokens/s and costs usdPerGPUHour USD per GPU-hour, the whole
// GPU-hour charged to these tokens:
//
//	$/1M = $/GPU·h ÷ (tok/s/GPU × 3600 s/h ÷ 10^6)
//
// (InferenceX's formula). Applied to output tokens it is the cost per 1M output tokens; applied
// to input tokens the cost per 1M input tokens — two ways of charging the same GPU-hour, not
// two parts of it. 0 when either input is not positive.
func USDPerMillionTokens(tokensPerSecondPerGPU, usdPerGPUHour float64) float64 {
	if tokensPerSecondPerGPU <= 0 || usdPerGPUHour <= 0 {
		return 0
	}
	return usdPerGPUHour / (tokensPerSecondPerGPU * 3600 / 1e6)
}

// TokensPerUSD is how many tokens one dollar of GPU time buys (tokens per USD):
//
//	tokens per $ = tok/s/GPU × 3600 s/h ÷ $/GPU·h
//
// the reciprocal of USDPerMillionTokens scaled by 10^6. 0 when either input is not positive.
func TokensPerUSD(tokensPerSecondPerGPU, usdPerGPUHour float64) float64 {
	if tokensPerSecondPerGPU <= 0 || usdPerGPUHour <= 0 {
		return 0
	}
	return tokensPerSecondPerGPU * 3600 / usdPerGPUHour
}

// TokensPerSecondPerMW is the throughput one all-in megawatt of facility power sustains
// (tokens/s per MW): the GPUs that fit in 1 MW at allInKWPerGPU kW each (GPU, host, network,
// cooling: the facility's whole draw per GPU), each producing tokensPerSecondPerGPU tokens/s:
//
//	tok/s per MW = tok/s/GPU × 1000 kW/MW ÷ kW/GPU
//
// (InferenceX's "per all-in utility MW", without rounding the GPU count down). 0 when either
// input is not positive.
func TokensPerSecondPerMW(tokensPerSecondPerGPU, allInKWPerGPU float64) float64 {
	if tokensPerSecondPerGPU <= 0 || allInKWPerGPU <= 0 {
		return 0
	}
	return tokensPerSecondPerGPU * 1000 / allInKWPerGPU
}

// AllInJoulesPerToken is the facility energy per token (J/token) at allInKWPerGPU kW per GPU:
//
//	J/token = kW/GPU × 1000 W/kW ÷ tok/s/GPU
//
// It differs from a measured energy per token (GPU power sampled during the cell, package
// stats), which counts the GPUs' own draw only. 0 when either input is not positive.
func AllInJoulesPerToken(tokensPerSecondPerGPU, allInKWPerGPU float64) float64 {
	if tokensPerSecondPerGPU <= 0 || allInKWPerGPU <= 0 {
		return 0
	}
	return allInKWPerGPU * 1000 / tokensPerSecondPerGPU
}

// PerGPU divides a replica's figure (tokens/s, users) by its GPU count: the per-GPU
// normalisation of every frontier figure. 0 when gpus is not positive.
func PerGPU(v float64, gpus int) float64 {
	if gpus <= 0 {
		return 0
	}
	return v / float64(gpus)
}

// ReplicasFor is how many replicas serve users users when one replica holds usersPerReplica of
// them at the speed asked for (Reading.Fleet: the level of a measured frontier point, or the
// level interpolated between two, times the users one level serves):
//
//	replicas = ⌈users ÷ users per replica⌉   (at least 1)
//
// Unlike InferenceX's fleet formula (users = tok/s ÷ speed per user), the level carries the
// measured TTFT and queueing with it. 0 when an input is not positive.
func ReplicasFor(users int, usersPerReplica float64) int {
	if users <= 0 || usersPerReplica <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(float64(users)/usersPerReplica-1e-9)))
}

// MonthlyUSD is the monthly price of gpus GPUs at usdPerGPUHour (USD per month):
// GPUs × $/GPU·h × HoursPerMonth.
func MonthlyUSD(gpus int, usdPerGPUHour float64) float64 {
	return float64(gpus) * usdPerGPUHour * HoursPerMonth
}

// Source says where an input of a figure came from.
type Source string

const (
	// Measured: taken in this run (throughput, per-user speed, TTFT, GPU power).
	Measured Source = "measured"
	// Declared: given by the user (a flag, the plan, the run's metadata).
	Declared Source = "declared"
	// Defaulted: taken from the public defaults table (HardwareDefaults) or assumed.
	Defaulted Source = "default"
)

// HardwareDefault is one row of the public cost and power table: what one GPU of a kind costs
// per hour to own or to rent, and what it draws all-in.
type HardwareDefault struct {
	// GPU is the kind as the metadata names it ("H100").
	GPU string `json:"gpu"`
	// OwningUSDPerHour is the cost of owning one GPU (USD per GPU-hour, capital and operating
	// costs over its life).
	OwningUSDPerHour float64 `json:"owning_usd_per_gpu_hour"`
	// RentalUSDPerHour is a retail rental price (USD per GPU-hour).
	RentalUSDPerHour float64 `json:"rental_usd_per_gpu_hour"`
	// AllInKW is the facility power per GPU (kW: GPU, host, network, cooling).
	AllInKW float64 `json:"all_in_kw_per_gpu"`
}

// DefaultsSource names where HardwareDefaults come from and when they were read.
const DefaultsSource = "InferenceX HW_REGISTRY (SemiAnalysis AI Cloud TCO model), public, as of August 2026"

// HardwareDefaults is the public cost and power table, in the order GPUs are matched (GB200
// before B200). Kinds outside it (A100, RTX Pro 6000 …) get no default: declare the price with
// --gpu-price (compare: --gpu-price LABEL=USD), and every table says so where it is missing.
//
// Why the A100 has none (checked November 2026): the one public table these rows come from
// lists no A100, and the public A100 figures found are ranges of on-demand list prices across
// providers (pricegpu.pages.dev, "H100 vs A100 Cloud Pricing", early 2026: $1.49–$2.49 per
// GPU-hour; mercatus-ai.com, "Cloud GPU pricing", May 2026: $1.10–$3.00 by provider tier),
// with no owning cost and no all-in power. Any one number from them would be one provider's
// list price set beside modelled costs, and a comparison of B200, H100 and A100 would then
// compare the sources, not the machines; a price the user declares is at least theirs.
func HardwareDefaults() []HardwareDefault {
	return []HardwareDefault{
		{GPU: "GB200", OwningUSDPerHour: 1.86, RentalUSDPerHour: 4.00, AllInKW: 1.87},
		{GPU: "B300", OwningUSDPerHour: 2.26, RentalUSDPerHour: 4.25, AllInKW: 1.90},
		{GPU: "B200", OwningUSDPerHour: 1.73, RentalUSDPerHour: 3.70, AllInKW: 1.71},
		{GPU: "H200", OwningUSDPerHour: 1.22, RentalUSDPerHour: 2.90, AllInKW: 1.37},
		{GPU: "H100", OwningUSDPerHour: 1.17, RentalUSDPerHour: 2.00, AllInKW: 1.37},
	}
}

// KnownGPU finds the kind of a declared GPU in HardwareDefaults: "4x B200" → B200, "8× NVIDIA
// H100 80GB HBM3" → H100, "GB200 NVL72" → GB200; ok is false for a kind the table lacks.
func KnownGPU(declared string) (HardwareDefault, bool) {
	s := strings.ToLower(declared)
	for _, d := range HardwareDefaults() {
		if regexp.MustCompile(`(^|[^a-z0-9])` + strings.ToLower(d.GPU) + `($|[^a-z0-9])`).MatchString(s) {
			return d, true
		}
	}
	return HardwareDefault{}, false
}

var gpuCount = regexp.MustCompile(`^\s*(\d+)\s*[x×*]\s*\S`)

// gpusDeclared parses the count of "2x H100" (2); ok is false when none is written.
func gpusDeclared(gpu string) (int, bool) {
	m := gpuCount.FindStringSubmatch(strings.ToLower(gpu))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil && n > 0
}

// Price is one price per GPU-hour the figures are computed at.
type Price struct {
	// Tier is "declared" (a flag or the plan), "owning" or "rental" (the defaults table).
	Tier          string  `json:"tier"`
	USDPerGPUHour float64 `json:"usd_per_gpu_hour"`
	Source        Source  `json:"source"`
	// From says where exactly: "--gpu-price / sizing.gpu_usd_per_hour" or the table's row.
	From string `json:"from"`
}

// Hardware is what turns a replica's measured figures into per-GPU, per-dollar and per-watt
// ones, each input with its source.
type Hardware struct {
	// GPU is the declared metadata.gpu ("4x B200"), "" when not declared.
	GPU string `json:"gpu,omitempty"`
	// Known is the defaults table's row the GPU matched, nil when none.
	Known *HardwareDefault `json:"known,omitempty"`
	// GPUs is the GPU count of one replica (the measured system).
	GPUs       int    `json:"gpus"`
	GPUsSource Source `json:"gpus_source"`
	GPUsFrom   string `json:"gpus_from"`
	// Prices: the declared price alone when one was given, else the table's owning and rental
	// prices for a known GPU, else none. Prices[0] is the primary one the tables lead with.
	Prices []Price `json:"prices,omitempty"`
	// AllInKWPerGPU is the facility power per GPU (kW), 0 when unknown.
	AllInKWPerGPU float64 `json:"all_in_kw_per_gpu,omitempty"`
	KWSource      Source  `json:"kw_source,omitempty"`
	KWFrom        string  `json:"kw_from,omitempty"`
}

// Resolve decides the GPU count, prices and power of one replica, in this order: the plan
// (--gpus-per-replica, --gpu-price) is declared; the count written in metadata.gpu ("4x B200")
// is declared; a kind the defaults table knows gives its prices and all-in kW as defaults; a
// count nobody gave is assumed to be 1 (default).
func Resolve(plan servebench.SizingPlan, declaredGPU string) Hardware {
	h := Hardware{GPU: strings.TrimSpace(declaredGPU)}
	switch n, ok := gpusDeclared(declaredGPU); {
	case plan.GPUsPerReplica > 0:
		h.GPUs, h.GPUsSource, h.GPUsFrom = plan.GPUsPerReplica, Declared, "--gpus-per-replica / sizing.gpus_per_replica"
	case ok:
		h.GPUs, h.GPUsSource, h.GPUsFrom = n, Declared, "metadata.gpu \""+h.GPU+"\""
	default:
		h.GPUs, h.GPUsSource, h.GPUsFrom = 1, Defaulted, "assumed 1: declare metadata.gpu (\"8x H100\") or --gpus-per-replica"
	}
	d, known := KnownGPU(declaredGPU)
	if known {
		h.Known = &d
	}
	switch {
	case plan.GPUUSDPerHour > 0:
		h.Prices = []Price{{Tier: "declared", USDPerGPUHour: plan.GPUUSDPerHour, Source: Declared, From: "--gpu-price / sizing.gpu_usd_per_hour"}}
	case known:
		h.Prices = []Price{
			{Tier: "rental", USDPerGPUHour: d.RentalUSDPerHour, Source: Defaulted, From: d.GPU + " rental, " + DefaultsSource},
			{Tier: "owning", USDPerGPUHour: d.OwningUSDPerHour, Source: Defaulted, From: d.GPU + " owning, " + DefaultsSource},
		}
	}
	if known {
		h.AllInKWPerGPU, h.KWSource, h.KWFrom = d.AllInKW, Defaulted, d.GPU+" all-in, "+DefaultsSource
	}
	return h
}

// Primary is the price the tables lead with (declared, else the rental default); ok is false
// without any price.
func (h Hardware) Primary() (Price, bool) {
	if len(h.Prices) == 0 {
		return Price{}, false
	}
	return h.Prices[0], true
}

// Cost is what one throughput per GPU costs at one price.
type Cost struct {
	Price
	// USDPerMillionOutputTokens and USDPerMillionInputTokens: USDPerMillionTokens of the
	// output and the input throughput per GPU (0 when that throughput is 0).
	USDPerMillionOutputTokens float64 `json:"usd_per_million_output_tokens"`
	USDPerMillionInputTokens  float64 `json:"usd_per_million_input_tokens,omitempty"`
	// OutputTokensPerUSD: TokensPerUSD of the output throughput per GPU.
	OutputTokensPerUSD float64 `json:"output_tokens_per_usd"`
}

// Economics is the money and power of one throughput per GPU.
type Economics struct {
	Costs []Cost `json:"costs,omitempty"`
	// OutputTPSPerMW is TokensPerSecondPerMW at the all-in kW per GPU; 0 when unknown.
	OutputTPSPerMW float64 `json:"output_tps_per_mw,omitempty"`
	// AllInJoulesPerOutputToken is AllInJoulesPerToken; 0 when the kW is unknown.
	AllInJoulesPerOutputToken float64 `json:"all_in_joules_per_output_token,omitempty"`
}

// Economics prices outputTPSPerGPU (and inputTPSPerGPU, 0 when not known) at every price of h.
func (h Hardware) Economics(outputTPSPerGPU, inputTPSPerGPU float64) Economics {
	var e Economics
	for _, p := range h.Prices {
		e.Costs = append(e.Costs, Cost{Price: p,
			USDPerMillionOutputTokens: USDPerMillionTokens(outputTPSPerGPU, p.USDPerGPUHour),
			USDPerMillionInputTokens:  USDPerMillionTokens(inputTPSPerGPU, p.USDPerGPUHour),
			OutputTokensPerUSD:        TokensPerUSD(outputTPSPerGPU, p.USDPerGPUHour)})
	}
	e.OutputTPSPerMW = TokensPerSecondPerMW(outputTPSPerGPU, h.AllInKWPerGPU)
	e.AllInJoulesPerOutputToken = AllInJoulesPerToken(outputTPSPerGPU, h.AllInKWPerGPU)
	return e
}

// Inputs says in one line where each input of the money and power figures came from:
// "GPUs 4 (declared: metadata.gpu "4x B200"); $3.70/GPU·h rental (default: …)".
func (h Hardware) Inputs() string {
	s := "throughput and speed measured; " + strconv.Itoa(h.GPUs) + " GPU"
	if h.GPUs != 1 {
		s += "s"
	}
	s += " per replica (" + string(h.GPUsSource) + ": " + h.GPUsFrom + ")"
	for _, p := range h.Prices {
		s += "; $" + strconv.FormatFloat(p.USDPerGPUHour, 'f', 2, 64) + " per GPU-hour"
		if p.Source == Declared {
			s += " (declared: " + p.From + ")"
		} else {
			s += " " + p.Tier + " (" + string(p.Source) + ")"
		}
	}
	if len(h.Prices) == 0 {
		s += "; no price per GPU-hour: pass --gpu-price (the defaults table knows " + knownList() + ")"
	}
	if h.AllInKWPerGPU > 0 {
		s += "; " + strconv.FormatFloat(h.AllInKWPerGPU, 'f', 2, 64) + " kW all-in per GPU (" + string(h.KWSource) + ")"
	}
	if h.Known != nil && (h.KWSource == Defaulted || (len(h.Prices) > 0 && h.Prices[0].Source == Defaulted)) {
		s += "; defaults from " + DefaultsSource
	}
	return s
}

func knownList() string {
	var names []string
	for _, d := range HardwareDefaults() {
		names = append(names, d.GPU)
	}
	return strings.Join(names, ", ")
}
