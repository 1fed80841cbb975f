package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
)

// The plain-HTTP path. For an http:// target the client speaks HTTP/1.1 itself: the request's
// goroutine writes the request in one system call and parses the response as its bytes arrive,
// with no hand-off to another goroutine, and (where the kernel stamps reads, rxReader.each) one
// recvmsg per arrival. Under load that keeps the time between a token's arrival and the read that
// stamps it short: a first token is stamped exactly only when its socket is read before the next
// token arrives (see TIMING.md). https:// targets go through net/http.

// h1IdleTimeout closes kept-alive connections idle for longer (as net/http's transport).
const h1IdleTimeout = 90 * time.Second

// h1MaxHeaderBytes bounds a response's header block.
const h1MaxHeaderBytes = 1 << 20

// h1Client holds the kept-alive connections of one plain-HTTP target.
type h1Client struct {
	dialer  *dialer
	addr    string // host:port to dial
	path    string // request target, e.g. /v1/chat/completions
	head    []byte // the request's header lines up to Content-Length, which each request adds
	maxIdle int
	mu      sync.Mutex
	idle    []h1Idle // newest last
}

type h1Idle struct {
	c    *h1Conn
	when time.Time
}

// h1Conn is one connection, with its read buffer when it keeps the user clock (kernel-stamped
// reads borrow one from rxBufs for each read).
type h1Conn struct {
	c   *conn
	buf []byte
}

// newH1 prepares the plain-HTTP path for endpoint, or returns nil when it cannot carry the
// requests exactly as net/http would (a header name or value net/http refuses).
func newH1(endpoint string, cfg Config, d *dialer) *h1Client {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	hdr := http.Header{}
	hdr.Set("User-Agent", "Go-http-client/1.1")
	hdr.Set("Content-Type", "application/json")
	if cfg.API == servebench.APIOllama {
		hdr.Set("Accept", "application/x-ndjson")
	} else {
		hdr.Set("Accept", "text/event-stream")
	}
	if cfg.APIKey != "" {
		hdr.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	for k, vs := range cfg.Headers {
		ck := http.CanonicalHeaderKey(k)
		switch ck {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue // net/http ignores these in a request's header map too
		}
		if !validHeaderName(k) {
			return nil
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return nil
			}
		}
		hdr[ck] = vs
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), u.Host)
	_ = hdr.Write(&b)
	return &h1Client{dialer: d, addr: addr, path: u.Path, head: b.Bytes(), maxIdle: max(cfg.MaxConnections, http.DefaultMaxIdleConnsPerHost)}
}

// validHeaderName: a token of RFC 9110 (what net/http accepts).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue: no control byte other than tab (what net/http accepts).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// get returns a kept-alive connection (reused) or a new one, dialled or taken from the
// pre-dialled stash (reused too: the server may have dropped it meanwhile). fresh skips both:
// the retry after a broken kept-alive connection dials anew.
func (h *h1Client) get(ctx context.Context, fresh bool) (hc *h1Conn, reused bool, err error) {
	if !fresh {
		for {
			it, ok := h.pop()
			if !ok {
				break
			}
			// A connection the server closed while it was idle (llama.cpp closes them after a
			// stream) is left, not tried: trying it would cost a retry.
			if time.Since(it.when) > h1IdleTimeout || peerClosed(it.c.c.Conn) {
				it.c.c.Close()
				continue
			}
			return it.c, true, nil
		}
		if c := h.dialer.take(h.addr); c != nil {
			c.leavePoller()
			return &h1Conn{c: c}, true, nil
		}
	}
	c, err := h.dialer.open(ctx, "tcp", h.addr)
	if err != nil {
		return nil, false, err
	}
	c.leavePoller()
	return &h1Conn{c: c}, false, nil
}

// pop takes the newest kept-alive connection.
func (h *h1Client) pop() (h1Idle, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.idle) == 0 {
		return h1Idle{}, false
	}
	it := h.idle[len(h.idle)-1]
	h.idle = h.idle[:len(h.idle)-1]
	return it, true
}

