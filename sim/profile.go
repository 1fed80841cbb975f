package sim

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// GPUSpec describes the accelerator(s) of a profile. All figures are per GPU; Count GPUs work
// together (tensor parallel), so the engine sees Count × PeakFLOPS and Count × MemBandwidth.
type GPUSpec struct {
	// Name is the product name, reported as dcgm-exporter's modelName label.
	Name string
	// Count is the number of GPUs serving the model (tensor parallel).
	Count int
	// PeakFLOPS is the dense BF16 peak (FLOP/s).
	PeakFLOPS float64
	// PeakFLOPSFP8 and PeakFLOPSFP4 are the dense FP8 and FP4 (NVFP4) peaks (FLOP/s); 0 where
	// the GPU has no such tensor cores, and the next wider format's peak is used instead.
	PeakFLOPSFP8, PeakFLOPSFP4 float64
	// MemBandwidth is the HBM/GDDR bandwidth (B/s).
	MemBandwidth float64
	// MemoryBytes is the memory size (B).
	MemoryBytes float64
	// IdleWatts and MaxWatts bound the power draw (W).
	IdleWatts, MaxWatts float64
	// LinkBandwidth is the GPU-to-GPU bandwidth per GPU and direction (B/s: NVLink, or PCIe
	// when the GPUs have no NVLink); used only when Count > 1.
	LinkBandwidth float64
	// LinkLatency is the fixed latency of one all-reduce across the Count GPUs (s).
	LinkLatency time.Duration
}

// Format is a number format of weights and matrix arithmetic.
type Format string

// The formats a profile can name. BytesPerParam of NVFP4 is 0.5625: 4 bits per weight plus
// one 8-bit scale per block of 16.
const (
	BF16  Format = "bf16"
	FP8   Format = "fp8"
	NVFP4 Format = "nvfp4"
)

// peak returns the dense peak for matrix arithmetic in format f, falling back to the next
// wider format the GPU has (FP4 → FP8 → BF16).
func (g GPUSpec) peak(f Format) float64 {
	switch {
	case f == NVFP4 && g.PeakFLOPSFP4 > 0:
		return g.PeakFLOPSFP4
	case (f == NVFP4 || f == FP8) && g.PeakFLOPSFP8 > 0:
		return g.PeakFLOPSFP8
	}
	return g.PeakFLOPS
}

// ModelSpec describes the served model's shapes.
type ModelSpec struct {
	// Name is the model id served when Options.ServedModelName is empty.
	Name string
	// TotalParams are all weights; ActiveParams those used per token (they differ for MoE).
	TotalParams, ActiveParams float64
	// Layers and Hidden size the attention cost: 4·Hidden FLOP per (query, key) pair and layer,
	// unless Heads and HeadDim are set; Hidden also sizes the tensor-parallel all-reduces.
	Layers, Hidden int
	// Heads and HeadDim, when set, make the attention cost 4·Heads·HeadDim FLOP per (query,
	// key) pair and layer (QKᵀ and AV; for MLA HeadDim is the mean of the QK and V widths).
	Heads, HeadDim int
	// KVBytesPerToken is the KV cache of one token over all full-attention layers:
	// 2 (K and V) · full layers · KVHeads · HeadDim · bytes per element (GQA: KVHeads < Heads),
	// or for MLA full layers · (kv_lora_rank + rope dim) · bytes per element.
	KVBytesPerToken float64
	// SlidingLayers of the Layers attend only to the last SlidingWindow tokens and keep only
	// those in the KV cache; SlidingKVBytesPerToken is their KV per token, over all of them.
	SlidingLayers, SlidingWindow int
	SlidingKVBytesPerToken       float64
	// LinearLayers of the Layers are linear attention (e.g. Gated DeltaNet): no KV per token
	// and no quadratic cost, but a recurrent state of StateBytesPerSeq (over all of them) per
	// sequence, read and written at every step.
	LinearLayers     int
	StateBytesPerSeq float64
	// BytesPerParam is 2 for BF16, 1 for FP8, 0.5625 for NVFP4.
	BytesPerParam float64
	// ReasoningTokens > 0 makes a reasoning model: each chat answer is preceded by this many
	// reasoning tokens (see Options.ReasoningTokens).
	ReasoningTokens int
	// Format is the format of the weight matrix arithmetic ("" is BF16); it picks the GPU peak.
	Format Format
	// Experts routed experts, ExpertsPerToken chosen per token, holding ExpertParams of the
	// TotalParams (MoE). Zero Experts: the weights read by a step of T tokens are approximated
	// by TotalParams·(1 − (1 − Active/Total)^T).
	Experts, ExpertsPerToken int
	ExpertParams             float64
	// ExpertSpread (0..1, 0 means 1) is the share of the experts a large batch actually uses:
	// routing is skewed, so T tokens touch E·spread·(1 − (1 − k/(E·spread))^T) experts rather
	// than the uniform E·(1 − (1 − k/E)^T) (one token still reads k).
	ExpertSpread float64
	// DraftParams are the weights one speculative draft pass reads (MTP head and LM head).
	DraftParams float64
}

