package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/collect/gpu"
	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/store"
	"github.com/servebench/servebench/workload"
)

type runFlags struct {
	config, out, resume, index string
	quiet, noReport            bool
	formats                    string
	maxFailureRate             float64
}

func newRunCmd(e *env) *cobra.Command {
	var f runFlags
	var ov plan.Overrides
	cmd := &cobra.Command{
		Use:   "run [--url URL] [--config plan.yaml] [flags]",
		Short: "Measure a target (no --url: the built-in simulator) and write a run folder and report",
		Example: `  servebench run                                   # demo against the built-in simulator
  servebench run --url http://127.0.0.1:8000/v1 --contexts 1k,8k,32k --concurrency 1-5
  servebench run --config plan.yaml --out runs/h100-qwen`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			collectOverrides(cmd, &ov)
			return runRun(cmd.Context(), e, f, ov)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "plan file (YAML, SPEC 7a); flags override it")
	fl.StringVar(&f.out, "out", "", "run folder to create (default runs/<run id>)")
	fl.StringVar(&f.resume, "resume", "", "resume an interrupted run folder: measure only the cells it lacks")
	fl.StringVar(&f.index, "index", "", "runs index database (default $SERVEBENCH_DATA_DIR/runs.db or ~/.local/share/servebench/runs.db; 'none' to skip)")
	fl.BoolVar(&f.quiet, "quiet", false, "no live progress, only the final summary")
	fl.BoolVar(&f.noReport, "no-report", false, "do not render report.html and report.md at the end")
	fl.StringVar(&f.formats, "format", "html,md", "report formats to render at the end: html,md,pdf,json")
	fl.Float64Var(&f.maxFailureRate, "max-failure-rate", 0.05, "exit with code 4 when more than this fraction of measured requests failed")
	fl.String("url", "", "API base of the target, e.g. http://127.0.0.1:8000/v1 (default: the built-in simulator)")
	fl.String("api", "", "API flavour: openai-chat (default), openai-completions, ollama")
	fl.String("model", "", "model name (default: the first model /v1/models lists)")
	fl.String("contexts", "", "context lengths, K = 1024: 1k,8k,32k or 1024,8192")
	fl.String("concurrency", "", "concurrency levels: 1,2,4 or 1-5")
	fl.Int("output-tokens", 0, "output tokens per request (forced with ignore_eos where the server allows)")
	fl.String("mode", "", "load mode: sustained (default), dedicated, fixed, rate")
	fl.Int("requests", 0, "prompts to send in fixed mode / requests in rate mode")
	fl.Float64("rate", 0, "arrival rate in requests/s (rate mode; optional pacing of fixed mode)")
	fl.Int("min-requests", 0, "sustained: at least this many measured requests per cell (default 10)")
	fl.Int("rounds", 0, "sustained: at least rounds × concurrency measured requests per cell (default 3)")
	fl.String("use-cases", "", "capacity analysis: default, none, or use-case names (comma separated)")
	fl.String("scenarios", "", "dedicated-capacity scenarios: default, none, or scenario names (comma separated)")
	fl.Int("capacity-max", 0, "ceiling of the capacity search (default 128)")
	fl.String("metrics-url", "", "Prometheus endpoint of the target (default <base without /v1>/metrics)")
	fl.String("gpu", "", "GPU telemetry: auto, nvml, dcgm=URL, nvidia-smi, none")
	fl.String("sim-profile", "", "simulator profile when no --url is given (see servebench sim --list)")
	fl.String("tokenizer", "", "offline tokenizer when the server cannot count tokens: cl100k_base, o200k_base")
	fl.String("api-key-env", "", "environment variable holding the API key (default OPENAI_API_KEY)")
	fl.Duration("ttft-timeout", 0, "time-to-first-token limit per request (default 10m)")
	fl.Duration("idle-timeout", 0, "limit between two stream events (default 60s)")
	fl.Bool("exact-output", false, "count a request whose output length differs from --output-tokens as failed")
	return cmd
}

