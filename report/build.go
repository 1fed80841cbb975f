package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/stats"
)

// builder carries the run through the section builders.
type builder struct {
	in    Input
	man   *servebench.Manifest
	res   *servebench.Results
	md    servebench.Metadata
	sweep grid
	rep   *Report
}

// Build computes the whole report of one run. It never fails: a section without data says
// what would have filled it.
func Build(in Input) *Report {
	in = displayInput(in)
	b := &builder{in: in, man: &in.Manifest, res: &in.Results, md: in.Manifest.Plan.Metadata}
	b.sweep = newGrid(in.Results.Cells, func(c *servebench.CellResult) bool { return c.OnSweepGrid() })
	if b.sweep.empty() {
		// A run without sweep cells (capacity only): show whatever sustained cells exist.
		b.sweep = newGrid(in.Results.Cells, func(c *servebench.CellResult) bool {
			// a dataset's cells have their own rows (workloadSummaryRows)
			return c.LoadMode != servebench.ModeDedicated && !openLoop(c) && !sessionCell(c) && c.Scenario != "dataset"
		})
	}
	b.rep = &Report{SchemaVersion: servebench.SchemaVersion, Simulated: IsSimulated(in.Manifest, in.Results)}
	b.title()
	b.reproduce()
	b.rep.Capacity = b.verdicts()
	b.highlights()
	b.summaryTable()

	b.sectionExecutive()
	b.sectionUseCases()
	b.sectionCapacityPlanning()
	b.sectionFrontier()
	b.add("technical-analysis", "Technical Analysis", 0,
		para("The chapters above answer what to buy; the chapters below show how the system behaves and why, for the engineer who tunes or verifies it: throughput, latency, queueing, prefill, inter-token timing, scaling, power, the capacity searches in detail, and every measured cell."))
	b.sectionThroughput()
	b.sectionSpeed()
	b.sectionTTFT()
	b.sectionCapacity()
	b.sectionUsers()
	b.sectionQueue()
	b.sectionWorkloads()
	b.sectionPromptCaching()
	b.sectionPrefill()
	b.sectionITL()
	b.sectionScaling()
	b.sectionPower()
	b.sectionDedicated()
	b.sectionServeTable()
	b.sectionPercentiles()
	b.sectionTelemetry()
	b.sectionNotes()
	b.sectionMethodology()
	return b.rep
}

// IsSimulated reports whether a run measured servebench's simulated engine: the built-in one,
// or a `servebench sim` server reached by URL (the engine identifies itself on the wire),
// whatever the plan declares about the hardware.
func IsSimulated(man servebench.Manifest, res servebench.Results) bool {
	return man.Simulated || res.Run.Simulated || man.Server.Engine == "sim"
}

func (b *builder) add(id, title string, level int, blocks ...Block) {
	b.rep.Sections = append(b.rep.Sections, Section{ID: id, Title: title, Level: level, Blocks: blocks})
}

func para(format string, a ...any) Block {
	return Block{Kind: BlockParagraph, Text: fmt.Sprintf(format, a...)}
}
func note(text string) Block    { return Block{Kind: BlockNote, Text: text} }
func missing(text string) Block { return Block{Kind: BlockMissing, Text: text} }
func tableB(t *Table) Block     { return Block{Kind: BlockTable, Table: t} }

// chartB is a chart block; its MarkNote is filled from its series' marks.
func chartB(c *Chart) Block {
	c.MarkNote = markNote(c)
	return Block{Kind: BlockChart, Chart: c}
}
func verdictB(text string) Block { return Block{Kind: BlockVerdict, Text: text} }

// modelName is the best display name of the model.
func (b *builder) modelName() string {
	switch {
	case b.md.ModelName != "":
		return b.md.ModelName
	case b.man.Plan.Target.Model != "":
		return b.man.Plan.Target.Model
	case b.res.Run.Model != "":
		return b.res.Run.Model
	}
	return "unnamed model"
}

func (b *builder) engineName() string { return b.man.EngineName() }

func (b *builder) title() {
	r := b.rep
	r.Title = b.modelName()
	hw := b.md.GPU
	if hw == "" {
		hw = "undeclared hardware (set metadata.gpu in the plan)"
	}
	r.Subtitle = "Performance analysis on " + hw
	if e := b.engineName(); e != "" {
		r.Subtitle += ", served by " + e
	}
	if r.Simulated {
		declared := "the hardware"
		if b.md.GPU != "" || b.md.Engine != "" {
			declared = strings.TrimSuffix(strings.Join([]string{b.md.GPU, b.md.Engine}, ", "), ", ")
			declared = strings.TrimPrefix(declared, ", ")
		}
		if b.man.Plan.Target.URL == "" {
			r.Subtitle = "SIMULATED on servebench's built-in simulated engine, not measured on any GPU"
		} else {
			r.Subtitle = "SIMULATED on servebench's simulated engine, not measured on " + declared
			if b.md.GPU != "" || b.md.Engine != "" {
				r.Subtitle += " (as the plan declares)"
			}
		}
		engine := "servebench's built-in simulated engine"
		if prof := b.man.Plan.Target.SimProfile; prof != "" {
			engine += fmt.Sprintf(" (profile %q)", prof)
		}
		if b.man.Server.Engine == "sim" && b.man.Plan.Target.URL != "" {
			engine = "a servebench simulated engine (servebench sim"
			if b.man.Server.Version != "" {
				engine += ", " + b.man.Server.Version
			}
			engine += ") at " + b.man.Plan.Target.URL
		}
		r.Banner = fmt.Sprintf("SIMULATED: every figure in this report was produced by %s, not by a real GPU or inference server, whatever the plan declares about the hardware. Use it to see the pipeline and what-if trends, never as a hardware measurement.", engine)
	}
	run := []string{r.Title}
	if b.md.GPU != "" {
		run = append(run, b.md.GPU)
	}
	if e := b.engineName(); e != "" {
		run = append(run, e)
	}
	r.RunningHeader = strings.Join(run, " · ")
	if r.Simulated {
		r.RunningHeader += " (as declared)"
	}
	dash := func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "—"
		}
		return s
	}
	r.ModelTable = []Field{
		{"Model", r.Title},
		{"Organization", dash(b.md.ModelOrg)},
		{"Parameters", dash(b.md.Parameters)},
		{"Architecture", dash(b.md.Architecture)},
		{"Precision", dash(b.md.Precision)},
		{"KV cache", dash(b.md.KVCache)},
		{"Speculative decoding", dash(b.md.SpeculativeDecoding)},
	}
	maxLen := "—"
	if b.man.Server.MaxModelLen > 0 {
		maxLen = fmtInt(b.man.Server.MaxModelLen) + " tokens"
	}
	r.HardwareTable = []Field{
		{"GPU", dash(b.md.GPU)},
		{"VRAM", dash(b.md.VRAM)},
		{"Engine", dash(b.engineName())},
		{"Engine flags", dash(b.md.EngineFlags)},
		{"Detected engine", dash(b.man.Server.Engine)},
		{"Max model length", maxLen},
		{"Token counting", dash(b.man.Server.TokenCounting)},
	}
	target := b.man.Plan.Target.URL
	if target == "" {
		target = b.res.Run.Target
	}
	if target == "" && r.Simulated {
		target = "built-in simulator"
	}
	api := string(b.man.Plan.Target.API)
	if api == "" {
		api = string(b.res.Run.API)
	}
	started, finished := b.man.StartedAt, b.man.FinishedAt
	if started.IsZero() {
		started, finished = b.res.Run.StartedAt, b.res.Run.FinishedAt
	}
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	dur := "—"
	if !started.IsZero() && !finished.IsZero() && finished.After(started) {
		dur = finished.Sub(started).Round(time.Second).String()
	}
	id := b.man.ID
	if id == "" {
		id = b.res.Run.ID
	}
	r.Run = RunMeta{ID: id, Target: target, API: api, Model: b.man.Plan.Target.Model, Status: dash(b.man.Status),
		ToolVersion: dash(b.man.ToolVersion), StartedAt: ts(started), FinishedAt: ts(finished), Duration: dur}
}

