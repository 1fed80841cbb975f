package report

import (
	"fmt"
	"strings"
	"time"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
	"github.com/servebench/servebench/stats"
)

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
	if b.imported() != nil {
		blocks = append(blocks, b.importedIntro())
	}
	if b.rep.Reproduce != "" {
		verb := "Reproduce"
		if b.imported() != nil {
			verb = "Imported with"
		}
		blocks = append(blocks, para("%s: %s", verb, b.rep.Reproduce))
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
	users := para("Throughout this report, \"concurrent requests\" means simultaneously active requests. For applications with natural user pauses (chat interfaces, coding assistants), one request slot typically serves several active users: %s here (see Capacity Planning).", slotUsers)
	if bases := b.sizingBases(); bases != "" {
		users = para("Throughout this report, \"concurrent requests\" means simultaneously active requests. Capacity Planning sizes each use case from what this run measured: %s (see Capacity Planning).", bases)
	}
	b.add("key-findings", "Key Findings", 2, tableB(kf), users)
}

// sizingBases says, in a run that measured populations of users, which limit Capacity Planning
// sized each use case from, in the sizing's own words (sizedFrom of each results' sizing row):
// "General Chatbot from the users' limit 30 (chat users, prompt cache); Code Completion from
// the cold-prompt limit × 4 (not searched in users)". "" in a run without populations (no
// row has a basis), where one request slot serves users per slot everywhere.
func (b *builder) sizingBases() string {
	sz := b.res.Sizing
	if sz == nil {
		return ""
	}
	var parts []string
	byUsers := false
	for _, u := range sz.UseCases {
		byUsers = byUsers || u.Basis != ""
		from := "not sized"
		if u.UsersPerReplica != nil {
			from = "from the " + b.sizedFrom(u, sz.UsersPerSlot)
		}
		parts = append(parts, useCaseTitle(b.capacityOf(u.UseCase))+" "+from)
	}
	if !byUsers {
		return ""
	}
	return strings.Join(parts, "; ")
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
	if b.imported() != nil {
		return b.importedParameters()
	}
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
			if x := ctxLabel(c.ContextTokens); c.Kind != servebench.KindDataset && !seen["c"+x] {
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

// requestFloor writes the fewest measured requests a sustained cell of concurrency N takes:
// the sweep's load.Sizing floors (cells.Sizing), as that one definition writes them
// (load.Sizing.MeasuredFloorText), e.g. "2 × N", "max(10, 3 × N)".
func requestFloor(sw servebench.Sweep) string {
	return cells.Sizing(sw, false).MeasuredFloorText()
}
