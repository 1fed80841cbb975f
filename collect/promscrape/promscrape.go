// Package promscrape reads an inference server's Prometheus endpoint and attributes server-side
// queue wait and prefill time to a cell from the change of the server's histograms between a
// scrape before the cell and one after it:
//
//	mean queue wait (s)   = Δ queue_time_seconds_sum   / Δ queue_time_seconds_count
//	mean prefill time (s) = Δ prefill_time_seconds_sum / Δ prefill_time_seconds_count
//
// over every request that finished between the two scrapes (a cell's warm-up included). It
// knows the metric names of vLLM (v1, with deprecated aliases), SGLang, TGI, TensorRT-LLM and
// llama.cpp, sums across engine-style labels, and degrades to "not available" with a reason for
// unknown servers and for counters that went down (a server restart between the scrapes).
package promscrape

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/servebench/servebench"
)

// Scraper reads one metrics endpoint.
type Scraper struct {
	url string
	hc  *http.Client
	// uncounted, once set, says why the server is known not to count this run's requests in
	// its histograms (After).
	uncounted atomic.Pointer[string]
}

// New returns a scraper of url.
func New(url string, hc *http.Client) *Scraper {
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Scraper{url: url, hc: hc}
}

// Snapshot is one parsed scrape.
type Snapshot struct {
	Time time.Time
	// Engine is "vllm", "sglang", "tgi", "tensorrt-llm", "llamacpp" or "unknown".
	Engine string
	fams   map[string]*dto.MetricFamily
}

// Scrape fetches and parses the endpoint.
func (s *Scraper) Scrape(ctx context.Context) (*Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", s.url, resp.StatusCode)
	}
	fams, err := Parse(io.LimitReader(resp.Body, 64<<20), resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", s.url, err)
	}
	return &Snapshot{Time: time.Now(), Engine: Detect(fams), fams: fams}, nil
}

