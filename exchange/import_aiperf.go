package exchange

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/servebench/servebench"
)

// aiperfTimeUnits converts AIPerf's time units to seconds.
var aiperfTimeUnits = map[string]float64{"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "seconds": 1}

// importAIPerf reads AIPerf's profile_export_aiperf.json (GenAI-Perf's profile_export_genai_perf.json
// has the same shape): every metric a top-level block {unit, avg, min, max, std, p1 … p99,
// count, sum}, one load point per file.
func importAIPerf(d *doc, vals []any) imported {
	var im imported
	if len(vals) != 1 {
		d.fail("the file", "holds %d JSON values, want one object (profile_export_aiperf.json)", len(vals))
		return im
	}
	top := d.obj(vals[0], "the file", true)
	if top == nil {
		return im
	}
	tool := FormatAIPerf.Tool()
	unav := map[string]string{}
	im.toolVersion = d.str(top, "aiperf_version", "the file")
	im.gpu = aiperfGPUs(top)
	// block reads metric key; time metrics are converted to seconds by their unit
	block := func(key string, isTime, need bool, n int) statBlock {
		b := statBlock{}
		o := d.obj(top[key], key, need)
		if o == nil {
			return b
		}
		scale := 1.0
		if isTime {
			u := d.str(o, "unit", key)
			s, ok := aiperfTimeUnits[strings.ToLower(u)]
			if !ok {
				d.fail(key+".unit", "%q is not a time unit servebench reads (ns, us, ms, s, sec)", u)
				return b
			}
			scale = s
		}
		if v, ok := d.num(o, "avg", key, need); ok {
			b.Mean, b.HasMean = v*scale, true
		}
		if v, ok := d.num(o, "std", key, false); ok {
			b.Std, b.HasStd = v*scale, true // the sample standard deviation (n − 1)
		}
		if cnt, ok := d.count(o, "count", key, false); ok {
			b.N = cnt
		} else {
			b.N = n
		}
		mn, ok1 := d.num(o, "min", key, false)
		mx, ok2 := d.num(o, "max", key, false)
		if ok1 && ok2 {
			b.Min, b.Max = ptr(mn*scale), ptr(mx*scale)
		}
		for _, p := range []struct {
			k   string
			dst **float64
		}{{"p50", &b.P50}, {"p90", &b.P90}, {"p95", &b.P95}, {"p99", &b.P99}} {
			if v, ok := d.num(o, p.k, key, false); ok {
				*p.dst = ptr(v * scale)
			}
		}
		return b
	}
	reqCount := block("request_count", false, true, 0)
	errCount := block("error_request_count", false, false, 0)
	n := int(reqCount.Mean)
	failed := 0
	if errCount.HasMean {
		failed = int(errCount.Mean)
	} else if es := d.list(top["error_summary"], "error_summary"); len(es) > 0 {
		for i, e := range es {
			if o := d.obj(e, fmt.Sprintf("error_summary[%d]", i), true); o != nil {
				k, _ := d.count(o, "count", fmt.Sprintf("error_summary[%d]", i), true)
				failed += k
			}
		}
	}
	ttft := block("time_to_first_token", true, false, n)
	itl := block("inter_token_latency", true, false, n)
	lat := block("request_latency", true, true, n)
	speed := block("output_token_throughput_per_user", false, false, n)
	isl := block("input_sequence_length", false, true, n)
	osl := block("output_sequence_length", false, true, n)
	outTP := block("output_token_throughput", false, true, 0)
	totTP := block("total_token_throughput", false, false, 0)
	reqTP := block("request_throughput", false, true, 0)
	dur := block("benchmark_duration", true, false, 0)
	if reqCount.HasMean && reqCount.Mean != float64(n) {
		d.fail("request_count.avg", "%v is not a whole number of requests", reqCount.Mean)
	}
	// the load: input_config.loadgen (AIPerf ≤ 0.4, GenAI-Perf) or input_config.phases.profiling
	conc, rate := 0, 0.0
	if cfg := d.obj(top["input_config"], "input_config", false); cfg != nil {
		// the profiling phase: input_config.loadgen (AIPerf ≤ 0.4, GenAI-Perf),
		// input_config.phases as a list of named phases or a map by name (AIPerf ≥ 0.5)
		var loads []map[string]any
		if o := d.obj(cfg["loadgen"], "input_config.loadgen", false); o != nil {
			loads = append(loads, o)
		}
		switch ph := cfg["phases"].(type) {
		case []any:
			for i, p := range ph {
				if o := d.obj(p, fmt.Sprintf("input_config.phases[%d]", i), false); o != nil && (o["name"] == nil || o["name"] == "profiling") {
					loads = append(loads, o)
				}
			}
		case map[string]any:
			if o := d.obj(ph["profiling"], "input_config.phases.profiling", false); o != nil {
				loads = append(loads, o)
			}
		}
		if o := d.obj(cfg["runtime"], "input_config.runtime", false); o != nil {
			loads = append(loads, o)
		}
		for _, o := range loads {
			if v, ok := d.count(o, "concurrency", "input_config", false); ok && conc == 0 {
				conc = v
			}
			if v, ok := d.num(o, "request_rate", "input_config", false); ok && rate == 0 {
				rate = v
			}
		}
		if ms := d.obj(cfg["models"], "input_config.models", false); ms != nil {
			if items := d.list(ms["items"], "input_config.models.items"); len(items) > 0 {
				if it, _ := items[0].(map[string]any); it != nil {
					im.model = d.str(it, "name", "input_config.models.items[0]")
				}
			}
		}
		if ep := d.obj(cfg["endpoint"], "input_config.endpoint", false); ep != nil {
			if names := d.list(ep["model_names"], "input_config.endpoint.model_names"); len(names) > 0 && im.model == "" {
				im.model, _ = names[0].(string)
			}
			im.target = d.str(ep, "url", "input_config.endpoint")
			if urls := d.list(ep["urls"], "input_config.endpoint.urls"); len(urls) > 0 && im.target == "" {
				im.target, _ = urls[0].(string)
			}
			if t := d.str(ep, "type", "input_config.endpoint"); t != "" && t != "chat" {
				im.api = servebench.APICompletions
			}
		}
	}
	for _, k := range []string{"start_time", "end_time"} {
		s := d.str(top, k, "the file")
		if s == "" {
			continue
		}
		var t time.Time
		var err error
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
			if t, err = time.Parse(layout, s); err == nil {
				break
			}
		}
		if err != nil {
			d.fail(k, "%q is not an ISO 8601 time", s)
			continue
		}
		if k == "start_time" {
			im.start = t // AIPerf writes local time without a zone: read as UTC
		} else {
			im.end = t
		}
	}
	if len(d.errs) > 0 {
		return im
	}
	if n == 0 {
		im.notes = append(im.notes, fmt.Sprintf("no request succeeded (%d failed); nothing is imported.", failed))
		return im
	}
	window := dur.Mean
	if !dur.HasMean && !im.start.IsZero() && im.end.After(im.start) {
		window = im.end.Sub(im.start).Seconds()
	}
	if window <= 0 {
		d.fail("benchmark_duration", "missing (and no start_time and end_time to take it from): AIPerf writes it")
		return im
	}
	mode := servebench.ModeFixed
	if conc == 0 && rate > 0 {
		mode = servebench.ModeRate
	}
	c := importedCell(tool, loadPoint{mode: mode, concurrency: conc, ratePerSecond: rate, succeeded: n, failed: failed,
		inputTokensMean: isl.Mean, outputTokensMean: osl.Mean, windowSeconds: window,
		outputTPS: outTP.Mean, totalTPS: totTP.Mean, requestRPS: reqTP.Mean,
		hasTotal: totTP.HasMean, noTotal: tool + " did not report total_token_throughput",
		noInterval: tool + " measures one rate over the benchmark, no interval"}, unav)
	c.TTFTSeconds = ttft.summaryOr("ttft_seconds", tool, tool+" did not report time_to_first_token (a run without streaming)", unav)
	c.ITLSeconds = itl.summaryOr("itl_seconds", tool, tool+" did not report inter_token_latency (a run without streaming)", unav)
	c.GenerationSpeedTPS = speed.summaryOr("generation_speed_tps", tool, tool+" did not report output_token_throughput_per_user", unav)
	c.E2ELatencySeconds = lat.summary("e2e_latency_seconds", tool, unav)
	unav["chunk_gap_seconds"] = tool + " keeps gaps between chunks per request (profile_export.jsonl), not in this summary"
	unav["first_content_seconds"] = tool + "'s summary does not tell reasoning from answer tokens"
	if conc == 0 && rate == 0 {
		unav["concurrency"] = "input_config names neither a concurrency nor a request rate"
	}
	im.cells = append(im.cells, c)
	return im
}

