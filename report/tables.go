package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// measuredCells returns the measured cells by kind, then key (CellKey.Compare): the sweep's
// cells first, never interleaved with a scenario's or a capacity search's.
func (b *builder) measuredCells() []*servebench.CellResult {
	var out []*servebench.CellResult
	for i := range b.res.Cells {
		if c := &b.res.Cells[i]; measured(c) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, c *servebench.CellResult) int { return a.CellKey.Compare(c.CellKey) })
	return out
}

// cellLabel writes "sweep 8K c=4" for tables.
func cellLabel(c *servebench.CellResult) string {
	s := fmt.Sprintf("%s %s/%d c=%d", c.Scenario, ctxLabel(c.ContextTokens), c.OutputTokens, c.Concurrency)
	if c.RatePerSecond > 0 {
		s += fmt.Sprintf(" %g/s", c.RatePerSecond)
	}
	if c.Kind == servebench.KindSweep && c.LoadMode == servebench.ModeDedicated {
		s += " dedicated"
	}
	if c.Turn > 0 {
		s += fmt.Sprintf(" turn %d", c.Turn)
	}
	return s
}

func ms(v float64) string { return fmtNum(v*1000, 1) }

func (b *builder) sectionServeTable() {
	const id, title = "serve-summary", "Serving Benchmark Summary"
	cells := b.measuredCells()
	if len(cells) == 0 {
		b.add(id, title, 1, missing("No cell completed a request."))
		return
	}
	t := &Table{Header: []string{"CELL", "REQUESTS", "OUTPUT TOK/S", "TOTAL TOK/S", "PER-USER TOK/S", "TTFT MEAN / P99 (ms)", strings.ToUpper(termITL) + " MEAN / P99 (ms)", strings.ToUpper(termChunkGap) + " MEAN / P99 (ms)"}}
	for _, c := range cells {
		t.Rows = append(t.Rows, []string{cellLabel(c), fmt.Sprintf("%d/%d", c.RequestsSucceeded, c.RequestsTotal),
			fmtNum(c.SystemOutputThroughputTPS, 1), fmtNum(c.TotalThroughputTPS, 1), fmtMean(c.GenerationSpeedTPS, func(v float64) string { return fmtNum(v, 1) }),
			fmtMean(c.TTFTSeconds, ms) + " / " + fmtPctl(c, "ttft_seconds.p99", c.TTFTSeconds, c.TTFTSeconds.P99, ms),
			fmtMean(c.ITLSeconds, ms) + " / " + fmtPctl(c, "itl_seconds.p99", c.ITLSeconds, c.ITLSeconds.P99, ms),
			fmtMean(c.ChunkGapSeconds, ms) + " / " + fmtPctl(c, "chunk_gap_seconds.p99", c.ChunkGapSeconds, c.ChunkGapSeconds.P99, ms)})
	}
	b.add(id, title, 1,
		para("Every measured cell in the shape of vllm bench serve: output and total (input + output) token throughput, per-user generation speed, and latency means and 99th percentiles."),
		tableB(t),
		note("How the columns map to vLLM's: "+itlVersusChunkGap+" The "+termChunkGap+" exceeds "+termITL+" when events carry several tokens (speculative decoding)."))
}

