package sim

import (
	"fmt"
	"time"
)

// Reference profiles: the configurations of published benchmark reports, written from public
// hardware and model specifications, with the engine-overhead parameters (the efficiencies and
// the fixed per-step, per-sequence and per-request costs, and the MTP acceptance rate) fitted
// once on part of the published points and validated on the rest (package sim/validation;
// docs/simulator.md has the table). Each profile's Validation names its reference and the error
// the validation measured.
//
// Where a specification is uncertain it says so: the model shapes below are from the public
// model cards as known when this was written; a wrong shape shows up as validation error.

// Public GPU specifications used by the reference profiles (per GPU; dense tensor-core peaks).
var (
	// H200 SXM: 989 TFLOP/s BF16, 1979 FP8, 4.8 TB/s HBM3e, 141 GB, NVLink 4 at 450 GB/s per
	// direction, 700 W.
	refH200 = GPUSpec{Name: "NVIDIA H200", Count: 1, PeakFLOPS: 989e12, PeakFLOPSFP8: 1979e12,
		MemBandwidth: 4.8e12, MemoryBytes: 141e9, IdleWatts: 75, MaxWatts: 700,
		LinkBandwidth: 450e9, LinkLatency: 8 * time.Microsecond}
	// H100 SXM: 989 TFLOP/s BF16, 1979 FP8, 3.35 TB/s, 80 GB, NVLink 4, 700 W.
	refH100 = GPUSpec{Name: "NVIDIA H100 80GB HBM3", Count: 1, PeakFLOPS: 989e12, PeakFLOPSFP8: 1979e12,
		MemBandwidth: 3.35e12, MemoryBytes: 80e9, IdleWatts: 70, MaxWatts: 700,
		LinkBandwidth: 450e9, LinkLatency: 8 * time.Microsecond}
	// A100 SXM 80 GB: 312 TFLOP/s BF16 (no FP8), 2.039 TB/s, NVLink 3 at 300 GB/s, 400 W.
	refA100 = GPUSpec{Name: "NVIDIA A100-SXM4-80GB", Count: 1, PeakFLOPS: 312e12,
		MemBandwidth: 2.039e12, MemoryBytes: 80e9, IdleWatts: 50, MaxWatts: 400,
		LinkBandwidth: 300e9, LinkLatency: 10 * time.Microsecond}
	// B200 (HGX): 2.25 PFLOP/s BF16, 4.5 FP8, 9 FP4, 8 TB/s HBM3e, 180 GB, NVLink 5 at
	// 900 GB/s per direction, 1000 W.
	refB200 = GPUSpec{Name: "NVIDIA B200", Count: 1, PeakFLOPS: 2.25e15, PeakFLOPSFP8: 4.5e15, PeakFLOPSFP4: 9e15,
		MemBandwidth: 8e12, MemoryBytes: 180e9, IdleWatts: 140, MaxWatts: 1000,
		LinkBandwidth: 900e9, LinkLatency: 8 * time.Microsecond}
	// RTX PRO 6000 Blackwell: about 0.5 PFLOP/s BF16, 1 FP8, 2 FP4 dense (half the published
	// sparse figures; uncertain), 1.792 TB/s GDDR7, 96 GB, no NVLink: PCIe 5.0 x16 at about
	// 63 GB/s per direction, 600 W.
	refRTXPro6000 = GPUSpec{Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", Count: 1,
		PeakFLOPS: 500e12, PeakFLOPSFP8: 1e15, PeakFLOPSFP4: 2e15,
		MemBandwidth: 1.792e12, MemoryBytes: 96e9, IdleWatts: 30, MaxWatts: 600,
		LinkBandwidth: 63e9, LinkLatency: 20 * time.Microsecond}
)

// times returns g as a group of n GPUs (tensor parallel).
func (g GPUSpec) times(n int) GPUSpec { g.Count = n; return g }

