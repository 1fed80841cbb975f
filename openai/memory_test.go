package openai

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/servebench/servebench"
)

// memStreams is the number of streams held in flight by BenchmarkInFlightMemory.
const memStreams = 4096

// TestHoldServer is not a test: BenchmarkInFlightMemory runs the test binary again with
// SERVEBENCH_HOLD_SERVER=1 to get a server in another process (so that its memory is not
// counted as the client's). It answers every request with the headers and one token, prints
// "held N" each time N streams reach that point, and ends every stream when a line arrives on
// its stdin.
func TestHoldServer(t *testing.T) {
	if os.Getenv("SERVEBENCH_SEND_SERVER") == "1" {
		sendServer()
	}
	if os.Getenv("SERVEBENCH_HOLD_SERVER") != "1" {
		t.Skip("helper process for BenchmarkInFlightMemory")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("addr", ln.Addr())
	release := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(release)
	}()
	var held atomic.Int64
	var out sync.Mutex
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	acceptRequests(ln, func(c net.Conn, _ int32, _ int) bool {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk(chatChunk(`{"content":"a"}`)))
		if n := held.Add(1); n%512 == 0 {
			out.Lock()
			fmt.Println("held", n)
			out.Unlock()
		}
		<-release
		_, _ = io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 1, 1)+doneEvent)+"0\r\n\r\n")
		return true
	})
	select {}
}

// sendServer serves BenchmarkSendPath in the helper process: every request is answered at
// once with one token, usage and the end.
func sendServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	fmt.Println("addr", ln.Addr())
	body := chatChunk(`{"content":"a"}`) + fmt.Sprintf(usageEvent, 5, 1) + doneEvent
	resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	acceptRequests(ln, func(c net.Conn, _ int32, _ int) bool {
		_, err := io.WriteString(c, resp)
		return err == nil
	})
	select {}
}

// BenchmarkInFlightMemory holds memStreams streams in flight at once against a server in
// another process, each with a short prompt and its first token received, and reports the
// client's memory: bytes/stream is the growth of Go heap in use + goroutine stacks per stream
// in flight (the budget is 64 KiB), MB the whole process's resident memory at that moment
// (the goal for 4,096 streams: under 300 MB).
func BenchmarkInFlightMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		perStream, rssMB := inFlightMemory(b)
		b.ReportMetric(perStream, "bytes/stream")
		b.ReportMetric(rssMB, "MB")
		if perStream > 64<<10 {
			b.Errorf("%.0f bytes per stream in flight: over the 64 KiB budget", perStream)
		}
		if rssMB > 300 {
			b.Errorf("%.0f MB resident with %d streams: over 300 MB", rssMB, memStreams)
		}
	}
}

func inFlightMemory(b *testing.B) (perStream, rssMB float64) {
	b.Helper()
	addr, stdin, lines := helperServer(b, "TestHoldServer", "SERVEBENCH_HOLD_SERVER")
	c, err := New(Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxConnections: memStreams})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	recs := make([]servebench.Record, memStreams)
	for i := range memStreams {
		wg.Go(func() {
			recs[i] = c.Do(context.Background(), &servebench.Request{Prompt: "Say something short.", ContextTokens: 5, MaxOutputTokens: 1})
		})
	}
	for lines.Scan() {
		if lines.Text() == fmt.Sprint("held ", memStreams) {
			break
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	rssMB = residentMB()
	_, _ = io.WriteString(stdin, "go\n")
	wg.Wait()
	for i := range recs {
		if !recs[i].OK() {
			b.Fatalf("stream %d: %s %s", i, recs[i].ErrorClass, recs[i].Error)
		}
	}
	grown := float64(after.HeapInuse+after.StackInuse) - float64(before.HeapInuse+before.StackInuse)
	b.Logf("heap %d stack %d per stream", (after.HeapInuse-before.HeapInuse)/memStreams, (after.StackInuse-before.StackInuse)/memStreams)
	return grown / memStreams, rssMB
}

// helperServer runs the test binary again as the server test (which skips unless env=1),
// waits for its "addr ADDR" line and returns the address, its stdin and the rest of its
// output; the process is killed when b ends.
func helperServer(b *testing.B, test, env string) (addr string, stdin io.Writer, lines *bufio.Scanner) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), env+"=1")
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines = bufio.NewScanner(stdout)
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "addr "); ok {
			return a, in, lines
		}
	}
	b.Fatal("the helper server did not start")
	return "", nil, nil
}

// residentMB is the process's resident set (VmRSS) in MB; 0 where /proc is missing.
func residentMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
