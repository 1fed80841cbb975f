package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// startServer serves the fast profile with options o over loopback (simtest.Start) until the
// test ends.
func startServer(t *testing.T, o sim.Options) (*sim.Server, string) {
	t.Helper()
	s := simtest.Start(t, simtest.Config{Options: o})
	return s.Server, s.URL
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readSSE returns the JSON events of a stream and whether it ended with [DONE].
func readSSE(t *testing.T, resp *http.Response) ([]map[string]any, bool) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var events []map[string]any
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if done {
			t.Fatalf("event after [DONE]: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		events = append(events, ev)
	}
	return events, done
}

func choice(ev map[string]any) map[string]any {
	cs := ev["choices"].([]any)
	if len(cs) == 0 {
		return nil
	}
	return cs[0].(map[string]any)
}

func chatBody(content string, maxTokens int, extra map[string]any) map[string]any {
	b := map[string]any{
		"model":          "servebench-sim-0.5b",
		"messages":       []map[string]any{{"role": "user", "content": content}},
		"max_tokens":     maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"ignore_eos":     true,
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func tokenizeCount(t *testing.T, url string, body any) int {
	t.Helper()
	resp := post(t, url+"/tokenize", body)
	defer resp.Body.Close()
	var out struct {
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
		Tokens      []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("tokenize: %d %v", resp.StatusCode, err)
	}
	if len(out.Tokens) != out.Count || out.MaxModelLen != sim.FastProfile.Engine.MaxModelLen {
		t.Fatalf("tokenize: %d tokens listed for count %d, max_model_len %d", len(out.Tokens), out.Count, out.MaxModelLen)
	}
	return out.Count
}

// The chat stream is shaped like vLLM's: role chunk, content chunks (the last with
// finish_reason), a usage chunk with choices [], then [DONE]; usage matches /tokenize.
func TestChatStreamShape(t *testing.T) {
	_, url := startServer(t, sim.Options{})
	// long enough to span several stream intervals at the fast profile's decode speed
	const n = 200
	prompt := "run-1 seq-7: please summarise the following, carefully."
	events, done := readSSE(t, post(t, url+"/v1/chat/completions", chatBody(prompt, n, nil)))
	if !done {
		t.Fatal("stream did not end with [DONE]")
	}
	if len(events) < 4 {
		t.Fatalf("only %d events", len(events))
	}
	first := choice(events[0])
	d := first["delta"].(map[string]any)
	if d["role"] != "assistant" || d["content"] != "" || first["finish_reason"] != nil {
		t.Errorf("first chunk is not role-only: %v", events[0])
	}
	var text strings.Builder
	var finish any
	id := events[0]["id"].(string)
	for i, ev := range events[1 : len(events)-1] {
		if ev["object"] != "chat.completion.chunk" || ev["id"] != id {
			t.Errorf("event %d: object %v id %v", i+1, ev["object"], ev["id"])
		}
		c := choice(ev)
		text.WriteString(c["delta"].(map[string]any)["content"].(string))
		if c["finish_reason"] != nil {
			if i != len(events)-3 {
				t.Errorf("finish_reason on event %d, not on the last content chunk", i+1)
			}
			finish = c["finish_reason"]
		}
	}
	if finish != "length" {
		t.Errorf("finish_reason %v, want length (ignore_eos)", finish)
	}
	last := events[len(events)-1]
	if cs := last["choices"].([]any); len(cs) != 0 {
		t.Errorf("usage chunk has choices %v", cs)
	}
	u := last["usage"].(map[string]any)
	if u["completion_tokens"].(float64) != n {
		t.Errorf("completion_tokens %v, want %d", u["completion_tokens"], n)
	}
	if got := sim.CountTokens(text.String()); got != n {
		t.Errorf("streamed text is %d tokens, want %d", got, n)
	}
	want := tokenizeCount(t, url, map[string]any{"model": "servebench-sim-0.5b",
		"messages": []map[string]any{{"role": "user", "content": prompt}}})
	if int(u["prompt_tokens"].(float64)) != want || want != sim.CountChatTokens([]sim.ChatMessage{{"user", prompt}}) {
		t.Errorf("usage prompt_tokens %v, /tokenize %d", u["prompt_tokens"], want)
	}
	if u["total_tokens"].(float64) != u["prompt_tokens"].(float64)+n {
		t.Errorf("total_tokens %v", u["total_tokens"])
	}
}

// The completions flavour: no role chunk, text chunks, usage, [DONE]; /tokenize agrees.
func TestCompletionsStream(t *testing.T) {
	_, url := startServer(t, sim.Options{})
	prompt := "unique marker 42 — the quick brown fox"
	body := map[string]any{"model": "servebench-sim-0.5b", "prompt": prompt, "max_tokens": 25, "min_tokens": 25,
		"stream": true, "stream_options": map[string]any{"include_usage": true}}
	events, done := readSSE(t, post(t, url+"/v1/completions", body))
	if !done || len(events) < 2 {
		t.Fatalf("done %v, %d events", done, len(events))
	}
	var text strings.Builder
	for _, ev := range events[:len(events)-1] {
		if ev["object"] != "text_completion" {
			t.Errorf("object %v", ev["object"])
		}
		text.WriteString(choice(ev)["text"].(string))
	}
	u := events[len(events)-1]["usage"].(map[string]any)
	if u["completion_tokens"].(float64) != 25 || sim.CountTokens(text.String()) != 25 {
		t.Errorf("completion_tokens %v, text tokens %d, want 25 (min_tokens = max_tokens)", u["completion_tokens"], sim.CountTokens(text.String()))
	}
	if want := tokenizeCount(t, url, map[string]any{"prompt": prompt}); int(u["prompt_tokens"].(float64)) != want {
		t.Errorf("usage prompt_tokens %v, /tokenize %d", u["prompt_tokens"], want)
	}
}

// Non-streaming responses carry the text, usage and finish_reason in one JSON object.
func TestNonStreaming(t *testing.T) {
	_, url := startServer(t, sim.Options{RequestMetrics: true})
	rows := []struct {
		path string
		body map[string]any
	}{
		{"/v1/chat/completions", chatBody("hello", 12, map[string]any{"stream": false})},             // chat
		{"/v1/completions", map[string]any{"prompt": "hello", "max_tokens": 12, "ignore_eos": true}}, // completions
	}
	for _, r := range rows {
		resp := post(t, url+r.path, r.body)
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", r.path, resp.StatusCode, err)
		}
		resp.Body.Close()
		c := choice(out)
		text, _ := c["text"].(string)
		if m, ok := c["message"].(map[string]any); ok {
			text = m["content"].(string)
		}
		if sim.CountTokens(text) != 12 || out["usage"].(map[string]any)["completion_tokens"].(float64) != 12 || c["finish_reason"] != "length" {
			t.Errorf("%s: %v", r.path, out)
		}
		if _, ok := out["metrics"].(map[string]any); !ok {
			t.Errorf("%s: no metrics object", r.path)
		}
	}
}

// Without ignore_eos the output stops at a deterministic length <= max_tokens.
func TestNaturalStop(t *testing.T) {
	_, url := startServer(t, sim.Options{Seed: 7})
	lengths := map[string]float64{}
	for _, p := range []string{"alpha", "beta", "gamma", "delta", "alpha"} {
		body := chatBody(p, 30, map[string]any{"ignore_eos": false})
		events, _ := readSSE(t, post(t, url+"/v1/chat/completions", body))
		u := events[len(events)-1]["usage"].(map[string]any)
		n := u["completion_tokens"].(float64)
		if n < 1 || n > 30 {
			t.Errorf("%s: %v tokens outside [1, 30]", p, n)
		}
		reason := choice(events[len(events)-2])["finish_reason"]
		if (n < 30) != (reason == "stop") {
			t.Errorf("%s: %v tokens with finish_reason %v", p, n, reason)
		}
		if prev, ok := lengths[p]; ok && prev != n {
			t.Errorf("%s: length %v then %v: not deterministic", p, prev, n)
		}
		lengths[p] = n
	}
	distinct := map[float64]bool{}
	for _, n := range lengths {
		distinct[n] = true
	}
	if len(distinct) < 2 {
		t.Errorf("four prompts all stopped at the same length: %v", lengths)
	}
}

// Bad input gets vLLM-style errors.
func TestErrors(t *testing.T) {
	_, url := startServer(t, sim.Options{})
	long := strings.Repeat("word ", 96*1024)
	rows := []struct {
		name, path string
		body       any
		code       int
		msg        string
	}{
		{"above max model len", "/v1/chat/completions", chatBody(long, 1024, nil), 400, "maximum context length is 34816 tokens"},
		{"prompt plus output above", "/v1/completions", map[string]any{"prompt": strings.Repeat("w ", 34000), "max_tokens": 1024}, 400, "you requested 35024 tokens (34000 in the prompt, 1024 in the completion)"},
		{"bad JSON", "/v1/chat/completions", `{"messages": [`, 400, "invalid JSON"},
		{"unknown model", "/v1/completions", map[string]any{"model": "gpt-x", "prompt": "hi"}, 404, "does not exist"},
		{"min above max", "/v1/completions", map[string]any{"prompt": "hi", "max_tokens": 5, "min_tokens": 9}, 400, "min_tokens"},
		{"no messages", "/v1/chat/completions", map[string]any{"max_tokens": 5}, 400, "messages"},
		{"tokenize bad JSON", "/tokenize", `nope`, 400, "invalid JSON"},
	}
	for _, r := range rows {
		resp := post(t, url+r.path, r.body)
		var out struct { // vLLM's ErrorResponse, as the wire carries it
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != r.code || out.Error.Code != r.code || !strings.Contains(out.Error.Message, r.msg) {
			t.Errorf("%s: %d %+v, want %d containing %q", r.name, resp.StatusCode, out.Error, r.code, r.msg)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestModelsVersionHealth(t *testing.T) {
	_, url := startServer(t, sim.Options{ServedModelName: "my-model"})
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	getJSON(t, url+"/v1/models", &models)
	if models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != "my-model" ||
		models.Data[0].OwnedBy != "servebench-sim" || models.Data[0].MaxModelLen != sim.FastProfile.Engine.MaxModelLen || models.Data[0].Object != "model" {
		t.Errorf("models: %+v", models)
	}
	var v map[string]string
	getJSON(t, url+"/version", &v)
	if !strings.HasPrefix(v["version"], "servebench-sim") {
		t.Errorf("version %v", v)
	}
	resp, err := http.Get(url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("health: %v %v", resp, err)
	}
	resp.Body.Close()
}

// RequestMetrics rides on the last chunk with vLLM's field names, in causal order.
func TestRequestMetrics(t *testing.T) {
	_, url := startServer(t, sim.Options{RequestMetrics: true})
	events, _ := readSSE(t, post(t, url+"/v1/chat/completions", chatBody("time me", 10, nil)))
	last := events[len(events)-1]
	m, ok := last["metrics"].(map[string]any)
	if !ok {
		t.Fatalf("no metrics on the last chunk: %v", last)
	}
	get := func(k string) float64 { return m[k].(float64) }
	a, fs, ft, fin := get("arrival_time"), get("first_scheduled_time"), get("first_token_time"), get("finished_time")
	if !(a <= fs && fs < ft && ft < fin) || a < 1.6e9 {
		t.Errorf("times out of order: %v", m)
	}
	if math.Abs(get("time_in_queue")-(fs-a)) > 1e-6 {
		t.Errorf("time_in_queue %v != first_scheduled − arrival", m["time_in_queue"])
	}
	for _, ev := range events[:len(events)-1] {
		if _, ok := ev["metrics"]; ok {
			t.Errorf("metrics on a non-final chunk")
		}
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s does not parse as Prometheus text: %v", url, err)
	}
	return fams
}

func histSum(t *testing.T, f map[string]*dto.MetricFamily, name string) (float64, uint64) {
	t.Helper()
	mf, ok := f[name]
	if !ok || len(mf.Metric) != 1 {
		t.Fatalf("%s missing", name)
	}
	m := mf.Metric[0]
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["engine"] != "0" || labels["model_name"] != "servebench-sim-0.5b" {
		t.Errorf("%s labels %v", name, labels)
	}
	return m.GetHistogram().GetSampleSum(), m.GetHistogram().GetSampleCount()
}

func counter(t *testing.T, f map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf, ok := f[name]
	if !ok {
		t.Fatalf("%s missing", name)
	}
	var sum float64
	for _, m := range mf.Metric {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// /metrics parses, and its histogram sums and counters equal Truth exactly.
func TestMetricsEqualTruth(t *testing.T) {
	s, url := startServer(t, sim.Options{})
	for i := range 4 {
		readSSE(t, post(t, url+"/v1/chat/completions", chatBody(strings.Repeat("token ", 100*(i+1)), 8, nil)))
	}
	// The same prompt twice (sequentially) hits the prefix cache.
	shared := strings.Repeat("shared prefix ", 200)
	readSSE(t, post(t, url+"/v1/completions", map[string]any{"prompt": shared, "max_tokens": 4, "ignore_eos": true, "stream": true}))
	readSSE(t, post(t, url+"/v1/completions", map[string]any{"prompt": shared, "max_tokens": 4, "ignore_eos": true, "stream": true}))
	f := scrape(t, url+"/metrics")
	tr := s.Truth()
	if tr.RequestsFinished != 6 || tr.RequestsArrived != 6 {
		t.Fatalf("truth: %+v", tr)
	}
	rows := []struct {
		name string
		want float64
	}{
		{"vllm:request_queue_time_seconds", tr.QueueSecondsSum},
		{"vllm:request_prefill_time_seconds", tr.PrefillSecondsSum},
		{"vllm:request_decode_time_seconds", tr.DecodeSecondsSum},
		{"vllm:request_prompt_tokens", float64(tr.PromptTokens)},
		{"vllm:request_generation_tokens", float64(tr.GenerationTokens)},
	}
	for _, r := range rows {
		sum, n := histSum(t, f, r.name)
		if sum != r.want || n != 6 {
			t.Errorf("%s: sum %v count %d, truth %v over 6", r.name, sum, n, r.want)
		}
	}
	for _, name := range []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"} {
		if _, n := histSum(t, f, name); n != 6 {
			t.Errorf("%s count %d", name, n)
		}
	}
	if sum, _ := histSum(t, f, "vllm:time_to_first_token_seconds"); math.Abs(sum-(tr.QueueSecondsSum+tr.PrefillSecondsSum)) > 1e-9 {
		t.Errorf("TTFT sum %v != queue + prefill %v", sum, tr.QueueSecondsSum+tr.PrefillSecondsSum)
	}
	counters := []struct {
		name string
		want float64
	}{
		{"vllm:prompt_tokens_total", float64(tr.PromptTokens)},
		{"vllm:generation_tokens_total", float64(tr.GenerationTokens)},
		{"vllm:num_preemptions_total", float64(tr.Preemptions)},
		{"vllm:prefix_cache_queries_total", float64(tr.PrefixCacheQueries)},
		{"vllm:prefix_cache_hits_total", float64(tr.PrefixCacheHits)},
		{"vllm:request_success_total", 6},
	}
	for _, c := range counters {
		if got := counter(t, f, c.name); got != c.want {
			t.Errorf("%s = %v, truth %v", c.name, got, c.want)
		}
	}
	if tr.PrefixCacheHits == 0 {
		t.Error("a repeated prompt did not hit the prefix cache")
	}
	if tr.GenerationTokens != 4*8+2*4 {
		t.Errorf("generation tokens %d", tr.GenerationTokens)
	}
	for _, g := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"} {
		if mf, ok := f[g]; !ok || mf.GetType() != dto.MetricType_GAUGE {
			t.Errorf("gauge %s missing", g)
		}
	}
}

// /dcgm/metrics looks like dcgm-exporter and its energy counter follows Truth.
func TestDCGM(t *testing.T) {
	s, url := startServer(t, sim.Options{})
	readSSE(t, post(t, url+"/v1/completions", map[string]any{"prompt": "warm", "max_tokens": 8, "stream": true}))
	f := scrape(t, url+"/dcgm/metrics")
	after := s.Truth().EnergyJoules
	for _, name := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_UTIL",
		"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP"} {
		mf, ok := f[name]
		if !ok || len(mf.Metric) != 1 {
			t.Fatalf("%s missing", name)
		}
		labels := map[string]string{}
		for _, l := range mf.Metric[0].Label {
			labels[l.GetName()] = l.GetValue()
		}
		for _, k := range []string{"gpu", "UUID", "device", "modelName", "Hostname"} {
			if labels[k] == "" {
				t.Errorf("%s: label %s missing", name, k)
			}
		}
	}
	mj := f["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].Metric[0].GetCounter().GetValue()
	if mj <= 0 || mj/1000 > after+1e-3 {
		t.Errorf("energy counter %v mJ, truth %v J", mj, after)
	}
	w := f["DCGM_FI_DEV_POWER_USAGE"].Metric[0].GetGauge().GetValue()
	if w < sim.FastProfile.GPU.IdleWatts || w > sim.FastProfile.GPU.MaxWatts {
		t.Errorf("power %v W outside idle..max", w)
	}
}

// Tokens produced within one StreamInterval go out together: fewer chunks than tokens.
func TestStreamIntervalBatchesTokens(t *testing.T) {
	_, url := startServer(t, sim.Options{})
	events, _ := readSSE(t, post(t, url+"/v1/chat/completions", chatBody("batch me", 120, nil)))
	content := len(events) - 2 // minus the role chunk and the usage chunk
	if content >= 60 {
		t.Errorf("%d content chunks for 120 tokens with a %v stream interval", content, sim.FastProfile.Engine.StreamInterval)
	}
}

// A reasoning model streams its reasoning first, in the configured field, then the answer;
// usage counts both and says how many reasoned; a repeated prompt reports cached tokens.
func TestReasoningStream(t *testing.T) {
	for _, field := range []string{sim.ReasoningFieldContent, sim.ReasoningFieldShort} {
		t.Run(field, func(t *testing.T) {
			_, url := startServer(t, sim.Options{Seed: 1, ReasoningTokens: 32, ReasoningField: field})
			events, done := readSSE(t, post(t, url+"/v1/chat/completions", chatBody("think first", 100, nil)))
			if !done {
				t.Fatal("no [DONE]")
			}
			reasoning, content, contentFirst := 0, 0, -1
			var u map[string]any
			for i, ev := range events {
				if x, ok := ev["usage"].(map[string]any); ok {
					u = x
				}
				c := choice(ev)
				if c == nil {
					continue
				}
				d := c["delta"].(map[string]any)
				if txt, ok := d[field].(string); ok {
					if contentFirst >= 0 {
						t.Errorf("event %d: reasoning after the answer began", i)
					}
					if d["content"] != nil {
						t.Errorf("event %d: reasoning and content in one delta", i)
					}
					reasoning += sim.CountTokens(txt)
				}
				if txt, ok := d["content"].(string); ok && txt != "" {
					if contentFirst < 0 {
						contentFirst = i
					}
					content += sim.CountTokens(txt)
				}
			}
			if reasoning != 32 || content != 68 {
				t.Errorf("reasoning %d + content %d tokens, want 32 + 68", reasoning, content)
			}
			if u == nil || u["completion_tokens"].(float64) != 100 {
				t.Fatalf("usage %v, want completion_tokens 100", u)
			}
			if got := u["completion_tokens_details"].(map[string]any)["reasoning_tokens"].(float64); got != 32 {
				t.Errorf("usage reasoning_tokens %v, want 32", got)
			}
		})
	}
	// Non-streaming: the message carries reasoning_content and the answer.
	_, url := startServer(t, sim.Options{Seed: 1, ReasoningTokens: 5})
	resp := post(t, url+"/v1/chat/completions", chatBody("think", 8, map[string]any{"stream": false}))
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	m := out.Choices[0].Message
	if sim.CountTokens(m.ReasoningContent) != 5 || sim.CountTokens(m.Content) != 3 {
		t.Errorf("non-streaming: reasoning %q, content %q; want 5 and 3 tokens", m.ReasoningContent, m.Content)
	}
}

// usage.prompt_tokens_details.cached_tokens reports the prefix-cache hits of the request.
func TestCachedTokensInUsage(t *testing.T) {
	_, url := startServer(t, sim.Options{Seed: 1})
	prompt := strings.Repeat("shared context words ", 100)
	cached := func() float64 {
		events, _ := readSSE(t, post(t, url+"/v1/chat/completions", chatBody(prompt, 4, nil)))
		u := events[len(events)-1]["usage"].(map[string]any)
		return u["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	}
	if first := cached(); first != 0 {
		t.Errorf("first request: %v cached tokens, want 0", first)
	}
	if second := cached(); second < 256 || int(second)%sim.FastProfile.Engine.BlockSize != 0 {
		t.Errorf("repeated prompt: %v cached tokens, want most of the ~300-token prompt in whole blocks", second)
	}
}