// EngineSpec holds the serving engine's settings (vLLM names where they exist) and the
// efficiency factors of the step-time model.
type EngineSpec struct {
	// MaxNumBatchedTokens is the token budget of one step (chunked prefill).
	MaxNumBatchedTokens int
	// MaxNumSeqs caps the number of running sequences.
	MaxNumSeqs int
	// GPUMemoryUtilization is the fraction of GPU memory the engine takes (weights + KV cache).
	GPUMemoryUtilization float64
	// MaxModelLen is the largest prompt + output length accepted (tokens). New lowers it to the
	// KV-cache capacity when that is smaller.
	MaxModelLen int
	// BlockSize is the KV-cache block size (tokens).
	BlockSize int
	// StreamInterval is the minimum time between two flushed chunks of one stream; tokens
	// produced meanwhile go out together as one multi-token chunk. 0 sends every step's token.
	StreamInterval time.Duration
	// StepOverhead is the fixed cost of every step (scheduling, launch, sampling).
	StepOverhead time.Duration
	// PrefillOverhead is the extra fixed cost of a step that carries any prefill chunk
	// (attention metadata for ragged batches, larger sampling and bookkeeping).
	PrefillOverhead time.Duration
	// ComputeEfficiency is the achieved fraction of PeakFLOPS (model FLOP utilisation).
	ComputeEfficiency float64
	// BandwidthEfficiency is the achieved fraction of MemBandwidth.
	BandwidthEfficiency float64
	// KVBandwidthEfficiency is the achieved fraction of MemBandwidth when the attention and
	// recurrent-state kernels of one sequence read its KV cache and state (a lone sequence has
	// few KV heads to spread over the GPU, so these kernels can reach less than weight
	// streaming); B sequences in a step give the kernels B times the parallel work, up to the
	// better of this and BandwidthEfficiency (see core.cost). 0 means BandwidthEfficiency.
	KVBandwidthEfficiency float64
	// AttentionEfficiency is the achieved fraction of the BF16 peak on attention FLOPs;
	// 0 means ComputeEfficiency.
	AttentionEfficiency float64
	// PerSeqOverhead is the fixed cost per running sequence per step (sampling,
	// detokenisation, output processing).
	PerSeqOverhead time.Duration
	// LayerOverhead is the fixed cost per layer per step: kernel launches when CUDA graphs are
	// off (eager mode); 0 with CUDA graphs.
	LayerOverhead time.Duration
	// RequestOverhead is the API server's fixed latency before a request reaches the
	// scheduler (HTTP, chat template, tokenisation, hand-off to the engine).
	RequestOverhead time.Duration
	// RequestOverheadPerToken is the API server's cost per prompt token before the request
	// reaches the scheduler (tokenisation and input processing of the prompt, on the CPU,
	// beside the GPU's steps). A long prompt arrives that much later; it does not slow the
	// steps of the requests already running.
	RequestOverheadPerToken time.Duration
	// SpecTokens is the number of speculative tokens proposed per step (vLLM's
	// num_speculative_tokens; 0: no speculative decoding). Each decoding sequence then
	// verifies 1 + SpecTokens tokens per step and emits (1 − a^(k+1))/(1 − a) of them on
	// average, a = SpecAcceptance, k = SpecTokens; one chunk carries them all.
	SpecTokens int
	// SpecAcceptance is the probability that a draft token is accepted, given the previous one
	// was.
	SpecAcceptance float64
	// DraftOverhead is the fixed cost of one draft pass (SpecTokens passes per step).
	DraftOverhead time.Duration
	// MemoryPowerWeight is how much a bandwidth-bound step loads the GPU's power budget
	// relative to a compute-bound one (0..1): utilisation = min(1, (compute + weight·memory) / step).
	MemoryPowerWeight float64
}

