package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// step is one piece of a scripted response: bytes to write and flush, then a pause.
type step struct {
	data  string
	pause time.Duration
}

// chatChunk renders one chat.completion.chunk event with the given delta JSON.
func chatChunk(delta string) string {
	return `data: {"id":"chatcmpl-test","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
}

const (
	usageEvent = `data: {"id":"chatcmpl-test","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":0}}` + "\n\n"
	doneEvent  = "data: [DONE]\n\n"
)

// scripted serves steps as text/event-stream, flushing after each; it stops early when the
// client goes away.
func scripted(steps ...step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, s := range steps {
			_, _ = io.WriteString(w, s.data)
			w.(http.Flusher).Flush()
			if s.pause > 0 {
				select {
				case <-time.After(s.pause):
				case <-r.Context().Done():
					return
				}
			}
		}
	}
}

// hang blocks until the client goes away (or 10 s, so a broken test cannot hang forever).
const hang = 10 * time.Second

func newClient(t *testing.T, base string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: base, API: servebench.APIChat, Model: "m", MaxConnections: 4}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func testRequest() *servebench.Request {
	return &servebench.Request{Seq: 7, Prompt: "hello", ContextTokens: 11, MaxOutputTokens: 4}
}

func TestTTFTIgnoresRoleChunkAndKeepAlives(t *testing.T) {
	const wait = 50 * time.Millisecond
	base := serve(t, scripted(
		step{data: chatChunk(`{"role":"assistant","content":""}`)},
		step{data: ": keep-alive\n\n"},
		step{data: chatChunk(`{"content":null}`)},
		step{data: chatChunk(`{}`)},
		step{data: ": ping\n\n", pause: wait},
		step{data: chatChunk(`{"content":"Hello"}`)},
		step{data: chatChunk(`{"content":" world"}`)},
		step{data: chatChunk(`{"content":"!"}`)},
		step{data: chatChunk(`{"content":" ok"}`)},
		step{data: fmt.Sprintf(usageEvent, 11, 4)},
		step{data: doneEvent},
	))
	rec := newClient(t, base, nil).Do(context.Background(), testRequest())
	if !rec.OK() {
		t.Fatalf("failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if rec.TTFTSeconds < wait.Seconds() {
		t.Errorf("TTFT %.4fs < %v: a role-only, null, empty or keep-alive event stopped the clock", rec.TTFTSeconds, wait)
	}
	if rec.FirstContentSeconds != rec.TTFTSeconds {
		t.Errorf("first content %v != TTFT %v with no reasoning", rec.FirstContentSeconds, rec.TTFTSeconds)
	}
	if rec.Chunks != 4 || len(rec.ChunkGapsSeconds) != 3 {
		t.Errorf("chunks %d gaps %d, want 4 and 3", rec.Chunks, len(rec.ChunkGapsSeconds))
	}
	if rec.ResponseID != "chatcmpl-test" || rec.Seq != 7 || rec.HTTPStatus != 200 {
		t.Errorf("id %q seq %d status %d", rec.ResponseID, rec.Seq, rec.HTTPStatus)
	}
	if rec.E2ELatencySeconds < rec.TTFTSeconds || rec.EndOffsetSeconds < rec.StartOffsetSeconds {
		t.Errorf("e2e %v < ttft %v or end before start", rec.E2ELatencySeconds, rec.TTFTSeconds)
	}
}

func TestReasoningFirst(t *testing.T) {
	const wait = 30 * time.Millisecond
	base := serve(t, scripted(
		step{data: chatChunk(`{"role":"assistant","content":""}`)},
		step{data: chatChunk(`{"reasoning_content":"Let"}`)},
		step{data: chatChunk(`{"reasoning":" me"}`), pause: wait},
		step{data: chatChunk(`{"content":"Yes"}`)},
		step{data: fmt.Sprintf(usageEvent, 11, 3)},
		step{data: doneEvent},
	))
	rec := newClient(t, base, nil).Do(context.Background(), testRequest())
	if !rec.OK() {
		t.Fatalf("failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if rec.Chunks != 3 {
		t.Errorf("chunks %d, want 3 (reasoning_content, reasoning and content all carry tokens)", rec.Chunks)
	}
	// Only lower bounds on injected delays hold: content was written ≥ wait after the request.
	if rec.FirstContentSeconds < wait.Seconds() || rec.TTFTSeconds > rec.FirstContentSeconds {
		t.Errorf("first content %v should be ≥ %v and not before TTFT %v", rec.FirstContentSeconds, wait, rec.TTFTSeconds)
	}
}

func TestMultiTokenChunksITLFromUsage(t *testing.T) {
	const gap = 20 * time.Millisecond
	base := serve(t, scripted(
		step{data: chatChunk(`{"role":"assistant","content":""}`)},
		step{data: chatChunk(`{"content":"a b c d"}`), pause: gap},
		step{data: chatChunk(`{"content":" e f g h"}`), pause: gap},
		step{data: chatChunk(`{"content":" i j k l"}`)},
		step{data: fmt.Sprintf(usageEvent, 11, 12)},
		step{data: doneEvent},
	))
	req := testRequest()
	req.MaxOutputTokens = 12
	rec := newClient(t, base, nil).Do(context.Background(), req)
	if !rec.OK() {
		t.Fatalf("failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if rec.OutputTokens != 12 || rec.Chunks != 3 || rec.TokensPerChunk != 4 {
		t.Fatalf("tokens %d chunks %d tokens/chunk %v, want 12, 3, 4", rec.OutputTokens, rec.Chunks, rec.TokensPerChunk)
	}
	if rec.E2ELatencySeconds < 2*gap.Seconds() {
		t.Errorf("e2e %v < the two injected gaps", rec.E2ELatencySeconds)
	}
	if want := rec.DecodeSeconds / 11; math.Abs(rec.ITLSeconds-want) > 1e-12 {
		t.Errorf("ITL %v, want decode/11 = %v (tokens from usage, not chunks)", rec.ITLSeconds, want)
	}
	sum := 0.0
	for _, g := range rec.ChunkGapsSeconds {
		sum += g
	}
	if math.Abs(sum-rec.DecodeSeconds) > 1e-9 {
		t.Errorf("gaps sum %v != decode %v", sum, rec.DecodeSeconds)
	}
	if rec.LengthMismatch {
		t.Error("length mismatch flagged on an exact answer")
	}
}

func TestTokenSources(t *testing.T) {
	content := chatChunk(`{"content":"x"}`)
	tests := []struct {
		name         string
		steps        []step
		wantOut      int
		wantOutSrc   string
		wantIn       int
		wantInSrc    string
		wantCached   int // -1: none
		wantMismatch bool
	}{
		// usage given: both counts from the server
		{"usage", []step{{data: content}, {data: content}, {data: fmt.Sprintf(usageEvent, 9, 4)}, {data: doneEvent}}, 4, "usage", 9, "usage", -1, false},
		// no usage: output counted by the client, input from the request, both labelled
		{"no usage", []step{{data: content}, {data: content}, {data: content}, {data: doneEvent}}, 3, "client-count", 11, "client-count", -1, false},
		// cached tokens from prompt_tokens_details; fewer tokens than asked: mismatch flagged
		{"cached and short", []step{{data: content}, {data: `data: {"id":"x","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":5}}}` + "\n\n"}, {data: doneEvent}}, 2, "usage", 9, "usage", 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newClient(t, serve(t, scripted(tt.steps...)), nil).Do(context.Background(), testRequest())
			if !rec.OK() {
				t.Fatalf("failed: %s: %s", rec.ErrorClass, rec.Error)
			}
			if rec.OutputTokens != tt.wantOut || rec.OutputTokensSource != tt.wantOutSrc {
				t.Errorf("output %d (%s), want %d (%s)", rec.OutputTokens, rec.OutputTokensSource, tt.wantOut, tt.wantOutSrc)
			}
			if rec.InputTokens != tt.wantIn || rec.InputTokensSource != tt.wantInSrc {
				t.Errorf("input %d (%s), want %d (%s)", rec.InputTokens, rec.InputTokensSource, tt.wantIn, tt.wantInSrc)
			}
			if got := rec.CachedTokens; (tt.wantCached < 0) != (got == nil) || (got != nil && *got != tt.wantCached) {
				t.Errorf("cached %v, want %d", got, tt.wantCached)
			}
			if rec.LengthMismatch != tt.wantMismatch {
				t.Errorf("length mismatch %v, want %v", rec.LengthMismatch, tt.wantMismatch)
			}
		})
	}
}

func TestExactOutputMismatchFails(t *testing.T) {
	base := serve(t, scripted(step{data: chatChunk(`{"content":"x"}`)}, step{data: fmt.Sprintf(usageEvent, 9, 1)}, step{data: doneEvent}))
	rec := newClient(t, base, func(c *Config) { c.ExactOutput = true }).Do(context.Background(), testRequest())
	if rec.ErrorClass != servebench.ErrLengthMismatch || !rec.LengthMismatch || !strings.Contains(rec.Error, "1 output tokens, 4 were asked") {
		t.Errorf("class %q mismatch %v error %q", rec.ErrorClass, rec.LengthMismatch, rec.Error)
	}
}

func TestRequestBody(t *testing.T) {
	tests := []struct {
		name   string
		api    servebench.API
		quirks Quirks
		path   string
		want   map[string]any // JSON values the body must hold (numbers as float64)
		absent []string
	}{
		// chat: every exact-length field, usage requested
		{"chat", servebench.APIChat, Quirks{}, "/v1/chat/completions", map[string]any{
			"model": "m", "stream": true, "max_tokens": 4.0, "max_completion_tokens": 4.0, "ignore_eos": true, "min_tokens": 4.0,
			"stream_options": map[string]any{"include_usage": true},
			"messages":       []any{map[string]any{"role": "user", "content": "hello <&>"}},
		}, []string{"prompt", "options"}},
		// completions: prompt, no max_completion_tokens
		{"completions", servebench.APICompletions, Quirks{}, "/v1/completions", map[string]any{
			"model": "m", "stream": true, "max_tokens": 4.0, "ignore_eos": true, "min_tokens": 4.0, "prompt": "hello <&>",
			"stream_options": map[string]any{"include_usage": true},
		}, []string{"messages", "max_completion_tokens"}},
		// Ollama quirks on the OpenAI API: max_tokens still sent
		{"chat with quirks", servebench.APIChat, Quirks{NoIgnoreEOS: true, NoMinTokens: true, NoMaxCompletionTokens: true}, "/v1/chat/completions",
			map[string]any{"max_tokens": 4.0}, []string{"ignore_eos", "min_tokens", "max_completion_tokens"}},
		// Ollama native: options.num_predict at {root}/api/chat
		{"ollama native", servebench.APIOllama, Quirks{NoIgnoreEOS: true, NoMinTokens: true}, "/api/chat", map[string]any{
			"model": "m", "stream": true, "options": map[string]any{"num_predict": 4.0},
			"messages": []any{map[string]any{"role": "user", "content": "hello <&>"}},
		}, []string{"max_tokens", "stream_options", "ignore_eos"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			var path, auth string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path, auth = r.URL.Path, r.Header.Get("Authorization")
				_ = json.NewDecoder(r.Body).Decode(&got)
				w.WriteHeader(http.StatusTeapot)
			})
			req := testRequest()
			req.Prompt = "hello <&>"
			newClient(t, serve(t, h), func(c *Config) { c.API, c.Quirks, c.APIKey = tt.api, tt.quirks, "sk-secret" }).Do(context.Background(), req)
			if path != tt.path {
				t.Errorf("path %q, want %q", path, tt.path)
			}
			if auth != "Bearer sk-secret" {
				t.Errorf("Authorization %q", auth)
			}
			for k, v := range tt.want {
				g, _ := json.Marshal(got[k])
				w, _ := json.Marshal(v)
				if string(g) != string(w) {
					t.Errorf("%s = %s, want %s", k, g, w)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s sent, want absent", k)
				}
			}
		})
	}
}

func TestFailures(t *testing.T) {
	refused := func() string { // a port nobody listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr + "/v1"
	}
	tests := []struct {
		name      string
		handler   http.HandlerFunc // nil: connection refused
		mod       func(*Config)
		ctxCancel bool // the handler cancels the request context after the first token
		class     servebench.ErrorClass
		status    int      // -1: any (the cancel may come before or after the headers)
		msg       []string // substrings of the error
	}{
		// nobody listening
		{name: "connection refused", class: servebench.ErrConnect, msg: []string{"cannot connect", "refused"}},
		// JSON error with status 500
		{name: "http 500", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}`)
		}, class: servebench.ErrHTTPStatus, status: 500, msg: []string{"HTTP 500", "CUDA out of memory"}},
		// a web page answering with 200
		{name: "html 200", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Open WebUI</title><style>body{}</style></head><body><p>Welcome</p></body></html>\n")
		}, class: servebench.ErrMalformedEvent, status: 200, msg: []string{"HTML page", "Open WebUI", "ending in /v1"}},
		// a proxy's error page with 502
		{name: "html 502", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body></html>")
		}, class: servebench.ErrHTTPStatus, status: 502, msg: []string{"HTTP 502", `"502 Bad Gateway"`, "nginx", "/v1"}},
		// the connection is cut after two tokens
		{name: "stream cut mid-way", handler: func(w http.ResponseWriter, r *http.Request) {
			scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: chatChunk(`{"content":"b"}`)}, step{data: `data: {"id":"chatcmpl-test","cho`})(w, r)
			panic(http.ErrAbortHandler)
		}, class: servebench.ErrStreamTruncated, status: 200, msg: []string{"broke", "after 2 token events"}},
		// a clean end of body without data: [DONE]
		{name: "no DONE", handler: scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: fmt.Sprintf(usageEvent, 9, 1)}),
			class: servebench.ErrStreamTruncated, status: 200, msg: []string{"without data: [DONE]", "after 1 token events"}},
		// Ollama's silent end: tokens, then nothing
		{name: "silent end", handler: scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: chatChunk(`{"content":"a"}`)}),
			class: servebench.ErrStreamTruncated, status: 200, msg: []string{"without data: [DONE]", "stopped generating without saying so"}},
		// role chunk, then nothing within the first-token timeout
		{name: "first-token timeout", handler: scripted(step{data: chatChunk(`{"role":"assistant","content":""}`), pause: hang}),
			mod: func(c *Config) { c.TTFTTimeout = 100 * time.Millisecond }, class: servebench.ErrTimeoutFirstToken, status: 200, msg: []string{"first-token timeout of 100ms"}},
		// first token, then silence
		{name: "idle timeout", handler: scripted(step{data: chatChunk(`{"content":"a"}`), pause: hang}),
			mod: func(c *Config) { c.IdleTimeout = 100 * time.Millisecond }, class: servebench.ErrTimeoutIdle, status: 200, msg: []string{"no token for 100ms"}},
		// headers never come: the first-token timeout covers them too
		{name: "no headers", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
			select {
			case <-r.Context().Done():
			case <-time.After(hang):
			}
		}, mod: func(c *Config) { c.TTFTTimeout = 100 * time.Millisecond }, class: servebench.ErrTimeoutFirstToken, msg: []string{"first-token timeout"}},
		// invalid JSON in an event
		{name: "malformed JSON", handler: scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: "data: {\"id\": nope}\n\n"}, step{data: doneEvent}),
			class: servebench.ErrMalformedEvent, status: 200, msg: []string{"event 2 is not valid JSON", "nope"}},
		// a non-streamed JSON body
		{name: "stream ignored", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","choices":[{"message":{"content":"hi"}}]}`)
		}, class: servebench.ErrMalformedEvent, status: 200, msg: []string{"single JSON body", "stream"}},
		// vLLM's error event in the middle of a stream
		{name: "error in stream", handler: scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: `data: {"error":{"message":"engine dead","code":500}}` + "\n\n"}, step{data: doneEvent}),
			class: servebench.ErrStreamTruncated, status: 200, msg: []string{"error in the stream", "engine dead"}},
		// [DONE] with no token at all: nothing to time
		{name: "no tokens", handler: scripted(step{data: chatChunk(`{"role":"assistant","content":""}`)}, step{data: fmt.Sprintf(usageEvent, 9, 0)}, step{data: doneEvent}),
			class: servebench.ErrStreamTruncated, status: 200, msg: []string{"without a single content"}},
		// the run stops while the request streams
		{name: "canceled", ctxCancel: true, class: servebench.ErrCanceled, status: -1, msg: []string{"canceled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var base string
			switch {
			case tt.ctxCancel:
				base = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					scripted(step{data: chatChunk(`{"content":"a"}`)})(w, r)
					cancel()
					<-r.Context().Done()
				}))
			case tt.handler == nil:
				base = refused()
			default:
				base = serve(t, tt.handler)
			}
			var n atomic.Int32
			c := newClient(t, base, tt.mod)
			one := servebench.ClientFunc(func(ctx context.Context, r *servebench.Request) servebench.Record { n.Add(1); return c.Do(ctx, r) })
			rec := one.Do(ctx, testRequest())
			if n.Load() != 1 {
				t.Fatalf("%d records", n.Load())
			}
			if rec.ErrorClass != tt.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tt.class)
			}
			if tt.status >= 0 && rec.HTTPStatus != tt.status {
				t.Errorf("HTTP status %d, want %d", rec.HTTPStatus, tt.status)
			}
			for _, m := range tt.msg {
				if !strings.Contains(rec.Error, m) {
					t.Errorf("error %q lacks %q", rec.Error, m)
				}
			}
			if strings.Contains(rec.Error, "<") {
				t.Errorf("error keeps markup: %q", rec.Error)
			}
			if rec.Seq != 7 || rec.OutputTokensRequested != 4 || rec.EndOffsetSeconds < rec.StartOffsetSeconds || rec.StartUnixNano == 0 {
				t.Errorf("record not filled: seq %d requested %d start %v end %v", rec.Seq, rec.OutputTokensRequested, rec.StartOffsetSeconds, rec.EndOffsetSeconds)
			}
			if rec.TTFTSeconds != 0 || rec.ITLSeconds != 0 {
				t.Errorf("failed record carries TTFT %v / ITL %v", rec.TTFTSeconds, rec.ITLSeconds)
			}
		})
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":"bad key `+r.Header.Get("Authorization")+`"}`)
	}))
	rec := newClient(t, base, func(c *Config) { c.APIKey = "sk-very-secret" }).Do(context.Background(), testRequest())
	if rec.ErrorClass != servebench.ErrHTTPStatus || strings.Contains(rec.Error, "sk-very-secret") || !strings.Contains(rec.Error, "[redacted]") {
		t.Errorf("class %q error %q", rec.ErrorClass, rec.Error)
	}
	b, _ := json.Marshal(rec)
	if strings.Contains(string(b), "sk-very-secret") {
		t.Error("key in the record")
	}
}