// collectOverrides copies the flags the user actually set (and only those) into ov.
func collectOverrides(cmd *cobra.Command, ov *plan.Overrides) {
	fl := cmd.Flags()
	str := func(name string) *string {
		if !fl.Changed(name) {
			return nil
		}
		v, _ := fl.GetString(name)
		return &v
	}
	intf := func(name string) *int {
		if !fl.Changed(name) {
			return nil
		}
		v, _ := fl.GetInt(name)
		return &v
	}
	dur := func(name string) *time.Duration {
		if !fl.Changed(name) {
			return nil
		}
		v, _ := fl.GetDuration(name)
		return &v
	}
	ov.URL, ov.API, ov.Model, ov.MetricsURL, ov.GPU = str("url"), str("api"), str("model"), str("metrics-url"), str("gpu")
	ov.Tokenizer, ov.SimProfile, ov.APIKeyEnv = str("tokenizer"), str("sim-profile"), str("api-key-env")
	ov.Contexts, ov.Concurrency, ov.Mode, ov.UseCases = str("contexts"), str("concurrency"), str("mode"), str("use-cases")
	ov.Scenarios = str("scenarios")
	ov.OutputTokens, ov.Requests, ov.MinRequests, ov.Rounds, ov.CapacityMax = intf("output-tokens"), intf("requests"), intf("min-requests"), intf("rounds"), intf("capacity-max")
	if fl.Changed("rate") {
		v, _ := fl.GetFloat64("rate")
		ov.Rate = &v
	}
	if fl.Changed("exact-output") {
		v, _ := fl.GetBool("exact-output")
		ov.ExactOutput = &v
	}
	ov.TTFTTimeout, ov.IdleTimeout = dur("ttft-timeout"), dur("idle-timeout")
}

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

