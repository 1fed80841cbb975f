package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench"
)

// Paced streams, one event per packet as a real server sends them: pacedStreams streams at once,
// each event in its own write pacedGap apart (12,800 events/s), so that the client wakes for
// every event (BenchmarkStreamEvents sends a whole stream in one write).
const (
	pacedStreams = 64
	pacedEvents  = 64
	pacedGap     = 5 * time.Millisecond
)

// TestPacedServer is not a test: the paced benchmarks run the test binary again with
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

// TestBusyProcess is not a test: BenchmarkPacedVsMinimal's beside=busy runs the test binary
// again with SERVEBENCH_BUSY_PROCESS=1 for a process that keeps one CPU busy until its standard
// input closes, as other work on the client machine does.
func TestBusyProcess(t *testing.T) {
	if os.Getenv("SERVEBENCH_BUSY_PROCESS") != "1" {
		t.Skip("helper process for BenchmarkPacedVsMinimal")
	}
	runtime.GOMAXPROCS(1)
	fmt.Println("addr busy")
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	x := 0
	for {
		x++
	}
}

// BenchmarkPacedEvents measures the client's own CPU time per event (cpu-ns/event: user +
// system time of this process, the server runs in another) with pacedStreams streams whose
// events arrive one write at a time: the cost that decides how soon, under load, every socket
// is read after its bytes arrive. Sub-benchmarks: the plain-HTTP path (h1.go) and net/http,
// each with both clocks, and the minimal reader (minimalReader). ns/op is one request per
// stream, all streams at once.
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
	b.Run("path=minimal-reader", func(b *testing.B) {
		addr, _, _ := helperServer(b, "TestPacedServer", "SERVEBENCH_PACED_SERVER")
		m := newMinimalReader(addr)
		pacedCPU(b, func() { m.round(b) })
	})
}

func benchPaced(b *testing.B, netHTTP, userClock bool) {
	addr, _, _ := helperServer(b, "TestPacedServer", "SERVEBENCH_PACED_SERVER")
	c := pacedClient(b, addr, userClock)
	if netHTTP {
		c.h1 = nil
	}
	pacedCPU(b, func() { pacedRound(b, c) })
}

// pacedCPU runs round once (connections open, stamping on), then b.N times, and reports the
// process's CPU time per event.
func pacedCPU(b *testing.B, round func()) {
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	round()
	cpu0, _ := processCPU()
	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N*pacedStreams*pacedEvents), "cpu-ns/event")
}

func pacedClient(b *testing.B, addr string, userClock bool) *Client {
	c, err := New(Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxConnections: pacedStreams, UserClock: userClock})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	if !userClock && c.ClockSource() != servebench.ClockKernel {
		b.Skip("no kernel receive stamps on this system")
	}
	return c
}