// TestRetryOnReusedConnection plays llama.cpp: it answers the first request, then closes the
// kept-alive connection when the second request arrives on it, without answering.
func TestRetryOnReusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 9, 1) + doneEvent
	var answered atomic.Int32
	conns := acceptRequests(ln, func(conn net.Conn, n int32, i int) bool {
		if n == 1 && i == 1 {
			return false // close the reused connection, no response byte
		}
		answered.Add(1)
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return true
	})
	c := newClient(t, "http://"+ln.Addr().String()+"/v1", nil)
	req := testRequest()
	req.MaxOutputTokens = 1
	first := c.Do(context.Background(), req)
	second := c.Do(context.Background(), req)
	if !first.OK() || first.Retries != 0 {
		t.Fatalf("first: %s %s retries %d", first.ErrorClass, first.Error, first.Retries)
	}
	if !second.OK() || second.Retries != 1 {
		t.Fatalf("second: %q %s retries %d, want success after 1 retry", second.ErrorClass, second.Error, second.Retries)
	}
	if conns.Load() != 2 || answered.Load() != 2 {
		t.Errorf("connections %d answered %d, want 2 and 2", conns.Load(), answered.Load())
	}
	if second.StartOffsetSeconds <= first.EndOffsetSeconds {
		t.Errorf("retry clock not restarted after the first request")
	}
}