// aiperfGPUs is the hardware AIPerf's GPU telemetry names, when it was collected:
// telemetry_data (gpu_telemetry in older files) → endpoints → each endpoint's gpus → gpu_name,
// as "NVIDIA H100" or "8× NVIDIA H100" (names of different GPUs joined by " + "); "" when the
// file has no telemetry. The block is read leniently: a shape servebench does not know names
// no hardware rather than failing the import.
func aiperfGPUs(top map[string]any) string {
	tel, _ := top["telemetry_data"].(map[string]any)
	if tel == nil {
		tel, _ = top["gpu_telemetry"].(map[string]any)
	}
	eps, _ := tel["endpoints"].(map[string]any)
	count := map[string]int{}
	var names []string
	for _, ep := range eps {
		o, _ := ep.(map[string]any)
		gpus, _ := o["gpus"].(map[string]any)
		for _, g := range gpus {
			og, _ := g.(map[string]any)
			name, _ := og["gpu_name"].(string)
			name = strings.TrimSpace(name)
			if name == "" || strings.HasPrefix(name, nonFinite) {
				continue
			}
			if count[name] == 0 {
				names = append(names, name)
			}
			count[name]++
		}
	}
	sort.Strings(names)
	for i, n := range names {
		if count[n] > 1 {
			names[i] = fmt.Sprintf("%d× %s", count[n], n)
		}
	}
	return strings.Join(names, " + ")
}
