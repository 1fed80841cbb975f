package openai

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
)

// pipeServer answers each request the client sends over an in-memory connection (inside a
// synctest bubble, so that every pause is virtual time): it reads the request and hands the
// connection to answer, which writes the whole HTTP response with the helpers of pipeConn.
func pipeClient(t *testing.T, answer func(pc *pipeConn), mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: "http://lying.invalid/v1", API: servebench.APIChat, Model: "m", MaxConnections: 1, UserClock: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			a, b := net.Pipe()
			go func() {
				defer b.Close()
				br := bufio.NewReader(b)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					pc := &pipeConn{c: b}
					answer(pc)
					if pc.closed {
						return
					}
				}
			}()
			return a, nil
		}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c // the caller closes it inside the bubble, so that the server's goroutine ends
}

// pipeConn writes a chunked text/event-stream response.
type pipeConn struct {
	c      net.Conn
	closed bool
	failed bool // a write failed: the client went away
}

func (p *pipeConn) head() {
	p.raw("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
}

// send writes s as one chunk.
func (p *pipeConn) send(s string) { p.raw(fmt.Sprintf("%x\r\n%s\r\n", len(s), s)) }

// end writes the chunked terminator.
func (p *pipeConn) end() { p.raw("0\r\n\r\n") }

func (p *pipeConn) raw(s string) {
	if p.failed {
		return
	}
	if _, err := io.WriteString(p.c, s); err != nil {
		p.failed = true
	}
}

// tokens sends n content events of text each, pause apart.
func (p *pipeConn) tokens(n int, text string, pause time.Duration) {
	for i := range n {
		if i > 0 {
			time.Sleep(pause)
		}
		p.send(chatChunk(`{"content":"` + text + `"}`))
	}
}

// lie is a server that streams tokens events and then says something untrue.
type lie struct {
	name   string
	maxOut int    // the request's max_tokens
	events int    // token events sent, 10 ms apart
	text   string // each event's content
	tail   string // the events after the tokens (usage, metrics), before [DONE]
	model  string // the model the chunks name ("" = the one asked)

	want                  []servebench.Violation
	wantOut               int
	wantOutSrc            string
	wantIn                int
	wantInSrc             string
	wantQueue, wantServer bool // a queue time, any server timing left after the check
}

func usageJSONEvent(prompt, completion int64) string {
	return fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d}}`+"\n\n", prompt, completion)
}

// TestServerLies: a server that lies about its usage, its timings or its model. Every record
// stays a success (the timing on the wire is real), flags what the server did, and carries
// no impossible value: the client's own count replaces the claim.
func TestServerLies(t *testing.T) {
	const e18 = 1_000_000_000_000_000_000
	lies := []lie{
		// the bug report's headline: 10^18 output tokens for a 16-event stream
		{name: "usage 1e18", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(11, e18),
			want: []servebench.Violation{servebench.ViolationUsageOverMax}, wantOut: 16, wantOutSrc: "client-count", wantIn: 11, wantInSrc: "usage"},
		{name: "usage negative", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(11, -5),
			want: []servebench.Violation{servebench.ViolationUsageNegative}, wantOut: 16, wantOutSrc: "client-count", wantIn: 11, wantInSrc: "usage"},
		// of two usage objects the second used to win silently (48 tokens from 16 events)
		{name: "two usages", maxOut: 64, events: 16, text: "word", tail: usageJSONEvent(11, 16) + usageJSONEvent(11, 48),
			want: []servebench.Violation{servebench.ViolationUsageChanged}, wantOut: 16, wantOutSrc: "client-count", wantIn: 11, wantInSrc: "client-count"},
		// 10× the events, under max_tokens: more tokens than 16 × 4 bytes of text can hold
		{name: "usage 10x events", maxOut: 200, events: 16, text: "word", tail: usageJSONEvent(11, 160),
			want: []servebench.Violation{servebench.ViolationUsageOverText}, wantOut: 16, wantOutSrc: "client-count", wantIn: 11, wantInSrc: "usage"},
		{name: "usage under events", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(11, 3),
			want: []servebench.Violation{servebench.ViolationUsageUnderEvents}, wantOut: 16, wantOutSrc: "client-count", wantIn: 11, wantInSrc: "usage"},
		{name: "prompt tokens 1e18", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(e18, 16),
			want: []servebench.Violation{servebench.ViolationPromptTokens}, wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "client-count"},
		{name: "queue wait negative", maxOut: 16, events: 16, text: "word",
			tail: usageJSONEvent(11, 16) + `data: {"id":"x","model":"m","choices":[],"metrics":{"arrival_time":1000.0,"first_scheduled_time":1000.001,"first_token_time":1000.002,"time_in_queue":-123456,"finished_time":1000.05}}` + "\n\n",
			want: []servebench.Violation{servebench.ViolationServerTiming}, wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage", wantServer: true},
		{name: "decode longer than the request", maxOut: 16, events: 16, text: "word",
			tail: usageJSONEvent(11, 16) + `data: {"id":"x","model":"m","choices":[],"metrics":{"arrival_time":1000.0,"first_scheduled_time":1000.001,"first_token_time":1000.002,"time_in_queue":0.001,"finished_time":1100}}` + "\n\n",
			want: []servebench.Violation{servebench.ViolationServerTiming}, wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage", wantQueue: true, wantServer: true},
		{name: "another model", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(11, 16), model: "gpt-4o",
			want: []servebench.Violation{servebench.ViolationModel}, wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage"},

		// What is true passes untouched.
		// speculative decoding: 4 tokens per event, and the events' text shows them
		{name: "speculative decoding", maxOut: 16, events: 4, text: "four words in one", tail: usageJSONEvent(11, 16),
			wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage"},
		// vLLM's continuous usage stats: a running count with every token, repeated at the end
		{name: "running usage", maxOut: 3, events: 0, text: "word",
			tail: strings.Join([]string{
				`data: {"id":"x","model":"m","choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":11,"completion_tokens":1}}` + "\n\n",
				`data: {"id":"x","model":"m","choices":[{"delta":{"content":"b"}}],"usage":{"prompt_tokens":11,"completion_tokens":2}}` + "\n\n",
				`data: {"id":"x","model":"m","choices":[{"delta":{"content":"c"}}],"usage":{"prompt_tokens":11,"completion_tokens":3}}` + "\n\n",
				usageJSONEvent(11, 3)}, ""),
			wantOut: 3, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage"},
		{name: "model with a path", maxOut: 16, events: 16, text: "word", tail: usageJSONEvent(11, 16), model: "/models/m",
			wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage"},
		{name: "vllm metrics in span", maxOut: 16, events: 16, text: "word",
			tail:    usageJSONEvent(11, 16) + `data: {"id":"x","model":"m","choices":[],"metrics":{"arrival_time":1000.0,"first_scheduled_time":1000.001,"first_token_time":1000.002,"time_in_queue":0.001,"finished_time":1000.1}}` + "\n\n",
			wantOut: 16, wantOutSrc: "usage", wantIn: 11, wantInSrc: "usage", wantQueue: true, wantServer: true},
	}
	for _, l := range lies {
		t.Run(l.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, func(p *pipeConn) {
					p.head()
					for i := range l.events {
						if i > 0 {
							time.Sleep(10 * time.Millisecond)
						}
						ev := chatChunk(`{"content":"` + l.text + `"}`)
						if l.model != "" {
							ev = strings.Replace(ev, `"model":"m"`, `"model":"`+l.model+`"`, 1)
						}
						p.send(ev)
					}
					for _, ev := range strings.SplitAfter(l.tail, "\n\n") {
						if ev != "" {
							time.Sleep(10 * time.Millisecond)
							p.send(ev)
						}
					}
					p.send(doneEvent)
					p.end()
				}, nil)
				defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
				rec := c.Do(context.Background(), &servebench.Request{Prompt: "hello", ContextTokens: 11, MaxOutputTokens: l.maxOut})
				if !rec.OK() {
					t.Fatalf("failed: %s %s", rec.ErrorClass, rec.Error)
				}
				if !slices.Equal(rec.Violations, l.want) {
					t.Errorf("violations %v, want %v (note %q)", rec.Violations, l.want, rec.ViolationNote)
				}
				if (len(l.want) > 0) != (rec.ViolationNote != "") {
					t.Errorf("note %q with violations %v", rec.ViolationNote, rec.Violations)
				}
				if rec.OutputTokens != l.wantOut || rec.OutputTokensSource != l.wantOutSrc {
					t.Errorf("output %d (%s), want %d (%s)", rec.OutputTokens, rec.OutputTokensSource, l.wantOut, l.wantOutSrc)
				}
				if rec.InputTokens != l.wantIn || rec.InputTokensSource != l.wantInSrc {
					t.Errorf("input %d (%s), want %d (%s)", rec.InputTokens, rec.InputTokensSource, l.wantIn, l.wantInSrc)
				}
				if rec.GenerationSpeedTPS < 0 || rec.GenerationSpeedTPS > 1000 {
					t.Errorf("generation speed %g tok/s from tokens 10 ms apart", rec.GenerationSpeedTPS)
				}
				if (rec.Server != nil) != l.wantServer {
					t.Fatalf("server timings %+v, want some: %v", rec.Server, l.wantServer)
				}
				if rec.Server != nil {
					if (rec.Server.QueueSeconds != nil) != l.wantQueue {
						t.Errorf("queue %v, want one: %v", deref(rec.Server.QueueSeconds), l.wantQueue)
					}
					for _, v := range []*float64{rec.Server.QueueSeconds, rec.Server.PrefillSeconds, rec.Server.DecodeSeconds} {
						if v != nil && (*v < 0 || *v > rec.E2ELatencySeconds) {
							t.Errorf("server timing %g s outside the request's %g s", *v, rec.E2ELatencySeconds)
						}
					}
				}
				if l.model != "" && len(l.want) > 0 && rec.ServedModel != l.model {
					t.Errorf("served model %q, want %q", rec.ServedModel, l.model)
				}
			})
		})
	}
}

// TestEventLargerThanLimit: a line or an event larger than the client's limit is classed
// malformed, and its message blames the limit, not the stream's format.
func TestEventLargerThanLimit(t *testing.T) {
	big := strings.Repeat("a", maxLineBytes+1024)
	oneMiB := strings.Repeat("b", 1<<20)
	cases := []struct {
		name, body, what string
	}{
		{"one long line", "data: {\"x\":\"" + big, "line"},
		{"many data lines", strings.Repeat("data: "+oneMiB+"\n", 17), "event"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, func(p *pipeConn) {
					p.head()
					p.send(chatChunk(`{"content":"a"}`))
					for s := tc.body; len(s) > 0 && !p.failed; {
						n := min(len(s), 1<<20)
						p.send(s[:n])
						s = s[n:]
					}
					p.closed = true
				}, nil)
				defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
				rec := c.Do(context.Background(), testRequest())
				if rec.ErrorClass != servebench.ErrMalformedEvent {
					t.Fatalf("class %q (%s), want malformed-event", rec.ErrorClass, rec.Error)
				}
				want := "a " + tc.what + " longer than the client's limit of 16 MiB"
				if !strings.Contains(rec.Error, want) || strings.Contains(rec.Error, "expected an event stream") {
					t.Errorf("message %q should blame the limit (%q)", rec.Error, want)
				}
			})
		})
	}
}

// TestIdleIsTimeWithoutToken: after the first token the server sends only keep-alive comments
// and events without a token, forever (here: for 10 virtual minutes). The idle timeout counts
// from the last token, so the request fails after it, not when the server gives up.
func TestIdleIsTimeWithoutToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := pipeClient(t, func(p *pipeConn) {
			p.head()
			p.send(chatChunk(`{"content":"a"}`))
			for range 600 {
				time.Sleep(500 * time.Millisecond)
				p.send(": ping\n\n")
				time.Sleep(500 * time.Millisecond)
				p.send(`data: {"id":"x","model":"m","choices":[]}` + "\n\n")
				if p.failed {
					return
				}
			}
			p.send(doneEvent)
			p.end()
		}, func(cfg *Config) { cfg.IdleTimeout = 5 * time.Second })
		defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
		start := time.Now()
		rec := c.Do(context.Background(), testRequest())
		took := time.Since(start)
		if rec.ErrorClass != servebench.ErrTimeoutIdle {
			t.Fatalf("class %q (%s) after %v, want timeout-idle", rec.ErrorClass, rec.Error, took)
		}
		if took < 5*time.Second || took > 6*time.Second {
			t.Errorf("the request ended after %v, want the idle timeout of 5 s after the first token", took)
		}
	})
}

// TestTotalBound: a server that sends a token every 4 s (under the idle timeout) and never
// stops. The request's total bound ends it: derived from its output length when unset
// (TTFT timeout + 1 s per token + idle timeout), or the configured one.
func TestTotalBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  time.Duration
		want time.Duration
	}{
		{"derived", 0, 10*time.Second + 4*time.Second + 5*time.Second},
		{"set", 7 * time.Second, 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := pipeClient(t, func(p *pipeConn) {
					p.head()
					for range 1000 {
						p.send(chatChunk(`{"content":"a"}`))
						if p.failed {
							return
						}
						time.Sleep(4 * time.Second)
					}
					p.send(doneEvent)
					p.end()
				}, func(cfg *Config) {
					cfg.TTFTTimeout, cfg.IdleTimeout, cfg.RequestTimeout = 10*time.Second, 5*time.Second, tc.set
				})
				defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
				if got := c.TotalTimeout(4); got != tc.want {
					t.Errorf("TotalTimeout(4) = %v, want %v", got, tc.want)
				}
				start := time.Now()
				rec := c.Do(context.Background(), testRequest()) // 4 output tokens asked
				took := time.Since(start)
				if rec.ErrorClass != servebench.ErrTimeoutTotal {
					t.Fatalf("class %q (%s) after %v, want timeout-total", rec.ErrorClass, rec.Error, took)
				}
				if took != tc.want {
					t.Errorf("the request ended after %v, want its total bound %v", took, tc.want)
				}
				if !strings.Contains(rec.Error, "--request-timeout") {
					t.Errorf("message %q should name the flag that raises the bound", rec.Error)
				}
			})
		})
	}
}

// TestDoneEndsTheRequest: the server sends data: [DONE] but keeps the body open (no chunked
// terminator). The request ends with [DONE], at once, and frees its slot; the connection,
// whose body never ended, is not reused.
func TestDoneEndsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conns := 0
		c := pipeClient(t, func(p *pipeConn) {
			p.head()
			p.tokens(4, "a", 10*time.Millisecond)
			p.send(fmt.Sprintf(usageEvent, 11, 4) + doneEvent)
			time.Sleep(time.Hour) // the body stays open
			p.closed = true
		}, func(cfg *Config) {
			dial := cfg.DialContext
			cfg.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				conns++
				return dial(ctx, network, addr)
			}
		})
		defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
		for i := range 2 {
			start := time.Now()
			rec := c.Do(context.Background(), testRequest())
			took := time.Since(start)
			if !rec.OK() {
				t.Fatalf("request %d: %s %s", i, rec.ErrorClass, rec.Error)
			}
			if took != 30*time.Millisecond {
				t.Errorf("request %d took %v; it ends with [DONE] after 30 ms, whatever the connection does", i, took)
			}
		}
		if conns != 2 {
			t.Errorf("%d connections for 2 requests; one whose body never ended cannot be reused", conns)
		}
	})
}

// TestDoneThenTerminatorKeepsTheConnection: the usual case, [DONE] and the chunked terminator
// in separate writes a moment apart: the request ends with [DONE] and the connection is kept.
func TestDoneThenTerminatorKeepsTheConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conns := 0
		c := pipeClient(t, func(p *pipeConn) {
			p.head()
			p.tokens(4, "a", 10*time.Millisecond)
			p.send(fmt.Sprintf(usageEvent, 11, 4) + doneEvent)
			time.Sleep(time.Millisecond)
			p.end()
		}, func(cfg *Config) {
			dial := cfg.DialContext
			cfg.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				conns++
				return dial(ctx, network, addr)
			}
		})
		defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
		for i := range 3 {
			rec := c.Do(context.Background(), testRequest())
			if !rec.OK() {
				t.Fatalf("request %d: %s %s", i, rec.ErrorClass, rec.Error)
			}
			time.Sleep(10 * time.Millisecond) // the terminator comes, the connection goes back
		}
		if conns != 1 {
			t.Errorf("%d connections for 3 requests, want 1 (kept alive)", conns)
		}
	})
}

// TestNotStreamed: a buffering proxy delivers the whole response in one write. The record
// says so; its ITL and generation speed are unknown (not measurable), never a number.
func TestNotStreamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := pipeClient(t, func(p *pipeConn) {
			time.Sleep(200 * time.Millisecond) // the proxy waits for the whole answer
			var b strings.Builder
			for range 16 {
				b.WriteString(chatChunk(`{"content":"word"}`))
			}
			b.WriteString(fmt.Sprintf(usageEvent, 11, 16) + doneEvent)
			s := b.String()
			p.raw(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(s), s))
		}, nil)
		defer func() { time.Sleep(2 * time.Hour); c.Close() }() // (virtual time) the server and any drain finish first
		req := testRequest()
		req.MaxOutputTokens = 16
		rec := c.Do(context.Background(), req)
		if !rec.OK() {
			t.Fatalf("%s %s", rec.ErrorClass, rec.Error)
		}
		if !rec.NotStreamed {
			t.Errorf("not_streamed false for 16 token events in one write")
		}
		if servebench.Measurable(&rec) || rec.GenerationSpeedTPS != 0 || rec.ITLSeconds != 0 {
			t.Errorf("speed %g ITL %g measurable %v; both are unknown", rec.GenerationSpeedTPS, rec.ITLSeconds, servebench.Measurable(&rec))
		}
		if rec.TTFTSeconds < 0.2 || rec.OutputTokens != 16 {
			t.Errorf("TTFT %g (the whole answer's wait, ≥ 0.2 s), output %d", rec.TTFTSeconds, rec.OutputTokens)
		}
	})
}

// TestDoneEndsTheRequestHTTPS is TestDoneEndsTheRequest on the https:// path (net/http): the
// request ends with [DONE] although the body stays open, and the one after it works.
func TestDoneEndsTheRequestHTTPS(t *testing.T) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	serverTLS := ts.TLS.Clone()
	ts.Close()
	synctest.Test(t, func(t *testing.T) {
		c, err := New(Config{BaseURL: "https://lying.invalid/v1", Model: "m", MaxConnections: 1, UserClock: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				a, b := net.Pipe()
				go func() {
					tc := tls.Server(b, serverTLS)
					defer tc.Close()
					br := bufio.NewReader(tc)
					for {
						req, err := http.ReadRequest(br)
						if err != nil {
							return
						}
						_, _ = io.Copy(io.Discard, req.Body)
						p := &pipeConn{c: tc}
						p.head()
						p.tokens(4, "a", 10*time.Millisecond)
						p.send(fmt.Sprintf(usageEvent, 11, 4) + doneEvent)
						time.Sleep(time.Hour) // the body stays open
						return
					}
				}()
				return a, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		c.tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		defer func() { time.Sleep(2 * time.Hour); c.Close() }()
		for i := range 2 {
			start := time.Now()
			rec := c.Do(context.Background(), testRequest())
			took := time.Since(start)
			if !rec.OK() {
				t.Fatalf("request %d: %s %s", i, rec.ErrorClass, rec.Error)
			}
			if took > 100*time.Millisecond {
				t.Errorf("request %d took %v; it ends with [DONE], whatever the connection does", i, took)
			}
		}
	})
}
