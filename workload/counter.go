package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/workload/tokenizer"
)

// Counter returns the number of tokens the server counts for text sent as a prompt (the chat
// template included for the chat and Ollama flavours).
type Counter interface {
	Count(ctx context.Context, text string) (int, error)
}

// CounterFunc adapts a function to Counter.
type CounterFunc func(ctx context.Context, text string) (int, error)

// Count calls f.
func (f CounterFunc) Count(ctx context.Context, text string) (int, error) { return f(ctx, text) }

// ProbeFunc sends prompt as a real request asking for one output token and returns the
// server's usage.prompt_tokens (or Ollama's prompt_eval_count).
type ProbeFunc func(ctx context.Context, prompt string) (promptTokens int, err error)

// serverRoot strips a trailing "/v1" (and slash) from an API base: /tokenize lives at the root.
func serverRoot(base string) string {
	base = strings.TrimRight(base, "/")
	return strings.TrimSuffix(base, "/v1")
}

// tokenizeClient posts JSON to {root}/tokenize.
type tokenizeClient struct {
	hc      *http.Client
	url     string
	apiKey  string
	headers http.Header
}

// tokenizeResponse covers both shapes: vLLM/SGLang {count, tokens:[ids]} and llama.cpp
// {tokens:[ids or {id,piece}]}.
type tokenizeResponse struct {
	Count  *int              `json:"count"`
	Tokens []json.RawMessage `json:"tokens"`
}

// statusError is a non-2xx answer from /tokenize.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, e.body)
}

func (c *tokenizeClient) post(ctx context.Context, body any) (tokenizeResponse, error) {
	var out tokenizeResponse
	b, err := json.Marshal(body)
	if err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for name, v := range c.headers {
		req.Header[name] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// read more than is shown and redact before cutting, so no part of an echoed key survives
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		io.Copy(io.Discard, resp.Body)
		body := strings.TrimSpace(servebench.Redact(string(snippet), c.apiKey))
		if len(body) > 300 {
			body = strings.ToValidUTF8(body[:300], "") + "…"
		}
		return out, &statusError{code: resp.StatusCode, body: body}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("POST %s: unreadable answer: %v", c.url, err)
	}
	return out, nil
}