// requestOverhead is the API server's latency before a request of prompt tokens reaches the
// scheduler: RequestOverhead + prompt · RequestOverheadPerToken (s).
func (e EngineSpec) requestOverhead(prompt int) float64 {
	return e.RequestOverhead.Seconds() + float64(prompt)*e.RequestOverheadPerToken.Seconds()
}

// Profile is one simulated hardware + model + engine combination.
type Profile struct {
	Name, Description string
	GPU               GPUSpec
	Model             ModelSpec
	Engine            EngineSpec
	// Validation is how far this kind of configuration was from published measurements
	// (zero when it was not validated).
	Validation Validation
}

// WeightBytes is the memory taken by the weights: TotalParams · BytesPerParam (B).
func (p Profile) WeightBytes() float64 { return p.Model.TotalParams * p.Model.BytesPerParam }

// TokensPerStep is the mean number of tokens a decoding sequence emits per step: 1 without
// speculative decoding, else (1 − a^(k+1))/(1 − a) with a = SpecAcceptance, k = SpecTokens
// (the accepted prefix of k drafts plus the verifier's own token).
func (p Profile) TokensPerStep() float64 {
	k, a := p.Engine.SpecTokens, p.Engine.SpecAcceptance
	if k <= 0 {
		return 1
	}
	return (1 - math.Pow(a, float64(k+1))) / (1 - a)
}

// KVCapacityTokens is the KV-cache size in tokens, rounded down to whole blocks:
//
//	(Count·MemoryBytes·GPUMemoryUtilization − WeightBytes) / KVBytesPerToken
func (p Profile) KVCapacityTokens() int {
	return p.kvBlocks() * p.Engine.BlockSize
}

func (p Profile) kvBlocks() int {
	free := float64(p.GPU.Count)*p.GPU.MemoryBytes*p.Engine.GPUMemoryUtilization - p.WeightBytes()
	if free <= 0 || p.Model.KVBytesPerToken <= 0 || p.Engine.BlockSize <= 0 {
		return 0
	}
	return int(math.Floor(free / p.Model.KVBytesPerToken / float64(p.Engine.BlockSize)))
}