// peak is the run's peak throughput and its cell (stats.Peak: the sweep grid's highest
// system output throughput): the one every "peak throughput" of the report names.
func (b *builder) peak() (*servebench.CellResult, float64) {
	c := stats.Peak(b.res.Cells)
	if c == nil {
		return nil, 0
	}
	return c, c.SystemOutputThroughputTPS
}

// totals is the run's measured requests over every cell and its success rate (stats.RunSuccess).
func (b *builder) totals() (total int, rate float64) {
	_, total, rate = stats.RunSuccess(b.res.Cells)
	return total, rate
}

// headline is the verdict the summary leads with: the plan's capacity.headline use case, else
// the first analysed one; nil when no use case was analysed.
func (b *builder) headline() *Verdict {
	name := b.man.Plan.Capacity.Headline
	if name == "" { // a run folder from before the plan named its headline
		name = plan.Defaults(false).Capacity.Headline
	}
	for i := range b.rep.Capacity {
		if b.rep.Capacity[i].UseCase == name {
			return &b.rep.Capacity[i]
		}
	}
	if len(b.rep.Capacity) > 0 {
		return &b.rep.Capacity[0]
	}
	return nil
}

// noCapacityWhy says why a run has no capacity result: the plan named no use case, or the run
// stopped before its searches (then how to finish them).
func (b *builder) noCapacityWhy() string {
	if len(b.man.Plan.UseCases) > 0 && b.man.Status != "completed" {
		return fmt.Sprintf("the run stopped before its capacity searches (%s planned; servebench run --resume RUN_DIR runs them)", plural(len(b.man.Plan.UseCases), "use case"))
	}
	return "no use case was analysed (--use-cases default)"
}

// measuredAny reports whether any sweep cell sent requests (succeeded or not).
func (b *builder) measuredAny() bool {
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; c.Scenario == sweepScenario && !c.Skipped && c.RequestsTotal > 0 {
			return true
		}
	}
	return false
}

// measuredAtOne reports whether any sweep cell at concurrency 1 was run (succeeded or not).
func (b *builder) measuredAtOne() bool {
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; c.Scenario == sweepScenario && c.Concurrency == 1 && !c.Skipped && c.RequestsTotal > 0 {
			return true
		}
	}
	return false
}

// openLoopOnly reports whether the run measured only off-grid cells (request rates, a dataset):
// nothing at a concurrency level.
func (b *builder) openLoopOnly() bool {
	return b.sweep.empty() && b.man.Plan.Sessions == nil && len(b.workloadCells()) > 0
}

func (b *builder) highlights() {
	r := b.rep
	if c, v := b.peak(); c != nil {
		r.Highlights = append(r.Highlights, Highlight{Value: fmtNum(v, 1), Label: "Tok/s Peak Throughput",
			Condition: peakCondition(c) + after(caveat(c))})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Tok/s Peak Throughput", Condition: "no cell completed a request"})
	}
	total, rate := b.totals()
	if total > 0 {
		r.Highlights = append(r.Highlights, Highlight{Value: fmtPct(rate), Label: "Success Rate",
			Condition: fmt.Sprintf("Across All Scenarios (%s)", counted(fmtCount(total), "measured request"))})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Success Rate", Condition: "no requests measured"})
	}
	if v := b.headline(); v != nil {
		cond := "@ " + v.Context + " Context (" + v.Title + ")"
		if v.Interrupted {
			cond += ", At Least This So Far (Search Interrupted)"
		}
		if u := b.sizingOf(v.UseCase); u != nil && u.UsersPerReplica != nil && b.res.Sizing != nil {
			cond += fmt.Sprintf(" ≈ %s at %s per request slot", counted(usersLabel(*u), "user"), fmtUsers(b.res.Sizing.UsersPerSlot))
		}
		label := "Concurrent Requests"
		if v.LimitLabel == "1" {
			label = "Concurrent Request"
		}
		r.Highlights = append(r.Highlights, Highlight{Value: v.LimitLabel, Label: label, Condition: cond})
	} else {
		r.Highlights = append(r.Highlights, Highlight{Value: "—", Label: "Concurrent Requests",
			Condition: "capacity not measured: " + b.noCapacityWhy()})
	}
}

func (b *builder) summaryTable() {
	t := Table{Caption: "Sweep summary (means unless noted; ± is the 95% interval)", Header: []string{"CONTEXT", "CONC", "TTFT MEAN", "TTFT P99", "SPEED/USER", "SYSTEM TOK/S", "SUCCESS", "VALIDITY"}}
	for _, c := range b.sweep.ordered() {
		t.Rows = append(t.Rows, []string{ctxLabel(c.ContextTokens), fmt.Sprint(c.Concurrency), fmtDur(c.TTFTSeconds.Mean) + plusMinus(c.TTFTSeconds.CI95RelHalfWidth()), fmtOpt(c.TTFTSeconds.P99, fmtDur),
			fmtTPS(c.GenerationSpeedTPS.Mean), fmtTPS(c.SystemOutputThroughputTPS) + PlusMinus(c.SystemOutputThroughputCI95, c.SystemOutputThroughputTPS), fmtPct(c.SuccessRate), validityLabel(c.Validity)})
	}
	b.workloadSummaryRows(&t)
	b.rep.Summary = t
}

// ---- executive summary and key findings ----

