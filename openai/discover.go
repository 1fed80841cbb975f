package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// ProbePromptTokens sends prompt as a one-token request and returns the server's
// usage.prompt_tokens (Ollama native: prompt_eval_count): the prompt's length as the server
// counts it, chat template included. Prompt calibration is built on it.
func (c *Client) ProbePromptTokens(ctx context.Context, prompt string) (int, error) {
	var rec servebench.Record
	res := c.do(ctx, &servebench.Request{Prompt: prompt, MaxOutputTokens: 1}, &rec)
	if !res.ended {
		return 0, fmt.Errorf("prompt-token probe failed (%s): %s", rec.ErrorClass, rec.Error)
	}
	if res.usagePrompt != nil && rec.InputTokensSource != servebench.SourceUsage {
		return 0, fmt.Errorf("the server's usage.prompt_tokens cannot be true (%s), so prompts cannot be calibrated against it: use its /tokenize endpoint or a local tokenizer", rec.ViolationNote)
	}
	if res.usagePrompt == nil {
		return 0, errors.New("the server reports no usage.prompt_tokens, so prompts cannot be calibrated against it: use its /tokenize endpoint or a local tokenizer")
	}
	return *res.usagePrompt, nil
}

// rawLimit bounds each body kept in ServerInfo.Raw.
const rawLimit = 4 << 10

// modelEntry is one entry of /v1/models across engines.
type modelEntry struct {
	ID          string `json:"id"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"` // vLLM, SGLang, servebench sim
	Meta        *struct {
		NCtxTrain int `json:"n_ctx_train"` // llama.cpp
	} `json:"meta"`
}

// Discover asks the target what it is: GET {base}/models for the model ids and maximum
// context, then engine-specific endpoints for the engine name and version:
//
//	owned_by "vllm" | "sglang" | "llamacpp" | "library"/"ollama" | "servebench-sim" | TensorRT-LLM
//	{root}/api/version   Ollama     {"version"}
//	{root}/info          TGI        {"model_id", "version", "max_total_tokens"}
//	{root}/props         llama.cpp  default_generation_settings.n_ctx (the context a request gets)
//	{root}/version       vLLM       {"version"} (and the version of SGLang and the simulator)
//
// A response carrying servebench.SimulatedHeader, or a version starting "servebench-sim", makes
// the engine "sim": servebench's simulated engine, whatever else it resembles.
// MaxModelLen comes from max_model_len on the model entry, llama.cpp's /props n_ctx (else
// meta.n_ctx_train), or TGI's max_total_tokens. Ollama gets Quirks{NoIgnoreEOS, NoMinTokens}
// and ForcesOutputLength false (so does TGI, which has no ignore_eos). Raw bodies, truncated
// to 4 KiB, are kept in ServerInfo.Raw by path. An empty model list is an error unless
// cfg.Model names one; whatever was learnt is returned with any error.
func Discover(ctx context.Context, cfg Config) (servebench.ServerInfo, Quirks, error) {
	info := servebench.ServerInfo{Engine: "unknown", Raw: map[string]string{}}
	var q Quirks
	base, root, err := parseBase(cfg.BaseURL)
	if err != nil {
		return info, q, err
	}
	tr := newTransport(1, false)
	if cfg.DialContext != nil {
		tr.DialContext = cfg.DialContext
	}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: CheckRedirect}
	defer hc.CloseIdleConnections()
	simulated := false // the target sent servebench.SimulatedHeader
	get := func(url string) ([]byte, int, error) {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, 0, err
		}
		if cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
		}
		for k, vs := range cfg.Headers {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		if resp.Header.Get(servebench.SimulatedHeader) != "" {
			simulated = true
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return b, resp.StatusCode, err
	}
	secrets := secretsOf(cfg)
	redact := func(s string) string { return servebench.Redact(s, secrets...) }
	keep := func(name string, b []byte) { info.Raw[name] = clip(redact(string(b)), rawLimit) }

	// 1. The model list.
	b, status, err := get(base + "/models")
	if err != nil {
		return info, q, errors.New(redact(fmt.Sprintf("cannot reach %s/models: %v — is the server running, and is --url the API base ending in /v1?", base, err)))
	}
	b = []byte(redact(string(b))) // before any clipping, so no part of the key survives
	keep("models", b)
	if status < 200 || status > 299 {
		hint := bodyHint("", b)
		return info, q, errors.New(redact(fmt.Sprintf("GET %s/models answered HTTP %d: %s; check --url is the API base ending in /v1 (and the API key)", base, status, hint)))
	}
	entries, listed, err := parseModels(b)
	if err != nil {
		return info, q, fmt.Errorf("GET %s/models did not return a model list (%v): received %s; check --url is the API base ending in /v1", base, err, bodyHint("", b))
	}
	for _, e := range entries {
		if e.ID != "" {
			info.Models = append(info.Models, e.ID)
		}
	}
	entry := pickEntry(entries, cfg.Model)
	if entry != nil {
		info.Engine = engineFromOwner(entry.OwnedBy, entry.ID)
		if simulated {
			info.Engine = "sim"
		}
		info.MaxModelLen = entry.MaxModelLen
		if info.MaxModelLen == 0 && entry.Meta != nil && entry.Meta.NCtxTrain > 0 {
			info.MaxModelLen = entry.Meta.NCtxTrain
			if info.Engine == "unknown" {
				info.Engine = "llamacpp"
			}
		}
	}

	// 2. Engine-specific endpoints; each is tried only where it can tell something.
	probe := func(engine, path string, parse func([]byte) bool) {
		if info.Engine != "unknown" && info.Engine != engine {
			return
		}
		b, status, err := get(root + path)
		if err != nil || status != http.StatusOK {
			return
		}
		if parse(b) {
			keep(strings.TrimPrefix(path, "/"), b)
			info.Engine = engine
		}
	}
	probe("ollama", "/api/version", func(b []byte) bool {
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &v) != nil || v.Version == "" {
			return false
		}
		info.Version = v.Version
		return true
	})
	probe("tgi", "/info", func(b []byte) bool {
		var v struct {
			ModelID        string `json:"model_id"`
			Version        string `json:"version"`
			MaxTotalTokens int    `json:"max_total_tokens"`
		}
		if json.Unmarshal(b, &v) != nil || v.ModelID == "" {
			return false
		}
		info.Version = v.Version
		if v.MaxTotalTokens > 0 {
			info.MaxModelLen = v.MaxTotalTokens
		}
		return true
	})
	probe("llamacpp", "/props", func(b []byte) bool {
		var v struct {
			DefaultGenerationSettings *struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
			NCtx      int    `json:"n_ctx"`
			BuildInfo string `json:"build_info"`
		}
		if json.Unmarshal(b, &v) != nil || v.DefaultGenerationSettings == nil {
			return false
		}
		n := v.DefaultGenerationSettings.NCtx
		if n == 0 {
			n = v.NCtx
		}
		if n > 0 {
			info.MaxModelLen = n
		}
		info.Version = v.BuildInfo
		return true
	})
	switch info.Engine {
	case "unknown", "vllm", "sglang", "sim", "tensorrt-llm":
		engine := info.Engine
		if engine == "unknown" {
			engine = "vllm" // a bare {"version"} at the root is vLLM's
		}
		probe(engine, "/version", func(b []byte) bool {
			var v struct {
				Version string `json:"version"`
			}
			if json.Unmarshal(b, &v) != nil || v.Version == "" {
				return false
			}
			info.Version = v.Version
			return true
		})
	}

	if simulated || strings.HasPrefix(info.Version, "servebench-sim") {
		info.Engine = "sim" // the simulator says so on the wire, whatever it mimics
	}

	// 3. What the engine can be asked to do.
	info.ForcesOutputLength = true
	switch info.Engine {
	case "ollama":
		q = Quirks{NoIgnoreEOS: true, NoMinTokens: true}
		info.ForcesOutputLength = false
	case "tgi":
		info.ForcesOutputLength = false
	}
	if len(info.Models) == 0 && cfg.Model == "" {
		what := "an empty list"
		if !listed {
			what = `"data": null`
		}
		return info, q, fmt.Errorf("the server lists no models (GET %s/models gave %s): load one (for Ollama: ollama create/pull) or pass --model", base, what)
	}
	return info, q, nil
}