func (b *builder) sectionPercentiles() {
	const id = "percentiles"
	cells := b.measuredCells()
	if len(cells) == 0 {
		b.add(id, "Full Percentile Tables", 1, missing("No cell completed a request."))
		return
	}
	b.add(id, "Full Percentile Tables", 1, para("Every measured cell: count, mean and percentiles over the successful measured requests (warm-up excluded). Percentiles interpolate linearly between closest ranks."))
	type metric struct {
		id, title, unit string
		get             func(*servebench.CellResult) servebench.Summary
		scale           float64
		dec             int
	}
	for _, m := range []metric{
		{"ttft", "TTFT", "ms", func(c *servebench.CellResult) servebench.Summary { return c.TTFTSeconds }, 1000, 1},
		{"itl", termITL, "ms", func(c *servebench.CellResult) servebench.Summary { return c.ITLSeconds }, 1000, 2},
		{"chunk-gap", "Chunk gap", "ms", func(c *servebench.CellResult) servebench.Summary { return c.ChunkGapSeconds }, 1000, 2},
		{"e2e", "End-to-end latency", "s", func(c *servebench.CellResult) servebench.Summary { return c.E2ELatencySeconds }, 1, 3},
		{"speed", "Generation speed", "tok/s", func(c *servebench.CellResult) servebench.Summary { return c.GenerationSpeedTPS }, 1, 1},
	} {
		t := &Table{Header: []string{"CELL", "N", "MEAN", "P50", "P90", "P95", "P99"}}
		for _, c := range cells {
			s := m.get(c)
			f := func(v float64) string { return fmtNum(v*m.scale, m.dec) }
			if s.Count == 0 {
				t.Rows = append(t.Rows, []string{cellLabel(c), "0", "—", "—", "—", "—", "—"})
				continue
			}
			t.Rows = append(t.Rows, []string{cellLabel(c), fmt.Sprint(s.Count), f(s.Mean), fmtOpt(s.P50, f), fmtOpt(s.P90, f), fmtOpt(s.P95, f), fmtOpt(s.P99, f)})
		}
		b.add("percentiles-"+m.id, fmt.Sprintf("%s (%s)", m.title, m.unit), 2, tableB(t))
	}
}

func (b *builder) sectionTelemetry() {
	const id, title = "telemetry", "Server and GPU Telemetry"
	if len(b.in.Samples) == 0 {
		b.add(id, title, 1, missing("No telemetry samples were recorded. Pass --metrics-url for the server's Prometheus metrics (running and waiting requests, KV-cache usage, preemptions) and --gpu for GPU utilisation, memory, power and temperature."))
		return
	}
	type agg struct {
		source, name string
		n            int
		min, max, s  float64
	}
	m := map[string]*agg{}
	var keys []string
	for _, s := range b.in.Samples {
		k := s.Source + "\x00" + s.Name
		a := m[k]
		if a == nil {
			a = &agg{source: s.Source, name: s.Name, min: math.Inf(1), max: math.Inf(-1)}
			m[k] = a
			keys = append(keys, k)
		}
		a.n++
		a.s += s.Value
		a.min = math.Min(a.min, s.Value)
		a.max = math.Max(a.max, s.Value)
	}
	sort.Strings(keys)
	t := &Table{Header: []string{"SOURCE", "NAME", "SAMPLES", "MIN", "MEAN", "MAX"}}
	for _, k := range keys {
		a := m[k]
		t.Rows = append(t.Rows, []string{a.source, a.name, fmt.Sprint(a.n), fmtNum(a.min, 2), fmtNum(a.s/float64(a.n), 2), fmtNum(a.max, 2)})
	}
	b.add(id, title, 1, para("Summary of the %s telemetry samples recorded during the run (telemetry.jsonl).", fmtInt(len(b.in.Samples))), tableB(t))
}

