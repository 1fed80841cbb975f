package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/servebench/servebench"
)

// Defaults for the timeouts of Config.
const (
	DefaultTTFTTimeout = 10 * time.Minute
	DefaultIdleTimeout = 60 * time.Second
	// DefaultSecondsPerToken is the time each output token adds to a request's total bound
	// when Config.RequestTimeout is not set (see TotalTimeout): 1 s, one token per second per
	// user, far slower than any server worth measuring.
	DefaultSecondsPerToken = time.Second
)

// Buffer sizes, chosen so that a stream in flight costs the client well under 64 KiB, prompt
// bytes aside (BenchmarkInFlightMemory): the connection is read in blocks of up to
// readBufferBytes (one block = one stamp; a line that spans blocks is joined, see stream.feed),
// and a request whose body fits in writeBufferBytes goes out in one buffer with its headers
// (a larger body is written from where it lies, in the same system call on the plain-HTTP path).
const (
	readBufferBytes  = 8 << 10
	writeBufferBytes = 4 << 10
)

// Quirks turn off request fields a server rejects or ignores. Discover sets them for the
// engines it knows (Ollama: NoIgnoreEOS and NoMinTokens).
type Quirks struct {
	// NoIgnoreEOS omits "ignore_eos": true.
	NoIgnoreEOS bool `json:"no_ignore_eos,omitempty"`
	// NoMinTokens omits "min_tokens": N.
	NoMinTokens bool `json:"no_min_tokens,omitempty"`
	// NoMaxCompletionTokens omits "max_completion_tokens": N (chat); "max_tokens" is always sent.
	NoMaxCompletionTokens bool `json:"no_max_completion_tokens,omitempty"`
}

// Config describes the target and how to measure it.
type Config struct {
	// BaseURL is the API base, e.g. http://127.0.0.1:8000/v1. For APIOllama the native
	// endpoint is {BaseURL without a trailing /v1}/api/chat.
	BaseURL string
	// API is the wire protocol; empty means servebench.APIChat.
	API servebench.API
	// Model is the model id sent with every request.
	Model string
	// APIKey is sent as "Authorization: Bearer KEY". It never appears in records or errors.
	APIKey string
	// Origin is the run origin: Record offsets are time since Origin on the monotonic clock.
	// Zero means the time New was called.
	Origin time.Time
	// TTFTTimeout bounds request start → first token (DefaultTTFTTimeout when zero).
	// IdleTimeout bounds the time without a token once the first token came
	// (DefaultIdleTimeout when zero): bytes that carry no token (": ping" comments, events with
	// no delta or "choices": []) do not count.
	TTFTTimeout, IdleTimeout time.Duration
	// RequestTimeout bounds a request's whole life, start to end, whatever arrives; zero
	// derives it from the request's output length (see TotalTimeout).
	RequestTimeout time.Duration
	// MaxConnections is the most requests in flight at once; the transport keeps at least
	// this many idle connections per host so a closed loop never re-dials.
	MaxConnections int
	// ExactOutput turns an output length different from Request.MaxOutputTokens into a
	// failure (servebench.ErrLengthMismatch); otherwise it only sets Record.LengthMismatch.
	ExactOutput bool
	// Quirks turn off request fields the server does not accept.
	Quirks Quirks
	// Headers are sent with every request, after servebench's own (a header given here wins,
	// Authorization included). Their values never appear in records or errors.
	Headers http.Header
	// Temperature, TopP and Seed are the sampling parameters, sent when set.
	Temperature, TopP *float64
	Seed              *int64
	// ExtraBody is a JSON object whose fields are merged into every request body (see
	// buildBody); it cannot set model, messages, prompt or stream.
	ExtraBody json.RawMessage
	// DialContext, when set, opens connections instead of a TCP dialer, the client's and
	// Discover's (tests drive them over in-memory connections, e.g. net.Pipe inside a synctest
	// bubble).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// UserClock stamps every read with the time it returned in user space, even where the
	// kernel's receive stamps are available (to compare the two clocks).
	UserClock bool
}

