package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// The record splits what came before the server could read the request: a request that opened
// its connection says how long that took (outside TTFT), one on a kept-alive connection says
// nothing, and every request says how long its write took from the start stamp (inside TTFT,
// never more than it), on both the plain-HTTP path and net/http.
func TestSendSplitsTTFT(t *testing.T) {
	body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 9, 1) + doneEvent
	resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	for _, path := range []string{"plain-http", "net-http"} {
		t.Run(path, func(t *testing.T) {
			base, _ := rawServer(t, func(c net.Conn) bool {
				time.Sleep(2 * time.Millisecond) // a server that takes a moment: TTFT > write
				_, _ = io.WriteString(c, resp)
				return true
			})
			c := newClient(t, base, func(cfg *Config) { cfg.MaxConnections = 1 })
			if path == "net-http" {
				c.h1 = nil
			}
			req := testRequest()
			req.MaxOutputTokens = 1
			for i := range 2 {
				rec := c.Do(context.Background(), req)
				if !rec.OK() {
					t.Fatalf("request %d: %s %s", i, rec.ErrorClass, rec.Error)
				}
				if opened := rec.ConnectSeconds != nil; opened != (i == 0) {
					t.Errorf("request %d: connect_seconds %v, want it only on the request that opened the connection", i, rec.ConnectSeconds)
				}
				if rec.WriteSeconds <= 0 || rec.WriteSeconds > rec.TTFTSeconds {
					t.Errorf("request %d: write_seconds %v, TTFT %v: the write must be a positive part of TTFT", i, rec.WriteSeconds, rec.TTFTSeconds)
				}
			}
		})
	}
}

// BenchmarkSendPath measures the client's CPU time per request (cpu-ns/request, this process)
// for requests on kept-alive connections against a server in another process that answers each
// at once with one token: building the body, writing the request, the first-token read, the
// record. ns/op is one request.
func BenchmarkSendPath(b *testing.B) {
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	addr, _, _ := helperServer(b, "TestHoldServer", "SERVEBENCH_SEND_SERVER")
	c, err := New(Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxConnections: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := &servebench.Request{Prompt: "Say something short.", ContextTokens: 5, MaxOutputTokens: 1}
	if rec := c.Do(context.Background(), req); !rec.OK() {
		b.Fatalf("%s %s", rec.ErrorClass, rec.Error)
	}
	cpu0, _ := processCPU()
	b.ResetTimer()
	for range b.N {
		if rec := c.Do(context.Background(), req); !rec.OK() {
			b.Fatalf("%s %s", rec.ErrorClass, rec.Error)
		}
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/request")
}
