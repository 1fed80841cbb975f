package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/collect/gpu"
	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/dist"
	"github.com/servebench/servebench/host"
	"github.com/servebench/servebench/load"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/selfcheck"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/store"
	"github.com/servebench/servebench/workload"
)

type runFlags struct {
	config, out, resume, index string
	quiet, noReport            bool
	resumeAnyway               bool
	formats                    string
	maxFailureRate             float64
	dist                       distFlags
	// allowEnv names the environment variables the plan may send beyond OPENAI_API_KEY and
	// SERVEBENCH_* (see envConsent)
	allowEnv []string
}

func newRunCmd(e *env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [--url URL] [--config plan.yaml] [flags]",
		Short: "Measure a target (no --url: the built-in simulator) and write a run folder and report",
		Example: `  servebench run                                   # demo against the built-in simulator
  servebench run --url http://127.0.0.1:8000/v1 --contexts 1k,8k,32k --concurrency 1-5
  servebench run --config plan.yaml --out runs/h100-qwen`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd.Context(), e, f, planOverrides(cmd))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "plan file (YAML, keys as in run.json's plan); flags override it")
	fl.StringVar(&f.out, "out", "", "run folder to create (default runs/<run id>)")
	fl.StringVar(&f.resume, "resume", "", "resume an interrupted run folder with its saved plan: measure only the cells it lacks")
	fl.BoolVar(&f.resumeAnyway, "resume-anyway", false, "with --resume: continue even though the server's engine, model or maximum length changed")
	fl.StringVar(&f.index, "index", "", indexHelp+"; 'none' to skip")
	fl.BoolVar(&f.quiet, "quiet", false, "no live progress, only the final summary")
	fl.BoolVar(&f.noReport, "no-report", false, "do not render report.html and report.md at the end")
	fl.StringVar(&f.formats, "format", "html,md", "report formats to render at the end: html,md,pdf,json")
	fl.Float64Var(&f.maxFailureRate, "max-failure-rate", 0.05, "exit with code 4 when more than this fraction of measured requests failed")
	addDistFlags(fl, &f.dist)
	fl.StringArrayVar(&f.allowEnv, "allow-env", nil, "let the plan file or resumed run folder send this environment variable (api_key_env, ${NAME} in a header); OPENAI_API_KEY and SERVEBENCH_* need no leave (repeatable)")
	for _, pf := range plan.Flags() {
		switch pf.Kind {
		case "int":
			fl.Int(pf.Name, 0, pf.Usage)
		case "float":
			fl.Float64(pf.Name, 0, pf.Usage)
		case "duration":
			fl.Duration(pf.Name, 0, pf.Usage)
		case "bool":
			fl.Bool(pf.Name, false, pf.Usage)
		case "strings":
			fl.StringArray(pf.Name, nil, pf.Usage)
		default:
			fl.String(pf.Name, "", pf.Usage)
		}
	}
	completeRun(cmd)
	return cmd
}