// Validate reports the first impossible setting, naming the field.
func (p Profile) Validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("sim: profile %q: %s must be positive (got %v)", p.Name, field, v)
	}
	switch {
	case p.GPU.Count <= 0:
		return bad("GPU.Count", p.GPU.Count)
	case p.GPU.PeakFLOPS <= 0:
		return bad("GPU.PeakFLOPS", p.GPU.PeakFLOPS)
	case p.GPU.MemBandwidth <= 0:
		return bad("GPU.MemBandwidth", p.GPU.MemBandwidth)
	case p.Model.ActiveParams <= 0 || p.Model.TotalParams < p.Model.ActiveParams:
		return fmt.Errorf("sim: profile %q: need 0 < Model.ActiveParams <= Model.TotalParams", p.Name)
	case p.Model.KVBytesPerToken <= 0:
		return bad("Model.KVBytesPerToken", p.Model.KVBytesPerToken)
	case p.Model.BytesPerParam <= 0:
		return bad("Model.BytesPerParam", p.Model.BytesPerParam)
	case p.Engine.MaxNumBatchedTokens <= 0:
		return bad("Engine.MaxNumBatchedTokens", p.Engine.MaxNumBatchedTokens)
	case p.Engine.MaxNumSeqs <= 0:
		return bad("Engine.MaxNumSeqs", p.Engine.MaxNumSeqs)
	case p.Engine.BlockSize <= 0:
		return bad("Engine.BlockSize", p.Engine.BlockSize)
	case p.Engine.MaxModelLen <= 0:
		return bad("Engine.MaxModelLen", p.Engine.MaxModelLen)
	case p.Engine.ComputeEfficiency <= 0 || p.Engine.BandwidthEfficiency <= 0:
		return fmt.Errorf("sim: profile %q: Engine.ComputeEfficiency and BandwidthEfficiency must be in (0,1]", p.Name)
	case p.Model.SlidingLayers < 0 || p.Model.LinearLayers < 0 || p.Model.SlidingLayers+p.Model.LinearLayers >= p.Model.Layers && p.Model.Layers > 0:
		return fmt.Errorf("sim: profile %q: Model.SlidingLayers + LinearLayers must leave at least one full-attention layer of the %d", p.Name, p.Model.Layers)
	case p.Model.SlidingLayers > 0 && p.Model.SlidingWindow <= 0:
		return bad("Model.SlidingWindow", p.Model.SlidingWindow)
	case p.Model.Experts < 0 || p.Model.ExpertsPerToken > p.Model.Experts || p.Model.ExpertParams > p.Model.TotalParams:
		return fmt.Errorf("sim: profile %q: need 0 <= Model.ExpertsPerToken <= Experts and ExpertParams <= TotalParams", p.Name)
	case p.Engine.SpecTokens < 0 || p.Engine.SpecTokens > 0 && (p.Engine.SpecAcceptance < 0 || p.Engine.SpecAcceptance >= 1):
		return fmt.Errorf("sim: profile %q: Engine.SpecTokens must be >= 0 and SpecAcceptance in [0, 1)", p.Name)
	case p.GPU.Count > 1 && p.GPU.LinkBandwidth <= 0:
		return bad("GPU.LinkBandwidth (needed for more than one GPU)", p.GPU.LinkBandwidth)
	case p.kvBlocks() <= 0:
		return fmt.Errorf("sim: profile %q: weights (%.1f GB) do not fit in %.0f%% of %d×%.0f GB; use more or larger GPUs",
			p.Name, p.WeightBytes()/1e9, 100*p.Engine.GPUMemoryUtilization, p.GPU.Count, p.GPU.MemoryBytes/1e9)
	}
	return nil
}

// Public GPU specifications (dense BF16 FLOP/s, bandwidth, memory, idle..max board power).
var (
	gpuH100 = GPUSpec{Name: "NVIDIA H100 80GB HBM3", Count: 1, PeakFLOPS: 989e12, MemBandwidth: 3.35e12,
		MemoryBytes: 80e9, IdleWatts: 70, MaxWatts: 700}
	gpuH200 = GPUSpec{Name: "NVIDIA H200", Count: 1, PeakFLOPS: 989e12, MemBandwidth: 4.8e12,
		MemoryBytes: 141e9, IdleWatts: 75, MaxWatts: 700}
	gpuB200 = GPUSpec{Name: "NVIDIA B200", Count: 1, PeakFLOPS: 2.25e15, MemBandwidth: 8e12,
		MemoryBytes: 180e9, IdleWatts: 140, MaxWatts: 1000}
	gpuA100 = GPUSpec{Name: "NVIDIA A100-SXM4-80GB", Count: 1, PeakFLOPS: 312e12, MemBandwidth: 2.039e12,
		MemoryBytes: 80e9, IdleWatts: 50, MaxWatts: 400}
	gpuRTXPro6000 = GPUSpec{Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", Count: 1, PeakFLOPS: 500e12,
		MemBandwidth: 1.79e12, MemoryBytes: 96e9, IdleWatts: 30, MaxWatts: 600}
)