// Client is the measuring client. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string // full URL of the streaming endpoint
	base     string // BaseURL without a trailing slash
	origin   time.Time
	tr       *http.Transport // pooled, keep-alive
	fresh    *http.Transport // one connection per request: the retry path
	h1       *h1Client       // the plain-HTTP path (h1.go); nil for https:// targets
	stamps   io.Closer       // holds the kernel's receive stamping on (nil: user clock)
	extra    []extraField    // Config.ExtraBody, parsed
	secrets  []string        // the API key and header values, removed from every message
	dialer   *dialer
}

var _ servebench.Client = (*Client)(nil)

// New checks cfg and builds a Client with a transport sized for cfg.MaxConnections.
func New(cfg Config) (*Client, error) {
	if cfg.API == "" {
		cfg.API = servebench.APIChat
	}
	base, root, err := parseBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	var endpoint string
	switch cfg.API {
	case servebench.APIChat:
		endpoint = base + "/chat/completions"
	case servebench.APICompletions:
		endpoint = base + "/completions"
	case servebench.APIOllama:
		endpoint = root + "/api/chat"
	default:
		return nil, fmt.Errorf("unknown API %q: use %q, %q or %q", cfg.API, servebench.APIChat, servebench.APICompletions, servebench.APIOllama)
	}
	if cfg.Model == "" {
		return nil, errors.New("no model: pass --model, or take one from Discover's ServerInfo.Models")
	}
	if cfg.TTFTTimeout <= 0 {
		cfg.TTFTTimeout = DefaultTTFTTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	extra, err := parseExtraBody(cfg.ExtraBody)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, endpoint: endpoint, base: base, origin: cfg.Origin, extra: extra, secrets: secretsOf(cfg)}
	if c.origin.IsZero() {
		c.origin = time.Now()
	}
	c.tr = newTransport(cfg.MaxConnections, false)
	c.fresh = newTransport(1, true)
	dial := dialFunc((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	if cfg.DialContext != nil {
		dial = cfg.DialContext
	}
	c.dialer = &dialer{dial: dial, kernel: !cfg.UserClock}
	c.tr.DialContext = c.dialer.DialContext
	c.fresh.DialContext = c.dialer.DialContext
	c.h1 = newH1(endpoint, cfg, c.dialer)
	if c.ClockSource() == clockKernel {
		c.stamps = stampsOn()
	}
	return c, nil
}

// ClockSource says which clock stamps this client's reads: "kernel" where the system
// delivers receive timestamps and Config.UserClock is off, "user" otherwise. A connection
// whose socket refuses stamps falls back to the user clock; its records say so.
func (c *Client) ClockSource() string {
	if c.cfg.UserClock || !rxSupported {
		return clockUser
	}
	return clockKernel
}

// Close closes idle connections. In-flight requests are not affected.
func (c *Client) Close() {
	c.tr.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
	if c.h1 != nil {
		c.h1.closeIdle()
	}
	c.dialer.closeStash()
	if c.stamps != nil {
		_ = c.stamps.Close()
		c.stamps = nil
	}
}

// parseBase validates a base URL and returns it without a trailing slash, and its root (the
// base without a trailing /v1).
func parseBase(raw string) (base, root string, err error) {
	base = strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("bad target URL %q: want the API base, e.g. http://127.0.0.1:8000/v1", raw)
	}
	return base, strings.TrimSuffix(base, "/v1"), nil
}

// newTransport builds an HTTP/1.1 transport without proxy, compression or HTTP/2, with at
// least maxConns idle connections kept per host.
func newTransport(maxConns int, noKeepAlive bool) *http.Transport {
	idle := max(maxConns, http.DefaultMaxIdleConnsPerHost)
	return &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        max(idle, 100),
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		DisableKeepAlives:   noKeepAlive,
		ReadBufferSize:      readBufferBytes,
		WriteBufferSize:     writeBufferBytes,
		ForceAttemptHTTP2:   false,
		// A non-nil empty map disables HTTP/2 on TLS connections too.
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		TLSHandshakeTimeout: 30 * time.Second,
	}
}

