// Command servebench measures how many concurrent users an LLM inference server can serve per
// use case. main only wires packages together; each verb lives in its own file.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/servebench/servebench"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/openai"
)

// Exit codes (documented in the README; scripts depend on them).
const (
	exitOK          = 0
	exitError       = 1 // anything else
	exitUsage       = 2 // bad flags or plan
	exitUnreachable = 3 // the target could not be reached or described
	exitFailures    = 4 // completed, but the failure rate is above --max-failure-rate
	exitRegression  = 5 // gate: the candidate is worse than the baseline beyond the uncertainty and a threshold
	exitUndecided   = 6 // gate: nothing worse, but a gated value rests on too few requests to judge
	exitInterrupted = 130
)

// exitErr carries an exit code and a hint through cobra.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitErr{code: code, err: err}
}

// termLine caps one value (a model name, a target) printed on one terminal line.
const termLine = 120

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// env is what a command may touch of the outside world, injected so whole commands run in tests.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	args           []string
	// dial, when set, opens every connection to the target, and listen the built-in
	// simulator's listener (tests: in memory, on virtual time); nil: TCP on loopback.
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	listen func() (net.Listener, error)
	// eventCapacity, when set, replaces selfcheck.Carry: the stream events per second this
	// machine reads with its timing intact (tests on virtual time, where no machine is measured).
	eventCapacity func(ctx context.Context) (float64, error)
}

// targetClient is an HTTP client for a target's side endpoints (/tokenize, metrics, probes)
// with the given overall timeout, connecting through e.dial when set.
func (e *env) targetClient(timeout time.Duration) *http.Client {
	hc := openai.NewHTTPClient(timeout)
	if e.dial != nil {
		hc.Transport = &http.Transport{DialContext: e.dial, DisableCompression: true}
	}
	return hc
}

func main() {
	ctx, stop := interruptContext(interruptNote(os.Args[1:]))
	defer stop()
	os.Exit(execute(ctx, osEnv(), os.Args[1:]))
}

// osEnv is the process's own outside world. Everything written to stdout and stderr passes the
// terminal sanitiser, whatever forgot its own: no text from a server, plan or run folder drives
// the terminal (stderr keeps carriage returns for the live progress line).
func osEnv() *env {
	return &env{stdout: &servebench.TerminalWriter{W: os.Stdout}, stderr: &servebench.TerminalWriter{W: os.Stderr, KeepCR: true},
		getenv: os.Getenv, args: os.Args}
}

// interruptNote is what the first Ctrl-C says: run stops sending and keeps what it measured, a
// worker leaves its coordinator's run, the others (sim, serve, ...) only shut down.
func interruptNote(args []string) string {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "run":
		return "interrupted: stopping new requests and writing what was measured (Ctrl-C again to quit at once)"
	case "worker":
		return "interrupted: leaving the run; the coordinator records this worker's requests still in flight as failed (Ctrl-C again to quit at once)"
	}
	return "interrupted: shutting down (Ctrl-C again to quit at once)"
}

// interruptContext is canceled by the first Ctrl-C, which prints note (a run stops sending,
// records what it has and writes its results and report); a second Ctrl-C exits at once.
func interruptContext(note string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go watchInterrupts(ch, func() {
		fmt.Fprintln(os.Stderr, "\n"+note)
		cancel()
	}, func() { os.Exit(exitInterrupted) })
	return ctx, func() { signal.Stop(ch); cancel() }
}

// repeatWindow is how soon after the first interrupt another counts as the same one: `timeout
// -s INT` and `kill -INT -PGID` signal the process and its group, so one interrupt arrives
// twice within microseconds, and a terminal's Ctrl-C can reach a process twice the same way.
// A person pressing Ctrl-C again to quit takes longer than this.
const repeatWindow = time.Second

// watchInterrupts calls first on the first signal from ch and second on a later one that comes
// at least repeatWindow after it; signals within the window count as the first.
func watchInterrupts(ch <-chan os.Signal, first, second func()) {
	if _, ok := <-ch; !ok {
		return
	}
	at := time.Now()
	first()
	for range ch {
		if time.Since(at) >= repeatWindow {
			second()
			return
		}
	}
}

func execute(ctx context.Context, e *env, args []string) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	// an error can quote a server: control characters never reach the terminal
	fmt.Fprintln(e.stderr, "servebench:", servebench.TerminalText(err.Error(), 0, true))
	var xe *exitErr
	if errors.As(err, &xe) {
		return xe.code
	}
	// cobra's own flag and argument errors
	return exitUsage
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "servebench",
		Short: "How many concurrent users can this model, on this hardware, serve for my use case — and why?",
		Long: `servebench drives a live OpenAI-compatible inference server (vLLM, SGLang, TGI, TensorRT-LLM,
llama.cpp, Ollama) across context length × concurrency, measures what each user experiences and
what the hardware does, finds each use case's capacity limit, and writes a report.

Without --url it runs against the built-in simulated engine (every output is marked SIMULATED).`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newRunCmd(e), simWithValidate(e), newReportCmd(e), newCompareCmd(e), newRunsCmd(e), newGateCmd(e), newExportCmd(e), newImportCmd(e), newVersionCmd(e), newServeCmd(e), newSiteCmd(e), newSelfcheckCmd(e), newWorkerCmd(e), newK8sCmd(e), newSimProcessCmd(e))
	return root
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(e.stdout, "servebench", version)
			return nil
		},
	}
}
