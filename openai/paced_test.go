package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// Paced streams: each event in its own write, pacedGap apart, so that the client wakes for
// every event as it does against a real server (BenchmarkStreamEvents sends a whole stream
// in one write).
const (
	pacedStreams = 32
	pacedEvents  = 50
	pacedGap     = time.Millisecond
)

// TestPacedServer is not a test: BenchmarkPacedEvents runs the test binary again with
// SERVEBENCH_PACED_SERVER=1 to get a server in another process (so that its CPU time is not
// counted as the client's). Every request gets the headers with its first event in one write,
// then pacedEvents-1 more events pacedGap apart, each in its own write, then usage and the end.
func TestPacedServer(t *testing.T) {
	if os.Getenv("SERVEBENCH_PACED_SERVER") != "1" {
		t.Skip("helper process for BenchmarkPacedEvents")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("addr", ln.Addr())
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
	ev := chunk(chatChunk(`{"content":" tok"}`))
	acceptRequests(ln, func(c net.Conn, _ int32, _ int) bool {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+ev)
		next := time.Now()
		for range pacedEvents - 1 {
			next = next.Add(pacedGap)
			time.Sleep(time.Until(next))
			if _, err := io.WriteString(c, ev); err != nil {
				return false
			}
		}
		_, err := io.WriteString(c, chunk(fmt.Sprintf(usageEvent, 1, pacedEvents)+doneEvent)+"0\r\n\r\n")
		return err == nil
	})
	select {}
}

// BenchmarkPacedEvents measures the client's own CPU time per event (cpu-ns/event: user +
// system time of this process, the server runs in another) with pacedStreams streams whose
// events arrive one write at a time: the cost that decides how soon, under load, every socket
// is read after its bytes arrive. Sub-benchmarks: the plain-HTTP path (h1.go) and net/http,
// each with both clocks. ns/op is one request per stream, all streams at once.
func BenchmarkPacedEvents(b *testing.B) {
	for _, path := range []string{"plain-http", "net-http"} {
		for _, user := range []bool{false, true} {
			clock := "kernel"
			if user {
				clock = "user"
			}
			b.Run("path="+path+"/clock="+clock, func(b *testing.B) { benchPaced(b, path == "net-http", user) })
		}
	}
}

func benchPaced(b *testing.B, netHTTP, userClock bool) {
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	addr, _, _ := helperServer(b, "TestPacedServer", "SERVEBENCH_PACED_SERVER")
	c, err := New(Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxConnections: pacedStreams, UserClock: userClock})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if netHTTP {
		c.h1 = nil
	}
	if !userClock && c.ClockSource() != servebench.ClockKernel {
		b.Skip("no kernel receive stamps on this system")
	}
	req := &servebench.Request{Prompt: "p", MaxOutputTokens: pacedEvents}
	round := func() {
		var wg sync.WaitGroup
		for range pacedStreams {
			wg.Go(func() {
				if rec := c.Do(context.Background(), req); !rec.OK() || rec.Chunks != pacedEvents {
					b.Errorf("%s %s chunks %d", rec.ErrorClass, rec.Error, rec.Chunks)
				}
			})
		}
		wg.Wait()
	}
	round() // connections open, stamping on
	cpu0, _ := processCPU()
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N*pacedStreams*pacedEvents), "cpu-ns/event")
}
