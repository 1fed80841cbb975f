package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/dist"
	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/workload"
)

// tokenEnv holds the shared secret of a distributed run (coordinator and workers).
const tokenEnv = "SERVEBENCH_TOKEN"

// distFlags make `servebench run` the coordinator of a distributed run.
type distFlags struct {
	workers, minWorkers int
	listen              string
	joinTimeout         time.Duration
}

func addDistFlags(fl *pflag.FlagSet, f *distFlags) {
	fl.IntVar(&f.workers, "workers", 0, "distributed run: wait for this many servebench worker processes and let them generate the load (token in $"+tokenEnv+", made with: "+dist.MakeToken+")")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7070", "with --workers: the address workers connect to")
	fl.IntVar(&f.minWorkers, "min-workers", 0, "with --workers: the fewest workers a cell may run with after losing some (default: --workers); with fewer the run stops, resumable (exit 3)")
	fl.DurationVar(&f.joinTimeout, "join-timeout", 5*time.Minute, "with --workers: how long to wait for the workers to join (and for replacements of lost ones)")
}

// checkDistributed refuses what a distributed run cannot do yet, before anything is measured.
func (s *session) checkDistributed() error {
	f := s.f.dist
	if f.workers == 0 {
		return nil
	}
	if f.workers < 0 || f.minWorkers < 0 || f.minWorkers > f.workers {
		return withCode(exitUsage, fmt.Errorf("--workers %d and --min-workers %d: need 1 ≤ --min-workers ≤ --workers", f.workers, f.minWorkers))
	}
	if err := dist.CheckToken(s.e.getenv(tokenEnv), tokenEnv); err != nil {
		return withCode(exitUsage, fmt.Errorf("--workers: %w", err))
	}
	return nil
}

// openWorkers is the coordinator's step: listen, and wait for every worker to join.
func (s *session) openWorkers(ctx context.Context) error {
	f := s.f.dist
	if f.workers == 0 {
		return nil
	}
	p := s.man.Plan
	p.Target = s.tg.spec // the URL the workers reach (the built-in simulator's included)
	p.Target.Model = s.tg.model
	minW := f.minWorkers
	if minW == 0 {
		minW = f.workers
	}
	c := &dist.Coordinator{Token: s.e.getenv(tokenEnv), Plan: p, Marker: s.markerID(), Origin: s.tg.origin, MinWorkers: minW, Rejoin: f.joinTimeout,
		Logf:     func(format string, args ...any) { fmt.Fprintf(s.e.stderr, "servebench: "+format+"\n", args...) },
		Rejected: s.keepRejected()}
	if err := c.Listen(ctx, f.listen); err != nil {
		return withCode(exitUsage, err)
	}
	fmt.Fprintf(s.e.stderr, "servebench: waiting for %d worker(s) at tcp://%s (servebench worker --coordinator tcp://%s, with %s set)\n", f.workers, c.Addr(), c.Addr(), tokenEnv)
	if err := c.WaitFor(ctx, f.workers, f.joinTimeout); err != nil {
		c.Close()
		return withCode(exitUnreachable, err)
	}
	s.coord = c
	return nil
}

// rejectedFile holds, in the run folder, the records the coordinator refused (one JSON object
// a line: the worker, why, the record as the worker sent it, moved onto the coordinator's clock).
const rejectedFile = "rejected.jsonl"

// keepRejected appends each refused record to the run folder's rejected.jsonl.
func (s *session) keepRejected() func(dist.Rejection) {
	var mu sync.Mutex
	path := filepath.Join(s.run.Dir(), rejectedFile)
	return func(r dist.Rejection) {
		mu.Lock()
		defer mu.Unlock()
		b, err := json.Marshal(r)
		if err != nil {
			return
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(s.e.stderr, "servebench: keeping a rejected record in %s: %v\n", path, err)
			return
		}
		defer f.Close()
		if _, err := f.Write(append(b, '\n')); err != nil {
			fmt.Fprintf(s.e.stderr, "servebench: keeping a rejected record in %s: %v\n", path, err)
		}
	}
}

func (s *session) closeWorkers() {
	if s.coord != nil {
		s.coord.Close()
	}
}

// markerID is the run's prompt marker: the run id and attempt (or the coordinator's, in a worker).
func (s *session) markerID() string {
	if s.marker != "" {
		return s.marker
	}
	return markerRunID(s.id, s.attempt())
}

