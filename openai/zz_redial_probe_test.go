package openai

import (
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/servebench/servebench"
)

func BenchmarkZZRedialProbe(b *testing.B) {
	addr, _, _ := helperServer(b, "TestPacedServer", "SERVEBENCH_PACED_SERVER")
	b.Setenv("SERVEBENCH_MINIMAL_TARGET", addr)
	_, minIn, minOut := helperServer(b, "TestMinimalReaderProcess", "SERVEBENCH_MINIMAL_READER")
	helperServer(b, "TestBusyProcess", "SERVEBENCH_BUSY_PROCESS")
	c := pacedClient(b, addr, false)
	req := &servebench.Request{Prompt: "p", MaxOutputTokens: pacedEvents}
	for r := 0; r < 12; r++ {
		var dials, retries atomic.Int32
		var wg sync.WaitGroup
		for range pacedStreams {
			wg.Go(func() {
				rec := c.Do(context.Background(), req)
				if rec.ConnectSeconds != nil {
					dials.Add(1)
				}
				if rec.Retries > 0 {
					retries.Add(1)
				}
			})
		}
		wg.Wait()
		c.h1.mu.Lock()
		idle := len(c.h1.idle)
		c.h1.mu.Unlock()
		runtime.GC()
		_, _ = io.WriteString(minIn, "round\n")
		for minOut.Scan() {
			if strings.HasPrefix(minOut.Text(), "cpu ") {
				break
			}
		}
		b.Logf("round %d: dials %d retries %d idle after %d", r, dials.Load(), retries.Load(), idle)
	}
}
