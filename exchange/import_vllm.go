package exchange

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// vllmMetrics are the per-request metrics `vllm bench serve` summarises as mean_X_ms,
// median_X_ms, std_X_ms and pNN_X_ms, with the servebench field each maps to.
var vllmMetrics = []struct{ key, field string }{
	{"ttft", "ttft_seconds"},        // start → first chunk with choices (a role-only chunk counts)
	{"tpot", "itl_seconds"},         // (latency − ttft) / (output tokens − 1)
	{"itl", "chunk_gap_seconds"},    // gaps between chunks with choices
	{"e2el", "e2e_latency_seconds"}, // start → last chunk with choices
}

// importVLLM reads `vllm bench serve --save-result` JSON: one object per benchmark (several,
// one per line, with --append-result), each one cell.
func importVLLM(d *doc, vals []any) imported {
	var im imported
	for i, v := range vals {
		path := ""
		if len(vals) > 1 {
			path = fmt.Sprintf("result %d (line of --append-result)", i+1)
		}
		o := d.obj(v, orFile(path), true)
		if o == nil {
			continue
		}
		c, ok := vllmCell(d, o, path, &im)
		if ok {
			im.cells = append(im.cells, c)
		}
	}
	return im
}

// vllmCell reads one benchmark of a vllm result file.
func vllmCell(d *doc, o map[string]any, path string, im *imported) (servebench.CellResult, bool) {
	var c servebench.CellResult
	unav := map[string]string{}
	tool := FormatVLLM.Tool()
	dur, okDur := d.num(o, "duration", path, true)
	completed, okDone := d.count(o, "completed", path, true)
	failed, _ := d.count(o, "failed", path, false)
	totalIn, okIn := d.count(o, "total_input_tokens", path, true)
	totalOut, okOut := d.count(o, "total_output_tokens", path, true)
	reqTP, okR := d.num(o, "request_throughput", path, true)
	outTP, okO := d.num(o, "output_throughput", path, true)
	totTP, okT := d.num(o, "total_token_throughput", path, true)
	if okDur && dur == 0 {
		d.fail(join(path, "duration"), "is 0: a benchmark that took no time measured nothing")
		okDur = false
	}
	if !(okDur && okDone && okIn && okOut && okR && okO && okT) {
		return c, false
	}
	if completed == 0 {
		im.notes = append(im.notes, fmt.Sprintf("%s: no request completed (%d failed); it is not imported.", orFile(path), failed))
		return c, false
	}
	if m := d.str(o, "model_id", path); m != "" && im.model == "" {
		im.model = m
	}
	if im.toolVersion == "" {
		im.toolVersion = d.str(o, "vllm_version", path) // written by --metadata vllm_version=… when given
	}
	switch d.str(o, "backend", path) {
	case "openai-chat", "openai-audio":
		im.api = servebench.APIChat
	case "":
		if d.str(o, "endpoint_type", path) == "openai-chat" {
			im.api = servebench.APIChat
		}
	default:
		if im.api == "" {
			im.api = servebench.APICompletions
		}
	}
	if date := d.str(o, "date", path); date != "" {
		t, err := time.Parse("20060102-150405", date)
		if err != nil {
			d.fail(join(path, "date"), "%q is not vllm's YYYYMMDD-HHMMSS", date)
		} else if im.start.IsZero() || t.Before(im.start) {
			// vllm writes the machine's local time without a zone: read as UTC
			im.start = t
			if e := t.Add(time.Duration(dur * float64(time.Second))); e.After(im.end) {
				im.end = e
			}
		}
	}
	conc, hasConc := d.count(o, "max_concurrency", path, false)
	rate := 0.0
	switch r := o["request_rate"].(type) {
	case string:
		if r != "inf" {
			if f, err := strconv.ParseFloat(r, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
				rate = f
			} else {
				d.fail(join(path, "request_rate"), "%q is neither a rate nor \"inf\"", r)
			}
		}
	case nil:
	default:
		rate, _ = d.value(r, join(path, "request_rate"), false)
	}
	if !hasConc || conc == 0 {
		if rate == 0 {
			// every prompt sent at once: as many in flight as prompts
			if n, ok := d.count(o, "num_prompts", path, false); ok && n > 0 {
				conc = n
			} else {
				conc = completed + failed
			}
		} else {
			conc = 0
		}
	}
	mode := servebench.ModeFixed
	if conc == 0 {
		mode = servebench.ModeRate
	}
	c = importedCell(tool, loadPoint{mode: mode, concurrency: conc, ratePerSecond: rate, succeeded: completed, failed: failed,
		inputTokensMean: float64(totalIn) / float64(completed), outputTokensMean: float64(totalOut) / float64(completed), windowSeconds: dur,
		outputTPS: outTP, totalTPS: totTP, requestRPS: reqTP, hasTotal: true,
		noInterval: tool + " measures one rate over the whole benchmark (first send to last response), no interval"}, unav)
	if g, ok := d.num(o, "request_goodput", path, false); ok {
		c.GoodputRPS = ptr(g)
		c.Goodput = ptr(math.Min(1, g*dur/float64(c.RequestsTotal)))
	}
	if peak, ok := d.num(o, "max_output_tokens_per_s", path, false); ok {
		im.notes = append(im.notes, fmt.Sprintf("%s: vllm's peak output throughput, the most tokens in any 1-second bucket, was %.0f tok/s.", c.ID(), peak))
	}

	if detailed := vllmDetailed(d, o, path, completed, failed); detailed != nil {
		c.TTFTSeconds = stats.Summarize(detailed.ttft)
		c.ITLSeconds = stats.Summarize(detailed.tpot)
		c.GenerationSpeedTPS = stats.Summarize(detailed.speed)
		c.ChunkGapSeconds = stats.Summarize(detailed.gaps)
		c.E2ELatencySeconds = stats.Summarize(detailed.e2e)
		if detailed.chunks > 0 {
			c.TokensPerChunk = float64(detailed.tokens) / float64(detailed.chunks)
		}
		if c.TTFTSeconds.Mean > 0 {
			c.EffectivePrefillSpeedTPS = detailed.prefillSpeed
		}
	} else {
		n := completed
		sum := func(key string) statBlock {
			b := statBlock{N: n, StdPopulation: true}
			if key == "itl" {
				b.N = 0 // a summary of chunk gaps, whose count the file does not give
			}
			if v, ok := d.num(o, "mean_"+key+"_ms", path, false); ok {
				b.Mean, b.HasMean = v/1000, true
			}
			if v, ok := d.num(o, "std_"+key+"_ms", path, false); ok {
				b.Std, b.HasStd = v/1000, true
			}
			if v, ok := d.num(o, "median_"+key+"_ms", path, false); ok {
				b.P50 = ptr(v / 1000)
			}
			for _, p := range []struct {
				k   string
				dst **float64
			}{{"p50", &b.P50}, {"p90", &b.P90}, {"p95", &b.P95}, {"p99", &b.P99}} {
				if v, ok := d.num(o, p.k+"_"+key+"_ms", path, false); ok {
					*p.dst = ptr(v / 1000)
				}
			}
			return b
		}
		for _, mt := range vllmMetrics {
			b := sum(mt.key)
			s := b.summary(mt.field, tool, unav)
			if !b.HasMean {
				unav[mt.field] = fmt.Sprintf("%s did not report it (mean_%s_ms absent: --percentile-metrics leaves it out)", tool, mt.key)
				// the summary's own reasons are moot
				for _, f := range []string{"count", "ci95", "min", "p50", "p90", "p95", "p99"} {
					delete(unav, mt.field+"."+f)
				}
			}
			switch mt.field {
			case "ttft_seconds":
				c.TTFTSeconds = s
			case "itl_seconds":
				c.ITLSeconds = s
			case "chunk_gap_seconds":
				c.ChunkGapSeconds = s
			case "e2e_latency_seconds":
				c.E2ELatencySeconds = s
			}
		}
		if c.E2ELatencySeconds.Count == 0 {
			if lat := d.list(o["latencies"], join(path, "latencies")); len(lat) == completed && failed == 0 {
				// recent vllm keeps every request's latency even without --save-detailed
				var e2e []float64
				for j, v := range lat {
					if f, ok := d.value(v, fmt.Sprintf("%s[%d]", join(path, "latencies"), j), true); ok {
						e2e = append(e2e, f)
					}
				}
				c.E2ELatencySeconds = stats.Summarize(e2e)
				delete(unav, "e2e_latency_seconds")
			}
		}
		unav["generation_speed_tps"] = tool + " reports it only per request, with --save-detailed"
	}
	c.Validity = servebench.Validity{}
	return c, true
}