func (b *builder) sectionNotes() {
	notes := append([]string(nil), b.res.Notes...)
	var skippedOrder []string
	skipped := map[string][]string{}
	mismatches, retries, late, dropped, maxDev := 0, 0, 0, 0, 0
	byClass := map[servebench.ErrorClass]int{}
	byStatus := map[int]int{}
	var retryAfter *float64 // the longest Retry-After sent with a refusal (s)
	type reason struct{ field, why string }
	unavail := map[reason]int{}
	var contaminated, lied, unstreamed []string
	for _, c := range b.res.Cells {
		if n := c.Validity.Notes[servebench.ReasonServerInconsistent]; c.Validity.Has(servebench.ReasonServerInconsistent) {
			lied = append(lied, c.ID()+": "+n)
		}
		if n := c.Validity.Notes[servebench.ReasonNotStreamed]; c.Validity.Has(servebench.ReasonNotStreamed) {
			unstreamed = append(unstreamed, c.ID()+": "+n)
		}
		if c.Skipped {
			if _, ok := skipped[c.Note]; !ok {
				skippedOrder = append(skippedOrder, c.Note)
			}
			skipped[c.Note] = append(skipped[c.Note], c.ID())
			continue
		}
		mismatches += c.LengthMismatches
		retries += c.Retries
		late += c.LateSends
		dropped += c.DroppedSends
		if c.InputTokensMaxDeviation > maxDev {
			maxDev = c.InputTokensMaxDeviation
		}
		for k, v := range c.ErrorsByClass {
			byClass[k] += v
		}
		for k, v := range c.ErrorsByHTTPStatus {
			byStatus[k] += v
		}
		if ra := c.RetryAfterMaxSeconds; ra != nil && (retryAfter == nil || *ra > *retryAfter) {
			retryAfter = ra
		}
		for f, why := range c.Unavailable {
			unavail[reason{f, why}]++
		}
		if c.CacheContaminated {
			hits := 0
			if c.CacheHitTokens != nil {
				hits = *c.CacheHitTokens
			}
			contaminated = append(contaminated, fmt.Sprintf("%s (%s cached tokens)", c.ID(), fmtInt(hits)))
		}
	}
	for _, why := range skippedOrder {
		ids := skipped[why]
		verb := "cells were"
		if len(ids) == 1 {
			verb = "cell was"
		}
		notes = append(notes, fmt.Sprintf("%d %s not run (%s): %s.", len(ids), verb, strings.Join(ids, ", "), strings.TrimSuffix(why, ".")))
	}
	if len(byClass) > 0 {
		var classes []string
		total := 0
		for k, v := range byClass {
			total += v
			if k == servebench.ErrHTTPStatus {
				// name what the statuses say (rate limited, overloaded), each with its status
				named := 0
				for st, n := range byStatus {
					classes = append(classes, fmt.Sprintf("%s: %d", servebench.HTTPStatusCause(st), n))
					named += n
				}
				if v -= named; v <= 0 {
					continue
				}
			}
			classes = append(classes, fmt.Sprintf("%s: %d", k, v))
		}
		sort.Strings(classes)
		notes = append(notes, fmt.Sprintf("%s failed, by class: %s. Failed requests are excluded from latency statistics and counted in the success rate.", plural(total, "request"), strings.Join(classes, ", ")))
		if n := byStatus[429]; n > 0 {
			notes = append(notes, fmt.Sprintf("The server rate limited %s (HTTP 429): a limit on requests in front of the model, not the model's capacity, refused them, and every capacity limit and success rate here is that limit's. Benchmark with a key or a deployment whose rate limit is above the load.", plural(n, "request")))
		}
		if n := byStatus[503]; n > 0 {
			notes = append(notes, fmt.Sprintf("The server refused %s as overloaded or unavailable (HTTP 503): its admission control turned them away rather than queueing them.", plural(n, "request")))
		}
		if retryAfter != nil {
			notes = append(notes, fmt.Sprintf("With its refusals the server asked the client to wait up to %s before trying again (Retry-After); a refused request is counted as failed, not retried.", fmtDur(*retryAfter)))
		}
	}
	if mismatches > 0 {
		if !b.man.Server.ForcesOutputLength {
			notes = append(notes, fmt.Sprintf("The server cannot force output length: %s stopped short of (or ran past) the requested output length. Their speeds use the actual token counts.", plural(mismatches, "request")))
		} else {
			notes = append(notes, fmt.Sprintf("%s returned a different output length than requested. Their speeds use the actual token counts.", plural(mismatches, "request")))
		}
	}
	if len(contaminated) > 0 {
		notes = append(notes, fmt.Sprintf("Prefix-cache hits were seen although caching was not intended in %s: %s. Their TTFTs may be optimistic; disable prefix caching on the server (e.g. vLLM --no-enable-prefix-caching) or check that nothing else sends the same prompts.", plural(len(contaminated), "cell"), strings.Join(contaminated, "; ")))
	}
	if len(lied) > 0 {
		notes = append(notes, fmt.Sprintf("The server claimed what cannot be true in %s (usage beyond max_tokens or beyond what its stream carried, negative counts, timings outside the request, another model): %s. No statistic uses those claims.", plural(len(lied), "cell"), strings.Join(lied, "; ")))
	}
	if len(unstreamed) > 0 {
		notes = append(notes, fmt.Sprintf("Responses arrived in one piece instead of as a stream in %s: %s. Something between client and server (a buffering proxy, compression) held them back; ITL and generation speed are unknown there, not zero.", plural(len(unstreamed), "cell"), strings.Join(unstreamed, "; ")))
	}
	if retries > 0 {
		notes = append(notes, fmt.Sprintf("%s transparently resent after the server closed a kept-alive connection before any byte was written.", plural(retries, "request")+wasWere(retries)))
	}
	if late > 0 || dropped > 0 {
		notes = append(notes, fmt.Sprintf("Open-loop schedule: %s sent late and %d could not be sent on time; the achieved rate is below the planned one.", plural(late, "request")+wasWere(late), dropped))
	}
	if maxDev > 0 {
		notes = append(notes, fmt.Sprintf("Input tokens (as the server counted them) deviated from the requested context by at most %s.", plural(maxDev, "token")))
	}
	var rs []string
	for r, n := range unavail {
		rs = append(rs, fmt.Sprintf("%s is unavailable in %s: %s.", r.field, plural(n, "cell"), r.why))
	}
	sort.Strings(rs)
	notes = append(notes, rs...)
	for _, cr := range b.res.Capacity {
		if cr.Note != "" && !cr.Skipped {
			notes = append(notes, fmt.Sprintf("%s: %s", useCaseTitle(cr), cr.Note))
		}
	}
	if len(notes) == 0 {
		b.add("notes", "Notes", 1, para("No anomalies: no failures, skipped cells, length mismatches, cache hits or missing server metrics."))
		return
	}
	t := &Table{Header: []string{"#", "NOTE"}}
	for i, n := range notes {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), n})
	}
	b.add("notes", "Notes", 1, para("Facts about this run that qualify the figures above."), tableB(t))
}