// Parse reads Prometheus text exposition or OpenMetrics text (told apart by the content type or
// a trailing "# EOF").
func Parse(r io.Reader, contentType string) (map[string]*dto.MetricFamily, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if strings.Contains(contentType, "openmetrics") || bytes.Contains(b, []byte("\n# EOF")) || bytes.HasPrefix(b, []byte("# EOF")) {
		b = fromOpenMetrics(b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text exposition: %w", err)
	}
	return fams, nil
}

// fromOpenMetrics rewrites OpenMetrics text into the classic text format the parser reads:
// drops "# EOF", "# UNIT" and _created samples, and names counter families with their _total
// sample name.
func fromOpenMetrics(b []byte) []byte {
	var out bytes.Buffer
	counters := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "# EOF", strings.HasPrefix(line, "# UNIT "):
			continue
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) == 4 && f[3] == "counter" && !strings.HasSuffix(f[2], "_total") {
				counters[f[2]] = true
				line = "# TYPE " + f[2] + "_total counter"
			}
		case strings.HasPrefix(line, "# HELP "):
			f := strings.SplitN(line, " ", 4)
			if len(f) >= 3 && counters[f[2]] {
				f[2] += "_total"
				line = strings.Join(f, " ")
			}
		default:
			name := line
			if i := strings.IndexAny(name, "{ "); i >= 0 {
				name = name[:i]
			}
			if strings.HasSuffix(name, "_created") {
				continue
			}
			// exemplars (" # {...} v") are not part of the classic format
			if i := strings.Index(line, " # "); i >= 0 && !strings.HasPrefix(line, "#") {
				line = line[:i]
			}
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// Detect names the engine from its metric name prefixes.
func Detect(fams map[string]*dto.MetricFamily) string {
	counts := map[string]int{}
	for name := range fams {
		switch {
		case strings.HasPrefix(name, "vllm:"):
			counts["vllm"]++
		case strings.HasPrefix(name, "sglang:"):
			counts["sglang"]++
		case strings.HasPrefix(name, "tgi_"):
			counts["tgi"]++
		case strings.HasPrefix(name, "llamacpp:"):
			counts["llamacpp"]++
		case strings.HasPrefix(name, "trtllm_"), strings.HasPrefix(name, "nv_trt_llm_"):
			counts["tensorrt-llm"]++
		}
	}
	best, n := "unknown", 0
	for e, c := range counts {
		if c > n || (c == n && e < best) {
			best, n = e, c
		}
	}
	return best
}

// selector picks the series of one family, optionally restricted to a label value.
type selector struct {
	name         string
	label, value string
}

// names lists, per engine and role, the families to read (first present wins: current names
// before deprecated aliases).
type names struct {
	queue, prefill                         []selector // histograms (seconds)
	finished                               []selector // counter of finished requests
	running, waiting, kvUsage, preemptions []selector
	cacheQueries, cacheHits                []selector // token counters
	noQueue, noPrefill                     string     // why a role is absent for this engine
}

var engines = map[string]names{
	"vllm": {
		queue:        []selector{{name: "vllm:request_queue_time_seconds"}},
		prefill:      []selector{{name: "vllm:request_prefill_time_seconds"}},
		finished:     []selector{{name: "vllm:request_success_total"}},
		running:      []selector{{name: "vllm:num_requests_running"}},
		waiting:      []selector{{name: "vllm:num_requests_waiting"}},
		kvUsage:      []selector{{name: "vllm:kv_cache_usage_perc"}, {name: "vllm:gpu_cache_usage_perc"}},
		preemptions:  []selector{{name: "vllm:num_preemptions_total"}},
		cacheQueries: []selector{{name: "vllm:prefix_cache_queries_total"}, {name: "vllm:gpu_prefix_cache_queries_total"}},
		cacheHits:    []selector{{name: "vllm:prefix_cache_hits_total"}, {name: "vllm:gpu_prefix_cache_hits_total"}},
	},
	"sglang": {
		queue:        []selector{{name: "sglang:queue_time_seconds"}},
		finished:     []selector{{name: "sglang:num_requests_total"}},
		running:      []selector{{name: "sglang:num_running_reqs"}},
		waiting:      []selector{{name: "sglang:num_queue_reqs"}},
		kvUsage:      []selector{{name: "sglang:token_usage"}},
		cacheQueries: []selector{{name: "sglang:prompt_tokens_total"}},
		cacheHits:    []selector{{name: "sglang:cached_tokens_total"}},
		noPrefill:    "SGLang exposes no per-request prefill-time histogram",
	},
	"tgi": {
		queue:     []selector{{name: "tgi_request_queue_duration"}},
		prefill:   []selector{{name: "tgi_batch_inference_duration", label: "method", value: "prefill"}},
		finished:  []selector{{name: "tgi_request_success"}},
		running:   []selector{{name: "tgi_batch_current_size"}},
		waiting:   []selector{{name: "tgi_queue_size"}},
		noPrefill: "",
	},
	"tensorrt-llm": {
		queue:     []selector{{name: "trtllm_request_queue_time_seconds"}},
		finished:  []selector{{name: "trtllm_request_success_total"}},
		noPrefill: "TensorRT-LLM exposes no per-request prefill-time histogram",
	},
	"llamacpp": {
		running:   []selector{{name: "llamacpp:requests_processing"}},
		waiting:   []selector{{name: "llamacpp:requests_deferred"}},
		noQueue:   "llama.cpp exposes no queue-time metric (its per-request timings give prefill; use the openai-chat flavour)",
		noPrefill: "llama.cpp exposes total prompt seconds but no per-request count (its per-request timings are used when present)",
	},
}

// value sums a counter, gauge or untyped family (all series matching the selector).
func (s *Snapshot) value(sels []selector) (float64, string, bool) {
	for _, sel := range sels {
		f, ok := s.fams[sel.name]
		if !ok {
			continue
		}
		var sum float64
		for _, m := range f.GetMetric() {
			if !matches(m, sel) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Untyped != nil:
				sum += m.GetUntyped().GetValue()
			}
		}
		return sum, sel.name, true
	}
	return 0, "", false
}