func (b *builder) sectionExecutive() {
	var blocks []Block
	blocks = append(blocks, para("This report measures user-facing performance: how many concurrent requests this configuration serves at a given context length before the experience degrades, and why."))
	// who/what
	var facts []string
	if b.md.ModelOrg != "" {
		facts = append(facts, b.md.ModelOrg)
	}
	if b.md.Parameters != "" {
		facts = append(facts, b.md.Parameters+" parameters")
	}
	if b.md.Architecture != "" {
		facts = append(facts, b.md.Architecture)
	}
	s := "This benchmark evaluates " + b.modelName()
	if len(facts) > 0 {
		s += " (" + strings.Join(facts, ", ") + ")"
	}
	if b.md.Precision != "" {
		s += " running in " + b.md.Precision + " precision"
	}
	if b.md.GPU != "" {
		s += " on " + b.md.GPU
		if b.md.VRAM != "" {
			s += " (" + b.md.VRAM + " VRAM)"
		}
	}
	if e := b.engineName(); e != "" {
		s += ", served by " + e
	}
	if b.rep.Simulated {
		s += " — as declared; SIMULATED: every figure was produced by servebench's simulated engine, not by this hardware"
	}
	blocks = append(blocks, para("%s.", s))
	if b.rep.Reproduce != "" {
		blocks = append(blocks, para("Reproduce: %s", b.rep.Reproduce))
	}
	blocks = append(blocks, para("Test parameters: %s", b.testParameters()))
	if b.man.Status != "" && b.man.Status != "completed" {
		msg := fmt.Sprintf("This run is %s: the report covers only the cells measured before it stopped.", b.man.Status)
		if b.man.Error != "" {
			msg += " Cause: " + b.man.Error + "."
		}
		blocks = append(blocks, note(msg))
	}
	b.add("executive-summary", "Executive Summary", 1, blocks...)

	kf := &Table{Header: []string{"FINDING", "VALUE"}}
	row := func(k, v string) { kf.Rows = append(kf.Rows, []string{k, v}) }
	if c, v := b.peak(); c != nil {
		row("Peak System Throughput", fmtTPS(v)+" "+peakWhere(c, false)+after(caveat(c)))
	} else {
		row("Peak System Throughput", "not measured: no cell completed a request")
	}
	lo, hi := b.singleEnds()
	switch {
	case lo != nil && lo == hi:
		row("TTFT Single Request", fmt.Sprintf("%s (%s context%s)", fmtDur(lo.TTFTSeconds.Mean), ctxLabel(lo.ContextTokens), inside(caveat(lo))))
		row("Generation Speed Single Request", fmt.Sprintf("%s (%s context%s)", fmtSpeed(lo), ctxLabel(lo.ContextTokens), inside(caveat(lo))))
	case b.openLoopOnly():
		row("TTFT Single Request", "not measured: this run measured request rates, not concurrency levels (see Request-Rate Sweep)")
		row("Generation Speed Single Request", "not measured: this run measured request rates, not concurrency levels")
	case lo != nil:
		row("TTFT Single Request", fmt.Sprintf("%s (%s context%s) → %s (%s context%s)", fmtDur(lo.TTFTSeconds.Mean), ctxLabel(lo.ContextTokens), inside(caveat(lo)), fmtDur(hi.TTFTSeconds.Mean), ctxLabel(hi.ContextTokens), inside(caveat(hi))))
		row("Generation Speed Single Request", fmt.Sprintf("%s (%s context%s) → %s (%s context%s)", fmtSpeed(lo), ctxLabel(lo.ContextTokens), inside(caveat(lo)), fmtSpeed(hi), ctxLabel(hi.ContextTokens), inside(caveat(hi))))
	case b.measuredAtOne():
		row("TTFT Single Request", "not measured: no request at concurrency 1 succeeded (see Notes)")
		row("Generation Speed Single Request", "not measured: no request at concurrency 1 succeeded")
	default:
		row("TTFT Single Request", "not measured: add concurrency 1 to the sweep (--concurrency 1,...)")
		row("Generation Speed Single Request", "not measured: add concurrency 1 to the sweep")
	}
	if v := b.headline(); v != nil {
		row(v.Title+" Capacity", fmt.Sprintf("%s @ %s context", v.LimitPhrase, v.Context))
	} else {
		row("Capacity", "not measured: "+b.noCapacityWhy())
	}
	if x, ctx, lo, hi, ok := b.scaling(); ok {
		row("Throughput Scaling", fmt.Sprintf("%.1f× from %d to %d concurrent requests (%s context%s)", x, lo.Concurrency, hi.Concurrency, ctxLabel(ctx), inside(caveat(lo, hi))))
	} else if b.openLoopOnly() {
		row("Throughput Scaling", "not measured: this run measured request rates, not concurrency levels")
	} else {
		row("Throughput Scaling", "not measured: needs at least two concurrency levels at one context")
	}
	total, rate := b.totals()
	if total > 0 {
		row("Success Rate", fmt.Sprintf("%s across %s", fmtPct(rate), counted(fmtCount(total), "request")))
	}
	slotUsers := fmtUsers(4)
	if b.res.Sizing != nil {
		slotUsers = fmtUsers(b.res.Sizing.UsersPerSlot)
	}
	b.add("key-findings", "Key Findings", 2, tableB(kf),
		para("Throughout this report, \"concurrent requests\" means simultaneously active requests. For applications with natural user pauses (chat interfaces, coding assistants), one request slot typically serves several active users: %s here (see Capacity Planning).", slotUsers))
}

// singleEnds returns the concurrency-1 sweep cells at the shortest and longest context.
func (b *builder) singleEnds() (lo, hi *servebench.CellResult) {
	for _, x := range b.sweep.ctxs {
		if c := b.sweep.at(x, 1); c != nil {
			if lo == nil {
				lo = c
			}
			hi = c
		}
	}
	return
}

// scaling is stats.ThroughputScaling over the sweep's levels at the context of the peak.
func (b *builder) scaling() (x float64, ctx int, lo, hi *servebench.CellResult, ok bool) {
	pk, _ := b.sweep.extreme(true, valThroughput)
	if pk == nil {
		return
	}
	ctx = pk.ContextTokens
	var cells []*servebench.CellResult
	for _, n := range b.sweep.concs {
		if c := b.sweep.at(ctx, n); c != nil {
			cells = append(cells, c)
		}
	}
	x, first, last, ok := stats.ThroughputScaling(cells)
	if !ok {
		return 0, 0, nil, nil, false
	}
	return x, ctx, first, last, true
}

