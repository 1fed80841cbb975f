package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/childserver"
)

// benchEvents is the number of token events per request in the benchmarks.
const benchEvents = 1000

// benchBody is a vLLM-shaped chat stream of n one-token events, usage and [DONE].
func benchBody(n int) []byte {
	var b strings.Builder
	b.WriteString(chatChunk(`{"role":"assistant","content":""}`))
	for i := 0; i < n; i++ {
		b.WriteString(chatChunk(`{"content":" tok"}`))
	}
	fmt.Fprintf(&b, usageEvent, 100, n)
	b.WriteString(doneEvent)
	return []byte(b.String())
}

// BenchmarkStreamEvents measures the whole client on loopback against a zero-delay server
// that streams benchEvents events per request: ns/event is the client's cost per event
// including HTTP and the socket clock, cpu-ns/event the same in this process's CPU time, and
// allocs/event counts every allocation in the process. Sub-benchmarks: clock=kernel (receive
// stamps through recvmsg, where the system has them) and clock=user (the time each read
// returned); server=process runs the server in a child process, as a real server runs (the
// figures are the client's alone), server=goroutine in this process as selfcheck does, sharing
// its scheduler, collector and CPU time with the client (the figures include the server's work).
func BenchmarkStreamEvents(b *testing.B) {
	for _, user := range []bool{false, true} {
		for _, own := range []bool{true, false} {
			name := "clock=kernel"
			if user {
				name = "clock=user"
			}
			if own {
				name += "/server=process"
			} else {
				name += "/server=goroutine"
			}
			b.Run(name, func(b *testing.B) { benchStream(b, user, own) })
		}
	}
}

// streamServerEnv makes the test binary a stream server (TestStreamServerProcess).
const streamServerEnv = "SERVEBENCH_STREAM_SERVER"

// TestStreamServerProcess is no test: in the child process benchStream starts (streamServerEnv
// set), it serves the benchmark's stream on loopback, prints its URL and serves until its
// standard input closes.
func TestStreamServerProcess(t *testing.T) {
	if os.Getenv(streamServerEnv) == "" {
		t.Skip("the server process of BenchmarkStreamEvents")
	}
	srv := httptest.NewServer(streamHandler())
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	os.Exit(0)
}

func streamHandler() http.Handler {
	body := benchBody(benchEvents)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
}

// streamServer returns the base URL of a stream server: a child process when own, else a
// goroutine of this one.
func streamServer(b *testing.B, own bool) string {
	if !own {
		srv := httptest.NewServer(streamHandler())
		b.Cleanup(srv.Close)
		return srv.URL
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamServerProcess$")
	cmd.Env = append(os.Environ(), streamServerEnv+"=1")
	return childserver.Start(b, cmd)
}

func benchStream(b *testing.B, userClock, own bool) {
	base := streamServer(b, own)
	c, err := New(Config{BaseURL: base + "/v1", Model: "m", MaxConnections: 1, UserClock: userClock})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if !userClock && c.ClockSource() != servebench.ClockKernel {
		b.Skip("no kernel receive stamps on this system")
	}
	req := &servebench.Request{Prompt: "p", MaxOutputTokens: benchEvents}
	ctx := context.Background()
	// The kernel turns its receive stamping on a moment after the first socket asks for it:
	// the very first packets may carry none (and are stamped by the user clock).
	for i := 0; i < 100 && c.Do(ctx, req).ClockSource != c.ClockSource(); i++ {
		time.Sleep(time.Millisecond)
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rec := c.Do(ctx, req); !rec.OK() || rec.Chunks != benchEvents || rec.ClockSource != c.ClockSource() {
			b.Fatalf("%s %s chunks %d", rec.ErrorClass, rec.Error, rec.Chunks)
		}
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	runtime.ReadMemStats(&ms1)
	events := float64(b.N) * benchEvents
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	if cpuOK { // the process's CPU time: steadier than ns/event on a machine shared with other work
		b.ReportMetric(float64(cpu1-cpu0)/events, "cpu-ns/event")
	}
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/events, "allocs/event")
}

// BenchmarkParseStream measures the parser alone (stamping reader, line splitting, JSON) on
// an in-memory body: the client's own cost per event, allocations included.
func BenchmarkParseStream(b *testing.B) {
	body := benchBody(benchEvents)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		st, f := parse(servebench.APIChat, body)
		if f != nil || st.chunks != benchEvents {
			b.Fatalf("%v chunks %d", f, st.chunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchEvents), "ns/event")
}

// parse runs the stream parser over body as if it came from a socket.
func parse(api servebench.API, body []byte) (*stream, *failure) {
	w := &watchdog{base: time.Now()}
	sr := newStampReader(bytes.NewReader(body), w, nil, time.Time{})
	st := newStream(api, 0, nil)
	return st, st.read(sr)
}

// FuzzParseStream feeds arbitrary bodies to both parsers: they must never panic, and what
// they report must hang together.
func FuzzParseStream(f *testing.F) {
	for _, dir := range []string{"testdata/transcripts/*", "testdata/transcripts/broken/*"} {
		files, _ := filepath.Glob(dir)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("data: [DONE]"))
	f.Add([]byte(": x\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, api := range []servebench.API{servebench.APIChat, servebench.APIOllama} {
			st, fail := parse(api, body)
			if fail == nil && !st.done {
				t.Fatalf("%s: no failure and no end signal", api)
			}
			if fail != nil && (fail.class == "" || fail.msg == "") {
				t.Fatalf("%s: failure without class or message: %+v", api, fail)
			}
			if st.chunks > 0 && len(st.gaps) != st.chunks-1 {
				t.Fatalf("%s: %d chunks, %d gaps", api, st.chunks, len(st.gaps))
			}
		}
	})
}

// FuzzScanChunk checks the fast scanner against encoding/json: whenever the fast path
// accepts an event, both must say the same.
func FuzzScanChunk(f *testing.F) {
	for _, dir := range []string{"testdata/transcripts/*.sse", "testdata/transcripts/broken/*.sse"} {
		files, _ := filepath.Glob(dir)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			for _, line := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					f.Add([]byte(strings.TrimSpace(d)))
				}
			}
		}
	}
	f.Add([]byte(`{"id":"a","id":"b","choices":[null,{"delta":{"content":"x"},"delta":null,"finish_reason":""}],"usage":{"prompt_tokens":1}}`))
	f.Add([]byte(`{"Choices":[{"text":"x"}],"ID":"q"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var fast, slow chunkEvent
		var facts chunkFacts
		ferr := decodeFast(data, &facts, &fast)
		if ferr == errSlowPath {
			return
		}
		var ch chunkJSON
		serr := decodeSlow(data, &ch, &slow)
		if (ferr != nil) != (serr != nil) {
			t.Fatalf("fast error %v, slow error %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		a, _ := json.Marshal(eventView(fast))
		b, _ := json.Marshal(eventView(slow))
		if string(a) != string(b) {
			t.Fatalf("fast %s\nslow %s", a, b)
		}
	})
}

// eventView makes a chunkEvent comparable as JSON.
func eventView(e chunkEvent) map[string]any {
	return map[string]any{"id": string(e.id), "tok": e.tok, "content": e.content, "reasoning": e.reasoning, "finish": e.finish,
		"usage": e.usage, "timings": e.timings, "metrics": e.metrics, "error": string(e.errv),
		"text_bytes": e.textBytes, "model": string(e.model)}
}