// Definitions are the methodology table: each metric's formula and unit, worded as the root
// package's doc comments (metrics.go, results.go) define them. The rules' constants (the
// confidence level, the window rule, the batches, the validity thresholds) are written from
// package stats, where they are defined, never as literals here.
var Definitions = []Field{
	{"Request start", "Just before the request is written; all times are offsets on one monotonic clock, read when an event's bytes arrive on the socket, before any JSON parsing."},
	{"ttft_seconds", "Start → first event carrying a non-empty content, reasoning or tool-call delta (s). Role-only chunks, keep-alive comments and empty deltas do not stop the clock."},
	{"write_seconds", "Start → the request's last byte handed to the kernel (s): the client's share of TTFT; ttft_seconds − write_seconds is the server's (its accept queue, its read of the request, queue, prefill) and the way back. connect_seconds, when a request opened its connection, came before the start."},
	{"first_content_seconds", "Start → first non-empty content delta, when reasoning came first; otherwise equal to TTFT (s)."},
	{"e2e_latency_seconds", "Start → last byte of the response (s)."},
	{"decode_seconds", "Last token-carrying event − first token-carrying event (s)."},
	{"itl_seconds", termITL + ": decode_seconds / (output_tokens − 1) (s per token; vLLM's TPOT). Needs at least two output tokens and a positive decode time."},
	{"generation_speed_tps", "(output_tokens − 1) / decode_seconds (tokens/s, per user). Needs at least two output tokens and a positive decode time."},
	{"output_tokens", "The server's usage.completion_tokens (or Ollama's eval_count); a client count of non-empty deltas only when the server gives no usage (output_tokens_source says which)."},
	{"chunk_gap_seconds", upperFirst(termChunkGap) + ": the gaps between consecutive token-carrying stream events (not tokens), pooled over a cell's successful requests; the first gap is second event − first event (s; vLLM's ITL). What a user sees: the perceptual marks judge the " + termChunkGap + " (" + perceptualMarks + ")."},
	{"tokens_per_chunk", "output_tokens / chunks (above 1 under speculative decoding or multi-token chunks)."},
	{"Percentiles", "Over the successful measured requests of a cell (warm-up excluded), linear interpolation between closest ranks (NumPy's \"linear\"): for sorted x[0..n−1] and q in [0,1], h = (n−1)·q, p = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋])."},
	{"success_rate", "requests_succeeded / requests_total over measured requests."},
	{"system_output_throughput_tps", "Output tokens produced inside the measured window / window length (tokens/s); a request straddling an edge of the window counts in proportion to its decode time inside it."},
	{"total_throughput_tps", "(Input + output tokens) processed inside the window / window length (tokens/s); input tokens count when their prefill completes (first token)."},
	{"request_throughput_rps", "Successful measured requests that ended inside the window / window length (requests/s)."},
	{"scaling_efficiency", "throughput(N) / (N × throughput(1)) at the same scenario, context and output length; null when concurrency 1 was not measured."},
	{"effective_prefill_speed_tps", "mean(input tokens / TTFT): includes queueing, always available."},
	{"queue_wait_seconds", "Server-reported time from arrival at the server to the start of prefill (s). From per-request server timings, averaged over the cell's measured requests, when the server returns them; otherwise Δ_sum/Δ_count of the server's Prometheus histogram between a scrape before and one after the cell, which covers every request of the cell, warm-up included (results.json gives the count covered as \"requests\")."},
	{"prefill_seconds", "Server-reported time from the start of prefill to the first token (s); same sources and rule as queue_wait_seconds, chosen independently for each."},
	{"prefill_speed_tps", "Mean input tokens / mean prefill_seconds (tokens/s per user)."},
	{"gpu_power_watts", "Mean = energy over the window / window length where an energy counter exists, otherwise the time-weighted mean of sampled power; peak = highest sample (W)."},
	{"energy_joules", "joules_per_output_token = Joules / output tokens produced in the window; cost_usd_per_hour = mean watts / 1000 × electricity price (USD/kWh); cost_usd_per_million_output_tokens = (Joules / 3.6e6 kWh) × price / output tokens × 1e6."},
	{"client_lag_seconds", "Per request: the time the read that delivered the first token returned in user space − the kernel's receive stamp of those bytes (s); how far behind the network the client was. Only with the kernel clock."},
	{"How sure: means", "Every mean (TTFT, " + termITL + ", end-to-end latency, speed) carries a " + confidence + " interval, ci95 in results.json: Student t, mean ± t(" + fmt.Sprintf("%g", round3((1+stats.Confidence)/2)) + ", n−1)·s/√n over the cell's successful measured requests, which treats them as independent draws. It is shown only from " + fmt.Sprint(stats.MinIntervalSamples) + " values (n<min in tables below that; results.json keeps it with its count): from fewer, the width is itself too uncertain to read (two close values make ±0%) and on skewed latencies the interval covers the mean less than 90% of the time."},
	{"How sure: throughput", fmt.Sprintf("Output and total throughput carry %s intervals by batch means: the window is cut into min(%d, ⌊window / (%d × mean end-to-end latency)⌋) equal batches, each batch's throughput is computed like the window's, and the interval is Student t over the batches (none under 2 batches). Shown only from %d successful measured requests in the cell, as a mean's (n<min below that).", confidence, stats.MaxBatches, stats.BatchLifetimes, stats.MinIntervalSamples)},
	{"How sure: percentiles", fmt.Sprintf("A percentile carries a distribution-free %s interval from order statistics (the ranks a Binomial(n, q) count allows at %s on each side; an end the sample cannot bound is left open). A percentile needs 1/(1−q) values before it is shown at all (p50: %d, p90: %d, p95: %d, p99: %d); below that it is withheld (n<min in tables, null in results.json) rather than read off one or two requests.",
		confidence, percent((1-stats.Confidence)/2), stats.MinSamples(0.50), stats.MinSamples(0.90), stats.MinSamples(0.95), stats.MinSamples(0.99))},
	{"Cell length", fmt.Sprintf("A sustained cell measures until its window spans at least %d × its mean end-to-end latency with at least %d × N measured requests, and its sweep floors (min_requests, rounds × N, min_duration) hold; then until the throughput and mean-TTFT intervals are within ±precision (default ±%s) or it reaches max_requests or a max_duration window, whichever comes first. A capacity level has no count floors: it stops as soon as its verdict is settled.",
		stats.MinWindowLifetimes, stats.MinRequestsPerSlot, percent(stats.DefaultRelHalfWidth))},
	{"Validity", fmt.Sprintf("Each cell is valid, low-confidence or invalid, with reasons: too-few-samples (fewer than %d successes, so the cell's intervals are not shown, n<min; or an interval wider than the precision aimed for; invalid below %d successes; a capacity-search level is measured to decide pass or fail and is judged on that verdict once it is settled at 95%%, its intervals shown as they are, from %d successes), window-too-short (invalid), unstable (the two halves of the window differ by more than %s in throughput or in mean TTFT), failures (over %s low-confidence, over %s invalid), cache-contaminated, and, where observed, server-restart, outage and client-bound; a planned cell that was skipped is invalid: not-measured.",
		stats.MinIntervalSamples, stats.MinSuccesses, stats.MinIntervalSamples, percent(stats.UnstableShift), percent(stats.FailuresLowConfidence), percent(stats.FailuresInvalid))},
	{"Capacity search", "Sequential: a level stops as soon as its verdict is settled at " + confidence + " (the interval of the use case's statistic lies wholly on one side of every threshold, or wholly on the failing side of one); the next level comes from a straight-line model of each metric through measured levels (per-user speed as time per token), and the search ends only when the limit passes and limit + 1 fails. limit_range gives the levels the data cannot tell apart; requests and server time spent are compared with a dense grid of every level."},
	{"Capacity limit", "The largest concurrency at which every threshold of a use case holds on its statistic: measured (limit passed, limit+1 failed), interpolated (~N, between two measured levels more than one apart, on the limiting metric), lower bound (N+, the ceiling still passed) or not viable (concurrency 1 already fails); does not fit when the use case's context and answer exceed the target's maximum model length (not measured)."},
}