func (b *builder) testParameters() string {
	p := b.man.Plan
	var parts []string
	switch {
	case !b.sweep.empty():
		g := b.sweep
		if len(g.ctxs) == 1 {
			parts = append(parts, fmt.Sprintf("One context length: %s tokens.", ctxLabel(g.ctxs[0])))
		} else {
			parts = append(parts, fmt.Sprintf("Context lengths from %s to %s tokens.", ctxLabel(g.ctxs[0]), ctxLabel(g.ctxs[len(g.ctxs)-1])))
		}
		if len(g.concs) == 1 {
			parts = append(parts, fmt.Sprintf("One concurrency level: %s.", capacity.Requests(g.concs[0])))
		} else {
			parts = append(parts, fmt.Sprintf("Concurrency from %d to %d requests.", g.concs[0], g.concs[len(g.concs)-1]))
		}
	case b.openLoopOnly():
		var ctxs, rates []string
		seen := map[string]bool{}
		for _, c := range b.workloadCells() {
			if x := ctxLabel(c.ContextTokens); c.Scenario != "dataset" && !seen["c"+x] {
				seen["c"+x] = true
				ctxs = append(ctxs, x)
			}
			if r := fmtRate(c.RatePerSecond); openLoop(c) && !seen["r"+r] {
				seen["r"+r] = true
				rates = append(rates, r)
			}
		}
		if len(ctxs) > 0 {
			parts = append(parts, fmt.Sprintf("Context %s tokens.", joinAnd(ctxs)))
		}
		if len(rates) > 0 {
			parts = append(parts, fmt.Sprintf("Arrival rates %s.", joinAnd(rates)))
		}
	case p.Sessions != nil && p.Dataset != nil && p.Dataset.Sessions:
		parts = append(parts, fmt.Sprintf("Multi-turn sessions instead of the context × concurrency grid: the conversations of the dataset %s, a %s-token answer per turn, %s in flight (see Prompt Caching).",
			p.Dataset.Path, p.Sessions.OutputTokens, counted(joinInts(p.Sessions.Concurrency), "session")))
	case p.Sessions != nil:
		ss := p.Sessions
		parts = append(parts, fmt.Sprintf("Multi-turn sessions instead of the context × concurrency grid: %s, a %s-token first prompt, %s tokens of new user text and a %s-token answer per turn, %s in flight (see Prompt Caching).",
			plural(ss.Turns, "turn"), ss.FirstTurnTokens, ss.TurnTokens, ss.OutputTokens, counted(joinInts(ss.Concurrency), "session")))
	case len(p.Sweep.Contexts) > 0:
		none := "none measured"
		if b.measuredAny() {
			none = "no request succeeded"
		}
		parts = append(parts, fmt.Sprintf("Planned context lengths %s tokens ("+none+").", rangeLabel(p.Sweep.Contexts[0].String(), p.Sweep.Contexts[len(p.Sweep.Contexts)-1].String())))
	}
	out := int(p.Sweep.OutputTokens)
	if p.Sessions != nil && b.sweep.empty() {
		out = int(p.Sessions.OutputTokens)
	}
	if out == 0 && !b.sweep.empty() {
		out = b.sweep.ordered()[0].OutputTokens
	}
	if out > 0 {
		exact := "requested exactly (min_tokens and ignore_eos)"
		if !b.man.Server.ForcesOutputLength {
			exact = "requested, but this server cannot force the length"
		}
		if p.Sweep.ExactOutput {
			exact += "; a different length counts as a failure"
		}
		parts = append(parts, fmt.Sprintf("%s per request, %s.", counted(fmt.Sprint(out), "output token"), exact))
	}
	if p.Sessions != nil {
		parts = append(parts, "Prompt caching exercised on purpose in the sessions (each turn resends the conversation so far); every other prompt, the fresh ones beside the sessions included, starts with a marker unique to the run and the request.")
	} else if p.Sweep.SharedPrefix > 0 {
		parts = append(parts, fmt.Sprintf("Prompts share a %s-token prefix (prompt caching exercised on purpose).", p.Sweep.SharedPrefix))
	} else {
		parts = append(parts, "No prompt caching: every prompt starts with a marker unique to the run and the request.")
	}
	if sd := b.md.SpeculativeDecoding; sd != "" && !strings.EqualFold(sd, "none") && !strings.EqualFold(sd, "no") {
		parts = append(parts, "Speculative decoding: "+sd+".")
	} else if sd != "" {
		parts = append(parts, "No speculative decoding.")
	} else {
		parts = append(parts, "Speculative decoding not declared (metadata.speculative_decoding).")
	}
	if b.md.KVCache != "" {
		parts = append(parts, "KV cache: "+b.md.KVCache+".")
	} else {
		parts = append(parts, "KV cache precision not declared (metadata.kv_cache).")
	}
	mode := p.Sweep.Mode
	if mode == "" && !b.sweep.empty() {
		mode = b.sweep.ordered()[0].LoadMode
	}
	if p.Sessions != nil && b.sweep.empty() {
		mode = "" // the sweep's mode did not run
		parts = append(parts, "Load mode: sessions (at each level, every session's turn t is sent before any session's turn t + 1, at most N in flight; the fresh prompts of each turn's length are sent the same way).")
	}
	switch mode {
	case servebench.ModeSustained:
		aim := ""
		if p.Sweep.MaxRequests > 0 || p.Sweep.MaxDuration > 0 {
			aim = fmt.Sprintf(", then until throughput and mean TTFT are known within ±%s at 95%% or a cap (%s, a %s window) is reached",
				fmtPct(orPrecision(p.Sweep.Precision)), counted(orDefault(intOrEmpty(p.Sweep.MaxRequests), "no cap on"), "request"), orDefault(durOrEmpty(p.Sweep.MaxDuration), "no cap on the"))
		}
		parts = append(parts, fmt.Sprintf("Load mode: sustained (closed loop, exactly N requests in flight; first N completions are warm-up; each cell measures a window of at least %d × its mean end-to-end latency and at least %s requests%s).",
			stats.MinWindowLifetimes, requestFloor(p.Sweep), aim))
	case servebench.ModeDedicated:
		parts = append(parts, "Load mode: dedicated bursts (N requests released together; the next burst waits for all of them).")
	case servebench.ModeFixed:
		parts = append(parts, fmt.Sprintf("Load mode: fixed count (%s, at most N in flight).", plural(p.Sweep.Requests, "prompt")))
	case servebench.ModeRate:
		rates := []string{}
		for _, r := range p.Sweep.Rates {
			rates = append(rates, strings.TrimSuffix(fmtRate(r), " req/s"))
		}
		if len(rates) == 0 {
			rates = append(rates, strings.TrimSuffix(fmtRate(p.Sweep.Rate), " req/s"))
		}
		parts = append(parts, fmt.Sprintf("Load mode: open loop at %s requests/s (%s arrivals; requests are sent on schedule whatever is in flight).", joinAnd(rates), orDefault(p.Sweep.Arrivals, "poisson")))
	}
	total, _ := b.totals()
	warm := 0
	for _, c := range b.res.Cells {
		warm += c.WarmupRequests
	}
	parts = append(parts, fmt.Sprintf("Requests: %s measured (%s warm-up) over %s.", fmtInt(total), fmtInt(warm), plural(countMeasured(b.res.Cells), "cell")))
	return strings.Join(parts, " ")
}

func intOrEmpty(v int) string {
	if v <= 0 {
		return ""
	}
	return fmtInt(v)
}

func durOrEmpty(d servebench.Duration) string {
	if d <= 0 {
		return ""
	}
	return time.Duration(d).String()
}