// Do sends req and returns its one Record, whatever happens; it never panics.
//
// Clock: request start is the instant before the request's first byte is written to the
// connection (new or reused); when nothing was written through net/http it is when a
// connection was in hand (httptrace GotConn), or the instant before the connection was sought
// when none was (dial failure). Every later reading is the stamp of the read that delivered the
// bytes (see stampBook): the kernel's receive stamp where available, else the time the read
// returned, before any parsing.
//
// Retry: when a request on a reused keep-alive connection fails with EOF or a reset before
// any response byte arrived (llama.cpp closes kept-alive connections after a stream), it is
// sent once more on a fresh connection with a fresh clock, and Record.Retries is 1.
func (c *Client) Do(ctx context.Context, req *servebench.Request) (rec servebench.Record) {
	c.do(ctx, req, &rec)
	return rec
}

// result is what do learns beyond the Record.
type result struct {
	usagePrompt *int // usage.prompt_tokens (or prompt_eval_count) when the server sent it
	ended       bool // the end signal ([DONE] / done:true) arrived
}

// do fills rec (through a pointer, field by field: a request's goroutine runs do and the
// response's first read, and a Record held by value in each frame made the deepest of them need a
// 16 KiB stack, copied up from the goroutine's first 2 KiB at every request).
func (c *Client) do(ctx context.Context, req *servebench.Request, rec *servebench.Record) (res result) {
	*rec = servebench.Record{}
	rec.CellKey = req.Cell
	rec.Seq = req.Seq
	rec.Warmup = req.Warmup
	rec.ScheduledOffsetSeconds = req.ScheduledAt.Seconds()
	rec.InputTokensRequested = req.ContextTokens
	rec.OutputTokensRequested = req.MaxOutputTokens
	rec.DatasetIndex = req.DatasetIndex
	defer func() {
		if r := recover(); r != nil {
			rec.ErrorClass = servebench.ErrMalformedEvent
			rec.Error = c.redact(fmt.Sprintf("servebench client bug while reading the response (please report): %v", r))
			rec.EndOffsetSeconds = time.Since(c.origin).Seconds()
		}
	}()
	body, err := buildBody(c.cfg, c.extra, req)
	if err != nil {
		now := time.Now()
		rec.StartUnixNano, rec.StartOffsetSeconds, rec.EndOffsetSeconds = now.UnixNano(), now.Sub(c.origin).Seconds(), now.Sub(c.origin).Seconds()
		rec.ErrorClass, rec.Error = servebench.ErrMalformedEvent, "cannot encode the request: "+err.Error()
		return res
	}
	tr := c.tr
	for attempt := 0; ; attempt++ {
		a := exchange{c: c, req: req, rec: rec}
		retry := a.run(ctx, tr, body)
		res = a.res
		if retry && attempt == 0 {
			rec.Retries = 1
			tr = c.fresh
			continue
		}
		break
	}
	rec.Error = c.redact(rec.Error)
	return res
}

// redact removes the API key and the header values from a message (a server could echo a
// header back).
func (c *Client) redact(s string) string {
	return servebench.Redact(s, c.secrets...)
}

// secretsOf lists the strings no message may contain: the API key and every header value
// (servebench.Redact ignores the ones too short to protect anything).
func secretsOf(cfg Config) []string {
	out := []string{cfg.APIKey}
	for _, vs := range cfg.Headers {
		out = append(out, vs...)
	}
	return out
}

