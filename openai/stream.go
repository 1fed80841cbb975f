package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// maxLineBytes bounds one line of the response, and maxEventBytes the data of one event (its
// data lines together); a longer one is a malformed event whose message names the limit.
const (
	maxLineBytes  = 16 << 20
	maxEventBytes = 16 << 20
)

// failure is why a stream did not end with its end signal.
type failure struct {
	class servebench.ErrorClass
	msg   string
	eof   bool // the body ended cleanly (no read error)
}

// presence decodes any JSON value into its textLen: 0 when it carries no token, else its size
// as sent. It never allocates: the content itself is not needed, only whether it carries a
// token and how much text.
type presence int

func (p *presence) UnmarshalJSON(b []byte) error {
	*p = presence(textLen(b))
	return nil
}

// firstString keeps the first non-empty string it decodes and skips the rest without
// allocating (the response id repeats on every chunk).
type firstString struct{ v string }

func (f *firstString) UnmarshalJSON(b []byte) error {
	if f.v != "" || len(b) < 3 || b[0] != '"' {
		return nil
	}
	return json.Unmarshal(b, &f.v)
}

// usageJSON is the OpenAI usage object.
type usageJSON struct {
	PromptTokens        *int `json:"prompt_tokens"`
	CompletionTokens    *int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// llamaTimings is llama.cpp's per-request "timings" object (milliseconds).
type llamaTimings struct {
	PromptN     *int     `json:"prompt_n"`
	PromptMS    *float64 `json:"prompt_ms"`
	PredictedN  *int     `json:"predicted_n"`
	PredictedMS *float64 `json:"predicted_ms"`
	CacheN      *int     `json:"cache_n"`
}

// vllmMetrics is vLLM's RequestMetrics (unix seconds, wall clock).
type vllmMetrics struct {
	ArrivalTime        *float64 `json:"arrival_time"`
	LastTokenTime      *float64 `json:"last_token_time"`
	FirstScheduledTime *float64 `json:"first_scheduled_time"`
	FirstTokenTime     *float64 `json:"first_token_time"`
	TimeInQueue        *float64 `json:"time_in_queue"`
	FinishedTime       *float64 `json:"finished_time"`
}

// chunkJSON is one chat.completion.chunk or text_completion event.
type chunkJSON struct {
	ID      firstString     `json:"id"`
	Model   firstString     `json:"model"`
	Choices []choiceJSON    `json:"choices"`
	Usage   *usageJSON      `json:"usage"`
	Timings *llamaTimings   `json:"timings"`
	Metrics *vllmMetrics    `json:"metrics"`
	Error   json.RawMessage `json:"error"`
}

type choiceJSON struct {
	Delta struct {
		Content          presence `json:"content"`
		ReasoningContent presence `json:"reasoning_content"`
		Reasoning        presence `json:"reasoning"`
		ToolCalls        presence `json:"tool_calls"`
	} `json:"delta"`
	Text         presence `json:"text"`
	FinishReason *string  `json:"finish_reason"`
}

// ollamaJSON is one line of Ollama's native /api/chat stream.
type ollamaJSON struct {
	Model   string `json:"model"`
	Message struct {
		Content   presence `json:"content"`
		Thinking  presence `json:"thinking"`
		ToolCalls presence `json:"tool_calls"`
	} `json:"message"`
	Done               bool            `json:"done"`
	DoneReason         string          `json:"done_reason"`
	PromptEvalCount    *int            `json:"prompt_eval_count"`
	EvalCount          *int            `json:"eval_count"`
	PromptEvalDuration *int64          `json:"prompt_eval_duration"`
	EvalDuration       *int64          `json:"eval_duration"`
	LoadDuration       *int64          `json:"load_duration"`
	Error              json.RawMessage `json:"error"`
}

// stream is the parser state of one response. Its times are socket stamps (see stampReader).
type stream struct {
	api         servebench.API
	contentType string
	onFirst     func()

	id                                       string
	firstToken, firstContent, lastToken, end time.Time
	chunks, events                           int
	textBytes                                int // textLen of the token values (see servebench.MaxPlausibleOutputTokens)
	// model is the model asked for; otherModel the first other one a chunk named.
	model, otherModel string
	// usages counts the usage objects received; chunksAtUsage is chunks when the latest came;
	// usageChanged says how a later usage object contradicted an earlier one ("" when none did).
	usages, chunksAtUsage int
	usageChanged          string
	// w, when set, is told of every token (idle is time without a token, not without bytes).
	w               *watchdog
	reasoningEvents int // token events that carried a reasoning delta
	gaps            []float64
	finish          string
	usage           struct{ prompt, completion, cached, reasoning *int }
	llama           *llamaTimings
	vllm            *vllmMetrics
	ollama          *ollamaJSON
	done            bool
	// firstLag is the client lag of the read that delivered the first token (-1: unknown).
	firstLag time.Duration
	book     *stampBook

	// scratch
	partial  []byte // a line not ended yet
	rest     []byte // the bytes of the current feed after the line being handled
	pend     []byte
	pendAt   time.Time
	hasPend  bool
	errEvent bool
	// answer, when set (Request.Answer), receives the content text; read after the stamp.
	answer *strings.Builder
	ch     chunkJSON
	facts  chunkFacts
}

func newStream(api servebench.API, maxOut int, onFirst func()) *stream {
	if onFirst == nil {
		onFirst = func() {}
	}
	return &stream{api: api, onFirst: onFirst, firstLag: -1, gaps: make([]float64, 0, min(max(maxOut, 16), 1<<10))}
}

// read consumes a body read through sr until the end signal (nil), the end of the body or a
// read error. Every block read is fed whole, stamped with sr's stamp of it.
func (s *stream) read(sr *stampReader) *failure {
	s.book = &sr.stampBook
	buf := make([]byte, readBufferBytes)
	for {
		n, err := sr.Read(buf)
		if n > 0 {
			if f := s.feed(buf[:n], sr.last); f != nil || s.done {
				return f
			}
		}
		if err != nil {
			return s.ended(err, sr.last)
		}
	}
}

// feed parses the body bytes p, all delivered by one read stamped at: every line that ends in
// p takes that stamp (the read that delivered its last byte); a line not ended yet waits for
// the next feed. It returns the failure that stops the stream, if any; s.done says the end
// signal came (the bytes after it are not looked at).
func (s *stream) feed(p []byte, at time.Time) *failure {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if n := len(s.partial) + len(p); n > maxLineBytes {
				return s.tooLarge("line", maxLineBytes, n, append(s.partial, p...))
			}
			s.partial = append(s.partial, p...)
			return nil
		}
		line := p[:i+1]
		p = p[i+1:]
		if len(s.partial) > 0 {
			if n := len(s.partial) + len(line); n > maxLineBytes {
				return s.tooLarge("line", maxLineBytes, n, s.partial)
			}
			s.partial = append(s.partial, line...)
			line = s.partial
		}
		s.rest = p
		f := s.line(trimEOL(line), at)
		s.partial, s.rest = s.partial[:0], nil
		if f != nil || s.done {
			return f
		}
	}
	return nil
}

