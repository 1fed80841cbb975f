package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

func TestDiscover(t *testing.T) {
	tests := []struct {
		name       string
		routes     map[string]string // path → JSON body (200); any other path is 404
		model      string            // Config.Model
		engine     string
		version    string
		models     []string
		maxLen     int
		quirks     Quirks
		forces     bool
		errContain string
		raw        []string // keys expected in ServerInfo.Raw
	}{
		// vLLM: owned_by and max_model_len on the entry, /version
		{name: "vllm", routes: map[string]string{
			"/v1/models": `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","created":1,"owned_by":"vllm","root":"Qwen/Qwen3-8B","parent":null,"max_model_len":40960,"permission":[]}]}`,
			"/version":   `{"version":"0.10.1"}`,
		}, engine: "vllm", version: "0.10.1", models: []string{"Qwen/Qwen3-8B"}, maxLen: 40960, forces: true, raw: []string{"models", "version"}},
		// vLLM serving two models: the entry of Config.Model gives the length
		{name: "vllm two models", model: "b", routes: map[string]string{
			"/v1/models": `{"object":"list","data":[{"id":"a","owned_by":"vllm","max_model_len":1000},{"id":"b","owned_by":"vllm","max_model_len":2000}]}`,
		}, engine: "vllm", models: []string{"a", "b"}, maxLen: 2000, forces: true},
		// SGLang
		{name: "sglang", routes: map[string]string{
			"/v1/models": `{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":1,"owned_by":"sglang","root":"meta-llama/Llama-3.1-8B-Instruct","max_model_len":131072}]}`,
		}, engine: "sglang", models: []string{"meta-llama/Llama-3.1-8B-Instruct"}, maxLen: 131072, forces: true},
		// llama.cpp: /props n_ctx (the slot context) wins over meta.n_ctx_train
		{name: "llama.cpp", routes: map[string]string{
			"/v1/models": `{"models":[{"name":"qwen.gguf","model":"qwen.gguf"}],"object":"list","data":[{"id":"qwen.gguf","object":"model","created":1,"owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":151936,"n_ctx_train":32768,"n_embd":2048,"n_params":1,"size":1}}]}`,
			"/props":     `{"default_generation_settings":{"n_ctx":8192,"params":{}},"total_slots":1,"model_path":"qwen.gguf","build_info":"b5000-abc"}`,
		}, engine: "llamacpp", version: "b5000-abc", models: []string{"qwen.gguf"}, maxLen: 8192, forces: true, raw: []string{"models", "props"}},
		// llama.cpp without /props: the training context
		{name: "llama.cpp no props", routes: map[string]string{
			"/v1/models": `{"object":"list","data":[{"id":"m.gguf","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":4096}}]}`,
		}, engine: "llamacpp", models: []string{"m.gguf"}, maxLen: 4096, forces: true},
		// Ollama with a model: quirks, cannot force the length
		{name: "ollama", routes: map[string]string{
			"/v1/models":   `{"object":"list","data":[{"id":"tiny:latest","object":"model","created":1,"owned_by":"library"}]}`,
			"/api/version": `{"version":"0.12.3"}`,
		}, engine: "ollama", version: "0.12.3", models: []string{"tiny:latest"}, quirks: Quirks{NoIgnoreEOS: true, NoMinTokens: true}, forces: false, raw: []string{"models", "api/version"}},
		// Ollama with no model pulled: "data": null is a clear error, the engine still known
		{name: "ollama data null", routes: map[string]string{
			"/v1/models":   `{"object":"list","data":null}`,
			"/api/version": `{"version":"0.12.3"}`,
		}, engine: "ollama", version: "0.12.3", quirks: Quirks{NoIgnoreEOS: true, NoMinTokens: true}, errContain: "lists no models"},
		// the same with --model given: no error
		{name: "ollama data null with model", model: "tiny", routes: map[string]string{
			"/v1/models":   `{"object":"list","data":null}`,
			"/api/version": `{"version":"0.12.3"}`,
		}, engine: "ollama", version: "0.12.3", quirks: Quirks{NoIgnoreEOS: true, NoMinTokens: true}},
		// an empty list from an unknown server
		{name: "empty list", routes: map[string]string{"/v1/models": `{"object":"list","data":[]}`},
			engine: "unknown", forces: true, errContain: "ollama create/pull"},
		// TGI: /info gives the version and max_total_tokens
		{name: "tgi", routes: map[string]string{
			"/v1/models": `[{"id":"tgi","object":"model","created":0,"owned_by":"meta-llama/Llama-3.1-8B-Instruct"}]`,
			"/info":      `{"model_id":"meta-llama/Llama-3.1-8B-Instruct","version":"3.0.1","max_input_tokens":8191,"max_total_tokens":8192}`,
		}, engine: "tgi", version: "3.0.1", models: []string{"tgi"}, maxLen: 8192, forces: false},
		// the built-in simulator
		{name: "sim", routes: map[string]string{
			"/v1/models": `{"object":"list","data":[{"id":"sim-model","object":"model","owned_by":"servebench-sim","max_model_len":32768}]}`,
			"/version":   `{"version":"servebench-sim 1.0 (profile fast)"}`,
		}, engine: "sim", version: "servebench-sim 1.0 (profile fast)", models: []string{"sim-model"}, maxLen: 32768, forces: true},
		// an HTML page where the API should be
		{name: "html", routes: map[string]string{"/v1/models": `<html><head><title>Login</title></head></html>`},
			engine: "unknown", errContain: "did not return a model list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, ok := tt.routes[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				if r.Header.Get("Authorization") != "Bearer k" {
					t.Errorf("%s without the API key", r.URL.Path)
				}
				_, _ = w.Write([]byte(b))
			}))
			defer srv.Close()
			info, q, err := Discover(context.Background(), Config{BaseURL: srv.URL + "/v1", Model: tt.model, APIKey: "k", API: servebench.APIChat})
			if tt.errContain == "" && err != nil {
				t.Fatal(err)
			}
			if tt.errContain != "" && (err == nil || !strings.Contains(err.Error(), tt.errContain)) {
				t.Fatalf("error %v, want %q", err, tt.errContain)
			}
			if info.Engine != tt.engine || info.Version != tt.version || info.MaxModelLen != tt.maxLen {
				t.Errorf("engine %q version %q max len %d, want %q %q %d", info.Engine, info.Version, info.MaxModelLen, tt.engine, tt.version, tt.maxLen)
			}
			if !slices.Equal(info.Models, tt.models) {
				t.Errorf("models %v, want %v", info.Models, tt.models)
			}
			if q != tt.quirks || (err == nil && info.ForcesOutputLength != tt.forces) {
				t.Errorf("quirks %+v forces %v, want %+v %v", q, info.ForcesOutputLength, tt.quirks, tt.forces)
			}
			for _, k := range tt.raw {
				if info.Raw[k] == "" {
					t.Errorf("Raw[%q] missing (have %v)", k, keys(info.Raw))
				}
			}
		})
	}
}

func keys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

func TestDiscoverUnreachable(t *testing.T) {
	_, _, err := Discover(context.Background(), Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err == nil || !strings.Contains(err.Error(), "is the server running") {
		t.Errorf("error %v", err)
	}
}