// TotalTimeout is the bound on the whole life of a request for maxOutputTokens output tokens:
// Config.RequestTimeout when set, else
//
//	total = TTFTTimeout + max(maxOutputTokens, 1) × DefaultSecondsPerToken + IdleTimeout
//
// so that a server that sends a token just often enough to beat the idle timeout still cannot
// hold a request (and its slot) for ever.
func (c *Client) TotalTimeout(maxOutputTokens int) time.Duration {
	if c.cfg.RequestTimeout > 0 {
		return c.cfg.RequestTimeout
	}
	return c.cfg.TTFTTimeout + time.Duration(max(maxOutputTokens, 1))*DefaultSecondsPerToken + c.cfg.IdleTimeout
}

// Causes given to the request context by the watchdog.
var (
	errFirstTokenTimeout = errors.New("first-token timeout")
	errIdleTimeout       = errors.New("idle timeout")
	errTotalTimeout      = errors.New("total timeout")
)

// Watchdog phases.
const (
	phaseFirst  int32 = iota // waiting for the first token: TTFTTimeout from request start
	phaseStream              // streaming: IdleTimeout since the latest token
)

// watchdog cancels the request context when a timeout passes: the first-token or idle timeout
// of the current phase, or the request's total bound, whichever comes first. It costs one
// atomic store per token: the timer re-arms itself lazily from the latest token instead of
// being reset per event.
type watchdog struct {
	base        time.Time
	idle, total time.Duration
	activity    atomic.Int64 // nanoseconds since base of the latest token
	phase       atomic.Int32
	cancel      context.CancelCauseFunc
	timer       *time.Timer
}

func (w *watchdog) fire() {
	now := time.Since(w.base)
	if now >= w.total {
		w.cancel(errTotalTimeout)
		return
	}
	switch w.phase.Load() {
	case phaseFirst:
		w.cancel(errFirstTokenTimeout)
	case phaseStream:
		quiet := now - time.Duration(w.activity.Load())
		if quiet >= w.idle {
			w.cancel(errIdleTimeout)
			return
		}
		w.timer.Reset(min(w.idle-quiet, w.total-now))
	}
}

// enter switches to phase, whose timeout d runs from now (bounded by the total).
func (w *watchdog) enter(phase int32, d time.Duration) {
	w.phase.Store(phase)
	w.timer.Reset(min(d, w.total-time.Since(w.base)))
}

// tokenAt notes a token that arrived at at (its read's stamp).
func (w *watchdog) tokenAt(at time.Time) {
	w.activity.Store(int64(at.Sub(w.base)))
}

// stampBook keeps the clock readings of one response's reads: the stamp of the latest read
// (the time of every byte it delivered), the recent stamps with their client lag, and whether
// every read was kernel-stamped. Both ways of reading a response feed it: stampReader (through
// net/http) and the plain-HTTP reader (h1.go).
type stampBook struct {
	last time.Time
	w    *watchdog
	// kernel: the connection takes kernel stamps.
	kernel bool

	recent    [4]readStamp // the latest stamps, newest at recent[(reads-1)%4]
	reads     int
	userReads int           // reads stamped by the user clock
	maxLag    time.Duration // the worst client lag over the kernel-stamped reads
}

// note records the stamp st of a read that returned bytes at user-space time now.
func (b *stampBook) note(st readStamp, now time.Time) {
	if st.lag < 0 {
		b.userReads++
	} else if st.lag > b.maxLag {
		b.maxLag = st.lag
	}
	b.last = st.at
	b.recent[b.reads%len(b.recent)] = st
	b.reads++
}

// lagAt returns the client lag of the recent read stamped at; -1 when that read had no kernel
// stamp or is no longer among the recent ones.
func (b *stampBook) lagAt(at time.Time) time.Duration {
	for i := range b.recent {
		if st := b.recent[i]; st.at.Equal(at) && !at.IsZero() {
			return st.lag
		}
	}
	return -1
}

// clockSource says which clock stamped this response.
func (b *stampBook) clockSource() string {
	if b.kernel && b.userReads == 0 && b.reads > 0 {
		return clockKernel
	}
	return clockUser
}

