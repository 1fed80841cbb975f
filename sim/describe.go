package sim

import (
	"fmt"
	"strings"

	"github.com/servebench/servebench"
)

// Paths the simulated engine serves besides the OpenAI API under /v1.
const (
	MetricsPath = "/metrics"      // vLLM-style Prometheus metrics
	DCGMPath    = "/dcgm/metrics" // dcgm-exporter-style GPU telemetry
)

// Target completes a plan's target for a simulator served at base ("http://127.0.0.1:PORT"):
// the API base, its metrics endpoint (unless one was given) and its simulated GPU telemetry
// (unless another GPU source was named).
func Target(t servebench.Target, base string) servebench.Target {
	t.URL = base + "/v1"
	if t.MetricsURL == "" {
		t.MetricsURL = base + MetricsPath
	}
	if t.GPU == "" || t.GPU == "auto" || t.GPU == "sim" {
		t.GPU = "dcgm=" + base + DCGMPath
	}
	return t
}

// Metadata fills what m leaves blank with what the profile simulates, so a report's hardware
// and model tables describe the simulated system instead of "—".
func (p Profile) Metadata(m servebench.Metadata) servebench.Metadata {
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&m.ModelOrg, modelOrg(p.Model.Name))
	set(&m.ModelName, p.Model.Name)
	set(&m.Parameters, fmt.Sprintf("%gB", p.Model.TotalParams/1e9))
	arch := "Dense"
	if p.Model.ActiveParams < p.Model.TotalParams {
		arch = fmt.Sprintf("Mixture-of-Experts (%gB active)", p.Model.ActiveParams/1e9)
	}
	set(&m.Architecture, arch)
	prec := "BF16"
	switch {
	case p.Model.Format == NVFP4 || p.Model.BytesPerParam < 1:
		prec = "NVFP4"
	case p.Model.Format == FP8 || p.Model.BytesPerParam == 1:
		prec = "FP8"
	}
	set(&m.Precision, prec)
	set(&m.KVCache, "BF16")
	set(&m.GPU, fmt.Sprintf("%dx %s (simulated)", p.GPU.Count, p.GPU.Name))
	set(&m.VRAM, fmt.Sprintf("%.1f GB", p.GPU.MemoryBytes/1e9))
	set(&m.Engine, "vLLM-like simulator:")
	spec := "none"
	if k := p.Engine.SpecTokens; k > 0 {
		spec = fmt.Sprintf("MTP, %d speculative tokens (%.1f tokens per step)", k, p.TokensPerStep())
	}
	set(&m.SpeculativeDecoding, spec)
	return m
}

// modelOrgs names the organisations behind the Hugging Face owners of the simulated models.
var modelOrgs = map[string]string{"zai-org": "Z.ai", "meta-llama": "Meta", "Qwen": "Qwen (Alibaba)", "stepfun-ai": "StepFun"}

// modelOrg is the organisation that published model (a Hugging Face id "owner/name"): the
// owner's name from modelOrgs, else the owner as written; "servebench (imaginary model)" for a
// model without an owner (the fast profile's).
func modelOrg(model string) string {
	owner, _, ok := strings.Cut(model, "/")
	if !ok || owner == "" {
		return "servebench (imaginary model)"
	}
	if org, known := modelOrgs[owner]; known {
		return org
	}
	return owner
}