// orPrecision is the precision a plan aims for (0: stats.DefaultRelHalfWidth).
func orPrecision(v float64) float64 {
	if v <= 0 {
		return stats.DefaultRelHalfWidth
	}
	return v
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func countMeasured(cells []servebench.CellResult) int {
	n := 0
	for i := range cells {
		if !cells[i].Skipped {
			n++
		}
	}
	return n
}

// ---- use cases ----

func (b *builder) sectionUseCases() {
	if len(b.res.Capacity) == 0 {
		b.add("use-case-guidance", "Use Case Guidance", 1,
			missing("No capacity analysis in this run: use cases were disabled (--use-cases none) or the run stopped before them. Run with --use-cases default to fill this section."))
		return
	}
	t := &Table{Header: []string{"USE CASE", "TTFT THRESHOLD", "SPEED THRESHOLD", "CAPACITY", "ANALYSIS"}}
	for i, cr := range b.res.Capacity {
		v := b.rep.Capacity[i]
		ttft, speed := thresholdColumns(cr.Thresholds)
		t.Rows = append(t.Rows, []string{useCaseHeading(cr), ttft, speed, v.LimitLabel, v.Analysis})
	}
	b.add("use-case-guidance", "Use Case Guidance", 1,
		para("The table maps this configuration's measured performance to common deployment scenarios. A capacity limit is the largest concurrency at which every threshold of the use case still holds (on the %s unless a use case says otherwise). Details and charts are in Capacity Analysis.", statName(b.res.Capacity[0].Statistic)),
		tableB(t),
		para("The limits are conservative: beyond them the system keeps working, with slower responses that may still suit a particular application."))
}

func statName(s servebench.Statistic) string {
	if s == "" || s == servebench.StatMean {
		return "mean"
	}
	return string(s)
}

func useCaseTitle(cr servebench.CapacityResult) string {
	if cr.Title != "" {
		return cr.Title
	}
	return cr.UseCase
}

func useCaseHeading(cr servebench.CapacityResult) string {
	return fmt.Sprintf("%s (%s Context)", useCaseTitle(cr), ctxLabel(cr.ContextTokens))
}

// thresholdColumns writes the TTFT and speed columns of the guidance table.
func thresholdColumns(t servebench.Thresholds) (ttft, speed string) {
	var a, s []string
	if t.TTFTSecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricTTFT, *t.TTFTSecondsMax))
	}
	if t.E2ELatencySecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricE2ELatency, *t.E2ELatencySecondsMax)+" e2e")
	}
	if t.FirstContentSecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricFirstContent, *t.FirstContentSecondsMax)+" to first answer")
	}
	if t.GenerationSpeedTPSMin != nil {
		s = append(s, fmtThreshold(capacity.MetricGenerationSpeed, *t.GenerationSpeedTPSMin))
	}
	if t.ITLSecondsMax != nil {
		s = append(s, termITL+" "+fmtThreshold(capacity.MetricITL, *t.ITLSecondsMax))
	}
	ttft, speed = strings.Join(a, ", "), strings.Join(s, ", ")
	if ttft == "" {
		ttft = "N/A"
	}
	if speed == "" {
		speed = "N/A"
	}
	return
}

// ---- performance sections ----

func (b *builder) noSweep(id, title string) bool {
	if b.sweep.empty() && b.man.Plan.Sessions != nil {
		b.add(id, title, 1, missing("This run measured multi-turn sessions instead of the context × concurrency grid: see Prompt Caching and the Serving Benchmark Summary."))
		return true
	}
	if b.sweep.empty() && len(b.workloadCells()) > 0 {
		b.add(id, title, 1, missing("This run measured request rates or replayed a dataset, not a grid of context lengths × concurrency levels, so this view has nothing to chart: the Request-Rate Sweep or Dataset Replay section and the summary tables show every measured cell."))
		return true
	}
	if b.sweep.empty() {
		b.add(id, title, 1, missing("No sweep cell completed a request, so there is nothing to chart. Check the notes below for failures, then rerun (servebench run --resume RUN_DIR completes missing cells)."))
		return true
	}
	return false
}

func (b *builder) sectionThroughput() {
	const id, title = "system-throughput", "System Throughput"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-throughput", title, "Average system throughput", "output tok/s", 1, valThroughput)
	t := &Table{Header: []string{"CONDITION", "THROUGHPUT"}}
	pk, pv := b.peak()
	t.Rows = append(t.Rows, []string{"Peak (" + condition(pk) + ")", fmtTPS(pv)})
	maxN := g.concs[len(g.concs)-1]
	mid := g.ctxs[len(g.ctxs)/2]
	longest := g.ctxs[len(g.ctxs)-1]
	for _, x := range uniqueInts(mid, longest) {
		if c := g.at(x, maxN); c != nil && c != pk {
			t.Rows = append(t.Rows, []string{condition(c), fmtTPS(c.SystemOutputThroughputTPS)})
		}
	}
	perHour := pv * 3600
	blocks := []Block{
		para("Aggregate token generation across all concurrent requests: output tokens produced inside the measured window divided by the window's length. Input tokens processed during prefill are excluded."),
		chartB(ch), tableB(t),
		para("At peak throughput (%s), this configuration produces approximately %s tokens per hour. This matters for batch workloads such as document processing, synthetic data generation or offline analysis.", condition(pk), fmtLarge(perHour))}
	if c := stats.HigherOffGrid(b.res.Cells); c != nil {
		blocks = append(blocks, para("Peak throughput is the highest of the sweep's cells, which share one output length (%s) so that runs compare like with like. A cell of another shape ran faster: %s %s, with %s per request, measured by the %s; its output length and load were not the sweep's, so it is not the peak.",
			counted(fmt.Sprint(pk.OutputTokens), "token"), fmtTPS(c.SystemOutputThroughputTPS), peakWhere(c, false), counted(fmt.Sprint(c.OutputTokens), "output token"), offGridWhat(c)))
	}
	b.add(id, title, 1, blocks...)
}

// offGridWhat names the part of the plan that measured an off-grid cell (from its load mode
// and scenario where results from before cells named their kind leave Kind empty).
func offGridWhat(c *servebench.CellResult) string {
	switch {
	case c.Kind == servebench.KindCapacity, c.Kind == "" && c.LoadMode == servebench.ModeSustained && c.Scenario != sweepScenario:
		return "capacity search of use case " + c.Scenario
	case c.Kind == servebench.KindScenario, c.Kind == "" && c.LoadMode == servebench.ModeDedicated && c.Scenario != sweepScenario:
		return "dedicated scenario " + c.Scenario
	case c.Kind != "":
		return "plan's " + string(c.Kind) + " cells"
	}
	return "plan's " + c.Scenario + " cells"
}

