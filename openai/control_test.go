package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/servebench/servebench"
)

// Request control: headers, sampling parameters, an extra body merged in (its fields win over
// servebench's own, with no duplicate keys), and a conversation sent as written.
func TestRequestControl(t *testing.T) {
	temp, topP, seed := 0.7, 0.9, int64(42)
	tests := []struct {
		name  string
		api   servebench.API
		extra string
		want  map[string]any
	}{
		{"chat", servebench.APIChat, `{"top_k": 20, "max_tokens": 9, "chat_template_kwargs": {"enable_thinking": false}}`, map[string]any{
			"temperature": 0.7, "top_p": 0.9, "seed": 42.0, "top_k": 20.0, "max_tokens": 9.0, "max_completion_tokens": 4.0,
			"chat_template_kwargs": map[string]any{"enable_thinking": false},
			"messages":             []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "hi <&>"}},
		}},
		{"completions", servebench.APICompletions, `{"temperature": 0}`, map[string]any{
			"temperature": 0.0, "top_p": 0.9, "prompt": "be brief\n\nhi <&>",
		}},
		{"ollama native", servebench.APIOllama, `{"keep_alive": "5m"}`, map[string]any{
			"options":    map[string]any{"num_predict": 4.0, "temperature": 0.7, "top_p": 0.9, "seed": 42.0},
			"keep_alive": "5m",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			var hdr http.Header
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, _ = io.ReadAll(r.Body)
				hdr = r.Header.Clone()
				w.WriteHeader(http.StatusTeapot)
			})
			req := testRequest()
			req.Messages = []servebench.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi <&>"}}
			c := newClient(t, serve(t, h), func(c *Config) {
				c.API, c.Temperature, c.TopP, c.Seed = tt.api, &temp, &topP, &seed
				c.ExtraBody = json.RawMessage(tt.extra)
				c.Headers = http.Header{"X-Tenant": {"acme"}, "Authorization": {"Bearer gateway-secret"}}
				c.APIKey = "sk-ignored"
			})
			c.Do(context.Background(), req)
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("body %q: %v", raw, err)
			}
			for k, v := range tt.want {
				g, _ := json.Marshal(got[k])
				w, _ := json.Marshal(v)
				if string(g) != string(w) {
					t.Errorf("%s = %s, want %s", k, g, w)
				}
			}
			// No key twice: the extra body's value replaced servebench's.
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.Token()
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				var v json.RawMessage
				dec.Decode(&v)
				if seen[k.(string)] {
					t.Errorf("key %q sent twice", k)
				}
				seen[k.(string)] = true
			}
			if hdr.Get("X-Tenant") != "acme" || hdr.Get("Authorization") != "Bearer gateway-secret" {
				t.Errorf("headers X-Tenant %q, Authorization %q: the given headers must win", hdr.Get("X-Tenant"), hdr.Get("Authorization"))
			}
		})
	}
}

// A bad or reserved extra body is refused when the client is built, naming the cause; a header
// value a server echoes back never reaches the record.
func TestRequestControlErrors(t *testing.T) {
	for _, tt := range []struct{ extra, want string }{
		{`[1]`, "not a JSON object"},
		{`{"stream": false}`, `cannot set "stream"`},
		{`{"model": "x"}`, `cannot set "model"`},
		{`{"a": 1} {"b": 2}`, "text after"},
		{`{"a": }`, "not valid JSON"},
	} {
		_, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ExtraBody: json.RawMessage(tt.extra)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("extra body %s: error %v, want one containing %q", tt.extra, err, tt.want)
		}
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad token: "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
	})
	rec := newClient(t, serve(t, echo), func(c *Config) { c.Headers = http.Header{"X-Api-Key": {"very-secret-value"}} }).
		Do(context.Background(), testRequest())
	if rec.ErrorClass != servebench.ErrHTTPStatus || strings.Contains(rec.Error, "very-secret-value") {
		t.Errorf("class %q, error %q: the header value must be redacted", rec.ErrorClass, rec.Error)
	}
}

// A request with an Answer builder gets the content text of its stream (reasoning left out);
// one without gets nothing kept, and both are timed the same way.
func TestAnswerKeptOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name string
		api  servebench.API
		body string
	}{
		{"chat", servebench.APIChat, "data: {\"id\":\"a\",\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n" +
			"data: {\"id\":\"a\",\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n" +
			"data: {\"id\":\"a\",\"choices\":[{\"delta\":{\"content\":\", <world> \\\"x\\\"\"},\"finish_reason\":\"length\"}]}\n\n" +
			"data: {\"id\":\"a\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"},
		{"completions", servebench.APICompletions, "data: {\"id\":\"a\",\"choices\":[{\"text\":\"Hello\"}]}\n\n" +
			"data: {\"id\":\"a\",\"choices\":[{\"text\":\", <world> \\\"x\\\"\",\"finish_reason\":\"length\"}]}\n\n" +
			"data: {\"id\":\"a\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"},
		{"ollama native", servebench.APIOllama, "{\"message\":{\"thinking\":\"hmm\"}}\n{\"message\":{\"content\":\"Hello\"}}\n" +
			"{\"message\":{\"content\":\", <world> \\\"x\\\"\"}}\n{\"done\":true,\"done_reason\":\"length\",\"prompt_eval_count\":5,\"eval_count\":3}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.api == servebench.APIOllama {
					w.Header().Set("Content-Type", "application/x-ndjson")
				} else {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				io.WriteString(w, tt.body)
			})
			c := newClient(t, serve(t, h), func(c *Config) { c.API = tt.api })
			req := testRequest()
			req.Answer = new(strings.Builder)
			if rec := c.Do(context.Background(), req); !rec.OK() {
				t.Fatalf("failed: %s %s", rec.ErrorClass, rec.Error)
			}
			if got, want := req.Answer.String(), `Hello, <world> "x"`; got != want {
				t.Errorf("answer %q, want %q", got, want)
			}
			plain := testRequest()
			if rec := c.Do(context.Background(), plain); !rec.OK() || plain.Answer != nil {
				t.Errorf("a request without an answer builder: ok %v, answer %v", rec.OK(), plain.Answer)
			}
		})
	}
}