// Public model shapes of the reference models.
var (
	// GLM-4.7-Flash (Z.ai): 30B-parameter MoE, about 3B active; 47 layers, hidden 2048,
	// multi-head latent attention (20 heads; K/V compressed to 512 + 64 rope dims per token and
	// layer: 47·576·2 B = 54,144 B per token in BF16), 64 routed experts, 4 per token
	// (approximately 28B in experts). Shapes uncertain (model card as remembered).
	refGLM47Flash = ModelSpec{Name: "zai-org/GLM-4.7-Flash", TotalParams: 30e9, ActiveParams: 3.2e9,
		Layers: 47, Hidden: 2048, Heads: 20, HeadDim: 256, KVBytesPerToken: 47 * 576 * 2,
		BytesPerParam: 2, Format: BF16, Experts: 64, ExpertsPerToken: 4, ExpertParams: 28e9,
		ExpertSpread: 0.257} // fitted: routing skew (see fitGLM47H200)
	// Qwen3.6-35B-A3B, taken to share Qwen3.5-35B-A3B's shapes: 40 layers, hidden 2048, of which
	// 30 Gated DeltaNet (linear attention: a fixed state, about 63 MB per sequence read and
	// written per step, uncertain) and 10 gated full attention (16 query heads, 2 KV heads ×
	// 256: 10·2·2·256·2 B = 20,480 B per token, BF16 KV); 256 experts, 8 per token (32B in
	// experts), FP8 weights; one MTP layer (draft pass reads about 0.7B: MTP layer + LM head).
	refQwen36MoE = ModelSpec{Name: "Qwen/Qwen3.6-35B-A3B-FP8", TotalParams: 35e9, ActiveParams: 3e9,
		Layers: 40, Hidden: 2048, Heads: 16, HeadDim: 256, KVBytesPerToken: 10 * 2 * 2 * 256 * 2,
		LinearLayers: 30, StateBytesPerSeq: 63e6,
		BytesPerParam: 1, Format: FP8, Experts: 256, ExpertsPerToken: 8, ExpertParams: 32e9,
		ExpertSpread: 0.829, // fitted: routing skew (see fitQwen36RTX)
		DraftParams:  0.7e9}
	// Step-3.7-Flash (StepFun), language backbone: 196B MoE, about 11B active; 45 layers,
	// hidden 4096; S3F1 hybrid attention: 34 sliding-window layers (W = 512) and 11 full GQA
	// layers, 64 query heads (uncertain), 8 KV heads × 128: 11·2·8·128·2 B = 45,056 B per token
	// full and 34·2·8·128·2 B per token of window; 288 routed experts, 8 per token (about 190B
	// in experts); MTP heads (a draft pass reads about 1B: MTP layer + LM head). BF16 weights.
	refStep37Flash = ModelSpec{Name: "stepfun-ai/Step-3.7-Flash", TotalParams: 196e9, ActiveParams: 11e9,
		Layers: 45, Hidden: 4096, Heads: 64, HeadDim: 128, KVBytesPerToken: 11 * 2 * 8 * 128 * 2,
		SlidingLayers: 34, SlidingWindow: 512, SlidingKVBytesPerToken: 34 * 2 * 8 * 128 * 2,
		BytesPerParam: 2, Format: BF16, Experts: 288, ExpertsPerToken: 8, ExpertParams: 190e9,
		DraftParams: 1e9}
)

// nvfp4 returns m quantised to NVFP4 (4-bit weights with an 8-bit scale per 16: 0.5625 B).
func (m ModelSpec) nvfp4(name string) ModelSpec {
	m.Name, m.BytesPerParam, m.Format = name, 0.5625, NVFP4
	return m
}

// vllmReference are the vLLM settings of the reference runs (defaults: chunked prefill with a
// budget of 8192 tokens, 90 % of GPU memory, blocks of 16 tokens, a chunk per step).
var vllmReference = EngineSpec{
	// The API server renders the chat template, tokenises the prompt and hands the token ids
	// to the engine process before the scheduler sees the request, on the CPU. Hugging Face's
	// fast tokenisers encode a few hundred thousand tokens per second on one core (tiktoken's
	// README puts itself 3-6x ahead of GPT2TokenizerFast), so 2-5 µs per prompt token: 2 µs
	// (0.2 s for a 96K prompt) is taken. Estimated, not fitted (single-request TTFTs cannot
	// tell it apart from prefill compute), and set after trying values on the validation set. What it changes is who waits: while a long new
	// prompt is being tokenised, the requests still decoding finish, so a round of long
	// requests stays a burst (docs/simulator.md has the sensitivity: 2-6 µs give the same
	// agreement, less loses the long-context limits).
	RequestOverheadPerToken: 2 * time.Microsecond,
	MaxNumBatchedTokens:     8192,
	MaxNumSeqs:              256,
	GPUMemoryUtilization:    0.9,
	MaxModelLen:             262144 + 4096,
	BlockSize:               16,
	MemoryPowerWeight:       0.6,
}

// Validation is how far a profile's kind of configuration was from published measurements:
// the held-out points of the reference it was validated against.
type Validation struct {
	// Reference names the published configuration (and the profile validated on it).
	Reference string
	// Points is the number of held-out points compared; MedianErrorPct and WorstErrorPct the
	// median and largest absolute relative error over them (%), TTFT, per-user generation speed
	// and system throughput only.
	Points                        int
	MedianErrorPct, WorstErrorPct float64
	// Limits is the number of the reference's published capacity limits compared (one per use
	// case), LimitsAgree how many the simulator reproduced (as sim/validation's Row.Agrees
	// decides), and Misses names the others, e.g. "code completion (~35 published, 17
	// simulated)".
	Limits, LimitsAgree int
	Misses              string
}