// stampReader wraps a response body read through net/http and stamps each Read that returned
// bytes. With kernel stamps (kc set), a Read's stamp is the receive stamp of the connection's
// latest read that returned bytes. That is the read that delivered the last byte returned here,
// also when net/http's own bufio.Reader had buffered it earlier (headers and a first event in
// one segment): the transport reads the connection only on behalf of the body reader, and only
// once its buffer holds no complete chunk, so a newer connection read never precedes the bytes
// returned. Without kernel stamps the stamp is the time the Read returned.
type stampReader struct {
	stampBook
	r io.Reader
	// kc is the connection when it takes kernel stamps; from is the request start (kernel
	// stamps before it are refused, see stampRead).
	kc   *conn
	from time.Time
}

func newStampReader(r io.Reader, w *watchdog, kc *conn, from time.Time) *stampReader {
	return &stampReader{stampBook: stampBook{w: w, kernel: kc != nil}, r: r, kc: kc, from: from}
}

func (s *stampReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		now := time.Now()
		st := readStamp{at: now, lag: -1}
		if s.kc != nil {
			st = stampRead(now, s.kc.kernelNs.Load(), s.from)
		}
		s.note(st, now)
	}
	return n, err
}

// exchange is one attempt of one request.
type exchange struct {
	c   *Client
	req *servebench.Request
	rec *servebench.Record
	res result

	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	w      *watchdog
	start  time.Time
	// handoff: the rest of the response is read in the background, which ends ctx (net/http
	// aborts a body whose request context ended).
	handoff bool
}