func uniqueInts(v ...int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range v {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// speedBand names the speed experience scale band of v tok/s.
func speedBand(v float64) string {
	switch {
	case v < 15:
		return "slow"
	case v < 25:
		return "acceptable"
	case v <= 50:
		return "fast"
	}
	return "very fast"
}

// ttftBand names the responsiveness scale band of v seconds.
func ttftBand(v float64) string {
	switch {
	case v < 0.5:
		return "feels instant"
	case v < 2:
		return "feels responsive"
	case v < 5:
		return "noticeable but still acceptable"
	case v <= 10:
		return "feels slow"
	}
	return "can be frustrating"
}

func (b *builder) sectionSpeed() {
	const id, title = "generation-speed", "Per-User Generation Speed"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-speed", title, "Average per-user generation speed", "tok/s per user", 1, valSpeed)
	scale := &Table{Caption: "How fast is this?", Header: []string{"SPEED", "USER EXPERIENCE"}, Rows: [][]string{
		{"< 15 tok/s", "Slow; may be slower than reading speed"},
		{"15–25 tok/s", "Acceptable; keeps pace with reading"},
		{"25–50 tok/s", "Fast; exceeds reading speed"},
		{"> 50 tok/s", "Very fast; text appears nearly instantly"},
	}}
	blocks := []Block{
		para("Token generation rate experienced by each user, also called decode speed: (output tokens − 1) / (last token time − first token time). As concurrency grows, per-user speed falls because the GPU is shared."),
		chartB(ch), tableB(scale),
	}
	lowC, lowV := g.extreme(false, valSpeed)
	if lowC != nil {
		var verdict string
		switch speedBand(lowV) {
		case "very fast":
			verdict = "this configuration stays very fast across all tested scenarios"
		case "fast":
			verdict = "this configuration stays above reading speed across all tested scenarios"
		case "acceptable":
			verdict = "this configuration stays at acceptable speeds across all tested scenarios"
		default:
			verdict = "this configuration slows below reading speed (under 15 tok/s) in the most demanding scenarios"
		}
		s := fmt.Sprintf("At %s (the lowest measured point: %s context, %s), %s.", fmtTPS(lowV), ctxLabel(lowC.ContextTokens), capacity.Requests(lowC.Concurrency), verdict)
		if lo, _ := b.singleEnds(); lo != nil {
			s += fmt.Sprintf(" Single-user performance at %s context reaches %s.", ctxLabel(lo.ContextTokens), fmtSpeed(lo))
		}
		blocks = append(blocks, para("%s", s))
	} else {
		blocks = append(blocks, missing("No cell had a measurable generation speed (it needs successful requests with at least two output tokens)."))
	}
	b.add(id, title, 1, blocks...)
}

func (b *builder) sectionTTFT() {
	const id, title = "ttft", "Time to First Token"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	ch := g.chart("chart-ttft", title, "Average time to first token", "seconds", 3, valTTFT)
	scale := &Table{Caption: "How responsive is this?", Header: []string{"TTFT", "USER EXPERIENCE"}, Rows: [][]string{
		{"< 500ms", "Feels instant"},
		{"500ms–2s", "Feels responsive"},
		{"2–5s", "Noticeable but still acceptable"},
		{"5–10s", "Feels slow; generally acceptable at higher context lengths"},
		{"> 10s", "Can be frustrating; users may retry or abandon"},
	}}
	blocks := []Block{
		para("Time from sending the request to the first token (content, reasoning or tool call) arriving: the primary measure of perceived responsiveness. TTFT has two parts: queue wait (waiting for the GPU, grows with concurrency) and prefill (processing the prompt, grows with context length)."),
		chartB(ch), tableB(scale),
	}
	best, bv := g.extreme(false, valTTFT)
	worst, wv := g.extreme(true, valTTFT)
	if best != nil {
		blocks = append(blocks, para("The fastest TTFT was %s (%s context, %s; %s); the slowest was %s (%s context, %s; %s).",
			fmtDur(bv), ctxLabel(best.ContextTokens), capacity.Requests(best.Concurrency), ttftBand(bv),
			fmtDur(wv), ctxLabel(worst.ContextTokens), capacity.Requests(worst.Concurrency), ttftBand(wv)))
	}
	if b.man.Plan.Sweep.SharedPrefix > 0 {
		blocks = append(blocks, note(fmt.Sprintf("About caching: prompts in this run share a %s-token prefix, so the server may serve part of every prompt from its prefix cache; TTFT here is better than for fresh context of the same length.", b.man.Plan.Sweep.SharedPrefix)))
	} else if len(g.ctxs) > 1 {
		small, large := ctxLabel(g.ctxs[0]), ctxLabel(g.ctxs[len(g.ctxs)-1])
		blocks = append(blocks, note(fmt.Sprintf("About caching: %s With prompt caching in production only new tokens need prefill: a %s conversation that adds %s of new context would see a TTFT close to the %s results above, not the %s ones. For workloads that build context incrementally (chatbots, coding assistants, multi-turn agents), cached TTFT is much lower.", b.freshClaim(), large, small, small, large)))
	} else {
		blocks = append(blocks, note(fmt.Sprintf("About caching: %s With prompt caching in production only new tokens need prefill, so a conversation that builds its context incrementally sees a TTFT set by the new tokens of each turn, not by the whole %s context.", b.freshClaim(), ctxLabel(g.ctxs[0]))))
	}
	if n := b.contaminated(); n > 0 {
		blocks = append(blocks, note(fmt.Sprintf("Warning: the server reported prefix-cache hits in %s although caching was not intended; their TTFTs may be optimistic (see Notes).", plural(n, "cell"))))
	}
	b.add(id, title, 1, blocks...)
}

// freshClaim states what the run's data say about prompt caching when every prompt was meant
// to be unique: checked against the server's prefix-cache counters where cells report them.
func (b *builder) freshClaim() string {
	reporting, hits := 0, 0
	for _, c := range b.res.Cells {
		if c.CacheHitTokens != nil && !c.Skipped {
			reporting++
			if *c.CacheHitTokens > 0 {
				hits++
			}
		}
	}
	switch {
	case reporting == 0:
		return "every prompt here was meant to be fresh (a unique marker starts each one), but the server reports no prefix-cache counters, so this could not be checked; read these as worst-case TTFTs."
	case hits == 0:
		return fmt.Sprintf("every prompt here is fresh: a unique marker starts each one, and the server's prefix-cache counters show no hit in any of the %s that report them; these are worst-case TTFTs.", plural(reporting, "cell"))
	}
	return fmt.Sprintf("every prompt here was meant to be fresh (a unique marker starts each one), yet the server's counters show prefix-cache hits in %s of %d (see the warning below); the other cells are worst-case TTFTs.", plural(hits, "cell"), reporting)
}

func (b *builder) contaminated() int {
	n := 0
	for _, c := range b.res.Cells {
		if c.CacheContaminated {
			n++
		}
	}
	return n
}

// unavailable returns the distinct reasons the cells give for field being null.
func (b *builder) unavailable(field string) string {
	seen := map[string]bool{}
	var rs []string
	for _, c := range b.res.Cells {
		if r, ok := c.Unavailable[field]; ok && !seen[r] {
			seen[r] = true
			rs = append(rs, r)
		}
	}
	sort.Strings(rs)
	return strings.Join(rs, "; ")
}

func (b *builder) sectionQueue() {
	const id, title = "queue-wait", "Queue Wait Times"
	intro := para("Time a request waits at the server for GPU availability before prefill starts, as the server reports it. Queue wait is part of TTFT; breaking it out tells GPU saturation (high queue wait) from context processing (high prefill time).")
	if b.sweep.empty() || !b.sweep.has(valQueue) {
		why := b.unavailable("queue_wait_seconds")
		if why == "" {
			why = "no cell reported it"
		}
		b.add(id, title, 1, intro, missing(fmt.Sprintf("Queue wait was not measured (%s). It needs per-request server timings or the server's Prometheus metrics: pass --metrics-url (e.g. http://HOST:8000/metrics) for vLLM, SGLang, TGI or TensorRT-LLM.", why)))
		return
	}
	g := b.sweep
	ch := g.chart("chart-queue", title, "Average queue wait", "seconds", 3, valQueue)
	var s strings.Builder
	if len(g.concs) > 0 && g.concs[0] == 1 {
		var mx float64
		for _, x := range g.ctxs {
			if c := g.at(x, 1); c != nil && c.QueueWaitSeconds != nil && c.QueueWaitSeconds.Mean > mx {
				mx = c.QueueWaitSeconds.Mean
			}
		}
		where := " regardless of context length"
		if len(g.ctxs) == 1 {
			where = ""
		}
		switch {
		case mx < 0.0005:
			fmt.Fprintf(&s, "At a single request, queue wait is effectively zero (under 1ms)%s. ", where)
		case mx < 0.05:
			fmt.Fprintf(&s, "At a single request, queue wait is effectively zero (at most %s)%s. ", fmtMS(mx), where)
		default:
			fmt.Fprintf(&s, "Even at a single request, queue wait reaches %s. ", fmtDur(mx))
		}
	}
	wc, wv := g.extreme(true, valQueue)
	fmt.Fprintf(&s, "The longest queue wait, %s, occurs at %s with %s context. Rising queue times signal GPU saturation: requests wait for resources instead of being processed at once.", fmtDur(wv), capacity.Requests(wc.Concurrency), ctxLabel(wc.ContextTokens))
	b.add(id, title, 1, intro, chartB(ch), para("%s Source: %s.", s.String(), sources(g, func(c *servebench.CellResult) *servebench.ServerValue { return c.QueueWaitSeconds })),
		note("Interpretation: queue wait and prefill time are measured independently by the server and may not sum exactly to TTFT. Under heavy load, chunked prefill and preemptions make them overlap, so queue wait + prefill can exceed TTFT. Use queue wait for capacity planning and locating bottlenecks; use TTFT for the user's actual wait before streaming begins."))
}

func sources(g grid, f func(*servebench.CellResult) *servebench.ServerValue) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range g.ordered() {
		if v := f(c); v != nil && !seen[v.Source] {
			seen[v.Source] = true
			out = append(out, v.Source)
		}
	}
	return strings.Join(out, ", ")
}

func (b *builder) sectionPrefill() {
	const id, title = "prefill-speed", "Per-User Prefill Speed"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	val, label := valPrefill, "Average per-user prefill speed"
	blocks := []Block{para("Rate at which the server processes a request's prompt before generating: mean input tokens / mean server-side prefill time. It sets the non-queue part of TTFT.")}
	if !g.has(valPrefill) {
		val, label = valEffPrefill, "Effective prefill speed (includes queueing)"
		why := b.unavailable("prefill_speed_tps")
		if why == "" {
			why = "the server reported no prefill timings"
		}
		blocks = append(blocks, missing(fmt.Sprintf("Server-side prefill speed is unavailable (%s); pass --metrics-url or use a server that reports per-request timings. Shown instead: the effective prefill speed, mean(input tokens / TTFT), which includes queueing and so understates the GPU's prefill rate under load.", why)))
	}
	ch := g.chart("chart-prefill", title, label, "tok/s", 0, val)
	t := &Table{Header: []string{"CONCURRENT REQUESTS", "PEAKS AT", "PEAK SPEED"}}
	declines := 0
	for _, n := range g.concs {
		var best *servebench.CellResult
		var bv float64
		for _, x := range g.ctxs {
			if c := g.at(x, n); c != nil {
				if v, ok := val(c); ok && (best == nil || v > bv) {
					best, bv = c, v
				}
			}
		}
		if best == nil {
			continue
		}
		longest := 0
		for _, x := range g.ctxs {
			if c := g.at(x, n); c != nil {
				if _, ok := val(c); ok {
					longest = x
				}
			}
		}
		if best.ContextTokens != longest {
			declines++
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(n), ctxLabel(best.ContextTokens) + " context", fmtInt(int(bv+0.5)) + " tok/s"})
	}
	blocks = append(blocks, chartB(ch), tableB(t))
	switch {
	case len(g.ctxs) == 1:
		blocks = append(blocks, para("With one context length measured (%s), this run cannot show how prefill speed changes with context; measure several (--contexts 1k,8k,32k) to see where it peaks.", ctxLabel(g.ctxs[0])))
	case declines > 0:
		blocks = append(blocks, para("At %d of %d concurrency levels, prefill speed peaks before the longest measured context and then declines as attention over more context adds work. Such a peak reflects GPU saturation (compute or memory bandwidth) or engine settings such as chunked-prefill limits, which cap the tokens processed per forward pass.", declines, len(t.Rows)))
	default:
		at := "at every concurrency level"
		if len(t.Rows) == 1 {
			at = "at the one concurrency level measured"
		}
		blocks = append(blocks, para("Prefill speed still rises at the longest measured context %s: the GPU is not yet saturated by prefill in this range.", at))
	}
	b.add(id, title, 1, blocks...)
}

