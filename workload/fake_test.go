package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"
)

// fakeTok is a tokenizer different from whitespace splitting, shaped like a byte-pair vocabulary:
// text is cut into pieces (an optional leading space plus a run of letters; an optional leading
// space plus one digit; one other non-space character; a run of spaces), and a letter piece of up
// to 5 letters is one token while a longer one is split into chunks of 4 letters. So " house" is
// one token, " teacher" two, "Note" one.
type fakeTok struct {
	// mergeThe makes " the" and a following word of up to 5 letters one token, which breaks the
	// linear model (a vocabulary with multi-word tokens).
	mergeThe bool
	// charLevel counts one token per byte (a character-level vocabulary, like the tiny GGUF of
	// the real-engine tests).
	charLevel bool
}

// tokens returns the token strings of text.
func (f fakeTok) tokens(text string) []string {
	if f.charLevel {
		out := make([]string, len(text))
		for i := range text {
			out[i] = text[i : i+1]
		}
		return out
	}
	var out []string
	i := 0
	for i < len(text) {
		if f.mergeThe && strings.HasPrefix(text[i:], " the ") {
			j := i + len(" the ")
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			if n := j - i - len(" the "); n >= 1 && n <= 5 {
				out = append(out, text[i:j])
				i = j
				continue
			}
		}
		start := i
		if text[i] == ' ' && i+1 < len(text) && text[i+1] != ' ' {
			i++
		}
		switch c := text[i]; {
		case isLetter(c):
			j := i
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			letters := text[i:j]
			if len(letters) <= 5 {
				out = append(out, text[start:j])
			} else {
				out = append(out, text[start:i+4])
				for k := i + 4; k < j; k += 4 {
					out = append(out, text[k:min(k+4, j)])
				}
			}
			i = j
		case c == ' ':
			j := i
			for j < len(text) && text[j] == ' ' {
				j++
			}
			out = append(out, text[start:j])
			i = j
		default:
			out = append(out, text[start:i+1])
			i++
		}
	}
	return out
}

func (f fakeTok) count(text string) int { return len(f.tokens(text)) }

func isLetter(c byte) bool { return c < 128 && unicode.IsLetter(rune(c)) }

// fakeServer is an httptest server speaking one /tokenize shape (or none) and answering
// /v1/chat/completions and /v1/completions with usage.prompt_tokens only.
type fakeServer struct {
	*httptest.Server
	tok           fakeTok
	shape         string // "vllm", "vllm-prompt-only" (SGLang-like), "llamacpp", "none"
	chatOverhead  int    // tokens the chat template adds
	bos           int    // tokens a completions request adds (BOS)
	tokenizeCalls atomic.Int64
	probeCalls    atomic.Int64
	mu            sync.Mutex
	probed        []string // texts sent as real requests
}

func newFake(t *testing.T, shape string, tok fakeTok) *fakeServer {
	t.Helper()
	f := &fakeServer{tok: tok, shape: shape, chatOverhead: 9, bos: 1}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /tokenize", f.tokenize)
	mux.HandleFunc("POST /v1/chat/completions", f.generate)
	mux.HandleFunc("POST /v1/completions", f.generate)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// truth is what the server counts for text sent with api chat (true) or completions.
func (f *fakeServer) truth(text string, chat bool) int {
	if chat {
		return f.chatOverhead + f.tok.count(text)
	}
	return f.bos + f.tok.count(text)
}

type fakeReq struct {
	Model    string          `json:"model"`
	Prompt   *string         `json:"prompt"`
	Content  *string         `json:"content"`
	Messages []chatMessage   `json:"messages"`
	Extra    json.RawMessage `json:"-"`
}

func (f *fakeServer) tokenize(w http.ResponseWriter, r *http.Request) {
	f.tokenizeCalls.Add(1)
	var req fakeReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	ids := func(n int) []int { return make([]int, n) }
	switch f.shape {
	case "none":
		http.NotFound(w, r)
	case "vllm", "vllm-prompt-only":
		var n int
		switch {
		case req.Messages != nil && f.shape == "vllm":
			n = f.truth(req.Messages[0].Content, true)
		case req.Messages != nil:
			http.Error(w, `{"error":"messages not supported"}`, 400)
			return
		case req.Prompt != nil:
			n = f.truth(*req.Prompt, false)
		default:
			http.Error(w, `{"error":"give prompt"}`, 400)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"count": n, "tokens": ids(n), "max_model_len": 300000})
	case "llamacpp":
		if req.Content == nil {
			json.NewEncoder(w).Encode(map[string]any{"tokens": []int{}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids(f.tok.count(*req.Content))})
	}
}

func (f *fakeServer) generate(w http.ResponseWriter, r *http.Request) {
	f.probeCalls.Add(1)
	var req fakeReq
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var n int
	text := ""
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		text = req.Messages[0].Content
		n = f.truth(text, true)
	} else {
		text = *req.Prompt
		n = f.truth(text, false)
	}
	f.mu.Lock()
	f.probed = append(f.probed, text)
	f.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"usage": map[string]int{"prompt_tokens": n, "completion_tokens": 1}})
}

// probe is a ProbeFunc for the fake: one real request with max_tokens 1.
func probe(base string, chat bool) ProbeFunc {
	return func(ctx context.Context, prompt string) (int, error) {
		url, body := base+"/completions", map[string]any{"model": "m", "prompt": prompt, "max_tokens": 1}
		if chat {
			url, body = base+"/chat/completions", map[string]any{"model": "m", "max_tokens": 1,
				"messages": []chatMessage{{Role: "user", Content: prompt}}}
		}
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		var out struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		return out.Usage.PromptTokens, err
	}
}