// planOverrides collects the plan flags the user actually set (and only those).
func planOverrides(cmd *cobra.Command) plan.Overrides {
	ov := plan.Overrides{}
	for _, pf := range plan.Flags() {
		if f := cmd.Flags().Lookup(pf.Name); f != nil && f.Changed {
			ov[pf.Name] = f.Value.String()
			if pf.Kind == "strings" { // repeatable: one value per line
				vs, _ := cmd.Flags().GetStringArray(pf.Name)
				ov[pf.Name] = strings.Join(vs, "\n")
			}
		}
	}
	return ov
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// runRun measures a plan in named steps: the plan, the target, its telemetry, the run folder,
// the measurement, and the finish (results, manifest, report, index, exit code).
func runRun(ctx context.Context, e *env, f runFlags, ov plan.Overrides) error {
	// every output of the run (terminal, folder, index) goes through the secrets
	sec := &secrets{}
	s := &session{e: e.redacting(sec), f: f, sec: sec, consent: newEnvConsent(f.allowEnv, ov)}
	if err := s.resolvePlan(ov); err != nil {
		return err
	}
	if s.resume != nil {
		defer s.resume.lock.Release() // held since resolvePlan read the folder; the run folder's Close releases it too
	}
	if err := s.openTarget(ctx); err != nil {
		return err
	}
	defer s.tg.stop()
	if err := s.openTelemetry(ctx); err != nil {
		return err
	}
	if c, ok := s.tel.gpu.(io.Closer); ok {
		defer c.Close() // a looping nvidia-smi
	}
	if err := s.checkDistributed(); err != nil {
		return err
	}
	if err := s.loadWorkloads(); err != nil {
		return err
	}
	if err := s.openRunFolder(); err != nil {
		return err
	}
	defer s.run.Close()
	if err := s.openWorkers(ctx); err != nil {
		return err
	}
	defer s.closeWorkers()
	rn, runErr := s.measure(ctx)
	return s.finish(ctx, rn.Results(), runErr)
}

// session is one run command as its steps fill it in.
type session struct {
	e   *env
	f   runFlags
	sec *secrets
	// consent is the environment variables the plan may read and send (nil: only the defaults)
	consent envConsent

	id      string
	plan    servebench.Plan
	formats []string
	resume  *resumedRun // nil for a new run

	tg  *target
	tel telemetry
	run *store.Run
	man servebench.Manifest
	// marker, when set, is the prompt marker to use (a worker gets its coordinator's)
	marker string
	// coord runs the cells on workers (--workers); nil for a local run
	coord *dist.Coordinator
	// attachWorkloads gives the runner the dataset, sessions or trace loadWorkloads read
	attachWorkloads func(*runner.Runner)
}

// resumedRun is a run folder being resumed: nothing is written into it before every check passed.
type resumedRun struct {
	resumeState
	// lock is the folder's lock, taken before it was read so that no other process writes it
	// until this one ends (two resumes of one folder would mix their requests).
	lock *store.DirLock
	done []servebench.CellResult // cells already measured
	// outages are those earlier attempts recorded
	outages []servebench.Outage
}

// attempt numbers this invocation on the run folder: 1 for a new run, then one more per resume.
func (s *session) attempt() int {
	if s.resume == nil {
		return 1
	}
	return len(s.resume.attempts()) + 1
}

// resolvePlan is step 1: the plan from defaults, file and flags (or the resumed folder's saved
// plan), every problem at once, before any request.
func (s *session) resolvePlan(ov plan.Overrides) error {
	f := s.f
	if u, ok := ov["url"]; ok {
		_, _, hide := splitURLCredentials(u)
		s.sec.add(hide...)
	}
	if f.maxFailureRate < 0 || f.maxFailureRate > 1 {
		return withCode(exitUsage, fmt.Errorf("--max-failure-rate %g must be between 0 and 1", f.maxFailureRate))
	}
	formats, err := parseFormats(f.formats)
	if err != nil {
		return withCode(exitUsage, err)
	}
	s.formats = formats
	if f.index != "none" {
		// a runs index that cannot be named is refused before the run, not after it
		loc, err := indexLocation(s.e, f.index)
		if err != nil {
			return err
		}
		if err := store.CheckLocation(loc); err != nil {
			return withCode(exitUsage, err)
		}
	}
	if f.resume != "" {
		var given []string
		if f.config != "" {
			given = append(given, "--config")
		}
		if f.out != "" {
			given = append(given, "--out")
		}
		given = append(given, ov.Names()...)
		if len(given) > 0 {
			return withCode(exitUsage, fmt.Errorf("--resume continues the run with the plan saved in its run.json, so it takes no plan flags: drop %s (or start a new run)", strings.Join(given, ", ")))
		}
		if _, err := os.Stat(filepath.Join(f.resume, store.ManifestFile)); err != nil {
			if _, _, err := store.ReadForResume(f.resume); err != nil { // its message names what is wrong
				return withCode(exitUsage, fmt.Errorf("cannot resume %s: %w", f.resume, err))
			}
		}
		lk, err := store.Lock(f.resume)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("cannot resume %s: %w", f.resume, err))
		}
		m, recs, err := store.ReadForResume(f.resume)
		if err != nil {
			lk.Release()
			return withCode(exitUsage, fmt.Errorf("cannot resume %s: %w", f.resume, err))
		}
		s.resume = &resumedRun{resumeState: newResumeState(m, recs), lock: lk}
		if _, prev, err := store.Load(f.resume); err == nil {
			s.resume.outages = prev.Outages
			for _, c := range prev.Cells {
				if !c.Skipped {
					s.resume.done = append(s.resume.done, c)
				}
			}
		}
		s.id, s.plan = m.ID, m.Plan
		return nil
	}
	var file *plan.File
	if f.config != "" {
		if file, err = plan.LoadFile(f.config); err != nil {
			return withCode(exitUsage, err)
		}
		_, _, hide := splitURLCredentials(file.TargetURL())
		s.sec.add(hide...)
	}
	p, err := plan.Resolve(file, ov)
	if err != nil {
		return withCode(exitUsage, err)
	}
	s.id, s.plan = newRunID(), p
	return nil
}