// put keeps a connection whose response was read to its end for the next request.
func (h *h1Client) put(hc *h1Conn) {
	h.mu.Lock()
	if len(h.idle) < h.maxIdle {
		h.idle = append(h.idle, h1Idle{c: hc, when: time.Now()})
		hc = nil
	}
	h.mu.Unlock()
	if hc != nil {
		hc.c.Close()
	}
}

// closeIdle closes the kept-alive connections.
func (h *h1Client) closeIdle() {
	h.mu.Lock()
	idle := h.idle
	h.idle = nil
	h.mu.Unlock()
	for _, it := range idle {
		it.c.c.Close()
	}
}

// h1Head is a response's status and the headers the client uses.
type h1Head struct {
	code        int
	status      string // e.g. "200 OK"
	contentType string
	retryAfter  string // the Retry-After header, as sent
	chunked     bool
	length      int64 // -1: none (chunked, or the body runs to the connection's end)
	close       bool  // the connection ends with this response
}

// parseHead parses a header block (the bytes before the blank line).
func parseHead(b []byte) (h1Head, error) {
	h := h1Head{length: -1}
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	proto, status, ok := bytes.Cut(line, []byte(" "))
	if !ok || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(status) < 3 {
		return h, fmt.Errorf("malformed HTTP response %q", clip(string(line), 100))
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 100 || code > 999 || (len(status) > 3 && status[3] != ' ') {
		return h, fmt.Errorf("malformed HTTP status code %q", clip(string(status), 100))
	}
	h.code, h.status = code, string(bytes.TrimSpace(status))
	h.close = string(proto) == "HTTP/1.0"
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case asciiEqualFold(k, "content-type"):
			h.contentType = string(v)
		case asciiEqualFold(k, "retry-after"):
			h.retryAfter = string(v)
		case asciiEqualFold(k, "content-length"):
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return h, fmt.Errorf("bad Content-Length %q", clip(string(v), 40))
			}
			h.length = n
		case asciiEqualFold(k, "transfer-encoding"):
			h.chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
		case asciiEqualFold(k, "connection"):
			lv := bytes.ToLower(v)
			if bytes.Contains(lv, []byte("close")) {
				h.close = true
			} else if bytes.Contains(lv, []byte("keep-alive")) {
				h.close = false
			}
		}
	}
	if h.chunked {
		h.length = -1
	}
	if code == http.StatusNoContent || code == http.StatusNotModified {
		h.chunked, h.length = false, 0
	}
	return h, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Chunked-body states of h1Resp.
const (
	chunkSize    = iota // reading a chunk-size line
	chunkData           // reading chunk data
	chunkDataEnd        // reading the CRLF after chunk data
	chunkTrailer        // reading trailer lines up to the blank one
)

// h1Resp takes a response's bytes as they arrive: the header block, then the body, decoded
// (chunked, Content-Length, or up to the connection's end), handed to body piece by piece.
type h1Resp struct {
	body func(p []byte) (stop bool)
	// halt, set by body, stops the reading after the bytes already read are parsed (the end
	// signal came: the rest of the response is not waited for).
	halt bool

	head     h1Head
	haveHead bool
	hdr      []byte // header bytes gathered across reads
	got      int64  // response bytes received
	bodyLeft int64  // Content-Length bytes still to come
	complete bool   // the body ended (the connection may carry another request)
	cstate   int
	cleft    int64
	cline    []byte // a chunk-size or trailer line not ended yet
}

// push takes the bytes of one read. It returns stop when the response is complete or body
// asked to stop, and the error of a malformed response.
func (r *h1Resp) push(p []byte) (stop bool, err error) {
	r.got += int64(len(p))
	for !r.haveHead {
		buf := p
		if len(r.hdr) > 0 {
			r.hdr = append(r.hdr, p...)
			buf = r.hdr
		}
		i := headEnd(buf)
		if i < 0 {
			if len(r.hdr) == 0 {
				r.hdr = append(r.hdr, p...)
			}
			if len(r.hdr) > h1MaxHeaderBytes {
				return true, errors.New("the response header block is larger than 1 MiB")
			}
			return false, nil
		}
		block := buf[:i]
		p = buf[i:]
		r.hdr = nil
		if err := r.header(block); err != nil {
			return true, err
		}
	}
	if r.head.length == 0 && !r.head.chunked {
		r.complete = true
		return true, nil
	}
	stop, err = r.bodyBytes(p)
	return stop || r.halt, err
}

