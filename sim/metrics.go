package sim

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// Truth is the simulator's own account of what it did, on its clock, for tests: a scraper's
// delta of the matching /metrics series must equal it within float error.
//
// Times are summed over finished requests (aborted ones are left out, as in the histograms):
//
//	queue   = first_scheduled − arrival
//	prefill = first_token − first_scheduled
//	decode  = finished − first_token
//
// PromptTokens count each request once, when its first token is sampled; GenerationTokens count
// every sampled token. EnergyJoules is the sum over all GPUs.
type Truth struct {
	RequestsArrived, RequestsFinished                    int
	QueueSecondsSum, PrefillSecondsSum, DecodeSecondsSum float64
	PromptTokens, GenerationTokens                       int64
	EnergyJoules                                         float64
	Preemptions                                          int
	PrefixCacheQueries, PrefixCacheHits                  int64
	// PrefixCacheOwnReuse counts prompt tokens a preempted request re-read from blocks it had
	// published itself: reused without recompute, but not hits (nothing was shared).
	PrefixCacheOwnReuse int64
}

// vLLM's bucket boundaries (vllm/v1/metrics/loggers.py).
var (
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
		60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	tpotBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0}
)

// buckets125 is vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50, … up to max.
func buckets125(maxV int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxV) {
				return out
			}
			out = append(out, v)
		}
	}
}

type histogram struct {
	bounds []float64
	counts []uint64 // per bucket (not cumulative); last is +Inf
	sum    float64
	count  uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: le semantics
	h.counts[i]++
	h.sum += v
	h.count++
}

// vllmMetrics holds the series /metrics exposes, updated by the engine under Server.mu.
type vllmMetrics struct {
	labels string // model_name="…",engine="0"
	// cacheConfig is the labels of vllm:cache_config_info: the KV cache's block size and
	// blocks, as vLLM's CacheConfig.metrics_info gives them (a subset of its fields).
	cacheConfig string

	queue, prefill, decode, inference, ttft, e2e, tpot *histogram
	promptHist, genHist                                *histogram

	success                        map[string]uint64 // finished_reason → count
	promptTokens, generationTokens int64
	preemptions                    int
	prefixQueries, prefixHits      int64
	running, waiting               int
	kvUsage                        float64
	// uncounted: finished requests are not recorded (Options.UncountedMetrics).
	uncounted bool
}

func newVLLMMetrics(model string, p Profile) *vllmMetrics {
	maxModelLen := p.Engine.MaxModelLen
	return &vllmMetrics{
		labels: fmt.Sprintf(`engine="0",model_name=%q`, model),
		cacheConfig: fmt.Sprintf(`block_size="%d",cache_dtype="auto",enable_prefix_caching="True",engine="0",gpu_memory_utilization="%s",num_cpu_blocks="None",num_gpu_blocks="%d"`,
			p.Engine.BlockSize, fmtFloat(p.Engine.GPUMemoryUtilization), p.kvBlocks()),
		queue:      newHistogram(requestLatencyBuckets),
		prefill:    newHistogram(requestLatencyBuckets),
		decode:     newHistogram(requestLatencyBuckets),
		inference:  newHistogram(requestLatencyBuckets),
		e2e:        newHistogram(requestLatencyBuckets),
		ttft:       newHistogram(ttftBuckets),
		tpot:       newHistogram(tpotBuckets),
		promptHist: newHistogram(buckets125(maxModelLen)),
		genHist:    newHistogram(buckets125(maxModelLen)),
		success:    map[string]uint64{"stop": 0, "length": 0, "abort": 0},
	}
}

func (m *vllmMetrics) finish(s *seq, queue, prefill, decode float64) {
	if m.uncounted {
		return
	}
	m.queue.observe(queue)
	m.prefill.observe(prefill)
	m.decode.observe(decode)
	m.inference.observe(prefill + decode)
	m.ttft.observe(s.firstToken - s.arrival)
	m.e2e.observe(s.finished - s.arrival)
	if s.generated > 1 {
		m.tpot.observe(decode / float64(s.generated-1))
	}
	m.promptHist.observe(float64(s.promptTokens))
	m.genHist.observe(float64(s.generated))
	m.success[s.finishReason]++
}

func fmtFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// promWriter writes Prometheus text exposition format 0.0.4.
type promWriter struct {
	w   io.Writer
	err error
}