// histogram sums _sum and _count over the family's matching series.
func (s *Snapshot) histogram(sels []selector) (sum, count float64, name string, ok bool) {
	for _, sel := range sels {
		f, found := s.fams[sel.name]
		if !found {
			continue
		}
		for _, m := range f.GetMetric() {
			if !matches(m, sel) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				sum += h.GetSampleSum()
				count += float64(h.GetSampleCount())
			} else if sm := m.GetSummary(); sm != nil {
				sum += sm.GetSampleSum()
				count += float64(sm.GetSampleCount())
			}
		}
		return sum, count, sel.name, true
	}
	return 0, 0, "", false
}

func matches(m *dto.Metric, sel selector) bool {
	if sel.label == "" {
		return true
	}
	for _, lp := range m.GetLabel() {
		if lp.GetName() == sel.label {
			return lp.GetValue() == sel.value
		}
	}
	return false
}

// Finished is the server's count of finished requests, when it has one.
func (s *Snapshot) Finished() (float64, bool) {
	v, _, ok := s.value(engines[s.Engine].finished)
	return v, ok
}

// KVCacheUsage is the server's KV-cache usage gauge (0..1: the share of its KV blocks held by
// running requests), when it has one.
// A value outside [0, 1] (or not a number) is no reading: the server's text is not believed.
func (s *Snapshot) KVCacheUsage() (float64, bool) {
	v, _, ok := s.value(engines[s.Engine].kvUsage)
	if !ok || math.IsNaN(v) || v < 0 || v > 1 {
		return 0, false
	}
	return v, true
}

// Preemptions is the server's cumulative count of preempted requests, when it has one.
// A negative, infinite or not-a-number count is no reading.
func (s *Snapshot) Preemptions() (float64, bool) {
	v, _, ok := s.value(engines[s.Engine].preemptions)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// KVCacheTokens is the server's KV-cache capacity in tokens, when it says: vLLM's info gauge
// vllm:cache_config_info carries its cache's num_gpu_blocks and block_size as labels, and the
// capacity is their product, summed over its engines (one series each, data parallel). A
// series whose labels are missing or not positive integers is no reading.
func (s *Snapshot) KVCacheTokens() (int, bool) {
	f, ok := s.fams["vllm:cache_config_info"]
	if !ok {
		return 0, false
	}
	total := 0
	for _, m := range f.GetMetric() {
		var blocks, size int
		for _, lp := range m.GetLabel() {
			v, err := strconv.Atoi(lp.GetValue())
			switch lp.GetName() {
			case "num_gpu_blocks":
				if err == nil {
					blocks = v
				}
			case "block_size":
				if err == nil {
					size = v
				}
			}
		}
		if blocks <= 0 || size <= 0 || blocks > (1<<40)/size {
			return 0, false // no capacity, or one no GPU holds (over 10¹² tokens)
		}
		total += blocks * size
	}
	return total, total > 0
}

// Wait is what a cell's server-side figures need from the scrape after the cell (After).
type Wait struct {
	// Requests is how many of the cell's requests finished: the server's histograms should
	// count that many more than before.
	Requests int
	// Histograms says the queue and prefill histograms are needed: some finished request came
	// without the server's per-request timings. Without it the first scrape serves at once (the
	// prefix-cache counters count at scheduling, before the cell ended; it still shows a restart).
	Histograms bool
	// Quiet is how long the wait goes on while the histograms do not move: the most idle time
	// the cell's server-side figures are worth (the runner gives 5% of the cell's span).
	Quiet time.Duration
	// Timeout bounds the whole wait, however the histograms move.
	Timeout time.Duration
}

// Scrape intervals of After: the first scrape again after afterFirstPoll, each interval twice
// the one before, at most afterMaxPoll (few scrapes while a slow server catches up: each
// costs a parse of the whole exposition).
const (
	afterFirstPoll = 20 * time.Millisecond
	afterMaxPoll   = 400 * time.Millisecond
)

// After returns the scrape after a cell once it holds what w says the cell's figures need, or
// as soon as it is known that it will not, with the reason either way (why, for the cell's
// log). It scrapes at once; it then waits only while the figures need the histograms, they
// exist, and they have not yet counted w.Requests more requests than before. It stops when they
// have, when a histogram went down (a restart), when nothing moved for w.Quiet (a server that
// counts differently, a gateway in front of other replicas) or after w.Timeout. A wait in which
// the histograms counted none of the cell's requests teaches the scraper that the server does
// not count this run's requests: later calls take one scrape and wait only if it shows the
// histograms moving.
func (s *Scraper) After(ctx context.Context, before *Snapshot, w Wait) (snap *Snapshot, why string, err error) {
	start := time.Now()
	poll := afterFirstPoll
	last, lastMove := -1.0, start
	for first := true; ; first = false {
		snap, err := s.Scrape(ctx)
		if err != nil {
			return nil, "", err
		}
		if !w.Histograms {
			return snap, "not waited for: every request of the cell carried the server's own timings", nil
		}
		got, ok := counted(before, snap)
		switch {
		case !ok:
			return snap, "not waited for: the server has no queue or prefill histogram", nil
		case got < 0:
			return snap, "a histogram went down between the scrapes (a restart)", nil
		case got >= float64(w.Requests):
			s.uncounted.Store(nil)
			if first {
				return snap, fmt.Sprintf("the server's histograms counted the cell's %d requests at the first scrape", w.Requests), nil
			}
			return snap, fmt.Sprintf("the server's histograms counted the cell's %d requests %.2f s after the cell", w.Requests, time.Since(start).Seconds()), nil
		case first && got == 0:
			if u := s.uncounted.Load(); u != nil {
				return snap, "not waited for: " + *u, nil
			}
		}
		now := time.Now()
		if got != last {
			last, lastMove = got, now
		}
		if idle := now.Sub(lastMove); idle >= w.Quiet || now.Sub(start) >= w.Timeout {
			if got == 0 {
				u := fmt.Sprintf("the server's histograms counted none of the %d requests of an earlier cell in %.2f s", w.Requests, now.Sub(start).Seconds())
				s.uncounted.Store(&u)
			}
			return snap, fmt.Sprintf("the server's histograms counted %.0f of the cell's %d requests and did not move for %.2f s: stopped waiting (its queue and prefill figures may miss requests)",
				got, w.Requests, idle.Seconds()), nil
		}
		wait := min(poll, w.Quiet-now.Sub(lastMove), w.Timeout-now.Sub(start))
		poll = min(2*poll, afterMaxPoll)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return snap, "the run was stopped while waiting for the server's histograms", nil
		case <-t.C:
		}
	}
}