func (b *builder) sectionMethodology() {
	if b.imported() != nil {
		b.add("methodology", "Methodology and Definitions", 1, b.importedMethodology()...)
		return
	}
	t := &Table{Header: []string{"METRIC", "DEFINITION"}}
	for _, d := range Definitions {
		t.Rows = append(t.Rows, []string{d.Label, d.Value})
	}
	tool := b.man.ToolVersion
	if tool == "" {
		tool = "unknown version"
	}
	blocks := []Block{para("Measured with servebench %s against %s (%s). Every per-request record is kept in requests.jsonl, so any figure here can be recomputed from the run folder.", tool, orDefault(b.rep.Run.Target, "an unnamed target"), orDefault(b.rep.Run.API, "openai-chat"))}
	if tb, ok := b.timingBlock(); ok {
		blocks = append(blocks, tb)
	}
	blocks = append(blocks, b.workersBlocks()...)
	b.add("methodology", "Methodology and Definitions", 1, append(blocks, tableB(t))...)
}

// workersBlocks say where a distributed run's load came from and how well the workers' clocks
// agreed with the coordinator's; none for a local run.
func (b *builder) workersBlocks() []Block {
	ws := b.res.Workers
	if len(ws) == 0 {
		return nil
	}
	drift, unc := stats.ClockAgreement(ws)
	t := &Table{Header: []string{"WORKER", "HOST", "REQUESTS", "CLOCK OFFSET", "MEASUREMENTS", "LOST"}}
	lost := 0
	for _, w := range ws {
		off := "—"
		if n := len(w.Clock); n > 0 {
			off = fmt.Sprintf("%+.3f ms ± %.3f ms", 1e3*w.Clock[n-1].OffsetSeconds, 1e3*w.Clock[n-1].UncertaintySeconds)
		}
		gone := "—"
		if w.LostAt != nil {
			lost++
			gone = w.LostAt.UTC().Format("15:04:05") + " UTC: " + servebench.TerminalText(w.LostCause, 80, false)
		}
		t.Rows = append(t.Rows, []string{servebench.TerminalText(w.Name, 64, false), servebench.TerminalText(w.Host, 64, false),
			fmt.Sprint(w.Requests), off, fmt.Sprint(len(w.Clock)), gone})
	}
	text := fmt.Sprintf("Distributed run: the load came from %d worker(s) (servebench worker), coordinated by this run; every record names its worker. "+
		"A request's own times (start, first token, end) were taken on the one worker that sent it. Windows and throughput need every worker's records on one axis: "+
		"the coordinator measured each worker's clock offset NTP-style when it joined and before every cell, and placed its records with it. "+
		"The clocks agreed within ±%.3f ms (the largest uncertainty of a measurement), and no worker's offset moved by more than %.3f ms between measurements. "+
		"Percentiles and intervals are computed over the union of every worker's records.", len(ws), 1e3*unc, 1e3*drift)
	if lost > 0 {
		text += fmt.Sprintf(" %d worker(s) were lost during the run: see Notes for the cells measured again.", lost)
	}
	return []Block{para("%s", text), tableB(t)}
}