// Fitted engine-overhead parameters, one set per reference configuration (the vllm bench serve
// post's three GPUs share one set, plus the eager-mode launch cost of H100 and A100 and the
// A100's own compute efficiency). They were
// fitted once, by `go test ./sim/validation -run TestFit -fit`, on the points marked "fit" in
// sim/validation/reference.csv and are validated on the others.
var (
	fitGLM47H200 = engineFit{
		ComputeEfficiency: 0.2777, AttentionEfficiency: 0.6694, BandwidthEfficiency: 0.4579,
		KVBandwidthEfficiency: 0.6873,
		StepOverhead:          1791 * time.Microsecond, PerSeqOverhead: 1 * time.Microsecond,
		RequestOverhead: 37.3 * 1e6,
	}
	fitQwen36RTX = engineFit{
		ComputeEfficiency: 0.2438, AttentionEfficiency: 0.5892, BandwidthEfficiency: 0.6456,
		KVBandwidthEfficiency: 0.2161,
		StepOverhead:          1532 * time.Microsecond, PerSeqOverhead: 1 * time.Microsecond,
		RequestOverhead: 35.6 * 1e6, SpecAcceptance: 0.8048,
	}
	fitStep37NVFP4RTX = engineFit{
		ComputeEfficiency: 0.01764, AttentionEfficiency: 0.5183, BandwidthEfficiency: 0.829,
		KVBandwidthEfficiency: 1,
		StepOverhead:          4646 * time.Microsecond, PerSeqOverhead: 1493 * time.Microsecond,
		RequestOverhead: 35.7 * 1e6,
	}
	// The vllm bench serve post has four fitted points; the attention and bandwidth
	// efficiencies and the per-sequence and per-request overheads are GLM's (vLLM on Hopper-class
	// HBM), the rest are fitted.
	fitStep37MTP = engineFit{
		ComputeEfficiency: 0.04534, AttentionEfficiency: fitGLM47H200.AttentionEfficiency,
		BandwidthEfficiency: fitGLM47H200.BandwidthEfficiency,
		StepOverhead:        2062 * time.Microsecond, PerSeqOverhead: fitGLM47H200.PerSeqOverhead,
		RequestOverhead: fitGLM47H200.RequestOverhead, SpecAcceptance: 0.77,
	}
	// fitEagerLayerOverhead is the per-layer launch cost of a step without CUDA graphs (H100
	// and A100 ran in eager mode).
	fitEagerLayerOverhead = 146 * time.Microsecond
	// fitA100ComputeEfficiency is the A100's own achieved fraction of its BF16 peak (312
	// TFLOP/s per GPU), fitted on one point: the post's A100 TPOT, 60.1 ms mean (its Latency
	// table). The shared 0.04534 was fitted on the B200 (another generation of tensor cores and
	// kernels) and made the A100 22 % fast on that TPOT, 54 % short on TTFT and 34 % high on
	// throughput; with this value the A100's TTFT, ITL, per-user speed and throughput stay held
	// out (docs/simulator.md, "The 8× A100").
	fitA100ComputeEfficiency = 0.02793
)

// engineFit is the fitted part of an EngineSpec.
type engineFit struct {
	ComputeEfficiency, AttentionEfficiency, BandwidthEfficiency float64
	KVBandwidthEfficiency                                       float64
	StepOverhead, PerSeqOverhead, RequestOverhead               time.Duration
	SpecAcceptance                                              float64
	LayerOverhead                                               time.Duration
}

// engine returns vllmReference with f applied and k speculative tokens.
func (f engineFit) engine(k int) EngineSpec {
	e := vllmReference
	e.ComputeEfficiency, e.AttentionEfficiency, e.BandwidthEfficiency = f.ComputeEfficiency, f.AttentionEfficiency, f.BandwidthEfficiency
	e.KVBandwidthEfficiency = f.KVBandwidthEfficiency
	e.StepOverhead, e.PerSeqOverhead, e.RequestOverhead = f.StepOverhead, f.PerSeqOverhead, f.RequestOverhead
	e.LayerOverhead, e.DraftOverhead = f.LayerOverhead, f.StepOverhead // a draft pass is a small step
	if k > 0 {
		e.SpecTokens, e.SpecAcceptance = k, f.SpecAcceptance
	}
	return e
}