func newWorkerCmd(e *env) *cobra.Command {
	var coordinator, name string
	var connect time.Duration
	var allowEnv []string
	cmd := &cobra.Command{
		Use:   "worker --coordinator tcp://HOST:PORT",
		Short: "Generate part of a distributed run's load for a coordinator (servebench run --workers N)",
		Long: `A worker joins the coordinator of a distributed run (servebench run --workers N --listen ADDR),
receives the plan and the target from it, and sends its share of every cell's requests, streaming
each request's record back as it ends. It decides nothing: the coordinator starts and stops every
cell on all workers together and writes the one run folder and report.

The shared token comes from $` + tokenEnv + ` and must be the coordinator's: at least 32 characters
and 128 bits, made once with  ` + dist.MakeToken + `  (a weaker one is refused). The worker proves it
knows the token before the coordinator says anything that depends on it. An API key the
plan names with --api-key-env must be set in the worker's environment too. The worker exits 0 when
the run is over.`,
		Example: `  # the token the coordinator was started with (made there by: openssl rand -hex 16)
  SERVEBENCH_TOKEN=6f1c0e9a4b7d2358e0c4a91f7b3d5e28 servebench worker --coordinator tcp://10.0.0.5:7070`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if coordinator == "" {
				return withCode(exitUsage, errors.New("--coordinator is required: the address the coordinator listens on (its --listen), as tcp://HOST:PORT"))
			}
			if _, err := dist.ParseCoordinator(coordinator); err != nil {
				return withCode(exitUsage, err)
			}
			token := e.getenv(tokenEnv)
			if err := dist.CheckToken(token, tokenEnv); err != nil {
				return withCode(exitUsage, fmt.Errorf("worker: %w (the same value as the coordinator's)", err))
			}
			if name == "" {
				name = defaultWorkerName(e)
			}
			sec := &secrets{}
			sec.add(token)
			// as a run does: the worker's reads stamp responses
			prio := host.PrepareClient()
			w := &dist.Worker{Coordinator: coordinator, Token: token, Name: name, Priority: prio, ConnectTimeout: connect,
				Logf: func(format string, args ...any) { fmt.Fprintf(e.stderr, "servebench: "+format+"\n", args...) },
				Open: func(ctx context.Context, plan servebench.Plan, marker string) (*dist.Target, error) {
					s := &session{e: e.redacting(sec), sec: sec, plan: plan, marker: marker, consent: newEnvConsent(allowEnv, nil)}
					if err := s.openTarget(ctx); err != nil {
						return nil, err
					}
					tg := &dist.Target{Client: s.tg.client, Prompts: s.tg.prompts, Origin: s.tg.origin, Close: s.tg.stop}
					if err := openWorkloads(plan, s.tg.prompts, tg); err != nil {
						s.tg.stop()
						return nil, err
					}
					return tg, nil
				}}
			if err := w.Run(cmd.Context()); err != nil {
				if errors.Is(err, dist.ErrRefused) {
					return withCode(exitUsage, err)
				}
				return withCode(exitUnreachable, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&coordinator, "coordinator", "", "the coordinator's address, tcp://HOST:PORT (or HOST:PORT): the host and port of its --listen")
	fl.StringVar(&name, "name", "", "this worker's name in records and the report (default: host name, with the Kubernetes Job completion index when set)")
	fl.DurationVar(&connect, "connect-timeout", 5*time.Minute, "how long to keep trying to reach the coordinator")
	fl.StringArrayVar(&allowEnv, "allow-env", nil, "let the coordinator's plan send this environment variable of the worker (its api_key_env, ${NAME} in a header); OPENAI_API_KEY and SERVEBENCH_* need no leave (repeatable)")
	return cmd
}

// defaultWorkerName is the host name, with the Indexed Job's completion index when there is one.
func defaultWorkerName(e *env) string {
	h, _ := os.Hostname()
	if i := e.getenv("JOB_COMPLETION_INDEX"); i != "" && !strings.HasSuffix(h, "-"+i) {
		return h + "-" + i
	}
	if h == "" {
		return fmt.Sprintf("worker-%d", os.Getpid())
	}
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

// openWorkloads reads the plan's dataset, its conversations as sessions, or its trace for a
// worker, which builds every cell's requests itself as a local run does: the files must be at
// the plan's paths on the worker's machine too (the coordinator checked them on its own).
func openWorkloads(plan servebench.Plan, prompts *workload.Builder, tg *dist.Target) error {
	replay, _, err := loadDataset(plan.Dataset)
	if err != nil {
		return fmt.Errorf("%w (a worker reads the plan's dataset at the same path as the coordinator)", err)
	}
	script, _, err := loadSessionScript(plan.Dataset)
	if err != nil {
		return fmt.Errorf("%w (a worker reads the plan's dataset at the same path as the coordinator)", err)
	}
	trace, _, err := loadTrace(plan.Trace, prompts)
	if err != nil {
		return fmt.Errorf("%w (a worker reads the plan's trace at the same path as the coordinator)", err)
	}
	if replay != nil {
		tg.Dataset = replay
	}
	if trace != nil {
		tg.Trace = trace
	}
	tg.Script = script
	return nil
}