func runRun(ctx context.Context, e *env, f runFlags, ov plan.Overrides) error {
	// every output of the run (terminal, folder, index) goes through the secrets
	sec := &secrets{}
	e = e.redacting(sec)
	if ov.URL != nil {
		_, _, hide := splitURLCredentials(*ov.URL)
		sec.add(hide...)
	}
	// 1. the plan: every problem at once, before any request
	var file *plan.File
	var resumed *store.Run
	var man servebench.Manifest
	var oldRecs []servebench.Record
	if f.resume != "" {
		if f.config != "" || f.out != "" {
			return withCode(exitUsage, errors.New("--resume continues the saved plan: drop --config and --out"))
		}
		r, m, recs, err := store.OpenForResume(f.resume)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("cannot resume %s: %w", f.resume, err))
		}
		resumed, man, oldRecs = r, m, recs
	} else if f.config != "" {
		fl, err := plan.LoadFile(f.config)
		if err != nil {
			return withCode(exitUsage, err)
		}
		file = fl
		_, _, hide := splitURLCredentials(fl.Target.URL)
		sec.add(hide...)
	}
	var p servebench.Plan
	if resumed != nil {
		p = man.Plan
	} else {
		var err error
		p, err = plan.Resolve(file, ov)
		if err != nil {
			return withCode(exitUsage, err)
		}
	}
	if f.maxFailureRate < 0 || f.maxFailureRate > 1 {
		return withCode(exitUsage, fmt.Errorf("--max-failure-rate %g must be between 0 and 1", f.maxFailureRate))
	}
	formats, err := parseFormats(f.formats)
	if err != nil {
		return withCode(exitUsage, err)
	}

	// 2. the target: the built-in simulator when no URL is given
	simulated := p.Target.URL == ""
	target := p.Target
	if simulated {
		prof, err := sim.LookupProfile(target.SimProfile)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("--sim-profile: %w", err))
		}
		base, stop, err := startSim(ctx, prof)
		if err != nil {
			return withCode(exitError, fmt.Errorf("starting the built-in simulator: %w", err))
		}
		defer stop()
		p.Metadata = simMetadata(p.Metadata, prof)
		target.URL = base + "/v1"
		if target.MetricsURL == "" {
			target.MetricsURL = base + "/metrics"
		}
		if target.GPU == "" || target.GPU == "auto" || target.GPU == "sim" {
			target.GPU = "dcgm=" + base + "/dcgm/metrics"
		}
	}
	// credentials in the URL are used, never stored: they leave the URL before it is saved
	var urlKey string
	if !simulated {
		var hide []string
		target.URL, urlKey, hide = splitURLCredentials(target.URL)
		sec.add(hide...)
		p.Target.URL = target.URL
		target.MetricsURL, _, hide = splitURLCredentials(target.MetricsURL)
		sec.add(hide...)
		p.Target.MetricsURL = target.MetricsURL
	}
	apiKey := ""
	if target.APIKeyEnv != "" {
		apiKey = e.getenv(target.APIKeyEnv)
	}
	if apiKey == "" {
		apiKey = urlKey
	}
	sec.add(apiKey)
	id := newRunID()
	if resumed != nil {
		id = man.ID
	}
	origin := time.Now()
	ccfg := openai.Config{BaseURL: target.URL, API: target.API, Model: target.Model, APIKey: apiKey, Origin: origin,
		TTFTTimeout: time.Duration(p.Sweep.TTFTTimeout), IdleTimeout: time.Duration(p.Sweep.IdleTimeout),
		MaxConnections: maxConcurrency(p), ExactOutput: p.Sweep.ExactOutput}
	info, quirks, err := openai.Discover(ctx, ccfg)
	if err != nil {
		return withCode(exitUnreachable, fmt.Errorf("cannot describe the target at %s: %w", target.URL, err))
	}
	ccfg.Quirks = quirks
	builtIn := simulated
	simulated = simulated || info.Engine == "sim" // a `servebench sim` reached by URL says so on the wire
	if ccfg.Model == "" {
		if len(info.Models) == 0 {
			return withCode(exitUnreachable, fmt.Errorf("the target at %s lists no models: pass --model", target.URL))
		}
		ccfg.Model = info.Models[0]
	}
	client, err := openai.New(ccfg)
	if err != nil {
		return withCode(exitUsage, err)
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	builder, err := workload.NewBuilder(ctx, workload.Config{RunID: id, API: target.API, BaseURL: target.URL, Model: ccfg.Model,
		HTTPClient: hc, APIKey: apiKey, Probe: client.ProbePromptTokens, Tokenizer: target.Tokenizer, SharedPrefixTokens: int(p.Sweep.SharedPrefix)})
	if err != nil {
		return withCode(exitUnreachable, fmt.Errorf("cannot size prompts for %s: %w", target.URL, err))
	}
	info.TokenCounting = builder.Method()

	// 3. telemetry sources
	metricsURL := target.MetricsURL
	if metricsURL == "" && target.API != servebench.APIOllama {
		metricsURL = strings.TrimSuffix(strings.TrimSuffix(target.URL, "/"), "/v1") + "/metrics"
	}
	var scraper *promscrape.Scraper
	metricsNote := ""
	if metricsURL != "" {
		s := promscrape.New(metricsURL, hc)
		if snap, err := s.Scrape(ctx); err != nil {
			metricsNote = fmt.Sprintf("the target exposes no readable Prometheus metrics at %s (%v); pass --metrics-url", metricsURL, err)
		} else if snap.Engine == "" || snap.Engine == "unknown" {
			metricsNote = fmt.Sprintf("the metrics at %s are not from a known engine (vLLM, SGLang, TGI, TensorRT-LLM, llama.cpp)", metricsURL)
			scraper = s
		} else {
			scraper = s
		}
	} else {
		metricsNote = "Ollama exposes no Prometheus metrics; prefill comes from its native API (--api ollama)"
	}
	gpuSrc, err := gpu.Open(ctx, target.GPU, hc)
	gpuNote := ""
	if err != nil {
		if target.GPU == "auto" {
			gpuNote = "no GPU telemetry found: " + err.Error()
		} else {
			return withCode(exitUsage, fmt.Errorf("--gpu %s: %w", target.GPU, err))
		}
	} else if gpuSrc == nil {
		gpuNote = "no GPU telemetry source (pass --gpu nvml, dcgm=URL or nvidia-smi)"
	}

	// 4. the run folder
	man = servebench.Manifest{SchemaVersion: servebench.SchemaVersion, ID: id, ToolVersion: version, Simulated: simulated,
		Plan: p, Server: info, Command: redactArgs(e.args), StartedAt: time.Now().UTC(), Status: "running"}
	man.Plan.Target.Model = ccfg.Model
	man.ClockSource = client.ClockSource()
	man = redactValue(sec, man)
	run := resumed
	var done []servebench.CellResult
	if resumed != nil {
		_, prev, _, _ := store.Load(f.resume)
		for _, c := range prev.Cells {
			if !c.Skipped {
				done = append(done, c)
			}
		}
		if err := run.WriteManifest(man); err != nil {
			return withCode(exitError, err)
		}
	} else {
		dir := f.out
		if dir == "" {
			dir = filepath.Join("runs", id)
		}
		run, err = store.Create(dir, man)
		if err != nil {
			return withCode(exitUsage, fmt.Errorf("run folder: %w", err))
		}
	}
	defer run.Close()
	run.SetRedactor(sec.redact)

	view := newProgress(e.stderr, f.quiet)
	rn := &runner.Runner{Plan: p, Server: info, Client: client, Prompts: builder, Recorder: run,
		Metrics: scraper, MetricsNote: metricsNote, GPU: gpuSrc, GPUNote: gpuNote, Origin: origin, Done: done,
		Events:  view.handle,
		RunInfo: servebench.RunInfo{ID: id, Target: target.URL, API: target.API, Model: ccfg.Model, Simulated: simulated, StartedAt: man.StartedAt}}
	if builtIn {
		rn.RunInfo.Target = "built-in simulator (" + target.SimProfile + ")"
	}
	rn.SeqStart(int64(len(oldRecs)))
	stopSampling := sampleTelemetry(ctx, scraper, run, origin)
	fmt.Fprintf(e.stderr, "servebench %s: run %s → %s\n", version, id, run.Dir())
	if simulated && !builtIn {
		fmt.Fprintf(e.stderr, "target: SIMULATED — %s is servebench's simulated engine (%s), not real hardware; the run and its report are marked SIMULATED whatever the plan declares\n", target.URL, info.Version)
	}
	if builtIn {
		fmt.Fprintf(e.stderr, "target: built-in SIMULATED engine, profile %q (pass --url to measure a real server)\n", target.SimProfile)
	} else {
		fmt.Fprintf(e.stderr, "target: %s (%s, model %s, prompts sized by %s)\n", servebench.TerminalText(target.URL, termLine, false),
			servebench.TerminalText(info.Engine, termLine, false), servebench.TerminalText(ccfg.Model, termLine, false), info.TokenCounting)
	}
	runErr := rn.Run(ctx)
	stopSampling()
	view.finish()

	// 5. results, manifest, report — also after an interruption
	res := redactValue(sec, rn.Results())
	man.FinishedAt = time.Now().UTC()
	man.Status = "completed"
	code := exitOK
	switch {
	case runErr != nil && ctx.Err() != nil:
		man.Status, code = "interrupted", exitInterrupted
	case runErr != nil:
		man.Status, man.Error, code = "failed", runErr.Error(), exitError
	}
	man = redactValue(sec, man)
	if err := run.WriteResults(res); err != nil {
		return withCode(exitError, err)
	}
	if err := run.WriteManifest(man); err != nil {
		return withCode(exitError, err)
	}
	if !f.noReport {
		if err := renderRun(context.WithoutCancel(ctx), e, run.Dir(), man, res, formats); err != nil {
			fmt.Fprintln(e.stderr, "servebench: report:", err)
		}
	}
	printSummary(e, man, res)
	indexRun(e, f.index, run.Dir(), man, res)
	fmt.Fprintf(e.stderr, "run folder: %s\n", run.Dir())
	if runErr != nil {
		if code == exitInterrupted {
			fmt.Fprintf(e.stderr, "interrupted: resume with  servebench run --resume %s\n", run.Dir())
		}
		return withCode(code, runErr)
	}
	if rate := failureRate(res); rate > f.maxFailureRate {
		return withCode(exitFailures, fmt.Errorf("completed, but %.1f%% of measured requests failed (allowed %.1f%%, --max-failure-rate); see error classes in results.json", 100*rate, 100*f.maxFailureRate))
	}
	return nil
}