// target is the server under test, described and ready to be measured.
type target struct {
	spec servebench.Target // the plan's target, the simulator's URLs filled in
	// builtIn: the built-in simulator (no URL); simulated: builtIn, or a `servebench sim`
	// reached by URL (it says so on the wire), whatever the plan declares.
	builtIn, simulated bool
	metadata           servebench.Metadata
	client             *openai.Client
	model              string
	info               servebench.ServerInfo
	prompts            *workload.Builder
	apiKey             string // used, never stored or printed
	hc                 *http.Client
	origin             time.Time
	stop               func()
	notes              []string // run-level facts for the report (the simulator's validated error)
}

// openTarget is step 2: the built-in simulator when the plan names no URL, then discovery, the
// client and the prompt builder.
func (s *session) openTarget(ctx context.Context) error {
	p := &s.plan
	tg := &target{spec: p.Target, builtIn: p.Target.URL == "", metadata: p.Metadata, hc: s.e.targetClient(2 * time.Minute), stop: func() {}}
	// one socket per concurrent request (two when the simulator runs in this process)
	if err := host.EnsureOpenFiles(plan.MaxConcurrency(*p)*map[bool]int{false: 1, true: 2}[tg.builtIn] + host.SpareFiles); err != nil {
		return withCode(exitUsage, err)
	}
	if tg.builtIn {
		prof, err := sim.LookupProfile(p.Target.SimProfile)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("--sim-profile: %w", err))
		}
		base, stop, err := startSim(ctx, prof, s.e.listen, s.e.stderr)
		if err != nil {
			return withCode(exitError, fmt.Errorf("starting the built-in simulator: %w", err))
		}
		tg.stop = stop
		tg.spec = sim.Target(p.Target, base)
		tg.metadata = prof.Metadata(p.Metadata)
		tg.notes = append(tg.notes, simValidationNote(prof))
	}
	ok := false
	defer func() {
		if !ok {
			tg.stop()
		}
	}()
	// credentials in the URL are used, never stored: they leave the URL before it is saved
	var urlKey string
	if !tg.builtIn {
		var hide []string
		tg.spec.URL, urlKey, hide = splitURLCredentials(tg.spec.URL)
		s.sec.add(hide...)
		p.Target.URL = tg.spec.URL
		tg.spec.MetricsURL, _, hide = splitURLCredentials(tg.spec.MetricsURL)
		s.sec.add(hide...)
		p.Target.MetricsURL = tg.spec.MetricsURL
	}
	if err := s.consent.check(*p); err != nil {
		return withCode(exitUsage, err)
	}
	apiKey := ""
	if tg.spec.APIKeyEnv != "" {
		apiKey = s.e.getenv(tg.spec.APIKeyEnv)
	}
	if apiKey == "" {
		apiKey = urlKey
	}
	s.sec.add(apiKey)
	tg.apiKey = apiKey
	tg.origin = time.Now()
	ccfg := openai.Config{BaseURL: tg.spec.URL, API: tg.spec.API, Model: tg.spec.Model, APIKey: apiKey, Origin: tg.origin,
		TTFTTimeout: time.Duration(p.Sweep.TTFTTimeout), IdleTimeout: time.Duration(p.Sweep.IdleTimeout),
		RequestTimeout: time.Duration(p.Sweep.RequestTimeout),
		MaxConnections: plan.MaxConcurrency(*p), ExactOutput: p.Sweep.ExactOutput, DialContext: s.e.dial}
	if err := requestControl(&ccfg, p.Request, s.e.getenv, s.sec); err != nil {
		return withCode(exitUsage, err)
	}
	info, quirks, err := openai.Discover(ctx, ccfg)
	if err != nil {
		return withCode(exitUnreachable, fmt.Errorf("cannot describe the target at %s: %w", tg.spec.URL, err))
	}
	ccfg.Quirks = quirks
	tg.simulated = tg.builtIn || info.Engine == "sim" // a `servebench sim` reached by URL says so on the wire
	if ccfg.Model == "" {
		if len(info.Models) == 0 {
			return withCode(exitUnreachable, fmt.Errorf("the target at %s lists no models: pass --model", tg.spec.URL))
		}
		ccfg.Model = info.Models[0]
	}
	if tg.client, err = openai.New(ccfg); err != nil {
		return withCode(exitUsage, err)
	}
	tg.model = ccfg.Model
	if s.resume != nil {
		if err := checkSameExperiment(s.f.resume, s.resume.resumeState, identity(info, ccfg.Model), s.f.resumeAnyway); err != nil {
			return withCode(exitUsage, err)
		}
	}
	tg.prompts, err = workload.NewBuilder(ctx, workload.Config{RunID: s.markerID(), API: tg.spec.API, BaseURL: tg.spec.URL, Model: ccfg.Model,
		HTTPClient: tg.hc, APIKey: apiKey, Headers: ccfg.Headers, Probe: tg.client.ProbePromptTokens, Tokenizer: tg.spec.Tokenizer, SharedPrefixTokens: int(p.Sweep.SharedPrefix)})
	if err != nil {
		return withCode(exitUnreachable, fmt.Errorf("cannot size prompts for %s: %w", tg.spec.URL, err))
	}
	info.TokenCounting = tg.prompts.Method()
	tg.info = info
	s.tg = tg
	ok = true
	return nil
}

