package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/servebench/servebench"
)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type ollamaOptions struct {
	NumPredict  *int     `json:"num_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
}

// requestBody is the JSON body of every flavour; fields a flavour does not use stay nil.
type requestBody struct {
	Model               string         `json:"model"`
	Messages            []message      `json:"messages,omitempty"`
	Prompt              *string        `json:"prompt,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	MaxTokens           *int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int           `json:"max_completion_tokens,omitempty"`
	IgnoreEOS           *bool          `json:"ignore_eos,omitempty"`
	MinTokens           *int           `json:"min_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	TopP                *float64       `json:"top_p,omitempty"`
	Seed                *int64         `json:"seed,omitempty"`
	Options             *ollamaOptions `json:"options,omitempty"`
}

// extraField is one field of Config.ExtraBody, in the order written.
type extraField struct {
	key string
	raw json.RawMessage
}

// reservedBodyFields are the fields --extra-body cannot set: they define what is measured.
var reservedBodyFields = []string{"model", "messages", "prompt", "stream"}

// parseExtraBody splits a JSON object into its fields, in order, and refuses the reserved ones.
func parseExtraBody(raw json.RawMessage) ([]extraField, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("extra body %q is not a JSON object: write e.g. '{\"top_k\": 20}'", clip(string(raw), 80))
	}
	var out []extraField
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("extra body is not valid JSON: %v", err)
		}
		key := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("extra body field %q is not valid JSON: %v", key, err)
		}
		if slices.Contains(reservedBodyFields, key) {
			return nil, fmt.Errorf("extra body cannot set %q: servebench sets %s itself (they define what is measured)", key, strings.Join(reservedBodyFields, ", "))
		}
		if i := slices.IndexFunc(out, func(f extraField) bool { return f.key == key }); i >= 0 {
			out[i].raw = v
			continue
		}
		out = append(out, extraField{key: key, raw: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("extra body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra body has text after its JSON object")
	}
	return out, nil
}

// hasExtra reports whether the extra body sets key.
func hasExtra(ex []extraField, key string) bool {
	return slices.ContainsFunc(ex, func(f extraField) bool { return f.key == key })
}

// buildBody encodes the request body for cfg.API (exact output length):
//
//	openai-chat:        model, messages=[{user, prompt}], stream, stream_options.include_usage,
//	                    max_tokens=N, max_completion_tokens=N, ignore_eos, min_tokens=N
//	openai-completions: model, prompt, stream, stream_options.include_usage,
//	                    max_tokens=N, ignore_eos, min_tokens=N
//	ollama:             model, messages, stream, options.num_predict=N
//
// Quirks drop ignore_eos, min_tokens and max_completion_tokens; max_tokens is always sent
// (Ollama ignores max_completion_tokens). N = 0 sends no length field at all.
//
// A request with Messages sends them (chat, Ollama) instead of one user message; the
// completions flavour sends their contents joined by blank lines as the prompt. Temperature,
// top_p and seed are sent when set (Ollama: in options). The fields of the extra body are
// appended last, and a field servebench would set itself (max_tokens, ignore_eos, …) is then
// left out in favour of the extra body's value.
func buildBody(cfg Config, ex []extraField, req *servebench.Request) ([]byte, error) {
	b := requestBody{Model: cfg.Model, Stream: true}
	n := req.MaxOutputTokens
	msgs := []message{{Role: "user", Content: req.Prompt}}
	if len(req.Messages) > 0 {
		msgs = make([]message, len(req.Messages))
		for i, m := range req.Messages {
			msgs[i] = message{Role: m.Role, Content: m.Content}
		}
	}
	switch cfg.API {
	case servebench.APIOllama:
		b.Messages = msgs
		o := &ollamaOptions{Temperature: cfg.Temperature, TopP: cfg.TopP, Seed: cfg.Seed}
		if n > 0 {
			o.NumPredict = &n
		}
		if *o != (ollamaOptions{}) {
			b.Options = o
		}
	default:
		if cfg.API == servebench.APICompletions {
			p := req.Prompt
			if len(req.Messages) > 0 {
				parts := make([]string, len(req.Messages))
				for i, m := range req.Messages {
					parts[i] = m.Content
				}
				p = strings.Join(parts, "\n\n")
			}
			b.Prompt = &p
		} else {
			b.Messages = msgs
		}
		b.Temperature, b.TopP, b.Seed = cfg.Temperature, cfg.TopP, cfg.Seed
		b.StreamOptions = &streamOptions{IncludeUsage: true}
		if n > 0 {
			b.MaxTokens = &n
			if cfg.API == servebench.APIChat && !cfg.Quirks.NoMaxCompletionTokens {
				b.MaxCompletionTokens = &n
			}
			if !cfg.Quirks.NoIgnoreEOS {
				t := true
				b.IgnoreEOS = &t
			}
			if !cfg.Quirks.NoMinTokens {
				b.MinTokens = &n
			}
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(req.Prompt) + 256)
	if len(ex) > 0 {
		drop := func(key string, f func()) {
			if hasExtra(ex, key) {
				f()
			}
		}
		drop("stream_options", func() { b.StreamOptions = nil })
		drop("max_tokens", func() { b.MaxTokens = nil })
		drop("max_completion_tokens", func() { b.MaxCompletionTokens = nil })
		drop("ignore_eos", func() { b.IgnoreEOS = nil })
		drop("min_tokens", func() { b.MinTokens = nil })
		drop("temperature", func() { b.Temperature = nil })
		drop("top_p", func() { b.TopP = nil })
		drop("seed", func() { b.Seed = nil })
		drop("options", func() { b.Options = nil })
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&b); err != nil {
		return nil, err
	}
	if len(ex) == 0 {
		return buf.Bytes(), nil
	}
	out := bytes.TrimRight(buf.Bytes(), "\n")
	out = out[:len(out)-1] // the closing brace
	for _, f := range ex {
		k, _ := json.Marshal(f.key)
		out = append(append(append(append(out, ','), k...), ':'), f.raw...)
	}
	return append(out, '}', '\n'), nil
}
