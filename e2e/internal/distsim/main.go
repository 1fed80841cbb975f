// Command distsim serves the simulated engine that the distributed end-to-end tests measure, in
// a process of its own built without the race detector: inside the race-instrumented test
// process the server's own timing moved with whatever else the machine ran (TTFT at 2 streams
// 46 ms on a quiet machine, 57 ms beside other packages' tests), and the local and the
// distributed runs, taken a minute apart, measured two different servers.
//
// It listens on 127.0.0.1 at an ephemeral port, prints the base URL on one line, and serves
// until its standard input closes (so it never outlives the test that started it).
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/servebench/servebench/sim"
)

// profile is the fast profile slowed to about 1 ms per decode step at a handful of streams, so
// that 3 workers' clients on one shared machine are far from their own limits.
func profile() sim.Profile {
	p := sim.FastProfile
	p.GPU.MemBandwidth = 4.5e12
	p.Engine.StepOverhead = 500 * time.Microsecond
	return p
}

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "distsim:", err)
		os.Exit(1)
	}
}

func serve() error {
	s := sim.New(profile(), sim.Options{Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler()}
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); _ = srv.Close() }()
	fmt.Printf("http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
