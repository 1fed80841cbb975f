// Package tokenizer counts tokens offline, without asking the server. It is the only package of
// servebench that imports a tokenizer library (github.com/tiktoken-go/tokenizer, whose
// vocabularies are compiled into the binary, so nothing is downloaded).
//
// Offline counting is the last resort of the prompt builder (package workload): it is exact only
// when the server's model uses the same vocabulary (OpenAI's encodings), and it never includes a
// chat template. Prefer the server's /tokenize endpoint or calibration against
// usage.prompt_tokens.
package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// Tokenizer counts the tokens of a text.
type Tokenizer interface {
	// Count returns the number of tokens of text (no special tokens added).
	Count(text string) int
	// Name identifies the vocabulary, e.g. "cl100k_base".
	Name() string
}

// Encodings lists the built-in offline vocabularies Open accepts by name.
var Encodings = []string{"cl100k_base", "o200k_base", "p50k_base", "p50k_edit", "r50k_base"}

// ErrHFNotSupported is returned (wrapped) for a Hugging Face tokenizer.json path: counting it
// exactly needs its normalizer, pre-tokenizer regex, BPE/Unigram/WordPiece model and
// post-processor, which servebench does not implement yet. An approximate count would silently
// produce prompts of the wrong length, so none is offered.
var ErrHFNotSupported = errors.New("Hugging Face tokenizer.json files are not supported yet")

// Open returns the tokenizer named by nameOrPath: a built-in encoding (cl100k_base, o200k_base,
// p50k_base, p50k_edit, r50k_base), an OpenAI model name that maps to one (gpt-4o, gpt-4, ...),
// or the path of a Hugging Face tokenizer.json (rejected with ErrHFNotSupported).
func Open(nameOrPath string) (Tokenizer, error) {
	name := strings.TrimSpace(nameOrPath)
	if name == "" {
		return nil, fmt.Errorf("no tokenizer named: pass one of %s", strings.Join(Encodings, ", "))
	}
	if c, err := tiktoken.Get(tiktoken.Encoding(strings.ToLower(name))); err == nil {
		return codec{c}, nil
	}
	if c, err := tiktoken.ForModel(tiktoken.Model(strings.ToLower(name))); err == nil {
		return codec{c}, nil
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") || strings.ContainsRune(name, filepath.Separator) {
		if _, err := os.Stat(name); err != nil {
			return nil, fmt.Errorf("tokenizer file %s: %w", name, err)
		}
		return nil, fmt.Errorf("tokenizer %s: %w; instead use a server with a /tokenize endpoint "+
			"(vLLM, SGLang, llama.cpp), let servebench calibrate against usage.prompt_tokens "+
			"(the default when the server reports usage), or pass a built-in encoding (%s) "+
			"when the model uses one", name, ErrHFNotSupported, strings.Join(Encodings, ", "))
	}
	return nil, fmt.Errorf("unknown tokenizer %q: pass one of %s, an OpenAI model name (gpt-4o, gpt-4), "+
		"or use the server's /tokenize endpoint or calibration instead", name, strings.Join(Encodings, ", "))
}

// codec adapts a tiktoken codec.
type codec struct{ c tiktoken.Codec }

// Count returns the number of tokens of text; text that cannot be encoded counts as 0 (it never
// happens in ErrorModeNone, the codec's default, which tokenizes any bytes).
func (c codec) Count(text string) int {
	n, err := c.c.Count(text)
	if err != nil {
		return 0
	}
	return n
}

// Name is the encoding's name, e.g. "cl100k_base".
func (c codec) Name() string { return c.c.GetName() }