// orFile names a result for messages: its path, or "the result" for a file of one.
func orFile(path string) string {
	if path == "" {
		return "the result"
	}
	return path
}

// vllmRequests holds the per-request values of a --save-detailed file, successful requests only.
type vllmRequests struct {
	ttft, tpot, speed, gaps, e2e []float64
	tokens, chunks               int
	prefillSpeed                 float64
}

// vllmDetailed reads --save-detailed's per-request arrays (ttfts, itls, latencies, output_lens,
// input_lens, errors; one entry per request sent, failed ones included); nil when the file has
// none. A request counts as successful when its error is empty, as vllm's own count does.
func vllmDetailed(d *doc, o map[string]any, path string, completed, failed int) *vllmRequests {
	if o["ttfts"] == nil || o["itls"] == nil || o["output_lens"] == nil {
		return nil
	}
	n := completed + failed
	arr := func(key string) []any {
		l := d.list(o[key], join(path, key))
		if l != nil && len(l) != n {
			d.fail(join(path, key), "has %d entries, want one per request sent (completed %d + failed %d = %d)", len(l), completed, failed, n)
			return nil
		}
		return l
	}
	ttfts, itls, lats, outs, ins, errs := arr("ttfts"), arr("itls"), arr("latencies"), arr("output_lens"), arr("input_lens"), arr("errors")
	if ttfts == nil || itls == nil || lats == nil || outs == nil {
		if lats == nil && o["latencies"] == nil {
			d.fail(join(path, "latencies"), "missing beside ttfts and itls: a --save-detailed file has it")
		}
		return nil
	}
	r := &vllmRequests{}
	var prefill []float64
	ok := 0
	for i := 0; i < n; i++ {
		p := func(key string) string { return fmt.Sprintf("%s[%d]", join(path, key), i) }
		if errs != nil {
			if s, isStr := errs[i].(string); isStr && s != "" && !strings.HasPrefix(s, nonFinite) {
				continue
			}
		}
		ttft, ok1 := d.value(ttfts[i], p("ttfts"), true)
		lat, ok2 := d.value(lats[i], p("latencies"), true)
		out, ok3 := d.value(outs[i], p("output_lens"), true)
		gl := d.list(itls[i], p("itls"))
		if !(ok1 && ok2 && ok3) {
			continue
		}
		if errs == nil && out == 0 && lat == 0 {
			continue // a failed request of a file without errors
		}
		if ttft > lat {
			d.fail(p("ttfts"), "%.6g s is after the request's end (latencies: %.6g s)", ttft, lat)
			continue
		}
		ok++
		r.ttft = append(r.ttft, ttft)
		r.e2e = append(r.e2e, lat)
		if out > 1 && lat > ttft {
			r.tpot = append(r.tpot, (lat-ttft)/(out-1))
			r.speed = append(r.speed, (out-1)/(lat-ttft))
		}
		for j, g := range gl {
			if v, okg := d.value(g, fmt.Sprintf("%s[%d]", p("itls"), j), true); okg {
				r.gaps = append(r.gaps, v)
			}
		}
		r.tokens += int(out)
		r.chunks += len(gl) + 1
		if ins != nil && ttft > 0 {
			if in, oki := d.value(ins[i], p("input_lens"), true); oki {
				prefill = append(prefill, in/ttft)
			}
		}
	}
	if len(d.errs) == 0 && ok != completed {
		d.fail(join(path, "errors"), "%d requests have no error but completed says %d", ok, completed)
	}
	if len(prefill) > 0 {
		sort.Float64s(prefill)
		var s float64
		for _, v := range prefill {
			s += v
		}
		r.prefillSpeed = s / float64(len(prefill))
	}
	return r
}