// run performs the attempt and fills rec. It reports whether the attempt failed on a reused
// connection before any response byte and may be sent again.
func (a *exchange) run(parent context.Context, tr *http.Transport, body []byte) (retry bool) {
	c := a.c
	// The record starts afresh but for what do set (field by field: see do).
	r := a.rec
	cell, seq, warmup, sched := r.CellKey, r.Seq, r.Warmup, r.ScheduledOffsetSeconds
	in, out, retries, ds := r.InputTokensRequested, r.OutputTokensRequested, r.Retries, r.DatasetIndex
	*r = servebench.Record{}
	r.CellKey, r.Seq, r.Warmup, r.ScheduledOffsetSeconds = cell, seq, warmup, sched
	r.InputTokensRequested, r.OutputTokensRequested, r.Retries, r.DatasetIndex = in, out, retries, ds
	r.ClockSource = clockUser
	a.res = result{}
	a.parent = parent
	ctx, cancel := context.WithCancelCause(parent)
	a.cancel = cancel
	defer func() {
		if !a.handoff {
			cancel(nil)
		}
	}()
	a.ctx = ctx

	t0 := time.Now()
	w := &watchdog{base: t0, idle: c.cfg.IdleTimeout, total: c.TotalTimeout(a.req.MaxOutputTokens), cancel: cancel}
	a.w = w
	w.timer = time.AfterFunc(min(c.cfg.TTFTTimeout, w.total), w.fire)
	defer w.timer.Stop()
	if c.h1 != nil {
		return a.runH1(tr == c.fresh, body)
	}

	var gotConn atomic.Int64 // ns since t0 + 1 (0: no connection yet)
	var reused atomic.Bool
	var kc atomic.Pointer[conn]
	mark := new(startMark)
	var opened atomic.Bool // the request opened its connection
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		gotConn.Store(int64(time.Since(t0)) + 1)
		reused.Store(info.Reused)
		opened.Store(!info.Reused)
		if oc := ownConn(info.Conn); oc != nil {
			if oc.prewarmed {
				reused.Store(true) // opened ahead: the server may have dropped it meanwhile
				opened.Store(false)
			}
			oc.armStart(mark)
			if oc.kernelClock() {
				kc.Store(oc)
			}
		}
	}}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		a.startAt(t0)
		return a.fail(servebench.ErrConnect, "cannot build the request: "+err.Error())
	}
	// No GetBody: the transport must never resend a POST on its own; the one retry is ours.
	hreq.GetBody = nil
	hreq.Header.Set("Content-Type", "application/json")
	if c.cfg.API == servebench.APIOllama {
		hreq.Header.Set("Accept", "application/x-ndjson")
	} else {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, vs := range c.cfg.Headers {
		hreq.Header[http.CanonicalHeaderKey(k)] = vs
	}

	resp, err := tr.RoundTrip(hreq)
	if ws, ok := mark.at(); ok {
		a.startAt(ws)
	} else if g := gotConn.Load(); g > 0 {
		a.startAt(t0.Add(time.Duration(g - 1)))
	} else {
		a.startAt(t0)
	}
	if g := gotConn.Load(); g > 0 && opened.Load() {
		a.rec.ConnectSeconds = ptr(time.Duration(g - 1).Seconds())
	}
	if d, ok := mark.written(); ok {
		a.rec.WriteSeconds = d.Seconds()
	}
	if err != nil {
		if f := a.ctxFailure(); f {
			return false
		}
		if reused.Load() && brokenConn(err) {
			a.fail(servebench.ErrConnect, "the kept-alive connection broke before any response byte: "+err.Error())
			return true
		}
		return a.fail(servebench.ErrConnect, connectMessage(c.endpoint, err))
	}
	defer func() { _ = resp.Body.Close() }() // resp.Body is replaced when the rest is drained in the background
	a.rec.HTTPStatus = resp.StatusCode
	sr := newStampReader(resp.Body, w, kc.Load(), a.start)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(sr, 4<<10))
		a.rec.EndOffsetSeconds = time.Since(c.origin).Seconds()
		if a.ctxFailure() {
			return false
		}
		a.rec.RetryAfterSeconds = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		// redact before the message clips the body, so no part of an echoed key survives
		return a.fail(servebench.ErrHTTPStatus, statusMessage(resp.Status, resp.StatusCode, resp.Request.URL.Path, resp.Header.Get("Content-Type"), []byte(c.redact(string(snippet))), c.base))
	}

	st := a.newStream(resp.Header.Get("Content-Type"))
	f := st.read(sr)
	if f == nil {
		// End signal seen: the request ends now, whatever the connection does. The rest
		// (normally the chunked terminator) is read in the background, under a short grace, so
		// that the connection can be reused.
		body, cancel := resp.Body, a.cancel
		resp.Body, a.handoff = http.NoBody, true
		go func() {
			drainBody(body)
			cancel(nil)
		}()
	}
	a.finish(st, f, &sr.stampBook)
	return false
}

// After the end signal: what is read of the rest of a response to keep its connection, and for
// how long at most.
const (
	maxDrainBytes = 1 << 20
	drainGrace    = 2 * time.Second
)

// drainBody reads the rest of a response after its end signal, for at most drainGrace and
// maxDrainBytes, and closes it (net/http keeps the connection when the body ended).
func drainBody(body io.ReadCloser) {
	t := time.AfterFunc(drainGrace, func() { _ = body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrainBytes))
	t.Stop()
	_ = body.Close()
}

// newStream makes the parser of a 2xx response with the given Content-Type.
func (a *exchange) newStream(contentType string) *stream {
	c, w := a.c, a.w
	st := newStream(c.cfg.API, a.req.MaxOutputTokens, func() { w.enter(phaseStream, c.cfg.IdleTimeout) })
	st.contentType = contentType
	st.answer = a.req.Answer
	st.w = w
	st.model = c.cfg.Model
	return st
}

// startAt sets the request start.
func (a *exchange) startAt(t time.Time) {
	a.start = t
	a.rec.StartUnixNano = t.UnixNano()
	a.rec.StartOffsetSeconds = t.Sub(a.c.origin).Seconds()
}

