package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/workload"
)

// PromptBuilder makes a prompt of exactly tokens tokens for request seq (runner.PromptBuilder).
type PromptBuilder interface {
	Prompt(ctx context.Context, seq int64, tokens int) (string, error)
}

// Target is what a worker measures with: the client, the prompt builder, the clock origin its
// records' offsets count from, and the plan's files as the worker read them.
type Target struct {
	Client  servebench.Client
	Prompts PromptBuilder
	Origin  time.Time
	Close   func()
	// Dataset, Trace and Script supply the prompts of a dataset's cells, of a trace's cell and
	// of the multi-turn sessions' turns from a dataset's conversations (workload.Sources); nil
	// when the plan names none. The worker builds every cell's requests as a local run does
	// (workload.Sources.Requests, workload.NewPopulation).
	Dataset workload.EntryFiller
	Trace   workload.TraceSource
	Script  []workload.ScriptedSession
}

// Worker is one `servebench worker` process: it joins a coordinator, opens the target of the
// plan it is handed, and runs its share of every cell until the coordinator says bye.
type Worker struct {
	// Coordinator is HOST:PORT or tcp://HOST:PORT (ParseCoordinator).
	Coordinator string
	Token       string
	// Name identifies the worker in records and the report (default host-pid).
	Name string
	// Priority says at which scheduling priority the worker sends requests (host.RaisePriority's
	// sentence); the coordinator puts it in results.json and the report.
	Priority string
	// Open opens the plan's target; marker goes into every prompt (see workload.Config.RunID).
	Open func(ctx context.Context, plan servebench.Plan, marker string) (*Target, error)
	// ConnectTimeout is how long to keep trying to reach the coordinator (default 5 minutes).
	ConnectTimeout time.Duration
	Logf           func(format string, args ...any)
	// Dial, when set, replaces the TCP connection to Coordinator (tests).
	Dial func(ctx context.Context) (net.Conn, error)

	p    *peer
	tg   *Target
	clk  clock
	plan servebench.Plan
	// sessions are the conversations of this worker's own sessions at the level being measured.
	sessions *workload.Sessions
	// users are the files the plan's users replay, read once on joining.
	users *workload.UserFiles

	mu      sync.Mutex
	cancel  context.CancelFunc // the current cell's
	stopped atomic.Bool
	bursts  chan int
}

// ErrRefused: the coordinator did not accept this worker (wrong token, or the run is over).
var ErrRefused = errors.New("the coordinator refused this worker")

func (w *Worker) logf(format string, args ...any) {
	if w.Logf != nil {
		w.Logf(format, args...)
	}
}