// headEnd returns the index after the blank line ending a header block in b, or -1.
func headEnd(b []byte) int {
	i := bytes.Index(b, []byte("\r\n\r\n"))
	if j := bytes.Index(b, []byte("\n\n")); j >= 0 && (i < 0 || j < i) {
		return j + 2
	}
	if i >= 0 {
		return i + 4
	}
	return -1
}

// header parses one header block; an interim (1xx) response is skipped.
func (r *h1Resp) header(block []byte) error {
	h, err := parseHead(block)
	if err != nil {
		return err
	}
	if h.code >= 100 && h.code < 200 && h.code != http.StatusSwitchingProtocols {
		return nil
	}
	r.head, r.haveHead = h, true
	r.bodyLeft = h.length
	return nil
}

// bodyBytes decodes body bytes.
func (r *h1Resp) bodyBytes(p []byte) (bool, error) {
	if !r.head.chunked {
		if r.head.length >= 0 {
			if int64(len(p)) >= r.bodyLeft {
				p = p[:r.bodyLeft]
				r.complete = true
			}
			r.bodyLeft -= int64(len(p))
		}
		if len(p) > 0 && r.body(p) {
			return true, nil
		}
		return r.complete, nil
	}
	for len(p) > 0 {
		switch r.cstate {
		case chunkData:
			n := min(int64(len(p)), r.cleft)
			r.cleft -= n
			data := p[:n]
			p = p[n:]
			if r.cleft == 0 {
				r.cstate = chunkDataEnd
			}
			if r.body(data) {
				return true, nil
			}
		case chunkDataEnd:
			switch p[0] {
			case '\r':
				p = p[1:]
			case '\n':
				p = p[1:]
				r.cstate = chunkSize
			default:
				return true, errors.New("malformed chunked encoding: no CRLF after chunk data")
			}
		default: // chunkSize, chunkTrailer: lines
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				if len(r.cline)+len(p) > 4<<10 {
					return true, errors.New("malformed chunked encoding: line too long")
				}
				r.cline = append(r.cline, p...)
				return false, nil
			}
			line := p[:i]
			p = p[i+1:]
			if len(r.cline) > 0 {
				line = append(r.cline, line...)
				r.cline = r.cline[:0]
			}
			line = bytes.TrimRight(line, "\r")
			if r.cstate == chunkTrailer {
				if len(line) == 0 {
					r.complete = true
					return true, nil
				}
				continue
			}
			if j := bytes.IndexByte(line, ';'); j >= 0 {
				line = line[:j]
			}
			n, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 62)
			if err != nil {
				return true, fmt.Errorf("malformed chunked encoding: bad chunk size %q", clip(string(line), 40))
			}
			if n == 0 {
				r.cstate = chunkTrailer
			} else {
				r.cstate, r.cleft = chunkData, int64(n)
			}
		}
	}
	return false, nil
}

// ended is the outcome of the connection ending (EOF) before push stopped: a body that runs to
// the connection's end is complete; anything else was cut.
func (r *h1Resp) ended() bool {
	if r.haveHead && !r.head.chunked && r.head.length < 0 {
		r.complete = true
		return true
	}
	return false
}

// h1ProbeAfter: after a read that drained the socket, the next read waits for the poller to
// report an arrival; a connection end that came with the bytes is not reported, so when nothing
// arrives for this long the socket is asked once more (see rxReader.each).
const h1ProbeAfter = 20 * time.Millisecond