// timingBlock says how responses were timed and how the tool knows it kept up; false for runs
// that did not record their clock.
func (b *builder) timingBlock() (Block, bool) {
	bound := 0
	for _, c := range b.res.Cells {
		if c.Validity.Has(servebench.ReasonClientBound) {
			bound++
		}
	}
	prio := ""
	switch {
	case len(b.res.Workers) > 0: // the coordinator sent no requests: the workers' priorities count
		prio = " " + workersPriority(b.res.Workers)
	case b.man.ClientPriority != "":
		prio = " The client ran at scheduling priority " + b.man.ClientPriority + "."
	}
	switch b.man.ClockSource {
	case servebench.ClockKernel:
		return para("Timing: every response read was stamped by the kernel when its bytes reached the socket (Linux receive timestamps, mapped onto the run's monotonic clock at each read), so the client's own scheduling delays do not enter the figures. Every response, first token included, is read by one reader for all streams that wakes for each arrival and reads it with one system call, the same for every server (the built-in simulator included); servebench's threads ask the kernel for its shortest scheduling slice, so a woken read takes the CPU from a longer-running task at once. Request start is stamped just before the request's first byte is written, and each cell's connections are opened before its measured phase. Whether the client kept up is measured in every cell (results.json, cells[].client): the client lag per request (read time − kernel stamp), first tokens that share their stamp with later events (read late, so stamped late by about one gap between events), and the Go scheduler's latency over the cell. A cell where any of these could move a figure by more than 1 ms is marked client-bound: %d cell(s) in this run.%s", bound, prio), true
	case servebench.ClockUser:
		return para("Timing: responses were stamped with the time each read returned in user space (kernel receive timestamps were unavailable), so delays of the client itself enter the figures. The Go scheduler's latency over each cell (results.json, cells[].client) bounds them; a cell where it exceeded 1 ms at p99 is marked client-bound: %d cell(s) in this run.%s", bound, prio), true
	}
	return Block{}, false
}

// workersPriority says at which scheduling priority a distributed run's workers sent their
// requests, as each reported it (escaped): one sentence when they all ran alike, else each
// priority with the workers that ran at it.
func workersPriority(ws []servebench.Worker) string {
	var order []string
	names := map[string][]string{}
	for _, w := range ws {
		p := servebench.TerminalText(w.Priority, 200, false)
		if p == "" {
			p = "not reported"
		}
		if names[p] == nil {
			order = append(order, p)
		}
		names[p] = append(names[p], servebench.TerminalText(w.Name, 64, false))
	}
	if len(order) == 1 {
		return "Every worker ran at scheduling priority " + order[0] + "."
	}
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = p + " (" + strings.Join(names[p], ", ") + ")"
	}
	return "The workers ran at different scheduling priorities: " + strings.Join(parts, "; ") + "."
}

// confidence is the confidence level of every interval, as a reader reads it: "95%".
var confidence = percent(stats.Confidence)

// percent writes a fraction of a rule as a percentage: 0.05 → "5%", 0.025 → "2.5%".
func percent(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*1e4)/1e2) }

// round3 rounds to three decimals (a quantile written in a formula: 0.975).
func round3(f float64) float64 { return math.Round(f*1e3) / 1e3 }