func TestOllamaNative(t *testing.T) {
	const wait = 30 * time.Millisecond
	lines := []string{
		`{"model":"tiny","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"Hmm"},"done":false}`,
		`{"model":"tiny","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}`,
		`{"model":"tiny","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":false}`,
		`{"model":"tiny","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":" there"},"done":false}`,
		`{"model":"tiny","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":900000000,"load_duration":5000000,"prompt_eval_count":26,"prompt_eval_duration":1500000,"eval_count":3,"eval_duration":2500000}`,
	}
	var path string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Header().Set("Content-Type", "application/x-ndjson")
		for i, l := range lines {
			io.WriteString(w, l+"\n")
			w.(http.Flusher).Flush()
			if i == 0 {
				time.Sleep(wait)
			}
		}
	}))
	req := testRequest()
	req.MaxOutputTokens = 3
	rec := newClient(t, base, func(c *Config) { c.API = servebench.APIOllama }).Do(context.Background(), req)
	if !rec.OK() {
		t.Fatalf("failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if path != "/api/chat" {
		t.Errorf("path %q, want /api/chat (root without /v1)", path)
	}
	if rec.InputTokens != 26 || rec.InputTokensSource != "usage" || rec.OutputTokens != 3 || rec.OutputTokensSource != "usage" {
		t.Errorf("tokens in %d (%s) out %d (%s)", rec.InputTokens, rec.InputTokensSource, rec.OutputTokens, rec.OutputTokensSource)
	}
	if rec.Chunks != 3 || rec.FinishReason != "length" {
		t.Errorf("chunks %d finish %q, want 3 and length", rec.Chunks, rec.FinishReason)
	}
	if rec.FirstContentSeconds < wait.Seconds() || rec.TTFTSeconds > rec.FirstContentSeconds {
		t.Errorf("first content %v should be ≥ %v and not before TTFT %v (thinking starts the clock)", rec.FirstContentSeconds, wait, rec.TTFTSeconds)
	}
	s := rec.Server
	if s == nil || s.Source != "ollama-native" || *s.PrefillSeconds != 0.0015 || *s.DecodeSeconds != 0.0025 || *s.LoadSeconds != 0.005 || *s.PromptTokens != 26 {
		t.Errorf("server timings %+v", s)
	}
}

