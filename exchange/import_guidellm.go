package exchange

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench"
)

// importGuideLLM reads GuideLLM's benchmarks.json, report schema v1 (≤ 0.6: args) or v2
// (≥ 0.7: config.spec); the per-benchmark metrics tree is the same in both. Each benchmark (a
// load stage of the profile) is one cell.
func importGuideLLM(d *doc, vals []any) imported {
	var im imported
	if len(vals) != 1 {
		d.fail("the file", "holds %d JSON values, want one object (benchmarks.json)", len(vals))
		return im
	}
	top := d.obj(vals[0], "the file", true)
	if top == nil {
		return im
	}
	if md := d.obj(top["metadata"], "metadata", false); md != nil {
		im.toolVersion = d.str(md, "guidellm_version", "metadata")
	}
	// the run's server and model: v2 config.spec.backend, v1 args
	if cfg := d.obj(top["config"], "config", false); cfg != nil {
		if spec := d.obj(cfg["spec"], "config.spec", false); spec != nil {
			if be := d.obj(spec["backend"], "config.spec.backend", false); be != nil {
				im.target = d.str(be, "target", "config.spec.backend")
				im.model = d.str(be, "model", "config.spec.backend")
				if f := d.str(be, "request_format", "config.spec.backend"); f != "" && f != "/v1/chat/completions" {
					im.api = servebench.APICompletions
				}
			}
		}
	} else if args := d.obj(top["args"], "args", false); args != nil {
		im.target = d.str(args, "target", "args")
		im.model = d.str(args, "model", "args")
	}
	bs := d.list(top["benchmarks"], "benchmarks")
	if top["benchmarks"] == nil {
		d.fail("benchmarks", "missing: GuideLLM writes one entry per load stage")
	}
	for i, v := range bs {
		path := fmt.Sprintf("benchmarks[%d]", i)
		b := d.obj(v, path, true)
		if b == nil {
			continue
		}
		if c, ok := guidellmCell(d, b, path, &im); ok {
			im.cells = append(im.cells, c)
		}
	}
	return im
}