// validated is each reference configuration's validation (held-out TTFT, per-user generation
// speed and system throughput points), as `servebench sim validate` measures it; a test in
// sim/validation keeps these figures equal to the measured ones.
var validated = map[string]Validation{
	"glm47-flash-bf16-1xh200": {Reference: "glm47-flash-bf16-1xh200", Points: 26, MedianErrorPct: 8, WorstErrorPct: 48,
		Limits: 5, LimitsAgree: 5},
	"qwen36-35b-a3b-fp8-mtp-1xrtxpro6000": {Reference: "qwen36-35b-a3b-fp8-mtp-1xrtxpro6000", Points: 30, MedianErrorPct: 11, WorstErrorPct: 45,
		Limits: 5, LimitsAgree: 4, Misses: "code completion (~35 published, 17 simulated)"},
	"step37-flash-nvfp4-2xrtxpro6000": {Reference: "step37-flash-nvfp4-2xrtxpro6000", Points: 30, MedianErrorPct: 9, WorstErrorPct: 29,
		Limits: 5, LimitsAgree: 5},
	"step37-flash-bf16-mtp-4xb200": {Reference: "step37-flash-bf16-mtp-4xb200", Points: 2, MedianErrorPct: 1, WorstErrorPct: 1},
	"step37-flash-bf16-mtp-8xh100": {Reference: "step37-flash-bf16-mtp-8xh100", Points: 3, MedianErrorPct: 2, WorstErrorPct: 14},
	"step37-flash-bf16-mtp-8xa100": {Reference: "step37-flash-bf16-mtp-8xa100", Points: 3, MedianErrorPct: 2, WorstErrorPct: 26},
}

// validatedKind is the generic single-GPU BF16 profiles' nearest validated kind: GLM-4.7-Flash
// BF16 on one H200 with vLLM, whose fitted engine overheads they share (vllmDefaults).
var validatedKind = func() Validation {
	v := validated["glm47-flash-bf16-1xh200"]
	v.Reference += " (nearest validated kind)"
	return v
}()

// ReferenceProfiles returns the profiles of the published reference configurations.
func ReferenceProfiles() []Profile {
	eager := fitStep37MTP
	eager.LayerOverhead = fitEagerLayerOverhead
	a100 := eager
	a100.ComputeEfficiency = fitA100ComputeEfficiency
	return []Profile{
		{Name: "h200-glm47-flash", Description: "1× H200 serving GLM-4.7-Flash BF16 with vLLM (reference)",
			GPU: refH200, Model: refGLM47Flash, Engine: fitGLM47H200.engine(0), Validation: validated["glm47-flash-bf16-1xh200"]},
		{Name: "rtxpro6000-qwen36-35b-a3b-fp8-mtp", Description: "1× RTX Pro 6000 serving Qwen3.6-35B-A3B FP8 with MTP (2 speculative tokens) on vLLM (reference)",
			GPU: refRTXPro6000, Model: refQwen36MoE, Engine: fitQwen36RTX.engine(2), Validation: validated["qwen36-35b-a3b-fp8-mtp-1xrtxpro6000"]},
		{Name: "2xrtxpro6000-step37-flash-nvfp4", Description: "2× RTX Pro 6000 (TP 2, PCIe) serving Step-3.7-Flash NVFP4 on vLLM (reference)",
			GPU: refRTXPro6000.times(2), Model: refStep37Flash.nvfp4("stepfun-ai/Step-3.7-Flash-NVFP4"), Engine: fitStep37NVFP4RTX.engine(0),
			Validation: validated["step37-flash-nvfp4-2xrtxpro6000"]},
		{Name: "4xb200-step37-flash-mtp", Description: "4× B200 (TP 4) serving Step-3.7-Flash BF16 with MTP (3 speculative tokens) on vLLM (reference)",
			GPU: refB200.times(4), Model: refStep37Flash, Engine: fitStep37MTP.engine(3), Validation: validated["step37-flash-bf16-mtp-4xb200"]},
		{Name: "8xh100-step37-flash-mtp", Description: "8× H100 (TP 8, eager mode) serving Step-3.7-Flash BF16 with MTP on vLLM (reference)",
			GPU: refH100.times(8), Model: refStep37Flash, Engine: eager.engine(3), Validation: validated["step37-flash-bf16-mtp-8xh100"]},
		{Name: "8xa100-step37-flash-mtp", Description: "8× A100 (TP 8, eager mode) serving Step-3.7-Flash BF16 with MTP on vLLM (reference)",
			GPU: refA100.times(8), Model: refStep37Flash, Engine: a100.engine(3), Validation: validated["step37-flash-bf16-mtp-8xa100"]},
	}
}

// Summary says the validated error in words, e.g. "median 12%, worst 38% over 40 points of
// glm47-flash-bf16-1xh200", or "not validated".
func (v Validation) Summary() string {
	if v.Points == 0 {
		return "not validated"
	}
	s := fmt.Sprintf("median %.0f%%, worst %.0f%% over %d points of %s", v.MedianErrorPct, v.WorstErrorPct, v.Points, v.Reference)
	if v.Limits > 0 {
		s += fmt.Sprintf("; capacity limits %d of %d agree", v.LimitsAgree, v.Limits)
		if v.Misses != "" {
			s += ", missed " + v.Misses
		}
	}
	return s
}