// telemetry is where server metrics and GPU readings come from, and why one is missing.
type telemetry struct {
	metrics     *promscrape.Scraper
	metricsNote string
	gpu         gpu.Source
	gpuNote     string
}

// openTelemetry is step 3: the target's Prometheus endpoint and the GPU telemetry source.
func (s *session) openTelemetry(ctx context.Context) error {
	tg, tel := s.tg, &s.tel
	if u := plan.MetricsURL(tg.spec); u != "" {
		sc := promscrape.New(u, tg.hc)
		if snap, err := sc.Scrape(ctx); err != nil {
			tel.metricsNote = fmt.Sprintf("the target exposes no readable Prometheus metrics at %s (%v); pass --metrics-url", u, err)
		} else {
			tel.metrics = sc
			if kv, ok := snap.KVCacheTokens(); ok {
				tg.info.KVCacheTokens = kv
			}
			if snap.Engine == "" || snap.Engine == "unknown" {
				tel.metricsNote = fmt.Sprintf("the metrics at %s are not from a known engine (vLLM, SGLang, TGI, TensorRT-LLM, llama.cpp)", u)
			}
		}
	} else {
		tel.metricsNote = "Ollama exposes no Prometheus metrics; prefill comes from its native API (--api ollama)"
	}
	src, err := gpu.Open(ctx, tg.spec.GPU, tg.hc)
	switch {
	case err != nil && tg.spec.GPU == "auto":
		tel.gpuNote = "no GPU telemetry found: " + err.Error()
	case err != nil:
		return withCode(exitUsage, fmt.Errorf("--gpu %s: %w", tg.spec.GPU, err))
	case src == nil:
		tel.gpuNote = "no GPU telemetry source (pass --gpu nvml, dcgm=URL or nvidia-smi)"
	}
	tel.gpu = src
	return nil
}

// openRunFolder is step 4: a new run folder (or the resumed one) with its manifest written.
func (s *session) openRunFolder() error {
	tg := s.tg
	man := servebench.Manifest{SchemaVersion: servebench.SchemaVersion, ID: s.id, ToolVersion: version, Simulated: tg.simulated,
		Plan: s.plan, Server: tg.info, Command: redactArgs(s.e.args), StartedAt: time.Now().UTC(), Status: "running"}
	man.Plan.Target.Model = tg.model
	man.Plan.Metadata = tg.metadata
	man.ClockSource = tg.client.ClockSource()
	man.ClientPriority = host.PrepareClient()
	this := servebench.Attempt{ID: strconv.Itoa(s.attempt()), StartedAt: man.StartedAt, Command: man.Command,
		Server: identity(tg.info, tg.model), Status: "running"}
	if s.resume != nil {
		// the first attempt's start and command stay; this attempt is added to the list
		man.StartedAt, man.Command = s.resume.man.StartedAt, s.resume.man.Command
		man.Attempts = s.resume.attempts()
		this.FirstSeq = s.resume.nextSeq
	}
	man.Attempts = append(man.Attempts, this)
	s.man = redactValue(s.sec, man)
	if s.resume != nil {
		run, err := store.ReopenLocked(s.f.resume, s.resume.lock)
		if err != nil {
			return withCode(exitError, fmt.Errorf("cannot resume %s: %w", s.f.resume, err))
		}
		s.run = run
		if err := s.run.WriteManifest(s.man); err != nil {
			return withCode(exitError, err)
		}
	} else {
		dir := s.f.out
		if dir == "" {
			dir = filepath.Join("runs", s.id)
		}
		run, err := store.Create(dir, s.man)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("run folder: %w", err))
		}
		s.run = run
	}
	s.run.SetRedactor(s.sec.redact)
	return nil
}