// guidellmCell reads one benchmark (load stage).
func guidellmCell(d *doc, b map[string]any, path string, im *imported) (servebench.CellResult, bool) {
	var c servebench.CellResult
	tool := FormatGuideLLM.Tool()
	unav := map[string]string{}
	m := d.obj(b["metrics"], path+".metrics", true)
	if m == nil {
		return c, false
	}
	mp := path + ".metrics"
	totals := d.obj(m["request_totals"], mp+".request_totals", true)
	succ, ok1 := d.count(totals, "successful", mp+".request_totals", true)
	errd, ok2 := d.count(totals, "errored", mp+".request_totals", true)
	incomplete, _ := d.count(totals, "incomplete", mp+".request_totals", false)
	dur, okDur := d.num(b, "duration", path, true)
	if okDur && dur == 0 {
		d.fail(path+".duration", "is 0: a benchmark that took no time measured nothing")
		okDur = false
	}
	// the benchmark's strategy: v2 config.strategy; v1 args-era files have the same block
	cfg := d.obj(b["config"], path+".config", false)
	var strat map[string]any
	if cfg != nil {
		strat = d.obj(cfg["strategy"], path+".config.strategy", false)
	}
	if strat == nil {
		strat = d.obj(b["strategy"], path+".strategy", false)
	}
	if strat == nil { // GuideLLM before 0.6: benchmarks[i].args.strategy
		if args := d.obj(b["args"], path+".args", false); args != nil {
			strat = d.obj(args["strategy"], path+".args.strategy", false)
		}
	}
	if strat == nil {
		d.fail(path+".config.strategy", "missing: GuideLLM writes the benchmark's scheduling strategy there")
	}
	sp := path + ".config.strategy"
	kind := d.str(strat, "type_", sp)
	if kind == "" {
		kind = d.str(strat, "type", sp)
	}
	var mode servebench.LoadMode
	conc, rate := 0, 0.0
	switch kind {
	case "synchronous":
		mode, conc = servebench.ModeSustained, 1
	case "concurrent":
		mode = servebench.ModeSustained
		conc, _ = d.count(strat, "streams", sp, true)
	case "throughput":
		mode = servebench.ModeFixed
		conc, _ = d.count(strat, "max_concurrency", sp, false)
	case "constant", "poisson", "async":
		mode = servebench.ModeRate
		rate, _ = d.num(strat, "rate", sp, true)
	case "":
		if strat != nil {
			d.fail(sp+".type_", "missing: GuideLLM names the strategy (synchronous, concurrent, throughput, constant, poisson)")
		}
	default:
		d.fail(sp+".type_", "%q is not a GuideLLM strategy servebench maps (synchronous, concurrent, throughput, constant, poisson)", kind)
	}
	dist := func(key string, scale float64, n int, need bool) statBlock {
		blk := statBlock{StdPopulation: true}
		o := d.obj(m[key], mp+"."+key, need)
		if o == nil {
			return blk
		}
		s := d.obj(o["successful"], mp+"."+key+".successful", need)
		if s == nil {
			return blk
		}
		p := mp + "." + key + ".successful"
		if v, ok := d.num(s, "mean", p, need); ok {
			blk.Mean, blk.HasMean = v*scale, true
		}
		if v, ok := d.num(s, "std_dev", p, false); ok {
			blk.Std, blk.HasStd = v*scale, true
		}
		cnt, hasCount := d.count(s, "count", p, false)
		if hasCount && cnt == 0 {
			return statBlock{} // no values: GuideLLM writes zeros for an empty distribution
		}
		blk.N = cnt
		if n > 0 {
			blk.N = n // a token-weighted distribution: its count is tokens, its samples requests
		}
		mn, ok1 := d.num(s, "min", p, false)
		mx, ok2 := d.num(s, "max", p, false)
		if ok1 && ok2 {
			blk.Min, blk.Max = ptr(mn*scale), ptr(mx*scale)
		}
		if pc := d.obj(s["percentiles"], p+".percentiles", false); pc != nil {
			for _, q := range []struct {
				k   string
				dst **float64
			}{{"p50", &blk.P50}, {"p90", &blk.P90}, {"p95", &blk.P95}, {"p99", &blk.P99}} {
				if v, ok := d.num(pc, q.k, p+".percentiles", false); ok {
					*q.dst = ptr(v * scale)
				}
			}
		}
		if blk.P50 == nil {
			if v, ok := d.num(s, "median", p, false); ok {
				blk.P50 = ptr(v * scale)
			}
		}
		return blk
	}
	ttft := dist("time_to_first_token_ms", 1e-3, 0, false)
	itl := dist("inter_token_latency_ms", 1e-3, succ, false)
	lat := dist("request_latency", 1, 0, true)
	in := dist("prompt_token_count", 1, 0, true)
	out := dist("output_token_count", 1, 0, true)
	outTP := dist("output_tokens_per_second", 1, 0, true)
	totTP := dist("tokens_per_second", 1, 0, false)
	reqTP := dist("requests_per_second", 1, 0, true)
	tpot := dist("time_per_output_token_ms", 1e-3, 0, false)
	if !(ok1 && ok2 && okDur) || len(d.errs) > 0 {
		return c, false
	}
	if succ == 0 {
		im.notes = append(im.notes, fmt.Sprintf("%s: no request succeeded (%d errored); it is not imported.", path, errd))
		return c, false
	}
	if st, ok := d.num(b, "start_time", path, false); ok && st > 0 {
		t := time.Unix(0, int64(st*1e9)).UTC()
		if im.start.IsZero() || t.Before(im.start) {
			im.start = t
		}
		if e, ok := d.num(b, "end_time", path, false); ok {
			if te := time.Unix(0, int64(e*1e9)).UTC(); te.After(im.end) {
				im.end = te
			}
		}
	}
	c = importedCell(tool, loadPoint{mode: mode, concurrency: conc, ratePerSecond: rate, succeeded: succ, failed: errd,
		inputTokensMean: in.Mean, outputTokensMean: out.Mean, windowSeconds: dur,
		outputTPS: outTP.Mean, totalTPS: totTP.Mean, requestRPS: reqTP.Mean,
		hasTotal: totTP.HasMean, noTotal: tool + " did not report tokens_per_second",
		noInterval: tool + " reports a rate's distribution over time, not an interval of the rate"}, unav)
	c.TTFTSeconds = ttft.summaryOr("ttft_seconds", tool, tool+" reported no time to first token (a run without streaming)", unav)
	c.E2ELatencySeconds = lat.summary("e2e_latency_seconds", tool, unav)
	c.ITLSeconds = itl.summaryOr("itl_seconds", tool, tool+" reported no inter-token latency (a run without streaming, or one-token answers)", unav)
	unav["chunk_gap_seconds"] = tool + " does not report gaps between chunks"
	unav["generation_speed_tps"] = tool + " does not report a per-request decode speed"
	if incomplete > 0 {
		im.notes = append(im.notes, fmt.Sprintf("%s: %d requests were still running when GuideLLM ended the benchmark (incomplete); they count neither as successful nor as failed.", c.ID(), incomplete))
	}
	if tpot.HasMean {
		im.notes = append(im.notes, fmt.Sprintf("%s: GuideLLM's time_per_output_token_ms, %.2f ms, is (last token − request start) / output tokens: TTFT included, unlike servebench's ITL and vLLM's TPOT.", c.ID(), tpot.Mean*1000))
	}
	if math.Abs(float64(c.ContextTokens)-in.Mean) > 0.5 || (in.Min != nil && in.Max != nil && *in.Min != *in.Max) {
		unav["input_tokens_max_deviation"] = "GuideLLM's prompts vary in length; the cell is keyed by their mean"
	}
	return c, true
}