func TestServerTimings(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		final string
		want  servebench.ServerTimings
	}{
		// llama.cpp's final chunk
		{"llama.cpp", `{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"completion_tokens":1,"prompt_tokens":20},"timings":{"cache_n":4,"prompt_n":16,"prompt_ms":12.5,"predicted_n":1,"predicted_ms":30.25}}`,
			servebench.ServerTimings{Source: "llamacpp-timings", PrefillSeconds: f(0.0125), DecodeSeconds: f(0.03025)}},
		// vLLM RequestMetrics with time_in_queue
		{"vllm metrics", `{"id":"c","choices":[],"usage":{"completion_tokens":1,"prompt_tokens":20},"metrics":{"arrival_time":100.0,"last_token_time":100.015,"first_scheduled_time":100.0025,"first_token_time":100.0075,"time_in_queue":0.0025,"finished_time":100.015}}`,
			servebench.ServerTimings{Source: "vllm-request-metrics", QueueSeconds: f(0.0025), PrefillSeconds: f(0.005), DecodeSeconds: f(0.0075)}},
		// vLLM RequestMetrics without time_in_queue: first_scheduled − arrival
		{"vllm metrics no queue field", `{"id":"c","choices":[],"usage":{"completion_tokens":1,"prompt_tokens":20},"metrics":{"arrival_time":100.0,"first_scheduled_time":100.005,"first_token_time":100.01,"finished_time":100.02}}`,
			servebench.ServerTimings{Source: "vllm-request-metrics", QueueSeconds: f(0.005), PrefillSeconds: f(0.005), DecodeSeconds: f(0.01)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// the server timings (at most 43 ms) fit in the request's span: a longer one is
			// impossible (TestServerTimingsOutOfSpan)
			base := serve(t, scripted(step{data: chatChunk(`{"content":"a"}`), pause: 60 * time.Millisecond}, step{data: "data: " + tt.final + "\n\n"}, step{data: doneEvent}))
			rec := newClient(t, base, nil).Do(context.Background(), testRequest())
			if !rec.OK() || rec.Server == nil {
				t.Fatalf("%s %s server %v", rec.ErrorClass, rec.Error, rec.Server)
			}
			g, w := rec.Server, tt.want
			eq := func(name string, a, b *float64) {
				if (a == nil) != (b == nil) || (a != nil && math.Abs(*a-*b) > 1e-9) {
					t.Errorf("%s = %v, want %v", name, deref(a), deref(b))
				}
			}
			if g.Source != w.Source {
				t.Errorf("source %q, want %q", g.Source, w.Source)
			}
			eq("queue", g.QueueSeconds, w.QueueSeconds)
			eq("prefill", g.PrefillSeconds, w.PrefillSeconds)
			eq("decode", g.DecodeSeconds, w.DecodeSeconds)
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		// no scheme
		{"bad url", Config{BaseURL: "localhost:8000/v1", Model: "m"}, "bad target URL"},
		// no model
		{"no model", Config{BaseURL: "http://127.0.0.1:1/v1"}, "no model"},
		// unknown flavour
		{"bad api", Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", API: "grpc"}, "unknown API"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.msg)
		}
	}
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1/", Model: "m", MaxConnections: 300})
	if err != nil {
		t.Fatal(err)
	}
	if c.tr.MaxIdleConnsPerHost < 300 || !c.tr.DisableCompression || c.tr.ReadBufferSize != readBufferBytes || c.tr.WriteBufferSize != writeBufferBytes || c.tr.Proxy != nil || c.tr.TLSNextProto == nil {
		t.Errorf("transport not sized: %+v", c.tr)
	}
	if c.endpoint != "http://127.0.0.1:1/v1/chat/completions" {
		t.Errorf("endpoint %q", c.endpoint)
	}
}

func TestProbePromptTokens(t *testing.T) {
	var body map[string]any
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&body)
		scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: fmt.Sprintf(usageEvent, 123, 1)}, step{data: doneEvent})(w, r)
	}))
	n, err := newClient(t, base, nil).ProbePromptTokens(context.Background(), "some prompt")
	if err != nil || n != 123 {
		t.Fatalf("probe = %d, %v; want 123", n, err)
	}
	if body["max_tokens"] != 1.0 {
		t.Errorf("probe max_tokens %v, want 1", body["max_tokens"])
	}
	noUsage := serve(t, scripted(step{data: chatChunk(`{"content":"a"}`)}, step{data: doneEvent}))
	if _, err := newClient(t, noUsage, nil).ProbePromptTokens(context.Background(), "p"); err == nil || !strings.Contains(err.Error(), "no usage.prompt_tokens") {
		t.Errorf("no-usage probe error %v", err)
	}
}