// counted is how many more observations than before the queue and prefill histograms hold
// (the fewer of the two, where both exist); negative when one went down; ok false when the
// server has neither.
func counted(before, after *Snapshot) (n float64, ok bool) {
	eng, known := engines[after.Engine]
	if !known || before.Engine != after.Engine {
		return 0, false
	}
	n = math.Inf(1)
	for _, sels := range [][]selector{eng.queue, eng.prefill} {
		_, c1, _, ok1 := after.histogram(sels)
		_, c0, _, ok0 := before.histogram(sels)
		if ok1 && ok0 {
			n, ok = min(n, c1-c0), true
		}
	}
	return n, ok
}

// Delta is what the server's metrics say about the requests of a cell: how its queue-time and
// prefill-time histograms and its prefix-cache counters changed from before to after, and
// whether it restarted in between (Restarted). Package stats turns the deltas into means.
func Delta(before, after *Snapshot) servebench.MetricsDelta {
	d := servebench.MetricsDelta{Unavailable: map[string]string{}, Restarted: Restarted(before, after)}
	eng, ok := engines[after.Engine]
	if !ok || before.Engine != after.Engine {
		why := "the metrics endpoint is not from a known engine (vLLM, SGLang, TGI, TensorRT-LLM, llama.cpp)"
		d.Unavailable["queue_wait_seconds"], d.Unavailable["prefill_seconds"] = why, why
		return d
	}
	d.QueueWait = histDelta(before, after, eng.queue, eng.noQueue, "queue_wait_seconds", d.Unavailable)
	d.Prefill = histDelta(before, after, eng.prefill, eng.noPrefill, "prefill_seconds", d.Unavailable)
	d.PrefixCacheQueries = counterDelta(before, after, eng.cacheQueries)
	d.PrefixCacheHits = counterDelta(before, after, eng.cacheHits)
	if len(d.Unavailable) == 0 {
		d.Unavailable = nil
	}
	return d
}