func maxConcurrency(p servebench.Plan) int {
	n := p.Capacity.MaxConcurrency
	for _, c := range p.Sweep.Concurrency {
		n = max(n, c)
	}
	return n
}

func failureRate(res servebench.Results) float64 {
	var total, failed int
	for _, c := range res.Cells {
		total += c.RequestsTotal
		failed += c.RequestsFailed
	}
	if total == 0 {
		return 0
	}
	return float64(failed) / float64(total)
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

// simMetadata declares what the simulated profile is, where the plan left a field blank, so the
// report's hardware and model tables describe the simulated system instead of "—".
func simMetadata(m servebench.Metadata, prof sim.Profile) servebench.Metadata {
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&m.ModelOrg, "servebench (simulated)")
	set(&m.ModelName, prof.Model.Name)
	set(&m.Parameters, fmt.Sprintf("%gB", prof.Model.TotalParams/1e9))
	arch := "Dense"
	if prof.Model.ActiveParams < prof.Model.TotalParams {
		arch = fmt.Sprintf("Mixture-of-Experts (%gB active)", prof.Model.ActiveParams/1e9)
	}
	set(&m.Architecture, arch)
	prec := "BF16"
	if prof.Model.BytesPerParam == 1 {
		prec = "FP8"
	}
	set(&m.Precision, prec)
	set(&m.KVCache, prec)
	set(&m.GPU, fmt.Sprintf("%dx %s (simulated)", prof.GPU.Count, prof.GPU.Name))
	set(&m.VRAM, fmt.Sprintf("%.1f GB", prof.GPU.MemoryBytes/1e9))
	set(&m.Engine, "vLLM-like simulator:")
	set(&m.SpeculativeDecoding, "none")
	return m
}

// startSim serves the simulated engine on a loopback port for the duration of the run.
func startSim(ctx context.Context, prof sim.Profile) (base string, stop func(), err error) {
	srv := sim.New(prof, sim.Options{Seed: time.Now().UnixNano()})
	srv.Start(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	if path == "" {
		p, err := store.DefaultIndexPath()
		if err != nil {
			fmt.Fprintln(e.stderr, "servebench: runs index skipped:", err)
			return
		}
		path = p
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintln(e.stderr, "servebench: runs index skipped:", err)
		return
	}
	ix, err := store.OpenIndex(path)
	if err != nil {
		fmt.Fprintln(e.stderr, "servebench: runs index skipped:", err)
		return
	}
	defer ix.Close()
	abs, _ := filepath.Abs(dir)
	if err := ix.Put(abs, man, res); err != nil {
		fmt.Fprintln(e.stderr, "servebench: runs index:", err)
	}
}
