package openai

import (
	"bytes"
	"encoding/json"

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
	NumPredict int `json:"num_predict"`
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
	Options             *ollamaOptions `json:"options,omitempty"`
}

// buildBody encodes the request body for cfg.API (SPEC section 3, exact output length):
//
//	openai-chat:        model, messages=[{user, prompt}], stream, stream_options.include_usage,
//	                    max_tokens=N, max_completion_tokens=N, ignore_eos, min_tokens=N
//	openai-completions: model, prompt, stream, stream_options.include_usage,
//	                    max_tokens=N, ignore_eos, min_tokens=N
//	ollama:             model, messages, stream, options.num_predict=N
//
// Quirks drop ignore_eos, min_tokens and max_completion_tokens; max_tokens is always sent
// (Ollama ignores max_completion_tokens). N = 0 sends no length field at all.
func buildBody(cfg Config, req *servebench.Request) ([]byte, error) {
	b := requestBody{Model: cfg.Model, Stream: true}
	n := req.MaxOutputTokens
	switch cfg.API {
	case servebench.APIOllama:
		b.Messages = []message{{Role: "user", Content: req.Prompt}}
		if n > 0 {
			b.Options = &ollamaOptions{NumPredict: n}
		}
	default:
		if cfg.API == servebench.APICompletions {
			b.Prompt = &req.Prompt
		} else {
			b.Messages = []message{{Role: "user", Content: req.Prompt}}
		}
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
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