// measure is step 5: the runner over the plan, with live progress and telemetry sampling.
func (s *session) measure(ctx context.Context) (*runner.Runner, error) {
	e, tg, tel := s.e, s.tg, s.tel
	view := newProgress(e.stderr, s.f.quiet)
	rn := &runner.Runner{Plan: s.man.Plan, Server: tg.info, Client: tg.client, Prompts: tg.prompts, Recorder: s.run,
		MetricsNote: tel.metricsNote, GPUNote: tel.gpuNote, Origin: tg.origin, Events: view.handle, Notes: tg.notes,
		Probe:         serverProbe(e.targetClient(5*time.Second), tg.spec.URL, tg.spec.API, tg.apiKey),
		OutageTimeout: time.Duration(s.man.Plan.Sweep.OutageTimeout),
		EventCapacity: e.eventCapacity,
		RunInfo:       servebench.RunInfo{ID: s.id, Target: tg.spec.URL, API: tg.spec.API, Model: tg.model, Simulated: tg.simulated, StartedAt: s.man.StartedAt}}
	if rn.EventCapacity == nil {
		rn.EventCapacity = func(ctx context.Context) (float64, error) { return selfcheck.Carry(ctx, 0) }
	}
	if tel.metrics != nil {
		rn.Metrics = tel.metrics
	}
	if tel.gpu != nil {
		rn.GPU = tel.gpu
	}
	if s.coord != nil {
		rn.Load = s.coord
	}
	if s.resume != nil {
		rn.Done, rn.PastOutages = s.resume.done, s.resume.outages
		rn.SeqStart(s.resume.nextSeq) // after the highest number ever written: no seq twice
	}
	if tg.builtIn {
		rn.RunInfo.Target = "built-in simulator (" + tg.spec.SimProfile + ")"
	}
	s.attachWorkloads(rn)
	stopSampling := sampleTelemetry(ctx, tel.metrics, s.run, tg.origin)
	fmt.Fprintf(e.stderr, "servebench %s: run %s → %s\n", version, s.id, s.run.Dir())
	if tg.simulated && !tg.builtIn {
		fmt.Fprintf(e.stderr, "target: SIMULATED — %s is servebench's simulated engine (%s), not real hardware; the run and its report are marked SIMULATED whatever the plan declares\n", tg.spec.URL, tg.info.Version)
	}
	if tg.builtIn {
		fmt.Fprintf(e.stderr, "target: built-in SIMULATED engine, profile %q (pass --url to measure a real server)\n", tg.spec.SimProfile)
	} else {
		fmt.Fprintf(e.stderr, "target: %s (%s, model %s, prompts sized by %s)\n", servebench.TerminalText(tg.spec.URL, termLine, false),
			servebench.TerminalText(tg.info.Engine, termLine, false), servebench.TerminalText(tg.model, termLine, false), tg.info.TokenCounting)
	}
	view.start()
	err := rn.Run(ctx)
	stopSampling()
	view.finish()
	return rn, err
}