// fail records a failure ending now.
func (a *exchange) fail(class servebench.ErrorClass, msg string) bool {
	a.rec.ErrorClass, a.rec.Error = class, msg
	a.rec.EndOffsetSeconds = time.Since(a.c.origin).Seconds()
	return false
}

// ctxFailure records a timeout or cancellation when the request context ended; it reports
// whether it did.
func (a *exchange) ctxFailure() bool {
	cause := context.Cause(a.ctx)
	if cause == nil {
		return false
	}
	cfg := a.c.cfg
	switch {
	case errors.Is(cause, errFirstTokenTimeout):
		a.fail(servebench.ErrTimeoutFirstToken, fmt.Sprintf("no token within the first-token timeout of %v (raise --ttft-timeout for long prompts or a busy server)", cfg.TTFTTimeout))
	case errors.Is(cause, errIdleTimeout):
		a.fail(servebench.ErrTimeoutIdle, fmt.Sprintf("the stream stalled: no token for %v after the first one (keep-alive comments and events without a token do not count; raise --idle-timeout if the server pauses this long)", cfg.IdleTimeout))
	case errors.Is(cause, errTotalTimeout):
		how := "derived from its output length: the first-token and idle timeouts plus 1 s per output token"
		if cfg.RequestTimeout > 0 {
			how = "--request-timeout"
		}
		a.fail(servebench.ErrTimeoutTotal, fmt.Sprintf("the request was still going after its total bound of %v (%s): the server kept it alive without finishing; raise --request-timeout for a server this slow", a.w.total, how))
	default:
		a.fail(servebench.ErrCanceled, "canceled while in flight: "+cause.Error())
	}
	return true
}