func (b *builder) sectionITL() {
	const id, title = "itl", "Inter-Token Latency"
	if b.noSweep(id, title) {
		return
	}
	g := b.sweep
	blocks := []Block{para("Two numbers describe streaming. %s is the time per generated token: decode time / (output tokens − 1), vLLM's TPOT; it sets generation speed. The %s is the time between consecutive stream events, which is what a user sees: %s. The two are equal when every event carries one token; with speculative decoding or multi-token chunks the %s is the longer one.", termITL, termChunkGap, perceptualMarks, termChunkGap),
		chartB(g.chart("chart-itl", termITL, "Average "+termITL, "ms", 1, valITLms))}
	lo, _ := b.singleEnds()
	if wc, wv := g.extreme(true, valITLms); wc != nil {
		s := ""
		switch bc, bv := g.extreme(false, valITLms); {
		case lo != nil:
			itl := fmtMS(lo.ITLSeconds.Mean)
			if lo.ITLSeconds.Count == 0 {
				itl = unknownWhy(lo)
			}
			s = fmt.Sprintf("At a single request and %s context, %s is %s. ", ctxLabel(lo.ContextTokens), termITL, itl)
			if lo != wc {
				s += fmt.Sprintf("The highest was %s at %s context with %s.", fmtMS(wv/1000), ctxLabel(wc.ContextTokens), capacity.Requests(wc.Concurrency))
			}
		case bc != wc:
			s = fmt.Sprintf("%s ranges from %s (%s) to %s (%s).", termITL, fmtMS(bv/1000), condition(bc), fmtMS(wv/1000), condition(wc))
		default:
			s = fmt.Sprintf("%s is %s (%s).", termITL, fmtMS(wv/1000), condition(wc))
		}
		blocks = append(blocks, para("%s", strings.TrimSpace(s)))
	}
	if g.has(valChunkGapMS) {
		gaps := g.chart("chart-chunk-gap", upperFirst(termChunkGap), "Average "+termChunkGap+" (the time between stream events, what users see)", "ms", 1, valChunkGapMS)
		gaps.Thresholds = perceptualThresholds()
		blocks = append(blocks, chartB(gaps))
		bc, bv := g.extreme(false, valChunkGapMS)
		wc, wv := g.extreme(true, valChunkGapMS)
		if bc == wc {
			blocks = append(blocks, para("The %s is %s (%s), which %s.", termChunkGap, fmtMS(wv/1000), condition(wc), perceivedAs(wv)))
		} else {
			blocks = append(blocks, para("The %s users see ranges from %s (%s) to %s (%s); at its longest, streaming %s.", termChunkGap, fmtMS(bv/1000), condition(bc), fmtMS(wv/1000), condition(wc), perceivedAs(wv)))
		}
	}
	var tpc float64
	for _, c := range g.ordered() {
		if c.TokensPerChunk > tpc {
			tpc = c.TokensPerChunk
		}
	}
	if tpc > 1.05 {
		blocks = append(blocks, note(fmt.Sprintf("Stream events carried up to %.2f tokens each (speculative decoding or multi-token chunks): %s is lower than the %s, so judge smoothness by the %s.", tpc, termITL, termChunkGap, termChunkGap)))
	}
	b.add(id, title, 1, blocks...)
}

