package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/sim"
)

// The built-in simulator (a run without --url: the demo, or --sim-profile) runs in a process of
// its own, this binary started again with the hidden verb simChildVerb, so the run measures it as
// it measures a real server: from another process. In the run's own process the simulator's
// goroutines (a timer per token of every stream) shared the client's Go scheduler, and the
// client-bound rule, which reads the process's scheduler-latency histogram, counted their waits
// as the client's: on this 2-core machine at a load average of 9–11 (other work), the 32K cell at 4
// users read a scheduler latency p99 of 0.52–1.31 ms with the simulator inside (one of four over
// the 1 ms client-bound limit), 0.00–0.26 ms with the same simulator in a process of its own
// (`servebench sim`), on the same client.
//
// The client reads the built-in simulator exactly as it reads a real server (openai has one way
// to read a response): the demo measures as a real run does.

// simChildVerb is the hidden verb of the simulator's own process.
const simChildVerb = "sim-process"

// simReady is the line the simulator's process writes on stdout once it serves.
const simReady = "serving"

// simStartTimeout is how long startSimProcess waits for the process to say it serves.
const simStartTimeout = 15 * time.Second

// startSimProcess serves profile prof from a process of its own (this executable, simChildVerb)
// on a loopback listener this process opens and hands over (so its address is known and no
// other program can take the port meanwhile). The process lives until stop, which closes its
// standard input (also closed when this process dies, however it dies), and ignores Ctrl-C: a
// run's first interrupt drains the requests in flight, which needs the simulator. An error
// means nothing is left running.
func startSimProcess(prof sim.Profile, seed int64) (base string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return "", nil, errors.New("not a TCP listener")
	}
	f, err := tl.File() // a duplicate: the socket keeps listening once ln is closed
	base = "http://" + ln.Addr().String()
	ln.Close()
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	cmd := exec.Command(exe, simChildVerb, "--profile", prof.Name, "--seed", strconv.FormatInt(seed, 10))
	cmd.ExtraFiles = []*os.File{f} // descriptor 3 in the child
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	var errs tailBuffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan error, 1)
	ready := make(chan bool, 1)
	drained := make(chan struct{})
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- strings.TrimSpace(line) == simReady
		_, _ = io.Copy(io.Discard, stdout)
		close(drained)
	}()
	go func() {
		<-drained // (Wait closes stdout: read all it says first)
		exited <- cmd.Wait()
	}()
	end := func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	select {
	case ok := <-ready:
		if ok {
			return base, end, nil
		}
		end()
		return "", nil, fmt.Errorf("%s %s did not start: %s", exe, simChildVerb, errs.String())
	case <-time.After(simStartTimeout):
		end()
		return "", nil, fmt.Errorf("%s %s did not start within %s", exe, simChildVerb, simStartTimeout)
	}
}

// newSimProcessCmd is the simulator's own process (startSimProcess): it serves the profile on
// the listener it was handed as descriptor 3 until its standard input ends.
func newSimProcessCmd(e *env) *cobra.Command {
	var profile string
	var seed int64
	cmd := &cobra.Command{
		Use:    simChildVerb + " --profile NAME --seed N",
		Short:  "The built-in simulator's own process, started by run (internal)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Ctrl-C in a terminal reaches the whole process group: the run's first one drains
			// the requests in flight through this simulator, which goes on until the run ends it
			signal.Ignore(os.Interrupt)
			// The simulator stands in for a server on other hardware: it must keep its
			// profile's schedule on a busy machine, as it did inside the run at the client's
			// priority (a stall that it then catches up in one write puts several events in
			// one segment, read as a late first token by the client-bound rule).
			host.PrepareClient()
			prof, err := sim.LookupProfile(profile)
			if err != nil {
				return withCode(exitUsage, err)
			}
			ln, err := net.FileListener(os.NewFile(3, "listener"))
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("%s is started by servebench run, with its listener as descriptor 3: %w", simChildVerb, err))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := sim.New(prof, sim.Options{Seed: seed})
			srv.Start(ctx)
			defer srv.Close()
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			defer hs.Close()
			served := make(chan error, 1)
			go func() { served <- hs.Serve(ln) }()
			fmt.Fprintln(e.stdout, simReady)
			stdinEnded := make(chan struct{})
			go func() {
				_, _ = io.Copy(io.Discard, os.Stdin)
				close(stdinEnded)
			}()
			select {
			case <-stdinEnded:
				return nil
			case err := <-served:
				return withCode(exitError, err)
			}
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "simulator profile")
	cmd.Flags().Int64Var(&seed, "seed", 0, "the simulator's random seed")
	return cmd
}

// tailBuffer keeps the last 4 KiB written to it, safe for concurrent use.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