// Public model shapes.
var (
	// Llama-3.1-8B: 32 layers, hidden 4096, 8 KV heads × 128 dim, BF16:
	// 2·32·8·128·2 B = 131072 B (128 KiB) per token.
	modelLlama8B = ModelSpec{Name: "meta-llama/Llama-3.1-8B-Instruct", TotalParams: 8.03e9, ActiveParams: 8.03e9,
		Layers: 32, Hidden: 4096, KVBytesPerToken: 131072, BytesPerParam: 2}
	// Qwen3-30B-A3B: 30.5B total, 3.3B active, 48 layers, hidden 2048, 4 KV heads × 128, BF16:
	// 2·48·4·128·2 B = 98304 B (96 KiB) per token.
	modelQwen30BMoE = ModelSpec{Name: "Qwen/Qwen3-30B-A3B", TotalParams: 30.5e9, ActiveParams: 3.3e9,
		Layers: 48, Hidden: 2048, KVBytesPerToken: 98304, BytesPerParam: 2}
)

// vllmDefaults are the generic profiles' engine: vLLM's defaults with the engine overheads
// fitted on GLM-4.7-Flash BF16 on one H200 (sim/reference.go), the nearest validated kind.
var vllmDefaults = func() EngineSpec {
	e := fitGLM47H200.engine(0)
	e.MaxModelLen = 131072
	return e
}()

// FastProfile is the small imaginary GPU for tests and the demo. All its numbers live in this
// one literal; doc.go tabulates what they produce. It is shaped for a demo of about two minutes:
// decoding is quick (about 3,000 tok/s per user, so a 1024-token answer takes a third of a
// second and cells settle fast), attention is slow (AttentionEfficiency: a 32K prompt takes about
// 4 s to prefill), and the KV cache holds one 32K request but not the first prefill chunk of a
// second, so 32K requests run strictly one at a time: two General Chatbot users already wait
// more than its 8 s time to first token, a limit the capacity search finds in two levels.
var FastProfile = Profile{
	Name:        "fast",
	Description: "imaginary small GPU + 0.5B dense model, fast to simulate: every effect in seconds (tests)",
	GPU: GPUSpec{Name: "servebench-sim fast GPU", Count: 1, PeakFLOPS: 360e12, MemBandwidth: 9e12,
		MemoryBytes: 2.205e9, IdleWatts: 40, MaxWatts: 300},
	Model: ModelSpec{Name: "servebench-sim-0.5b", TotalParams: 0.5e9, ActiveParams: 0.5e9,
		Layers: 24, Hidden: 1024, KVBytesPerToken: 24576, BytesPerParam: 2},
	Engine: EngineSpec{
		MaxNumBatchedTokens:  8192,
		MaxNumSeqs:           64,
		GPUMemoryUtilization: 0.85,
		MaxModelLen:          34816,
		BlockSize:            16,
		StreamInterval:       15 * time.Millisecond,
		StepOverhead:         150 * time.Microsecond,
		PrefillOverhead:      20 * time.Millisecond,
		ComputeEfficiency:    0.6,
		AttentionEfficiency:  0.037,
		BandwidthEfficiency:  0.8,
		MemoryPowerWeight:    0.6,
	},
}

// Profiles returns every built-in profile, the fast one first, then by name.
func Profiles() []Profile {
	gpus := []struct {
		key string
		g   GPUSpec
	}{{"h100", gpuH100}, {"h200", gpuH200}, {"b200", gpuB200}, {"a100", gpuA100}, {"rtxpro6000", gpuRTXPro6000}}
	models := []struct {
		key string
		m   ModelSpec
	}{{"llama8b", modelLlama8B}, {"qwen30b-moe", modelQwen30BMoE}}
	var out []Profile
	for _, g := range gpus {
		for _, m := range models {
			p := Profile{
				Name:        g.key + "-" + m.key,
				Description: fmt.Sprintf("1× %s serving %s (BF16, vLLM-like defaults)", g.g.Name, m.m.Name),
				GPU:         g.g, Model: m.m, Engine: vllmDefaults,
				Validation: validatedKind,
			}
			out = append(out, p)
		}
	}
	out = append(out, ReferenceProfiles()...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return append([]Profile{FastProfile}, out...)
}

// LookupProfile returns the built-in profile called name (case-insensitive).
func LookupProfile(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("sim: unknown profile %q; valid profiles: %s", name, strings.Join(names, ", "))
}