// pacedRound sends one request on every stream at once and waits for them all.
func pacedRound(b *testing.B, c *Client) {
	req := &servebench.Request{Prompt: "p", MaxOutputTokens: pacedEvents}
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

// BenchmarkPacedVsMinimal compares the whole process's CPU time per event of servebench's
// client (kernel clock, plain-HTTP path) with that of the minimal reader (minimalReader) at one
// event per packet, each client in a process of its own (the CPU time of each process is all of
// its work: reads, wake-ups, parsing, collection, the runtime's own threads) against one server
// process. Their rounds alternate (A B A B …), each round followed by a collection of its
// garbage (charged to it), so that a machine whose load changes meanwhile weighs on both alike.
// ratio is servebench's CPU per event over the minimal reader's (the goal: at most 0.6).
// beside=busy runs a process that keeps one CPU busy meanwhile.
func BenchmarkPacedVsMinimal(b *testing.B) {
	for _, busy := range []bool{false, true} {
		name := "beside=nothing"
		if busy {
			name = "beside=busy"
		}
		b.Run(name, func(b *testing.B) {
			if _, ok := processCPU(); !ok {
				b.Skip("no process CPU time on this system")
			}
			addr, _, _ := helperServer(b, "TestPacedServer", "SERVEBENCH_PACED_SERVER")
			b.Setenv("SERVEBENCH_MINIMAL_TARGET", addr)
			_, minIn, minOut := helperServer(b, "TestMinimalReaderProcess", "SERVEBENCH_MINIMAL_READER")
			if busy {
				helperServer(b, "TestBusyProcess", "SERVEBENCH_BUSY_PROCESS")
			}
			c := pacedClient(b, addr, false)
			ours := func() usage {
				u0, _ := processUsage()
				pacedRound(b, c)
				runtime.GC()
				u1, _ := processUsage()
				return u1.sub(u0)
			}
			theirs := func() usage {
				_, _ = io.WriteString(minIn, "round\n")
				for minOut.Scan() {
					var u usage
					var ns int64
					if n, _ := fmt.Sscanf(minOut.Text(), "cpu %d csw %d flts %d", &ns, &u.csw, &u.flts); n == 3 {
						u.cpu = time.Duration(ns)
						return u
					}
				}
				b.Fatal("the minimal reader's process ended")
				return usage{}
			}
			ours()
			theirs()
			var a, m usage
			b.ResetTimer()
			for range b.N {
				u := ours()
				a.cpu, a.csw, a.flts = a.cpu+u.cpu, a.csw+u.csw, a.flts+u.flts
				u = theirs()
				m.cpu, m.csw, m.flts = m.cpu+u.cpu, m.csw+u.csw, m.flts+u.flts
			}
			b.StopTimer()
			events := float64(b.N * pacedStreams * pacedEvents)
			b.ReportMetric(float64(a.cpu)/events, "servebench-cpu-ns/event")
			b.ReportMetric(float64(m.cpu)/events, "minimal-cpu-ns/event")
			b.ReportMetric(float64(a.cpu)/float64(m.cpu), "ratio")
			// Context switches and page faults per event of each process: counts that the
			// machine's load moves less than CPU time, to tell a change's effect from noise.
			b.ReportMetric(float64(a.csw)/events, "servebench-csw/event")
			b.ReportMetric(float64(m.csw)/events, "minimal-csw/event")
			b.ReportMetric(float64(a.flts)/events, "servebench-faults/event")
			b.ReportMetric(float64(m.flts)/events, "minimal-faults/event")
		})
	}
}

// TestMinimalReaderProcess is not a test: BenchmarkPacedVsMinimal runs the test binary again
// with SERVEBENCH_MINIMAL_READER=1 for the minimal reader in a process of its own, against the
// paced server at SERVEBENCH_MINIMAL_TARGET: for every line "round" on its standard input it
// runs one round (pacedStreams requests at once), collects its garbage and prints "cpu N csw C
// flts F": the process's CPU time over the round in ns, its context switches and page faults.
func TestMinimalReaderProcess(t *testing.T) {
	if os.Getenv("SERVEBENCH_MINIMAL_READER") != "1" {
		t.Skip("helper process for BenchmarkPacedVsMinimal")
	}
	m := newMinimalReader(os.Getenv("SERVEBENCH_MINIMAL_TARGET"))
	fmt.Println("addr ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		u0, _ := processUsage()
		var wg sync.WaitGroup
		for range pacedStreams {
			wg.Go(func() {
				if n, err := m.do(); err != nil || n != pacedEvents {
					fmt.Fprintf(os.Stderr, "minimal reader: %v, %d events\n", err, n)
					os.Exit(1)
				}
			})
		}
		wg.Wait()
		runtime.GC()
		u1, _ := processUsage()
		u := u1.sub(u0)
		fmt.Println("cpu", int64(u.cpu), "csw", u.csw, "flts", u.flts)
	}
	os.Exit(0)
}

// minimalReader is the smallest honest streaming client, for comparison: net/http's transport,
// a bufio.Reader over the body, the time each data line was read (time.Now) and encoding/json
// for every event, the gaps between token events kept as a benchmark client keeps them.
type minimalReader struct {
	hc   *http.Client
	url  string
	body []byte
}

func newMinimalReader(addr string) *minimalReader {
	return &minimalReader{
		hc:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: pacedStreams, MaxConnsPerHost: pacedStreams, DisableCompression: true}},
		url: "http://" + addr + "/v1/chat/completions",
		body: []byte(`{"model":"m","messages":[{"role":"user","content":"p"}],"max_tokens":` + strconv.Itoa(pacedEvents) +
			`,"stream":true,"stream_options":{"include_usage":true}}`),
	}
}

// round sends one request on every stream at once and reads them all.
func (m *minimalReader) round(b *testing.B) {
	var wg sync.WaitGroup
	for range pacedStreams {
		wg.Go(func() {
			if n, err := m.do(); err != nil || n != pacedEvents {
				b.Errorf("minimal reader: %v, %d events", err, n)
			}
		})
	}
	wg.Wait()
}

// do runs one request and returns the number of token events read.
func (m *minimalReader) do() (int, error) {
	req, err := http.NewRequest(http.MethodPost, m.url, bytes.NewReader(m.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := m.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	start := time.Now()
	var ttft time.Duration
	gaps := make([]time.Duration, 0, pacedEvents)
	var last time.Time
	events := 0
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			now := time.Now()
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				break
			}
			var ev struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
				Usage *struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(data, &ev); err != nil {
				return events, err
			}
			if len(ev.Choices) > 0 && ev.Choices[0].Delta.Content != "" {
				if events == 0 {
					ttft = now.Sub(start)
				} else {
					gaps = append(gaps, now.Sub(last))
				}
				last = now
				events++
			}
		}
		if err != nil {
			if err == io.EOF {
				break
			}
			return events, err
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = ttft
	return events, nil
}