// finish is step 6, also after an interruption: results, manifest, report, summary, index and
// the exit code.
func (s *session) finish(ctx context.Context, res servebench.Results, runErr error) error {
	e, f, run, man := s.e, s.f, s.run, s.man
	res = redactValue(s.sec, res)
	man.FinishedAt = res.Run.FinishedAt // one end time in run.json and results.json (recomputed from run.json)
	if man.FinishedAt.IsZero() {
		man.FinishedAt = time.Now().UTC()
	}
	man.Status = "completed"
	code := exitOK
	resumable := false // the run stopped for a reason --resume overcomes
	switch {
	case runErr != nil && ctx.Err() != nil:
		man.Status, code, resumable = "interrupted", exitInterrupted, true
		// The cause is the user's signal, not the context error it surfaced as.
		runErr = errors.New("stopped by Ctrl-C or SIGTERM before the plan was complete; every request measured so far is kept in the run folder")
	case errors.Is(runErr, runner.ErrServerGone), errors.Is(runErr, load.ErrGeneratorGone):
		man.Status, man.Error, code, resumable = "interrupted", runErr.Error(), exitUnreachable, true
	case errors.Is(runErr, runner.ErrWrite):
		man.Status, man.Error, code, resumable = "interrupted", runErr.Error(), exitError, true
	case runErr != nil:
		man.Status, man.Error, code = "failed", runErr.Error(), exitError
	}
	finishAttempt(&man, man.FinishedAt)
	man = redactValue(s.sec, man)
	// Results, manifest and report are written even when one of them fails (a full disk):
	// each failure is said, and the resume hint still comes.
	var saveErrs []error
	if err := run.WriteResults(res); err != nil {
		saveErrs = append(saveErrs, err)
	}
	if err := run.WriteManifest(man); err != nil {
		saveErrs = append(saveErrs, err)
	}
	for _, err := range saveErrs {
		fmt.Fprintln(e.stderr, "servebench: could not save:", err)
	}
	if !f.noReport {
		if err := renderRun(context.WithoutCancel(ctx), e, run.Dir(), man, res, s.formats); err != nil {
			fmt.Fprintln(e.stderr, "servebench: report:", err)
		}
	}
	printSummary(e, man, res)
	indexRun(e, f.index, run.Dir(), man, res)
	fmt.Fprintf(e.stderr, "run folder: %s\n", run.Dir())
	if runErr != nil {
		if resumable {
			fmt.Fprintf(e.stderr, "interrupted: resume with  servebench run --resume %s\n", run.Dir())
		}
		return withCode(code, runErr)
	}
	if len(saveErrs) > 0 {
		return withCode(exitError, fmt.Errorf("the run completed but its results could not all be saved (%w); free the disk and complete it with  servebench run --resume %s", errors.Join(saveErrs...), run.Dir()))
	}
	if rate := stats.FailureRate(res.Cells); rate > f.maxFailureRate {
		return withCode(exitFailures, fmt.Errorf("completed, but %.1f%% of measured requests failed (allowed %.1f%%, --max-failure-rate); see error classes in results.json", 100*rate, 100*f.maxFailureRate))
	}
	return nil
}

// redactArgs keeps the command line for run.json without anything that looks like a secret.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		low := strings.ToLower(a)
		if strings.Contains(low, "key=") || strings.Contains(low, "token=") || strings.HasPrefix(low, "sk-") {
			a = "<redacted>"
		}
		out[i] = a
	}
	return out
}

// startSim serves the simulated engine on a loopback port for the duration of the run: from a
// process of its own (startSimProcess: the client's scheduler latency, which decides whether a
// cell is client-bound, is then the client's alone), or inside this one on what listen returns
// when it is set (tests: in memory) or when its own process cannot start (said on stderr).
func startSim(ctx context.Context, prof sim.Profile, listen func() (net.Listener, error), stderr io.Writer) (base string, stop func(), err error) {
	seed := time.Now().UnixNano()
	if listen == nil {
		base, stop, err := startSimProcess(prof, seed)
		if err == nil {
			return base, stop, nil
		}
		fmt.Fprintf(stderr, "servebench: the built-in simulator runs inside this process (%v): its goroutines count in the client's scheduler latency, which may mark cells client-bound\n", err)
	}
	srv := sim.New(prof, sim.Options{Seed: seed})
	srv.Start(ctx)
	if listen == nil {
		listen = func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
	}
	ln, err := listen()
	if err != nil {
		srv.Close()
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		_ = hs.Close()
		srv.Close()
	}, nil
}

// sampleTelemetry samples the server's gauges every second into telemetry.jsonl.
func sampleTelemetry(ctx context.Context, s *promscrape.Scraper, run *store.Run, origin time.Time) func() {
	if s == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Sample(ctx, time.Second, func(smp servebench.Sample) {
			if smp.OffsetSeconds == 0 {
				smp.OffsetSeconds = time.Since(origin).Seconds()
			}
			_ = run.AppendSamples([]servebench.Sample{smp})
		})
	}()
	return func() { cancel(); <-done }
}

func indexRun(e *env, path, dir string, man servebench.Manifest, res servebench.Results) {
	if path == "none" {
		return
	}
	ix, err := openIndex(e, path)
	if err != nil {
		fmt.Fprintln(e.stderr, "servebench: runs index skipped:", err)
		return
	}
	defer ix.Close()
	abs, _ := filepath.Abs(dir)
	if err := ix.Put(abs, man, res); err != nil {
		fmt.Fprintf(e.stderr, "servebench: runs index %s: %v\n", ix.Where(), err)
	}
}