// ended handles the end of the body (err io.EOF) or a read error, the latest read stamped at.
func (s *stream) ended(err error, at time.Time) *failure {
	if len(s.partial) > 0 {
		// The body ended (or broke) inside a line: only a complete end signal or a complete
		// NDJSON object counts; anything else is a cut event.
		line := s.partial
		s.partial = nil
		if f := s.unterminated(line, at, err); f != nil || s.done {
			return f
		}
	}
	if err == io.EOF {
		if s.hasPend {
			// An event without its blank line: accept only a complete end signal.
			if string(s.pend) == "[DONE]" {
				s.done, s.end = true, s.pendAt
				return nil
			}
			return &failure{class: servebench.ErrStreamTruncated, msg: s.truncatedMessage("the stream ended in the middle of an event"), eof: true}
		}
		return &failure{class: servebench.ErrStreamTruncated, msg: s.truncatedMessage("the stream ended"), eof: true}
	}
	return &failure{class: servebench.ErrStreamTruncated, msg: s.truncatedMessage("the stream broke (" + err.Error() + ")")}
}

// unterminated handles a last line that has no end of line.
func (s *stream) unterminated(line []byte, at time.Time, err error) *failure {
	t := bytes.TrimSpace(line)
	if s.api == servebench.APIOllama {
		if validJSON(t) {
			return s.ollamaEvent(t, at)
		}
	} else if string(t) == "data: [DONE]" || string(t) == "data:[DONE]" {
		s.done, s.end = true, at
		return nil
	} else if len(t) > 0 && !bytes.HasPrefix(t, []byte("data:")) && !bytes.HasPrefix(t, []byte(":")) && s.events == 0 {
		return s.notAStream(t) // a body that is no stream at all, e.g. one line of JSON or HTML
	}
	if err != nil && err != io.EOF {
		return &failure{class: servebench.ErrStreamTruncated, msg: s.truncatedMessage("the stream broke in the middle of an event (" + err.Error() + ")")}
	}
	return &failure{class: servebench.ErrStreamTruncated, msg: s.truncatedMessage("the stream ended in the middle of an event"), eof: true}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// truncatedMessage explains a stream without its end signal.
func (s *stream) truncatedMessage(what string) string {
	end := "data: [DONE]"
	if s.api == servebench.APIOllama {
		end = `a final {"done": true} object`
	}
	usage := "no usage"
	if s.usage.completion != nil {
		usage = fmt.Sprintf("usage.completion_tokens=%d", *s.usage.completion)
	}
	fr := s.finish
	if fr == "" {
		fr = "none"
	}
	msg := fmt.Sprintf("%s without %s after %d token events (finish_reason %s, %s)", what, end, s.chunks, fr, usage)
	if s.chunks > 0 && s.usage.completion == nil {
		msg += "; the server stopped generating without saying so (Ollama does this after a run of repeated tokens)"
	}
	return msg
}

// line handles one line of the body (without its end of line).
func (s *stream) line(line []byte, at time.Time) *failure {
	if s.api == servebench.APIOllama {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		return s.ollamaEvent(line, at)
	}
	if len(line) == 0 {
		if s.hasPend {
			return s.dispatch(at)
		}
		return nil
	}
	if line[0] == ':' { // comment: keep-alive
		return nil
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if s.hasPend {
			// Some servers omit the blank line between events: a complete JSON object
			// followed by a new one is two events, never one multi-line event.
			if len(value) > 0 && value[0] == '{' && len(s.pend) > 0 && s.pend[len(s.pend)-1] == '}' {
				if f := s.dispatch(s.pendAt); f != nil || s.done {
					return f
				}
			} else {
				s.pend = append(s.pend, '\n')
			}
		}
		if n := len(s.pend) + len(value); n > maxEventBytes {
			return s.tooLarge("event", maxEventBytes, n, s.pend)
		}
		s.pend = append(s.pend, value...)
		s.pendAt, s.hasPend = at, true
	case "event":
		s.errEvent = string(value) == "error"
	case "id", "retry":
	default:
		return s.notAStream(line)
	}
	return nil
}

// dispatch handles the pending SSE event, stamped at.
func (s *stream) dispatch(at time.Time) *failure {
	data := s.pend
	s.pend, s.hasPend = s.pend[:0], false
	s.events++
	if s.errEvent {
		return &failure{class: servebench.ErrStreamTruncated, msg: "the server reported an error in the stream: " + clip(string(data), 300)}
	}
	if string(data) == "[DONE]" {
		s.done, s.end = true, at
		return nil
	}
	var ev chunkEvent
	if err := s.decodeChunk(data, &ev); err != nil {
		return s.malformed(data, err)
	}
	if ev.errv != nil {
		return &failure{class: servebench.ErrStreamTruncated, msg: "the server reported an error in the stream: " + clip(string(ev.errv), 300)}
	}
	if s.id == "" && len(ev.id) > 0 {
		s.id = string(ev.id)
	}
	s.sawModel(ev.model)
	if ev.finish != "" {
		s.finish = ev.finish
	}
	s.token(at, ev.tok, ev.content, ev.reasoning, ev.textBytes)
	if u := ev.usage; u != nil && !placeholder(u) {
		s.checkUsage(u)
		if u.PromptTokens != nil {
			s.usage.prompt = u.PromptTokens
		}
		if u.CompletionTokens != nil {
			s.usage.completion = u.CompletionTokens
		}
		if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil {
			s.usage.cached = u.PromptTokensDetails.CachedTokens
		}
		if u.CompletionTokensDetails != nil && u.CompletionTokensDetails.ReasoningTokens != nil {
			s.usage.reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
	}
	if ev.timings != nil {
		s.llama = ev.timings
	}
	if ev.metrics != nil {
		s.vllm = ev.metrics
	}
	if s.answer != nil && ev.content {
		keepAnswer(s.answer, data)
	}
	return nil
}

// keepAnswer appends the content text of a chat or completions event to b (a multi-turn
// session's answer). It decodes the event a second time, so only requests that keep their
// answer pay for it, and after the event's time was taken.
func keepAnswer(b *strings.Builder, data []byte) {
	var ev struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
			Text    string `json:"text"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	for _, c := range ev.Choices {
		b.WriteString(c.Delta.Content)
		b.WriteString(c.Text)
		b.WriteString(c.Message.Content)
	}
}

// chunkEvent is what one chat/completions event says, whichever decoder read it.
type chunkEvent struct {
	id, model               []byte
	tok, content, reasoning bool
	textBytes               int
	finish                  string
	usage                   *usageJSON
	timings                 *llamaTimings
	metrics                 *vllmMetrics
	errv                    []byte
}

// decodeChunk decodes an event: the fast scanner when the event has the usual shape,
// encoding/json otherwise (see scan.go).
func (s *stream) decodeChunk(data []byte, ev *chunkEvent) error {
	if !validJSON(data) {
		var v any
		return json.Unmarshal(data, &v) // for the syntax error's message
	}
	if err := decodeFast(data, &s.facts, ev); err != errSlowPath {
		return err
	}
	*ev = chunkEvent{}
	return decodeSlow(data, &s.ch, ev)
}

// decodeFast uses scanChunk; the rare objects go through encoding/json.
func decodeFast(data []byte, f *chunkFacts, ev *chunkEvent) error {
	if err := scanChunk(data, f); err != nil {
		return err
	}
	*ev = chunkEvent{id: f.id, model: f.model, tok: f.tok, content: f.content, reasoning: f.reasoning, errv: f.errv, textBytes: f.textBytes}
	if f.hasFinish {
		ev.finish = string(f.finish) // short strings: "length", "stop"
	}
	if f.usage != nil {
		ev.usage = new(usageJSON)
		if err := json.Unmarshal(f.usage, ev.usage); err != nil {
			return err
		}
	}
	if f.timings != nil {
		ev.timings = new(llamaTimings)
		if err := json.Unmarshal(f.timings, ev.timings); err != nil {
			return err
		}
	}
	if f.metrics != nil {
		ev.metrics = new(vllmMetrics)
		if err := json.Unmarshal(f.metrics, ev.metrics); err != nil {
			return err
		}
	}
	return nil
}

// decodeSlow decodes with encoding/json into ch (reused between events).
func decodeSlow(data []byte, ch *chunkJSON, ev *chunkEvent) error {
	full := ch.Choices[:cap(ch.Choices)]
	clear(full)
	*ch = chunkJSON{Choices: full[:0]}
	if err := json.Unmarshal(data, ch); err != nil {
		return err
	}
	if ch.ID.v != "" {
		ev.id = []byte(ch.ID.v)
	}
	if ch.Model.v != "" {
		ev.model = []byte(ch.Model.v)
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		ev.errv = ch.Error
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Delta.Content > 0 || c.Text > 0 {
			ev.content = true
		}
		if n := int(c.Delta.Content + c.Text + c.Delta.ReasoningContent + c.Delta.Reasoning + c.Delta.ToolCalls); n > 0 {
			ev.tok = true
			ev.textBytes += n
		}
		if c.Delta.ReasoningContent > 0 || c.Delta.Reasoning > 0 {
			ev.reasoning = true
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			ev.finish = *c.FinishReason
		}
	}
	ev.usage, ev.timings, ev.metrics = ch.Usage, ch.Timings, ch.Metrics
	return nil
}

// sawModel notes the model an event named (nil or empty: none).
func (s *stream) sawModel(m []byte) {
	if len(m) == 0 || s.otherModel != "" || s.model == "" || string(m) == s.model {
		return
	}
	if !sameModel(string(m), s.model) {
		s.otherModel = clip(string(m), 200)
	}
}

// sameModel reports whether the model a response named is the one asked for: equal, equal but
// for Ollama's default tag (":latest"), or a path ending in the name asked for (an engine that
// names the checkpoint's directory).
func sameModel(got, asked string) bool {
	trim := func(s string) string { return strings.TrimSuffix(s, ":latest") }
	got, asked = trim(got), trim(asked)
	return got == asked || strings.HasSuffix(got, "/"+asked) || strings.HasSuffix(asked, "/"+got)
}

// placeholder reports whether a usage object claims nothing: all its counts zero or absent
// (Ollama's OpenAI API sends one with every chunk before the real one at the end).
func placeholder(u *usageJSON) bool {
	zero := func(p *int) bool { return p == nil || *p == 0 }
	return zero(u.PromptTokens) && zero(u.CompletionTokens)
}

// checkUsage compares a usage object with the ones before it (before s takes its values): a
// repeat must be identical, or a running count (vLLM's continuous usage stats) whose
// completion_tokens grows only with token events and whose prompt_tokens stays.
func (s *stream) checkUsage(u *usageJSON) {
	defer func() { s.usages, s.chunksAtUsage = s.usages+1, s.chunks }()
	if s.usages == 0 || s.usageChanged != "" {
		return
	}
	if p, q := s.usage.prompt, u.PromptTokens; p != nil && q != nil && *p != *q {
		s.usageChanged = fmt.Sprintf("usage.prompt_tokens went from %d to %d within one response", *p, *q)
		return
	}
	p, q := s.usage.completion, u.CompletionTokens
	switch {
	case p == nil || q == nil || *p == *q:
	case *q < *p:
		s.usageChanged = fmt.Sprintf("usage.completion_tokens went down from %d to %d within one response", *p, *q)
	case s.chunks == s.chunksAtUsage:
		s.usageChanged = fmt.Sprintf("a second usage object raised usage.completion_tokens from %d to %d with no token event in between", *p, *q)
	}
}

// token notes an event; tok says it carried a token, n the size of its token values.
func (s *stream) token(at time.Time, tok, content, reasoning bool, n int) {
	if reasoning {
		s.reasoningEvents++
	}
	if tok {
		s.textBytes += n
		if s.w != nil {
			s.w.tokenAt(at)
		}
		if s.chunks == 0 {
			s.firstToken = at
			if s.book != nil {
				s.firstLag = s.book.lagAt(at)
			}
			s.onFirst()
		} else {
			s.gaps = append(s.gaps, at.Sub(s.lastToken).Seconds())
		}
		s.lastToken = at
		s.chunks++
	}
	if content && s.firstContent.IsZero() {
		s.firstContent = at
	}
}

// ollamaEvent handles one line of Ollama's native stream.
func (s *stream) ollamaEvent(line []byte, at time.Time) *failure {
	s.events++
	if t := bytes.TrimSpace(line); t[0] != '{' {
		return s.notAStream(line)
	}
	var o ollamaJSON
	if err := json.Unmarshal(line, &o); err != nil {
		return s.malformed(line, err)
	}
	if len(o.Error) > 0 && string(o.Error) != "null" {
		return &failure{class: servebench.ErrStreamTruncated, msg: "the server reported an error in the stream: " + clip(string(o.Error), 300)}
	}
	content, thinking := o.Message.Content > 0, o.Message.Thinking > 0
	n := int(o.Message.Content + o.Message.Thinking + o.Message.ToolCalls)
	s.token(at, n > 0, content, thinking, n)
	s.sawModel([]byte(o.Model))
	if s.answer != nil && content {
		var m struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &m) == nil {
			s.answer.WriteString(m.Message.Content)
		}
	}
	if o.Done {
		s.done, s.end = true, at
		s.finish = o.DoneReason
		s.usage.prompt, s.usage.completion = o.PromptEvalCount, o.EvalCount
		final := o
		s.ollama = &final
	}
	return nil
}

// tooLarge explains a line or event larger than the client's limit (what: "line" or "event");
// n is how many bytes it had reached, start its first bytes.
func (s *stream) tooLarge(what string, limit, n int, start []byte) *failure {
	return &failure{class: servebench.ErrMalformedEvent,
		msg: fmt.Sprintf("the response sent a %s longer than the client's limit of %d MiB (%d bytes so far, starting %q): no token chunk is this large; the server or a proxy in front of it sent something else (a huge error page, a runaway field), so the stream was abandoned",
			what, limit>>20, n, clip(string(start[:min(len(start), 120)]), 120))}
}

// malformed explains an event that is not valid JSON.
func (s *stream) malformed(data []byte, err error) *failure {
	if s.events <= 1 {
		if f := s.notAStreamHint(data); f != nil {
			return f
		}
	}
	return &failure{class: servebench.ErrMalformedEvent,
		msg: fmt.Sprintf("event %d is not valid JSON (%v): received %q", s.events, err, clip(string(data), 200))}
}

// notAStream explains a body that is not the expected stream at all.
func (s *stream) notAStream(line []byte) *failure {
	if f := s.notAStreamHint(line); f != nil {
		return f
	}
	want := `an event stream (text/event-stream, lines "data: {...}")`
	if s.api == servebench.APIOllama {
		want = "newline-delimited JSON (application/x-ndjson)"
	}
	return &failure{class: servebench.ErrMalformedEvent,
		msg: fmt.Sprintf("expected %s but received %q (Content-Type %q): check --url is the API base ending in /v1 and --api matches the server", want, clip(string(line), 200), s.contentType)}
}

// notAStreamHint recognises an HTML page, a single JSON body and an SSE stream sent to the
// Ollama flavour; nil when none of these.
func (s *stream) notAStreamHint(line []byte) *failure {
	t := bytes.TrimSpace(line)
	ct := strings.ToLower(s.contentType)
	switch {
	case strings.Contains(ct, "text/html") || looksHTML(t):
		if len(s.rest) > 0 { // the hint needs more than one line of the page
			t = append(append(append([]byte(nil), t...), '\n'), s.rest[:min(len(s.rest), 4<<10)]...)
		}
		return &failure{class: servebench.ErrMalformedEvent,
			msg: fmt.Sprintf("received an HTML page (Content-Type %q: %s) instead of a token stream: a web server or proxy answered, not the inference API; check --url is the API base ending in /v1 (e.g. http://host:8000/v1)", s.contentType, htmlHint(t))}
	case s.api != servebench.APIOllama && len(t) > 0 && t[0] == '{':
		return &failure{class: servebench.ErrMalformedEvent,
			msg: fmt.Sprintf("received a single JSON body instead of an event stream: %q; the server ignored \"stream\": true — check --api (openai-chat, openai-completions or ollama) and --url", clip(string(t), 200))}
	case s.api == servebench.APIOllama && bytes.HasPrefix(t, []byte("data:")):
		return &failure{class: servebench.ErrMalformedEvent,
			msg: "received a server-sent event stream on the Ollama native API: use --api openai-chat with the /v1 base URL"}
	}
	return nil
}

// serverTimings converts whatever per-request timings the server sent.
func (s *stream) serverTimings() *servebench.ServerTimings {
	switch {
	case s.ollama != nil:
		o := s.ollama
		st := &servebench.ServerTimings{Source: "ollama-native", PromptTokens: o.PromptEvalCount}
		st.PrefillSeconds = nanos(o.PromptEvalDuration)
		st.DecodeSeconds = nanos(o.EvalDuration)
		st.LoadSeconds = nanos(o.LoadDuration)
		return st
	case s.vllm != nil:
		m := s.vllm
		st := &servebench.ServerTimings{Source: "vllm-request-metrics"}
		switch {
		case m.TimeInQueue != nil:
			st.QueueSeconds = ptr(*m.TimeInQueue)
		case m.FirstScheduledTime != nil && m.ArrivalTime != nil:
			st.QueueSeconds = ptr(*m.FirstScheduledTime - *m.ArrivalTime)
		}
		if m.FirstTokenTime != nil && m.FirstScheduledTime != nil {
			st.PrefillSeconds = ptr(*m.FirstTokenTime - *m.FirstScheduledTime)
		}
		last := m.LastTokenTime
		if last == nil {
			last = m.FinishedTime
		}
		if last != nil && m.FirstTokenTime != nil {
			st.DecodeSeconds = ptr(*last - *m.FirstTokenTime)
		}
		return st
	case s.llama != nil:
		t := s.llama
		st := &servebench.ServerTimings{Source: "llamacpp-timings", PromptTokens: t.PromptN, CachedTokens: t.CacheN}
		if t.PromptMS != nil {
			st.PrefillSeconds = ptr(*t.PromptMS / 1000)
		}
		if t.PredictedMS != nil {
			st.DecodeSeconds = ptr(*t.PredictedMS / 1000)
		}
		return st
	}
	return nil
}

func ptr(v float64) *float64 { return &v }

func nanos(v *int64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(float64(*v) / 1e9)
}