// Run joins the coordinator and works until it says bye (nil), ctx ends, or the connection is
// lost (an error).
func (w *Worker) Run(ctx context.Context) error {
	if w.Token == "" {
		return errors.New("no token: set SERVEBENCH_TOKEN to the coordinator's token")
	}
	if w.Name == "" {
		h, _ := os.Hostname()
		w.Name = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	conn, plan, marker, err := w.join(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	w.plan = plan
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// the files a population of users replays, read at the plan's paths as the coordinator did
	if w.users, err = workload.LoadUserFiles(plan.Users); err != nil {
		err = fmt.Errorf("%w (a worker reads the users' files at the same paths as the coordinator)", err)
		_ = w.p.send(msg{T: tReady, Err: err.Error()})
		return fmt.Errorf("opening the target: %w", err)
	}
	w.tg, err = w.Open(ctx, plan, marker)
	if err != nil {
		_ = w.p.send(msg{T: tReady, Err: err.Error()})
		return fmt.Errorf("opening the target: %w", err)
	}
	defer func() {
		if w.tg.Close != nil {
			w.tg.Close()
		}
	}()
	w.clk = clock{origin: w.tg.Origin}
	if err := w.p.send(msg{T: tReady, Origin: w.tg.Origin.UnixNano()}); err != nil {
		return err
	}
	w.logf("worker %s joined %s", w.Name, w.Coordinator)
	return w.serve(ctx)
}

// join connects and passes the handshake, trying again (until ConnectTimeout) while the
// coordinator is not there yet: a refused connection, or one a proxy in between (a Service)
// accepted and closed. A refusal by the coordinator itself (the token) is final. It says what
// it waits for: the address, the cause of the last failure, and that it tries again.
func (w *Worker) join(ctx context.Context) (net.Conn, servebench.Plan, string, error) {
	timeout := w.ConnectTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	addr := w.Coordinator
	if w.Dial == nil {
		var err error
		if addr, err = ParseCoordinator(w.Coordinator); err != nil {
			return nil, servebench.Plan{}, "", fmt.Errorf("%w: %v", ErrRefused, err)
		}
	}
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	var lastCause string
	var lastSaid time.Time
	w.logf("worker %s: joining the coordinator at tcp://%s", w.Name, addr)
	for {
		conn, err := w.dial(ctx, addr)
		if err == nil {
			w.p = newPeer(conn, maxMessageBytes)
			var plan servebench.Plan
			var marker string
			plan, marker, err = w.handshake(addr)
			if err == nil {
				return conn, plan, marker, nil
			}
			conn.Close()
		}
		if errors.Is(err, ErrRefused) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, servebench.Plan{}, "", ctx.Err()
			}
			return nil, servebench.Plan{}, "", err
		}
		if time.Now().After(deadline) {
			return nil, servebench.Plan{}, "", fmt.Errorf("could not join the coordinator at tcp://%s within %s (--connect-timeout): %w", addr, timeout, err)
		}
		if cause := err.Error(); cause != lastCause || time.Since(lastSaid) >= 30*time.Second {
			w.logf("worker %s: waiting for the coordinator at tcp://%s: %s; trying again (every 2 s at most) until %s (--connect-timeout)",
				w.Name, addr, cause, deadline.UTC().Format("15:04:05 UTC"))
			lastCause, lastSaid = cause, time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, servebench.Plan{}, "", ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// dial makes one connection to the coordinator (bounded by 10 s).
func (w *Worker) dial(ctx context.Context, addr string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if w.Dial != nil {
		return w.Dial(dctx)
	}
	var d net.Dialer
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err // "connection refused", not the whole "dial tcp …: connect: …"
			var sys *os.SyscallError
			if errors.As(err, &sys) {
				err = sys.Err
			}
		}
		return nil, fmt.Errorf("cannot connect: %w", err)
	}
	return c, nil
}

// handshake proves the token first (over both nonces) and accepts the plan only from a
// coordinator that then proves it too.
func (w *Worker) handshake(addr string) (servebench.Plan, string, error) {
	host, _ := os.Hostname()
	mine := nonce()
	_ = w.p.conn.SetDeadline(time.Now().Add(30 * time.Second))
	defer w.p.conn.SetDeadline(time.Time{})
	if err := w.p.send(msg{T: tHello, Name: w.Name, Host: host, Priority: w.Priority, Nonce: mine}); err != nil {
		return servebench.Plan{}, "", fmt.Errorf("the connection broke: %w", err)
	}
	ch, err := w.p.recv()
	if err != nil {
		return servebench.Plan{}, "", fmt.Errorf("the connection broke before the coordinator answered: %w", err)
	}
	if ch.T == tRefused {
		return servebench.Plan{}, "", fmt.Errorf("%w: %s", ErrRefused, servebench.TerminalText(ch.Err, 200, false))
	}
	if ch.T != tChallenge || !validNonce(ch.Nonce) {
		return servebench.Plan{}, "", fmt.Errorf("%w: tcp://%s does not answer as a servebench coordinator (is it its --listen address?)", ErrRefused, addr)
	}
	if err := w.p.send(msg{T: tAuth, MAC: proof(w.Token, "worker", ch.Nonce, mine)}); err != nil {
		return servebench.Plan{}, "", fmt.Errorf("the connection broke: %w", err)
	}
	wel, err := w.p.recv()
	if err != nil {
		return servebench.Plan{}, "", fmt.Errorf("the connection broke during the handshake: %w", err)
	}
	if wel.T == tRefused {
		return servebench.Plan{}, "", fmt.Errorf("%w: %s", ErrRefused, servebench.TerminalText(wel.Err, 200, false))
	}
	if wel.T != tWelcome || !proofOK(w.Token, "coordinator", mine, ch.Nonce, wel.MAC) {
		return servebench.Plan{}, "", fmt.Errorf("%w: tcp://%s did not prove it knows the token: its plan is not taken (is it the right address?)", ErrRefused, addr)
	}
	if wel.Plan == nil {
		return servebench.Plan{}, "", fmt.Errorf("%w: the coordinator sent no plan", ErrRefused)
	}
	return *wel.Plan, wel.Marker, nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// serve answers the coordinator until bye.
func (w *Worker) serve(ctx context.Context) error {
	var cells sync.WaitGroup
	defer cells.Wait()
	defer w.abort()
	for {
		m, err := w.p.recv()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("lost the coordinator: %w", err)
		}
		switch m.T {
		case tPing:
			t2 := w.clk.now()
			_ = w.p.send(msg{T: tPong, ID: m.ID, T1: m.T1, T2: t2, T3: w.clk.now()})
		case tCell:
			cellCtx, cancel := context.WithCancel(ctx)
			w.mu.Lock()
			w.cancel = cancel
			w.bursts = make(chan int, 64)
			bursts := w.bursts
			w.mu.Unlock()
			w.stopped.Store(false)
			o := *m.Order
			cells.Go(func() {
				defer cancel()
				w.runCell(cellCtx, o, bursts)
			})
		case tBurst:
			w.mu.Lock()
			if w.bursts != nil {
				w.bursts <- m.Burst
			}
			w.mu.Unlock()
		case tStop:
			w.stopped.Store(true)
			w.mu.Lock()
			if w.bursts != nil {
				close(w.bursts)
				w.bursts = nil
			}
			w.mu.Unlock()
		case tAbort:
			w.stopped.Store(true)
			w.abort()
		case tBye:
			w.logf("worker %s: the run is over", w.Name)
			return nil
		}
	}
}

func (w *Worker) abort() {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
}

// prewarmer opens connections ahead of a cell (openai.Client does).
type prewarmer interface {
	Prewarm(ctx context.Context, n int) (int, error)
}

// runCell runs this worker's part of one cell with the local drivers of package load and
// sends every request's start and record, then done.
func (w *Worker) runCell(ctx context.Context, o order, bursts <-chan int) {
	if wait := time.Duration(o.StartAt - w.clk.now()); wait > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	if pw, ok := w.tg.Client.(prewarmer); ok && o.Share > 0 {
		_, _ = pw.Prewarm(ctx, o.Share)
	}
	global := func(j int64) int64 {
		if o.Items != nil && j >= 0 && j < int64(len(o.Items)) {
			return o.SeqBase + int64(o.Items[j])
		}
		return o.SeqBase + int64(o.Slot) + int64(o.Stride)*j
	}
	warmBurst := atomic.Bool{}
	client := servebench.ClientFunc(func(ctx context.Context, req *servebench.Request) servebench.Record {
		if o.Key.LoadMode == servebench.ModeDedicated {
			req.Warmup = warmBurst.Load()
		}
		_ = w.p.send(msg{T: tStarted, Seq: global(req.Seq), Warm: req.Warmup, At: w.clk.since()})
		return w.tg.Client.Do(ctx, req)
	})
	// the same requests a local run builds, numbered as the coordinator hands them out
	build := w.sources(o).Requests(o.Key, o.SeqBase)
	next := func(ctx context.Context, j int64, warm bool) (*servebench.Request, error) {
		return build(ctx, global(j), warm)
	}
	var pop *workload.PopulationConfig
	sink := func(rec servebench.Record) {
		turn := rec.Turn
		rec.Seq, rec.CellKey, rec.Worker = global(rec.Seq), o.Key, w.Name
		if pop != nil {
			rec.Turn, rec.User = turn, pop.GlobalUser(rec.User-1)+1
		}
		if w.sessions != nil && cells.SourceOf(o.Key) == cells.SessionTurn {
			w.sessions.Ended(int(rec.Seq-o.SeqBase), o.Key.Turn, rec.EndOffsetSeconds)
		}
		_ = w.p.send(msg{T: tRecord, Rec: &rec})
	}
	var local atomic.Int64
	spec := load.Spec{NextSeq: &local, Clock: func() time.Duration { return time.Since(w.clk.origin) },
		// the worker's warm-up ends where load.Run opens its window
		WindowOpened: func(at float64) { _ = w.p.send(msg{T: tWarm, At: at}) }}
	var out load.Outcome
	var err error
	switch o.Key.LoadMode {
	case servebench.ModeSustained:
		spec.Key = servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: o.Share}
		spec.Until = w.stopped.Load
		out, err = load.Run(ctx, spec, client, next, sink)
	case servebench.ModeUsers:
		// this worker's users of the population: the same conversations they have in a local run
		pop = w.population(o, global)
		spec.Key = servebench.CellKey{LoadMode: servebench.ModeUsers, Concurrency: o.Share}
		spec.Until = w.stopped.Load
		spec.Population = workload.NewPopulation(*pop)
		out, err = load.Run(ctx, spec, client, next, sink)
	case servebench.ModeDedicated:
		// each burst is released when the coordinator says so, on every worker together
		spec.Key = servebench.CellKey{LoadMode: servebench.ModeFixed, Concurrency: o.Share}
		spec.Requests = o.Share
		for b := range bursts {
			warmBurst.Store(b == 0)
			start := w.clk.since()
			bo, berr := load.Run(ctx, spec, client, next, sink)
			out.Sent += bo.Sent
			if b == 0 {
				out.Warmup += bo.Sent
			}
			_ = w.p.send(msg{T: tBurstDone, Burst: b, Start: start, End: w.clk.since()})
			if berr != nil {
				err = berr
				break
			}
		}
	default:
		spec.Key = servebench.CellKey{LoadMode: o.Key.LoadMode, Concurrency: o.Share}
		spec.Requests, spec.Offsets, spec.MaxDuration = o.Requests, o.Offsets, o.MaxDuration
		if o.Key.LoadMode == servebench.ModeRate {
			spec.Key.Concurrency = 0
		}
		out, err = load.Run(ctx, spec, client, next, sink)
	}
	done := msg{T: tDone, Out: &out}
	if err != nil {
		done.Err = err.Error()
	}
	_ = w.p.send(done)
}