// parseModels reads the OpenAI list {"data": [...]}, a bare array, or a single object.
// listed is false when "data" was null or absent.
func parseModels(b []byte) (entries []modelEntry, listed bool, err error) {
	t := strings.TrimSpace(string(b))
	if strings.HasPrefix(t, "[") {
		err = json.Unmarshal(b, &entries)
		return entries, err == nil, err
	}
	var list struct {
		Data   *[]modelEntry `json:"data"`
		Models []modelEntry  `json:"models"` // llama.cpp's second list
		ID     string        `json:"id"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, false, err
	}
	switch {
	case list.Data != nil:
		return *list.Data, true, nil
	case list.ID != "":
		var one modelEntry
		err := json.Unmarshal(b, &one)
		return []modelEntry{one}, true, err
	}
	return nil, false, nil
}

// pickEntry returns the entry for model, else the first.
func pickEntry(entries []modelEntry, model string) *modelEntry {
	for i := range entries {
		if entries[i].ID == model {
			return &entries[i]
		}
	}
	if len(entries) > 0 {
		return &entries[0]
	}
	return nil
}

// engineFromOwner maps /v1/models owned_by (or a model id) to an engine name.
func engineFromOwner(owner, id string) string {
	switch strings.ToLower(owner) {
	case "vllm":
		return "vllm"
	case "sglang":
		return "sglang"
	case "llamacpp", "llama.cpp":
		return "llamacpp"
	case "library", "ollama":
		return "ollama"
	case "servebench-sim":
		return "sim"
	case "tensorrt_llm", "tensorrt-llm", "trtllm":
		return "tensorrt-llm"
	case "tgi", "text-generation-inference":
		return "tgi"
	}
	if id == "servebench-sim" {
		return "sim"
	}
	return "unknown"
}
