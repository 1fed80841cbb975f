package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

func (s *Server) routes() {
	s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.handleGenerate(w, r, true) })
	s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.handleGenerate(w, r, false) })
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("POST /tokenize", s.handleTokenize)
	s.mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "servebench-sim 1.0 (profile " + s.p.Name + ")"})
	})
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	s.mux.HandleFunc("GET "+MetricsPath, s.handleMetrics)
	s.mux.HandleFunc("GET "+DCGMPath, s.handleDCGM)
}

// ---- errors (vLLM's ErrorResponse shape) ----

type errorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func writeError(w http.ResponseWriter, code int, typ, format string, a ...any) {
	writeJSON(w, code, map[string]errorInfo{"error": {Message: fmt.Sprintf(format, a...), Type: typ, Code: code}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// ---- requests ----

type messageIn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type generateRequest struct {
	Model               string          `json:"model"`
	Messages            []messageIn     `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N                   *int  `json:"n"`
	AddGenerationPrompt *bool `json:"add_generation_prompt"`
}

// chatMessages decodes messages whose content is a string, null, or a list of text parts.
func chatMessages(in []messageIn) ([]ChatMessage, error) {
	out := make([]ChatMessage, 0, len(in))
	for i, m := range in {
		if m.Role == "" {
			return nil, fmt.Errorf("messages[%d].role is required", i)
		}
		cm := ChatMessage{Role: m.Role}
		c := bytes.TrimSpace(m.Content)
		switch {
		case len(c) == 0 || string(c) == "null":
		case c[0] == '"':
			if err := json.Unmarshal(c, &cm.Content); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %v", i, err)
			}
		case c[0] == '[':
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(c, &parts); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %v", i, err)
			}
			var b bytes.Buffer
			for j, p := range parts {
				if p.Type != "text" {
					return nil, fmt.Errorf("messages[%d].content[%d]: only text parts are supported, got %q", i, j, p.Type)
				}
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(p.Text)
			}
			cm.Content = b.String()
		default:
			return nil, fmt.Errorf("messages[%d].content must be a string or a list of text parts", i)
		}
		out = append(out, cm)
	}
	return out, nil
}

// promptText decodes a completions prompt: a string or a list of exactly one string.
func promptText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("prompt is required")
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("prompt: %v", err)
		}
		return s, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
		return "", errors.New("prompt must be a string or a list of one string (token-id prompts and batches are not supported)")
	}
	return list[0], nil
}

// tokenizeRequest runs the tokenizer over a chat or completions prompt.
func (s *Server) scanPrompt(chat bool, msgs []messageIn, prompt json.RawMessage, addGen *bool, wantIDs bool) (*tokenScanner, error) {
	t := newTokenScanner(s.p.Engine.BlockSize, wantIDs)
	if chat {
		cm, err := chatMessages(msgs)
		if err != nil {
			return nil, err
		}
		if len(cm) == 0 {
			return nil, errors.New("messages must not be empty")
		}
		t.feedChat(cm, addGen == nil || *addGen)
		return t, nil
	}
	p, err := promptText(prompt)
	if err != nil {
		return nil, err
	}
	t.feed(p)
	return t, nil
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r.Body, 64<<10))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %v", err)
	}
	return nil
}

func (s *Server) checkModel(w http.ResponseWriter, model string) bool {
	if model != "" && model != s.model {
		writeError(w, http.StatusNotFound, "NotFoundError", "The model `%s` does not exist.", model)
		return false
	}
	return true
}

// ---- generation ----

func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, chat bool) {
	var req generateRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "%v", err)
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	if req.N != nil && *req.N != 1 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "n=%d is not supported by servebench-sim; send n=1", *req.N)
		return
	}
	if chat && len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "messages is required for /v1/chat/completions")
		return
	}
	tok, err := s.scanPrompt(chat, req.Messages, req.Prompt, req.AddGenerationPrompt, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "%v", err)
		return
	}
	maxLen := s.p.Engine.MaxModelLen
	prompt := tok.count
	where := "prompt"
	if chat {
		where = "messages"
	}
	if prompt >= maxLen {
		writeError(w, http.StatusBadRequest, "BadRequestError",
			"This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input %s.",
			maxLen, prompt, where)
		return
	}
	maxTokens, explicit := maxLen-prompt, false
	if req.MaxCompletionTokens != nil {
		maxTokens, explicit = *req.MaxCompletionTokens, true
	} else if req.MaxTokens != nil {
		maxTokens, explicit = *req.MaxTokens, true
	}
	if maxTokens < 1 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "max_tokens must be at least 1, got %d.", maxTokens)
		return
	}
	if req.MinTokens < 0 || req.MinTokens > maxTokens {
		writeError(w, http.StatusBadRequest, "BadRequestError",
			"min_tokens must be greater than or equal to 0 and less than or equal to max_tokens=%d, got %d.", maxTokens, req.MinTokens)
		return
	}
	if prompt+maxTokens > maxLen {
		writeError(w, http.StatusBadRequest, "BadRequestError",
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the %s, %d in the completion). Please reduce the length of the %s or completion.",
			maxLen, prompt+maxTokens, prompt, where, maxTokens, where)
		return
	}
	target := maxTokens
	if !req.IgnoreEOS {
		hi := maxTokens
		if !explicit {
			hi = min(maxTokens, max(req.MinTokens, 1024))
		}
		target = naturalLength(s.o.Seed, tok.all, max(1, req.MinTokens), hi)
	}

	q := &seq{
		promptTokens: prompt, blockHashes: tok.blocks, maxTokens: maxTokens, target: target,
		notify: make(chan struct{}, 1), doneCh: make(chan struct{}),
	}
	if chat {
		q.reasoning = min(s.o.ReasoningTokens, target)
	}
	s.mu.Lock()
	s.nextID++
	q.id = s.nextID
	q.arrival = s.simNow()
	s.c.add(q)
	s.mu.Unlock()
	s.poke()

	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if req.Stream {
		s.stream(w, r, q, chat, includeUsage)
		return
	}
	select {
	case <-q.doneCh:
	case <-r.Context().Done():
		s.abort(q)
		return
	}
	s.mu.Lock()
	n, reason, rm := q.generated, q.finishReason, s.requestMetrics(q)
	u := s.usage(q, n)
	s.mu.Unlock()
	if chat {
		r := min(q.reasoning, n)
		msg := chatMessageOut{Role: "assistant", Content: s.text(q, r, n), ToolCalls: []any{}}
		if r > 0 {
			rt := s.text(q, 0, r)
			if s.o.ReasoningField == ReasoningFieldShort {
				msg.Reasoning = &rt
			} else {
				msg.ReasoningContent = &rt
			}
		}
		writeJSON(w, http.StatusOK, chatResponse{
			ID: s.responseID("chatcmpl-", q), Object: "chat.completion", Created: s.created(), Model: s.model,
			Choices: []chatChoice{{Message: msg, FinishReason: reason, StopReason: nil}},
			Usage:   *u, Metrics: rm,
		})
		return
	}
	text := s.text(q, 0, n)
	writeJSON(w, http.StatusOK, completionResponse{
		ID: s.responseID("cmpl-", q), Object: "text_completion", Created: s.created(), Model: s.model,
		Choices: []completionChoice{{Text: text, FinishReason: &reason}},
		Usage:   u, Metrics: rm,
	})
}

// usage is the usage object of q after n generated tokens (called under s.mu):
// prompt_tokens_details.cached_tokens are the prompt tokens served from the prefix cache (hits,
// as /metrics counts them); completion_tokens_details.reasoning_tokens appears for a reasoning
// answer.
func (s *Server) usage(q *seq, n int) *usage {
	u := &usage{PromptTokens: q.promptTokens, CompletionTokens: n, TotalTokens: q.promptTokens + n,
		PromptTokensDetails: &promptDetails{CachedTokens: q.cachedTokens}}
	if q.reasoning > 0 {
		u.CompletionTokensDetails = &completionDetails{ReasoningTokens: min(q.reasoning, n)}
	}
	return u
}

func (s *Server) created() int64 { return time.Now().Unix() }

// abort marks q for removal at the next step (its client went away).
func (s *Server) abort(q *seq) {
	s.mu.Lock()
	if !q.done {
		q.aborted = true
	}
	s.mu.Unlock()
	s.poke()
}

// ---- response shapes (vLLM's field order) ----

type usage struct {
	PromptTokens            int                `json:"prompt_tokens"`
	TotalTokens             int                `json:"total_tokens"`
	CompletionTokens        int                `json:"completion_tokens"`
	PromptTokensDetails     *promptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *completionDetails `json:"completion_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type completionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type delta struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	Reasoning        *string `json:"reasoning,omitempty"`
}

type chatChunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     any             `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
	StopReason   json.RawMessage `json:"stop_reason,omitempty"`
}

type chatChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []chatChunkChoice `json:"choices"`
	Usage   *usage            `json:"usage,omitempty"`
	Metrics *requestMetrics   `json:"metrics,omitempty"`
}

type completionChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   any     `json:"stop_reason"`
}

type completionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   *usage             `json:"usage,omitempty"`
	Metrics *requestMetrics    `json:"metrics,omitempty"`
}

type chatMessageOut struct {
	Role             string  `json:"role"`
	Content          string  `json:"content"`
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	Reasoning        *string `json:"reasoning,omitempty"`
	ToolCalls        []any   `json:"tool_calls"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     any            `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
	StopReason   any            `json:"stop_reason"`
}

type chatResponse struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   usage           `json:"usage"`
	Metrics *requestMetrics `json:"metrics,omitempty"`
}

// stream writes the SSE response: (chat) a role-only chunk, content chunks at most one per
// StreamInterval (the last one carries finish_reason), then the usage chunk when asked, then
// "data: [DONE]".
func (s *Server) stream(w http.ResponseWriter, r *http.Request, q *seq, chat, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := s.newSSE(w, q, chat)
	if chat {
		empty := ""
		sw.chat(chatChunkChoice{Delta: delta{Role: "assistant", Content: &empty}}, nil, nil)
		if !sw.flush() {
			s.abort(q)
			return
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	ctx := r.Context()
	sent := 0
	for {
		select {
		case <-q.notify:
		case <-q.doneCh:
		case <-ctx.Done():
			s.abort(q)
			return
		}
		st := s.visible(q)
		// The answer never shares a flush with the reasoning: a flush that would span the end
		// of the reasoning stops there, and the answer follows at the next one (at least
		// reasoningGap later), as a thinking model's stream does.
		held := false
		if chat && sent < q.reasoning && st.tokens > q.reasoning {
			st.tokens, st.done, held = q.reasoning, false, true
		}
		if st.tokens > sent || st.done {
			from := sent
			sent = st.tokens
			s.writeTokens(sw, q, from, st, includeUsage)
			if st.done {
				sw.finish(st, includeUsage)
				return
			}
			if !sw.flush() {
				s.abort(q)
				return
			}
		}
		if !s.pace(ctx, q, timer, held) {
			s.abort(q)
			return
		}
	}
}

// sse writes one response's server-sent events: each a "data: " line of JSON, buffered until
// flush.
type sse struct {
	bw         *bufio.Writer
	fl         http.Flusher
	id, object string
	created    int64
	model      string
	chatStream bool
}

func (s *Server) newSSE(w http.ResponseWriter, q *seq, chat bool) *sse {
	fl, _ := w.(http.Flusher)
	prefix, object := "cmpl-", "text_completion"
	if chat {
		prefix, object = "chatcmpl-", "chat.completion.chunk"
	}
	return &sse{bw: bufio.NewWriterSize(w, 4096), fl: fl, id: s.responseID(prefix, q), object: object,
		created: s.created(), model: s.model, chatStream: chat}
}

func (e *sse) event(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	e.bw.WriteString("data: ")
	e.bw.Write(b)
	e.bw.WriteString("\n\n")
}

// chat writes a chat chunk of the one choice c, with usage and metrics when set.
func (e *sse) chat(c chatChunkChoice, u *usage, m *requestMetrics) {
	e.event(chatChunk{ID: e.id, Object: e.object, Created: e.created, Model: e.model, Choices: []chatChunkChoice{c}, Usage: u, Metrics: m})
}

// flush sends what is buffered; false when the client is gone.
func (e *sse) flush() bool {
	if e.bw.Flush() != nil {
		return false
	}
	if e.fl != nil {
		e.fl.Flush()
	}
	return true
}

// streamState is what a request shows at one moment: its visible tokens and, once done, how it
// finished.
type streamState struct {
	tokens int
	done   bool
	reason string
	rm     *requestMetrics
	u      *usage
}

// visible reads q's visible state under the server's lock.
func (s *Server) visible(q *seq) streamState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := streamState{tokens: q.visibleTokens, done: q.visibleDone}
	if st.done {
		st.reason, st.rm, st.u = q.finishReason, s.requestMetrics(q), s.usage(q, st.tokens)
	}
	return st
}

// writeTokens writes the tokens [from, st.tokens) of q. In a chat, reasoning tokens go out as
// reasoning deltas and the answer as content; a flush that spans the end of the reasoning sends
// one event of each. The last event of a finished request carries finish_reason, and its
// metrics when no usage chunk follows.
func (s *Server) writeTokens(sw *sse, q *seq, from int, st streamState, includeUsage bool) {
	var fr *string
	if st.done {
		fr = &st.reason
	}
	var m *requestMetrics
	if st.done && !includeUsage {
		m = st.rm
	}
	if !sw.chatStream {
		sw.event(completionResponse{ID: sw.id, Object: sw.object, Created: sw.created, Model: sw.model,
			Choices: []completionChoice{{Text: s.text(q, from, st.tokens), FinishReason: fr}}, Metrics: m})
		return
	}
	var deltas []delta
	if r := min(q.reasoning, st.tokens); from < r {
		rt := s.text(q, from, r)
		if s.o.ReasoningField == ReasoningFieldShort {
			deltas = append(deltas, delta{Reasoning: &rt})
		} else {
			deltas = append(deltas, delta{ReasoningContent: &rt})
		}
		from = r
	}
	if from < st.tokens || len(deltas) == 0 {
		text := s.text(q, from, st.tokens)
		deltas = append(deltas, delta{Content: &text})
	}
	for i, d := range deltas {
		c := chatChunkChoice{Delta: d}
		var em *requestMetrics
		if i == len(deltas)-1 {
			c.FinishReason, em = fr, m
			if st.done {
				c.StopReason = json.RawMessage("null")
			}
		}
		sw.chat(c, nil, em)
	}
}

// finish ends a finished request's stream: the usage chunk when asked, then "data: [DONE]".
func (e *sse) finish(st streamState, includeUsage bool) {
	if includeUsage {
		if e.chatStream {
			e.event(chatChunk{ID: e.id, Object: e.object, Created: e.created, Model: e.model,
				Choices: []chatChunkChoice{}, Usage: st.u, Metrics: st.rm})
		} else {
			e.event(completionResponse{ID: e.id, Object: e.object, Created: e.created, Model: e.model,
				Choices: []completionChoice{}, Usage: st.u, Metrics: st.rm})
		}
	}
	e.bw.WriteString("data: [DONE]\n\n")
	e.flush()
}

// pace waits StreamInterval before the next flush (at least reasoningGap when the answer was
// held back behind the reasoning, then it goes on even when no new step comes); false when the
// client went away.
func (s *Server) pace(ctx context.Context, q *seq, timer *time.Timer, held bool) bool {
	wait, doneCh := s.p.Engine.StreamInterval, q.doneCh
	if held {
		wait, doneCh = max(wait, reasoningGap), nil
		select { // the tokens already visible must not wake the next flush at once
		case <-q.notify:
		default:
		}
	}
	if wait <= 0 {
		return true
	}
	timer.Reset(wait)
	select {
	case <-timer.C:
		if held {
			select { // go on with the answer even when no new step comes
			case q.notify <- struct{}{}:
			default:
			}
		}
	case <-doneCh:
		if !timer.Stop() {
			<-timer.C
		}
	case <-ctx.Done():
		timer.Stop()
		return false
	}
	return true
}

// reasoningGap is the least time between a reasoning model's last reasoning event and its first
// answer event (the stream interval when longer).
const reasoningGap = 5 * time.Millisecond

// ---- other endpoints ----

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	created := int64(s.originUnix)
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.model, "object": "model", "created": created, "owned_by": "servebench-sim",
			"root": s.model, "parent": nil, "max_model_len": s.p.Engine.MaxModelLen,
			"permission": []map[string]any{{
				"id": "modelperm-servebench-sim", "object": "model_permission", "created": created,
				"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true,
				"allow_search_indices": false, "allow_view": true, "allow_fine_tuning": false,
				"organization": "*", "group": nil, "is_blocking": false,
			}},
		}},
	})
}

type tokenizeRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []messageIn     `json:"messages"`
	AddGenerationPrompt *bool           `json:"add_generation_prompt"`
}

// handleTokenize answers vLLM's /tokenize: {count, max_model_len, tokens, token_strs}.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "%v", err)
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	chat := req.Messages != nil
	if !chat && len(bytes.TrimSpace(req.Prompt)) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "give either prompt or messages")
		return
	}
	t, err := s.scanPrompt(chat, req.Messages, req.Prompt, req.AddGenerationPrompt, true)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"count": t.count, "max_model_len": s.p.Engine.MaxModelLen, "tokens": *t.ids, "token_strs": nil,
	})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.mu.Lock()
	s.c.metrics.write(&b)
	s.mu.Unlock()
	// as Python's prometheus_client (vLLM, SGLang) exposes it: a restart changes it
	fmt.Fprintf(&b, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n", s.originUnix)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.Copy(w, &b)
}

func (s *Server) handleDCGM(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.mu.Lock()
	if !s.c.hasWork() {
		s.c.idleUntil(s.simNow())
	}
	g, e := s.c.gpu, s.c.truth.EnergyJoules
	s.mu.Unlock()
	writeDCGM(&b, s.p, g, e, "servebench-sim")
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.Copy(w, &b)
}