func (p *promWriter) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *promWriter) header(name, typ, help string) {
	p.printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (p *promWriter) sample(name, labels string, v float64) {
	p.printf("%s{%s} %s\n", name, labels, fmtFloat(v))
}

func (p *promWriter) histogram(name, help, labels string, h *histogram) {
	p.header(name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		p.printf("%s_bucket{%s,le=\"%s\"} %d\n", name, labels, fmtFloat(b), cum)
	}
	p.printf("%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, h.count)
	p.printf("%s_sum{%s} %s\n", name, labels, fmtFloat(h.sum))
	p.printf("%s_count{%s} %d\n", name, labels, h.count)
}

// write renders the vLLM v1 metric families.
func (m *vllmMetrics) write(w io.Writer) error {
	p := &promWriter{w: w}
	l := m.labels
	// vLLM's info gauge: always 1, the cache's configuration in its labels (num_gpu_blocks ×
	// block_size is the KV cache's capacity in tokens).
	p.header("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
	p.sample("vllm:cache_config_info", m.cacheConfig, 1)
	p.header("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.")
	p.sample("vllm:num_requests_running", l, float64(m.running))
	p.header("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.")
	p.sample("vllm:num_requests_waiting", l, float64(m.waiting))
	p.header("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.")
	p.sample("vllm:kv_cache_usage_perc", l, m.kvUsage)
	p.header("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage (deprecated alias of vllm:kv_cache_usage_perc).")
	p.sample("vllm:gpu_cache_usage_perc", l, m.kvUsage)
	p.header("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.")
	p.sample("vllm:prefix_cache_queries_total", l, float64(m.prefixQueries))
	p.header("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.")
	p.sample("vllm:prefix_cache_hits_total", l, float64(m.prefixHits))
	p.header("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.")
	p.sample("vllm:num_preemptions_total", l, float64(m.preemptions))
	p.header("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.")
	p.sample("vllm:prompt_tokens_total", l, float64(m.promptTokens))
	p.header("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.")
	p.sample("vllm:generation_tokens_total", l, float64(m.generationTokens))
	p.header("vllm:request_success_total", "counter", "Count of successfully processed requests.")
	reasons := make([]string, 0, len(m.success))
	for r := range m.success {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		p.sample("vllm:request_success_total", l+`,finished_reason="`+r+`"`, float64(m.success[r]))
	}
	p.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", l, m.promptHist)
	p.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", l, m.genHist)
	p.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l, m.ttft)
	p.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", l, m.tpot)
	p.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", l, m.e2e)
	p.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", l, m.queue)
	p.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", l, m.inference)
	p.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", l, m.prefill)
	p.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", l, m.decode)
	return p.err
}

// writeDCGM renders a dcgm-exporter-shaped page: one series per GPU, per-GPU values.
func writeDCGM(w io.Writer, p Profile, g gpuState, energyJ float64, hostname string) error {
	pw := &promWriter{w: w}
	n := max(1, p.GPU.Count)
	memMiB := p.GPU.MemoryBytes / (1 << 20)
	usedMiB := math.Round(memMiB*p.Engine.GPUMemoryUtilization) + 512 // engine pool + CUDA context
	usedMiB = math.Min(usedMiB, memMiB)
	temp := 30 + 50*(g.watts-p.GPU.IdleWatts)/math.Max(1, p.GPU.MaxWatts-p.GPU.IdleWatts)
	labels := func(i int) string {
		return fmt.Sprintf(`gpu="%d",UUID="GPU-5e7b5e75-0000-4000-8000-%012d",pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName=%q,Hostname=%q`,
			i, i, 0x18+i, i, p.GPU.Name, hostname)
	}
	series := []struct {
		name, typ, help string
		v               float64
	}{
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", math.Round(100 * g.util)},
		{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", math.Round(memMiB - usedMiB)},
		{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", usedMiB},
		{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", math.Round(temp)},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", math.Round(g.watts*1000) / 1000},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
			math.Floor(energyJ / float64(n) * 1000)},
	}
	for _, s := range series {
		pw.header(s.name, s.typ, s.help)
		for i := 0; i < n; i++ {
			pw.sample(s.name, labels(i), s.v)
		}
	}
	return pw.err
}