// n is the answer's token count: count when given, else the length of tokens.
func (r tokenizeResponse) n() int {
	if r.Count != nil {
		return *r.Count
	}
	return len(r.Tokens)
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// vllmCounter is vLLM's (and SGLang's) /tokenize: {model, messages, add_generation_prompt} for
// chat (the server applies the chat template) or {model, prompt} for completions (special tokens
// such as BOS added as a completions request adds them).
type vllmCounter struct {
	c     *tokenizeClient
	model string
	chat  bool
}

func (v *vllmCounter) Count(ctx context.Context, text string) (int, error) {
	var body any
	if v.chat {
		body = map[string]any{"model": v.model, "messages": []chatMessage{{Role: "user", Content: text}},
			"add_generation_prompt": true}
	} else {
		body = map[string]any{"model": v.model, "prompt": text}
	}
	r, err := v.c.post(ctx, body)
	if err != nil {
		return 0, err
	}
	return r.n(), nil
}

// rawCounter counts text alone (llama.cpp's /tokenize {content}, or the prompt shape of vLLM
// and SGLang) and adds overhead, the tokens the request adds around the text (chat template,
// BOS), measured once with a probe: overhead = probe(text) − raw(text).
type rawCounter struct {
	c        *tokenizeClient
	model    string
	llamacpp bool
	overhead int
}

func (r *rawCounter) raw(ctx context.Context, text string) (int, error) {
	var body any
	if r.llamacpp {
		body = map[string]any{"content": text}
	} else {
		body = map[string]any{"model": r.model, "prompt": text}
	}
	resp, err := r.c.post(ctx, body)
	if err != nil {
		return 0, err
	}
	return resp.n(), nil
}

func (r *rawCounter) Count(ctx context.Context, text string) (int, error) {
	n, err := r.raw(ctx, text)
	return n + r.overhead, err
}

// offlineCounter counts with a local vocabulary. It cannot see the chat template: for the chat
// and Ollama flavours the server will count more tokens than this says.
type offlineCounter struct{ tok tokenizer.Tokenizer }

func (o offlineCounter) Count(_ context.Context, text string) (int, error) {
	return o.tok.Count(text), nil
}

// detectCounter picks the counting method, in order of preference: the server's
// /tokenize, calibration against probes, an offline vocabulary. sample is a short text used to
// try each method.
func detectCounter(ctx context.Context, cfg Config, sample string) (Counter, string, error) {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	chat := cfg.API != servebench.APICompletions
	tc := &tokenizeClient{hc: hc, url: serverRoot(cfg.BaseURL) + "/tokenize", apiKey: cfg.APIKey, headers: cfg.Headers}
	var reasons []string

	c, err := detectTokenize(ctx, cfg, tc, chat, sample)
	if err == nil {
		return c, "tokenize-endpoint", nil
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	reasons = append(reasons, fmt.Sprintf("POST %s: %v", tc.url, err))

	if cfg.Probe != nil {
		n, err := cfg.Probe(ctx, sample)
		if err == nil && n > 0 {
			return CounterFunc(cfg.Probe), "calibration", nil
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if err == nil {
			err = fmt.Errorf("usage.prompt_tokens was %d", n)
		}
		reasons = append(reasons, fmt.Sprintf("calibration probe: %v", err))
	} else {
		reasons = append(reasons, "calibration: no probe function given")
	}

	if cfg.Tokenizer != "" {
		tok, err := tokenizer.Open(cfg.Tokenizer)
		if err == nil {
			return offlineCounter{tok}, "offline-tokenizer:" + tok.Name(), nil
		}
		reasons = append(reasons, fmt.Sprintf("offline tokenizer: %v", err))
	} else {
		reasons = append(reasons, "offline tokenizer: none given")
	}
	return nil, "", fmt.Errorf("no way to count prompt tokens exactly (%s); fix one of them: serve "+
		"the model with an engine that has /tokenize (vLLM, SGLang, llama.cpp), make sure a "+
		"1-token request to the target succeeds and reports usage.prompt_tokens, or pass an "+
		"offline vocabulary with --tokenizer (%s; exact only for models that use it)",
		strings.Join(reasons, "; "), strings.Join(tokenizer.Encodings, ", "))
}

// detectTokenize tries the vLLM/SGLang shape, then the llama.cpp shape of POST {root}/tokenize.
func detectTokenize(ctx context.Context, cfg Config, tc *tokenizeClient, chat bool, sample string) (Counter, error) {
	v := &vllmCounter{c: tc, model: cfg.Model, chat: chat}
	r, err := tryVLLM(ctx, v, sample)
	if err == nil && r.n() > 0 {
		return v, nil
	}
	var se *statusError
	if err != nil && (!errors.As(err, &se) || se.code == http.StatusNotFound || se.code == http.StatusMethodNotAllowed) {
		return nil, err // no /tokenize at all (or unreachable)
	}
	// Either the server refused this body (SGLang without messages support, say) or it answered
	// with no tokens: llama.cpp ignores unknown fields and returns {"tokens": []}.
	raw := &rawCounter{c: tc, model: cfg.Model}
	if err == nil {
		raw.llamacpp = true
	} else if !chat {
		return nil, err
	}
	n, rerr := raw.raw(ctx, sample)
	if rerr != nil || n <= 0 {
		if rerr == nil {
			rerr = errors.New("it returned no tokens")
		}
		if err != nil {
			return nil, fmt.Errorf("%v; without messages: %v", err, rerr)
		}
		return nil, fmt.Errorf("llama.cpp shape {content}: %v", rerr)
	}
	// The raw count misses what the request adds (chat template, BOS): measure it with one probe.
	if cfg.Probe == nil {
		if !chat && !raw.llamacpp {
			return raw, nil // vLLM/SGLang prompt shape adds special tokens like a completions request
		}
		return nil, errors.New("it counts the text without the chat template or BOS, and no probe " +
			"function is given to measure that overhead")
	}
	p, perr := cfg.Probe(ctx, sample)
	if perr != nil {
		return nil, fmt.Errorf("measuring the template overhead with a probe: %v", perr)
	}
	if p < n {
		return nil, fmt.Errorf("the probe counted %d tokens for a text /tokenize counts as %d", p, n)
	}
	raw.overhead = p - n
	return raw, nil
}

func tryVLLM(ctx context.Context, v *vllmCounter, sample string) (tokenizeResponse, error) {
	body := map[string]any{"model": v.model, "prompt": sample}
	if v.chat {
		body = map[string]any{"model": v.model, "messages": []chatMessage{{Role: "user", Content: sample}},
			"add_generation_prompt": true}
	}
	return v.c.post(ctx, body)
}