// readResponse reads the connection, pushing each read's bytes to r with its stamp noted in
// book, until r stops or the connection fails. A read error, the connection's end (io.EOF)
// or r's error is returned; nil when r stopped. canceled reports whether the request was
// canceled (its deadline then ends any wait). A kernel-stamped connection is read by the reactor
// (rxReader.watch) from its first byte, first token included, whatever the server (see the
// package doc); without a reactor, or one that cannot take the socket, it reads the socket
// itself (rxReader.each).
func (hc *h1Conn) readResponse(r *h1Resp, book *stampBook, from time.Time, canceled func() bool, stop <-chan struct{}) error {
	var perr error
	var last time.Time
	take := func(p []byte, ns int64) bool {
		last = time.Now()
		book.note(stampRead(last, ns, from), last)
		stop, err := r.push(p)
		if err != nil {
			perr = err
		}
		return stop
	}
	if hc.c.rx != nil {
		if err, ok := hc.c.rx.watch(take, stop); ok {
			if perr != nil {
				return perr
			}
			return err
		}
		probing := false
		short := func() bool {
			probing = true
			_ = hc.c.Conn.SetReadDeadline(last.Add(h1ProbeAfter))
			if canceled() { // the cancellation's deadline may have been overwritten
				_ = hc.c.Conn.SetReadDeadline(time.Unix(1, 0))
			}
			return true
		}
		for {
			err := hc.c.rx.each(take, short)
			if perr != nil {
				return perr
			}
			if probing && errors.Is(err, os.ErrDeadlineExceeded) && !canceled() {
				// The probe deadline: ask once more (each starts with a read).
				probing = false
				_ = hc.c.Conn.SetReadDeadline(time.Time{})
				if !canceled() {
					continue
				}
			}
			if probing {
				_ = hc.c.Conn.SetReadDeadline(time.Time{})
			}
			return err
		}
	}
	if hc.buf == nil {
		hc.buf = make([]byte, readBufferBytes)
	}
	for {
		n, err := hc.c.Conn.Read(hc.buf)
		if n > 0 && take(hc.buf[:n], 0) {
			return perr
		}
		if err != nil {
			return err
		}
	}
}