func (b *builder) sectionScaling() {
	const id, title = "scaling-efficiency", "Scaling Efficiency"
	intro := para("Share of ideal linear scaling achieved: throughput(N) / (N × throughput(1)) at the same context. 100%% means N requests get N times the single-request throughput, with no per-user slowdown.")
	if b.sweep.empty() || !b.sweep.has(valEff) {
		b.add(id, title, 1, intro, missing("Scaling efficiency was not computed: it needs concurrency 1 measured at the same context (add 1 to --concurrency)."))
		return
	}
	g := b.sweep
	ch := g.chart("chart-scaling", title, "Scaling efficiency (%)", "%", 0, valEff)
	maxN := g.concs[len(g.concs)-1]
	var lo, hi *servebench.CellResult
	for _, x := range g.ctxs {
		if c := g.at(x, maxN); c != nil && c.ScalingEfficiency != nil {
			if lo == nil || *c.ScalingEfficiency < *lo.ScalingEfficiency {
				lo = c
			}
			if hi == nil || *c.ScalingEfficiency > *hi.ScalingEfficiency {
				hi = c
			}
		}
	}
	blocks := []Block{intro, chartB(ch)}
	if lo != nil && lo == hi {
		blocks = append(blocks, para("At %d concurrent requests, scaling efficiency is %s (%s context). High efficiency at a target concurrency means headroom; sharply dropping efficiency signals diminishing returns.",
			maxN, fmtPct0(*lo.ScalingEfficiency), ctxLabel(lo.ContextTokens)))
	} else if lo != nil {
		blocks = append(blocks, para("At %d concurrent requests, scaling efficiency ranges from %s (%s context) down to %s (%s context). High efficiency at a target concurrency means headroom; sharply dropping efficiency signals diminishing returns.",
			maxN, fmtPct0(*hi.ScalingEfficiency), ctxLabel(hi.ContextTokens), fmtPct0(*lo.ScalingEfficiency), ctxLabel(lo.ContextTokens)))
	}
	b.add(id, title, 1, blocks...)
}

func (b *builder) sectionPower() {
	const id, title = "power", "Power and Cost"
	intro := para("GPU power draw and energy over each cell's measured window, for operating cost, cooling and power budgeting.")
	if b.sweep.empty() || !b.sweep.has(valPower) {
		why := b.unavailable("gpu_power_watts")
		if why == "" {
			why = "no GPU telemetry was recorded"
		}
		b.add(id, title, 1, intro, missing(fmt.Sprintf("Power was not measured (%s). Pass --gpu nvml (local GPUs, cgo build), --gpu dcgm=URL (a DCGM exporter) or --gpu nvidia-smi.", why)))
		return
	}
	g := b.sweep
	ch := g.chart("chart-power", title, "Average GPU power draw", "watts", 0, valPower)
	pc, pv := g.extreme(true, valPeakPower)
	price := b.md.ElectricityUSDPerKWh
	blocks := []Block{intro, chartB(ch)}
	s := fmt.Sprintf("The highest power draw observed was %.0fW at %s context with %s (%s, %s)", pv, ctxLabel(pc.ContextTokens), capacity.Requests(pc.Concurrency), plural(pc.GPUPowerWatts.GPUs, "GPU"), pc.GPUPowerWatts.Source)
	if price > 0 {
		s += fmt.Sprintf(", costing approximately %s/hour at %s/kWh. Budget for peak draw when planning power.", fmtUSD(stats.CostUSDPerHour(pv, price)), fmtUSD(price))
	} else {
		s += ". Costs are not computed: set metadata.electricity_usd_per_kwh in the plan."
	}
	blocks = append(blocks, para("%s", s))
	t := &Table{Header: []string{"CONDITION", "MEAN POWER", "PEAK POWER", "J / OUTPUT TOKEN", "COST / HOUR", "COST / 1M OUTPUT TOKENS"}}
	bestJ := (*servebench.CellResult)(nil)
	for _, c := range g.ordered() {
		if c.GPUPowerWatts == nil {
			continue
		}
		row := []string{condition(c), fmt.Sprintf("%.0fW", c.GPUPowerWatts.MeanWatts), fmt.Sprintf("%.0fW", c.GPUPowerWatts.PeakWatts), "—", "—", "—"}
		if e := c.EnergyJoules; e != nil {
			row[3] = fmtNum(e.JoulesPerOutputToken, 2) + " J"
			if e.ElectricityUSDPerKWh > 0 {
				row[4], row[5] = fmtUSD(e.CostUSDPerHour), fmtUSD(e.CostUSDPerMillionOutputTokens)
			}
			if bestJ == nil || e.JoulesPerOutputToken < bestJ.EnergyJoules.JoulesPerOutputToken {
				bestJ = c
			}
		}
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, tableB(t))
	if bestJ != nil {
		e := bestJ.EnergyJoules
		s := fmt.Sprintf("The most energy-efficient point is %s at %s J per output token", condition(bestJ), fmtNum(e.JoulesPerOutputToken, 2))
		if e.ElectricityUSDPerKWh > 0 {
			s += fmt.Sprintf(", %s per million output tokens in electricity", fmtUSD(e.CostUSDPerMillionOutputTokens))
		}
		blocks = append(blocks, para("%s (energy source: %s).", s, e.Source))
	} else if why := b.unavailable("energy_joules"); why != "" {
		blocks = append(blocks, missing("Energy per token was not computed ("+why+")."))
	}
	b.add(id, title, 1, blocks...)
}

// reproduce writes the command that made the run, as recorded in run.json (secrets already
// redacted there), and where its resolved plan is kept.
func (b *builder) reproduce() {
	cmd := b.man.Command
	if len(cmd) == 0 {
		return
	}
	args := make([]string, len(cmd))
	for i, a := range cmd {
		args[i] = shellQuote(a)
	}
	args[0] = "servebench" // whatever the binary was called (go run builds it under a temporary path)
	b.rep.Reproduce = strings.Join(args, " ") + " — the resolved plan, every setting with its default, is saved in this run's run.json under \"plan\"."
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// requestFloor writes the fewest measured requests a sustained cell of concurrency N takes
// (load.Sizing's floors), leaving out the terms that never bind: "2 × N", "max(10, 3 × N)".
func requestFloor(sw servebench.Sweep) string {
	terms := []string{}
	if sw.MinRequests > stats.MinRequestsPerSlot {
		terms = append(terms, fmt.Sprint(sw.MinRequests))
	}
	slot := max(sw.Rounds, stats.MinRequestsPerSlot)
	terms = append(terms, fmt.Sprintf("%d × N", slot))
	if len(terms) == 1 {
		return terms[0]
	}
	return "max(" + strings.Join(terms, ", ") + ")"
}