// sources are the worker's sources of prompts for the order: its plan's files and, for a
// session turn, the conversations of its own sessions (a level's first turn starts them; a later
// turn keeps the turn before it, which the coordinator only moves past once it was kept).
func (w *Worker) sources(o order) *workload.Sources {
	if cells.SourceOf(o.Key) == cells.SessionTurn && w.plan.Sessions != nil {
		if o.Key.Turn == 1 || w.sessions == nil {
			in := cells.Inputs{ScriptTurns: workload.ScriptTurns(w.tg.Script)}
			w.sessions = workload.NewSessions(w.plan.Sessions, cells.SessionCount(w.plan.Sessions, in, o.Key.Concurrency), w.tg.Script, w.tg.Prompts,
				func() time.Duration { return time.Since(w.clk.origin) })
		} else {
			w.sessions.Advance(o.Key.Turn)
		}
	}
	return &workload.Sources{Prompts: w.tg.Prompts, Dataset: w.tg.Dataset, Trace: w.tg.Trace, Sessions: w.sessions}
}

// minTexter is a prompt builder that says the shortest prompt it can build.
type minTexter interface{ MinTokens() int }

// population is the configuration of this worker's users of the order's population: users Slot,
// Slot + Stride, … of the whole (each user lives on one worker), their requests numbered by
// global.
func (w *Worker) population(o order, global func(int64) int64) *workload.PopulationConfig {
	least := 1
	if m, ok := w.tg.Prompts.(minTexter); ok {
		least = m.MinTokens()
	}
	return &workload.PopulationConfig{Users: w.plan.Users, Profile: w.users.ProfileFor(w.plan.Users, o.Key.Scenario),
		Window: o.Key.ContextTokens, N: o.Key.Concurrency, Prompts: seqPrompts{w.tg.Prompts, global}, MinTokens: least,
		Slot: o.Slot, Stride: max(o.Stride, 1)}
}

// seqPrompts numbers a population's request texts as the coordinator hands the worker's
// requests out (global); a joining user's history texts keep their own numbers (from 2³¹, dealt
// by workload.NewPopulation so that no two workers make the same).
type seqPrompts struct {
	p      PromptBuilder
	global func(int64) int64
}

func (s seqPrompts) Prompt(ctx context.Context, seq int64, tokens int) (string, error) {
	if seq < 1<<31 {
		seq = s.global(seq)
	}
	return s.p.Prompt(ctx, seq, tokens)
}

var _ workload.BlockPrompter = seqPrompts{}

// BlockPrompt builds a trace's turn from its blocks for a population replaying an agent trace
// (workload.BlockPrompter); seq is the population's own number for the text, kept as it is.
func (s seqPrompts) BlockPrompt(seq int64, hashIDs []int, blockTokens, tokens int) (string, error) {
	bp, ok := s.p.(workload.BlockPrompter)
	if !ok {
		return "", errors.New("this worker's prompt builder cannot build a trace's shared blocks")
	}
	return bp.BlockPrompt(seq, hashIDs, blockTokens, tokens)
}