// runH1 performs the attempt over the plain-HTTP path (see exchange.run).
func (a *exchange) runH1(fresh bool, body []byte) (retry bool) {
	c, w := a.c, a.w
	t0 := w.base
	hc, reused, err := c.h1.get(a.ctx, fresh)
	if err == nil && !reused {
		a.rec.ConnectSeconds = ptr(time.Since(t0).Seconds())
	}
	if err != nil {
		a.startAt(t0)
		if a.ctxFailure() {
			return false
		}
		return a.fail(servebench.ErrConnect, connectMessage(c.endpoint, err))
	}
	keep, handoff := false, false
	defer func() {
		switch {
		case handoff:
		case keep:
			c.h1.put(hc)
		default:
			hc.c.Close()
		}
	}() // runs after the deferred stop below
	// The watchdog and cancellation end a blocked read or write through the deadline; the
	// connection is closed afterwards, never from inside a read.
	stop := context.AfterFunc(a.ctx, func() { _ = hc.c.Conn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() { // the deadline was set (or is being set): the connection cannot be kept
			keep = false
		}
	}()

	var hdr []byte
	hdr = append(hdr, c.h1.head...)
	hdr = append(hdr, "Content-Length: "...)
	hdr = strconv.AppendInt(hdr, int64(len(body)), 10)
	hdr = append(hdr, "\r\n\r\n"...)
	if len(body) <= writeBufferBytes {
		hdr = append(hdr, body...)
		body = nil
	}
	a.startAt(time.Now())
	bufs := net.Buffers{hdr}
	if len(body) > 0 {
		bufs = append(bufs, body) // no empty write: an in-memory connection would wait for its reader
	}
	_, werr := bufs.WriteTo(hc.c.Conn)
	if werr == nil {
		a.rec.WriteSeconds = time.Since(a.start).Seconds()
	}

	book := &stampBook{w: w, kernel: hc.c.kernelClock()}
	// The parser is made before the response arrives: nothing is allocated between a first
	// token's arrival and its stamp.
	st := a.newStream("")
	st.book = book
	typed := false
	var snippet []byte
	var f *failure
	resp := &h1Resp{}
	resp.body = func(p []byte) bool {
		if code := resp.head.code; code < 200 || code > 299 {
			snippet = append(snippet, p[:min(len(p), 4<<10-len(snippet))]...)
			return len(snippet) >= 4<<10
		}
		if !typed {
			st.contentType, typed = resp.head.contentType, true
		}
		if st.done {
			return false // the rest of the read is parsed (it may end the body), nothing more is read
		}
		if f = st.feed(p, book.last); f != nil {
			return true
		}
		if st.done {
			resp.halt = true // the request ends with its end signal, whatever the connection does
		}
		return false
	}
	// After a failed write the server may still have answered (e.g. 413 before reading the
	// whole request): read what it sent; without an answer the write's error stands.
	rerr := werr
	canceled := func() bool { return a.ctx.Err() != nil }
	err = hc.readResponse(resp, book, a.start, canceled, a.ctx.Done())
	if err != nil {
		switch {
		case err != io.EOF:
		case resp.ended():
			err = nil
		case resp.haveHead:
			err = io.ErrUnexpectedEOF // the connection ended inside a chunked or sized body
		}
		if err != nil {
			rerr = err
		}
	} else if werr != nil && resp.haveHead {
		rerr = nil
	}
	if !resp.haveHead {
		if a.ctxFailure() {
			return false
		}
		if rerr == nil {
			rerr = io.ErrUnexpectedEOF
		}
		// A reused connection that failed before any response byte is tried again on a new
		// one: the server may have closed it just as the request went out (or, with an
		// in-memory connection, it cannot be told closed beforehand).
		if reused && resp.got == 0 && (werr != nil || brokenConn(rerr)) {
			a.fail(servebench.ErrConnect, "the kept-alive connection broke before any response byte: "+rerr.Error())
			return true
		}
		return a.fail(servebench.ErrConnect, connectMessage(c.endpoint, rerr))
	}
	a.rec.HTTPStatus = resp.head.code
	if resp.head.code < 200 || resp.head.code > 299 {
		a.rec.EndOffsetSeconds = time.Since(c.origin).Seconds()
		if a.ctxFailure() {
			return false
		}
		keep = rerr == nil && resp.complete && !resp.head.close
		a.rec.RetryAfterSeconds = retryAfter(resp.head.retryAfter, time.Now())
		return a.fail(servebench.ErrHTTPStatus, statusMessage(resp.head.status, resp.head.code, c.h1.path, resp.head.contentType, []byte(c.redact(string(snippet))), c.base))
	}
	st.contentType = resp.head.contentType
	if f == nil && !st.done {
		if rerr == nil {
			rerr = io.EOF
		}
		f = st.ended(rerr, book.last)
	}
	keep = f == nil && rerr == nil && resp.complete && !resp.head.close && context.Cause(a.ctx) == nil
	if f == nil && st.done && rerr == nil && !resp.complete && !resp.head.close && context.Cause(a.ctx) == nil {
		// The end signal came but not yet the end of the body (normally the chunked
		// terminator, a moment later): the request ends now and frees its slot; the rest is
		// read in the background, so that the connection can be kept if it comes in time.
		handoff = true
		go c.h1.drain(hc, resp)
	}
	a.finish(st, f, book)
	return false
}

// drain reads the rest of a response whose end signal came, for at most drainGrace and
// maxDrainBytes, and keeps the connection when the body ended, else closes it.
func (h *h1Client) drain(hc *h1Conn, resp *h1Resp) {
	drained := 0
	resp.halt = false
	resp.body = func(p []byte) bool {
		drained += len(p)
		return drained > maxDrainBytes
	}
	_ = hc.c.Conn.SetReadDeadline(time.Now().Add(drainGrace))
	buf := make([]byte, 4<<10)
	for !resp.complete {
		n, err := hc.c.Read(buf)
		if n > 0 {
			if stop, perr := resp.push(buf[:n]); perr != nil || (stop && !resp.complete) {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if resp.complete {
		_ = hc.c.Conn.SetReadDeadline(time.Time{})
		h.put(hc)
		return
	}
	hc.c.Close()
}