func histDelta(before, after *Snapshot, sels []selector, absent, field string, why map[string]string) *servebench.HistogramDelta {
	s1, c1, name, ok1 := after.histogram(sels)
	s0, c0, _, ok0 := before.histogram(sels)
	switch {
	case !ok1 || !ok0:
		if absent == "" {
			absent = "the server exposes no histogram for it"
		}
		why[field] = absent
		return nil
	case c1 < c0 || s1 < s0:
		why[field] = "the server restarted between the scrapes (" + name + " went down)"
		return nil
	case c1 == c0:
		why[field] = "no request finished between the scrapes"
		return nil
	}
	return &servebench.HistogramDelta{Metric: name, Sum: s1 - s0, Count: c1 - c0}
}

func counterDelta(before, after *Snapshot, sels []selector) *int64 {
	v1, _, ok1 := after.value(sels)
	v0, _, ok0 := before.value(sels)
	if !ok1 || !ok0 || v1 < v0 {
		return nil
	}
	d := int64(math.Round(v1 - v0))
	return &d
}

// Sample emits the server's load gauges every interval until ctx is done.
func (s *Scraper) Sample(ctx context.Context, interval time.Duration, emit func(servebench.Sample)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		snap, err := s.Scrape(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		eng := engines[snap.Engine]
		for _, g := range []struct {
			name string
			sels []selector
		}{{"num_requests_running", eng.running}, {"num_requests_waiting", eng.waiting},
			{"kv_cache_usage", eng.kvUsage}, {"preemptions_total", eng.preemptions}} {
			if v, _, ok := snap.value(g.sels); ok {
				emit(servebench.Sample{UnixNano: snap.Time.UnixNano(), Source: "server", Name: g.name, Value: v})
			}
		}
	}
}

// Restarted says why the server evidently restarted between two scrapes, or "" when nothing
// says it did: its process_start_time_seconds changed, or a counter (or a histogram's or
// summary's count) went down. Either makes every server-side value attributed from the two
// scrapes meaningless, whatever the deltas of single metrics look like (after a restart early
// in a cell, counters can have grown back past their values before it).
func Restarted(before, after *Snapshot) string {
	if before == nil || after == nil {
		return ""
	}
	if s0, ok0 := before.gauge("process_start_time_seconds"); ok0 {
		if s1, ok1 := after.gauge("process_start_time_seconds"); ok1 && math.Abs(s1-s0) > 0.001 {
			return fmt.Sprintf("the server restarted during the cell (process_start_time_seconds changed from %.0f to %.0f)", s0, s1)
		}
	}
	for name, f0 := range before.fams {
		f1, ok := after.fams[name]
		if !ok {
			continue
		}
		v0, c0 := familyTotal(f0)
		v1, c1 := familyTotal(f1)
		if c0 && c1 && v1 < v0-1e-9*math.Max(1, math.Abs(v0)) {
			return fmt.Sprintf("the server restarted during the cell (counter %s went down from %g to %g)", name, v0, v1)
		}
	}
	return ""
}

func (s *Snapshot) gauge(name string) (float64, bool) {
	f, ok := s.fams[name]
	if !ok || len(f.GetMetric()) == 0 {
		return 0, false
	}
	m := f.GetMetric()[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// familyTotal sums a counter family's values, or a histogram or summary family's sample
// counts, over its series; ok is false for other types.
func familyTotal(f *dto.MetricFamily) (total float64, ok bool) {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		for _, m := range f.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	case dto.MetricType_HISTOGRAM:
		for _, m := range f.GetMetric() {
			total += float64(m.GetHistogram().GetSampleCount())
		}
	case dto.MetricType_SUMMARY:
		for _, m := range f.GetMetric() {
			total += float64(m.GetSummary().GetSampleCount())
		}
	default:
		return 0, false
	}
	return total, true
}