// finish turns the parsed stream into the record, and checks what the server claimed against
// what was seen (servebench.CheckWire).
func (a *exchange) finish(st *stream, f *failure, sr *stampBook) {
	rec := a.rec
	rec.ResponseID = st.id
	rec.FinishReason = st.finish
	rec.Chunks = st.chunks
	rec.OutputTextBytes = st.textBytes
	rec.PromptBytes = promptBytes(a.req)
	rec.OutputTokensCap = a.c.outputCap(a.req.MaxOutputTokens)
	a.res.ended = st.done
	defer servebench.CheckWire(rec)
	if st.otherModel != "" {
		rec.ServedModel = st.otherModel
		rec.Flag(servebench.ViolationModel, fmt.Sprintf("the response named the model %q, %q was asked for", st.otherModel, a.c.cfg.Model))
	}
	if st.usageChanged != "" {
		// Neither of two contradicting usage objects can be believed.
		rec.Flag(servebench.ViolationUsageChanged, st.usageChanged+"; counted the token events and the tokens asked for instead")
		st.usage.prompt, st.usage.completion, st.usage.reasoning, st.usage.cached = nil, nil, nil, nil
	}

	// Token counts.
	if st.usage.completion != nil {
		rec.OutputTokens, rec.OutputTokensSource = *st.usage.completion, servebench.SourceUsage
	} else {
		rec.OutputTokens, rec.OutputTokensSource = st.chunks, servebench.SourceClientCount
	}
	if st.usage.prompt != nil {
		rec.InputTokens, rec.InputTokensSource = *st.usage.prompt, servebench.SourceUsage
		a.res.usagePrompt = st.usage.prompt
	} else {
		rec.InputTokens, rec.InputTokensSource = a.req.ContextTokens, servebench.SourceClientCount
	}
	rec.CachedTokens = st.usage.cached
	switch {
	case st.usage.reasoning != nil:
		rec.ReasoningTokens, rec.ReasoningTokensSource = *st.usage.reasoning, servebench.SourceUsage
	case st.reasoningEvents > 0:
		rec.ReasoningTokens, rec.ReasoningTokensSource = st.reasoningEvents, servebench.SourceClientCount
	}
	rec.Server = st.serverTimings()
	if m := st.vllm; rec.Server != nil && m != nil && m.ArrivalTime != nil && rec.StartUnixNano != 0 {
		rec.Server.ArrivalSeconds = ptr(*m.ArrivalTime - float64(rec.StartUnixNano)/1e9)
	}
	rec.ClockSource = sr.clockSource()
	if st.firstLag >= 0 && st.chunks > 0 {
		rec.ClientLagSeconds = servebench.Float(st.firstLag.Seconds())
	}
	if rec.ClockSource == clockKernel {
		rec.ClientLagMaxSeconds = servebench.Float(sr.maxLag.Seconds())
	}

	if f != nil {
		end := sr.last
		if end.IsZero() || end.Before(a.start) {
			end = time.Now()
		}
		if a.ctxFailure() {
			return
		}
		a.fail(f.class, f.msg)
		if f.class == servebench.ErrStreamTruncated && f.eof {
			// The stream ended cleanly but early: its end is the last byte.
			rec.EndOffsetSeconds = end.Sub(a.c.origin).Seconds()
		}
		return
	}
	rec.EndOffsetSeconds = st.end.Sub(a.c.origin).Seconds()
	if st.chunks == 0 {
		rec.ErrorClass = servebench.ErrStreamTruncated
		rec.Error = fmt.Sprintf("the stream finished without a single content, reasoning or tool-call delta (output tokens %d, %s): there is no first token to time", rec.OutputTokens, rec.OutputTokensSource)
		return
	}
	rec.ChunkGapsSeconds = st.gaps
	t := servebench.Timing{
		FirstToken: st.firstToken.Sub(a.start),
		LastToken:  st.lastToken.Sub(a.start),
		End:        st.end.Sub(a.start),
	}
	if !st.firstContent.IsZero() {
		t.FirstContent = st.firstContent.Sub(a.start)
	}
	servebench.Derive(rec, t)
	servebench.CheckWire(rec) // before the length check, which must see the count believed
	if rec.OutputTokensSource == servebench.SourceUsage && a.req.MaxOutputTokens > 0 && rec.OutputTokens != a.req.MaxOutputTokens {
		rec.LengthMismatch = true
		if a.c.cfg.ExactOutput {
			rec.ErrorClass = servebench.ErrLengthMismatch
			rec.Error = fmt.Sprintf("the server generated %d output tokens, %d were asked for (finish_reason %q): it did not honour max_tokens/ignore_eos/min_tokens; drop --exact-output to measure anyway", rec.OutputTokens, a.req.MaxOutputTokens, rec.FinishReason)
		}
	}
}

// promptBytes is the size of the prompt text req sends, all messages together (bytes).
func promptBytes(req *servebench.Request) int {
	if len(req.Messages) == 0 {
		return len(req.Prompt)
	}
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return n
}

// outputCap is the max_tokens a request for maxOut output tokens sends: maxOut, or the
// extra body's own value where it sets the length (0 when that is not a plain integer).
func (c *Client) outputCap(maxOut int) int {
	capped := maxOut
	for _, key := range []string{"max_tokens", "max_completion_tokens", "options"} {
		if !hasExtra(c.extra, key) {
			continue
		}
		if key == "options" && c.cfg.API != servebench.APIOllama {
			continue
		}
		for _, f := range c.extra {
			if f.key == key {
				var n int
				if key == "options" || json.Unmarshal(f.raw, &n) != nil || n <= 0 {
					return 0
				}
				capped = max(capped, n) // the server may honour either length field
			}
		}
	}
	return capped
}

// brokenConn reports whether err means the connection was closed or reset under us.
func brokenConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// connectMessage explains a failure before any response byte.
func connectMessage(endpoint string, err error) string {
	host := endpoint
	if u, perr := url.Parse(endpoint); perr == nil {
		host = u.Host
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Sprintf("cannot connect to %s: %v — is the server running, and is --url right?", host, op.Err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("cannot resolve %s: %v — check the host name in --url", host, dns.Err)
	}
	return fmt.Sprintf("the connection to %s broke before any response byte: %v", host, err)
}
