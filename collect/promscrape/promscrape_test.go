package promscrape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/stats"
)

func load(t *testing.T, name string) *Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	fams, err := Parse(bytes.NewReader(b), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &Snapshot{Engine: Detect(fams), fams: fams}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAttributeFromFixtures(t *testing.T) {
	cases := []struct {
		before, after  string
		engine         string
		queue, prefill float64 // expected means; NaN = unavailable
		requests       int
		hits, queries  int64 // -1 = not exposed
	}{
		// vLLM v1, two engine labels summed: Δsum 6 / Δcount 12, prefill 3.6/12
		{"vllm-before.txt", "vllm-after.txt", "vllm", 0.5, 0.3, 12, 512, 24576},
		// the deprecated gpu_prefix_cache_* names still count
		{"vllm-deprecated-before.txt", "vllm-deprecated-after.txt", "vllm", 0.5, 0.3, 12, 512, 24576},
		// SGLang: queue histogram, no prefill histogram; cached tokens as hits
		{"sglang-before.txt", "sglang-after.txt", "sglang", 0.3, math.NaN(), 10, 0, 81920},
		// TGI: queue duration and the prefill batches only (method="prefill")
		{"tgi-before.txt", "tgi-after.txt", "tgi", 0.2, 0.25, 10, -1, -1},
		// TensorRT-LLM: queue time only
		{"trtllm-before.txt", "trtllm-after.txt", "tensorrt-llm", 0.1, math.NaN(), 8, -1, -1},
		// OpenMetrics exposition (_total counters, _created, # UNIT, # EOF)
		{"openmetrics-before.txt", "openmetrics-after.txt", "vllm", 0.5, math.NaN(), 4, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.after, func(t *testing.T) {
			b, a := load(t, c.before), load(t, c.after)
			if a.Engine != c.engine {
				t.Fatalf("engine %q, want %q", a.Engine, c.engine)
			}
			at := attribute(b, a)
			check := func(name string, v *float64, want float64) {
				if math.IsNaN(want) {
					if v != nil {
						t.Errorf("%s = %v, want unavailable", name, *v)
					}
					return
				}
				if v == nil || !near(*v, want) {
					t.Errorf("%s = %v, want %v (unavailable: %v)", name, v, want, at.Unavailable)
				}
			}
			var q, p *float64
			if at.QueueWait != nil {
				q = &at.QueueWait.Mean
				if at.QueueWait.Requests != c.requests || !strings.HasPrefix(at.QueueWait.Source, "prometheus:") {
					t.Errorf("queue requests %d source %q", at.QueueWait.Requests, at.QueueWait.Source)
				}
			}
			if at.Prefill != nil {
				p = &at.Prefill.Mean
			}
			check("queue", q, c.queue)
			check("prefill", p, c.prefill)
			if math.IsNaN(c.prefill) && at.Unavailable["prefill_seconds"] == "" {
				t.Error("an unavailable prefill needs a reason")
			}
			if c.hits >= 0 {
				if at.PrefixCacheHits == nil || *at.PrefixCacheHits != c.hits || at.PrefixCacheQueries == nil || *at.PrefixCacheQueries != c.queries {
					t.Errorf("cache hits %v queries %v, want %d %d", at.PrefixCacheHits, at.PrefixCacheQueries, c.hits, c.queries)
				}
			}
		})
	}
}

func TestCounterResetIsUnavailableNeverNegative(t *testing.T) {
	at := attribute(load(t, "vllm-after.txt"), load(t, "vllm-restarted.txt"))
	if at.QueueWait != nil || at.Prefill != nil || at.PrefixCacheHits != nil {
		t.Fatalf("a restart between scrapes must make the values unavailable: %+v", at)
	}
	if !strings.Contains(at.Unavailable["queue_wait_seconds"], "restarted") {
		t.Fatalf("reason %q", at.Unavailable["queue_wait_seconds"])
	}
}

func TestUnknownAndLlamaCppServers(t *testing.T) {
	u := load(t, "unknown.txt")
	if u.Engine != "unknown" {
		t.Fatalf("engine %q", u.Engine)
	}
	if at := attribute(u, u); at.QueueWait != nil || at.Unavailable["queue_wait_seconds"] == "" {
		t.Fatalf("unknown server: %+v", at)
	}
	l := load(t, "llamacpp.txt")
	if l.Engine != "llamacpp" {
		t.Fatalf("engine %q", l.Engine)
	}
	at := attribute(l, l)
	if at.QueueWait != nil || !strings.Contains(at.Unavailable["queue_wait_seconds"], "llama.cpp") {
		t.Fatalf("llama.cpp: %+v", at)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := Parse(strings.NewReader("<html><body>404</body></html>"), "text/html"); err == nil {
		t.Fatal("HTML is not an exposition")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm-after.txt", "openmetrics-after.txt", "tgi-after.txt"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fams, err := Parse(bytes.NewReader(b), "")
		if err == nil {
			s := &Snapshot{Engine: Detect(fams), fams: fams}
			attribute(s, s)
		}
	})
}

// Against the real simulator: the attribution over some requests equals the simulator's truth.
func TestAgainstSimulatorTruth(t *testing.T) {
	p, err := sim.LookupProfile("fast")
	if err != nil {
		t.Fatal(err)
	}
	p.Engine.MaxNumSeqs = 1 // concurrent requests queue
	srv := simtest.Start(t, simtest.Config{Profile: p})
	s := srv.Server
	ctx := t.Context()
	sc := New(srv.URL+"/metrics", nil)
	before, err := sc.Scrape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0 := s.Truth()
	done := make(chan struct{})
	for range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			body, _ := json.Marshal(map[string]any{"model": s.ModelName(), "prompt": strings.Repeat("word ", 600), "max_tokens": 8, "ignore_eos": true})
			resp, err := http.Post(srv.URL+"/v1/completions", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for range 3 {
		<-done
	}
	after, why, err := sc.After(ctx, before, Wait{Requests: 3, Histograms: true, Quiet: time.Second, Timeout: 5 * time.Second})
	if err != nil || !strings.Contains(why, "counted the cell's 3 requests") {
		t.Fatalf("after: %v (why: %q)", err, why)
	}
	t1 := s.Truth()
	at := attribute(before, after)
	n := float64(t1.RequestsFinished - t0.RequestsFinished)
	wantQ, wantP := (t1.QueueSecondsSum-t0.QueueSecondsSum)/n, (t1.PrefillSecondsSum-t0.PrefillSecondsSum)/n
	if at.QueueWait == nil || at.Prefill == nil {
		t.Fatalf("attribution: %+v", at.Unavailable)
	}
	if wantQ <= 0 || math.Abs(at.QueueWait.Mean-wantQ) > 1e-9*wantQ || math.Abs(at.Prefill.Mean-wantP) > 1e-9*wantP {
		t.Fatalf("queue %v vs truth %v, prefill %v vs truth %v", at.QueueWait.Mean, wantQ, at.Prefill.Mean, wantP)
	}
}

// attribution is a Delta as the runner turns it into values (stats.ServerMean).
type attribution struct {
	QueueWait, Prefill                  *servebench.ServerValue
	PrefixCacheQueries, PrefixCacheHits *int64
	Unavailable                         map[string]string
}

func attribute(before, after *Snapshot) attribution {
	d := Delta(before, after)
	return attribution{stats.ServerMean(d.QueueWait), stats.ServerMean(d.Prefill), d.PrefixCacheQueries, d.PrefixCacheHits, d.Unavailable}
}

// A server's KV-cache gauge and preemption counter are believed only where they could be true:
// usage a share in [0, 1], preemptions a finite count of at least 0. Anything else is no reading,
// so a lying /metrics never becomes "the KV cache was 5e20% used" in a users' limit's why.
func TestKVUsageAndPreemptionsMustBePossible(t *testing.T) {
	for _, tc := range []struct {
		name         string
		usage, preem string
		okUsage      bool
		okPreem      bool
	}{
		{"honest", "0.42", "7", true, true},
		{"usage above 1", "5e18", "7", false, true},
		{"negative usage and preemptions", "-0.3", "-4", false, false},
		{"NaN and +Inf", "NaN", "+Inf", false, false},
	} {
		text := "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc " + tc.usage +
			"\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total " + tc.preem +
			"\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n"
		fams, err := Parse(strings.NewReader(text), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := &Snapshot{Engine: "vllm", fams: fams}
		if _, ok := s.KVCacheUsage(); ok != tc.okUsage {
			t.Errorf("%s: KV-cache usage %s read: %v, want %v", tc.name, tc.usage, ok, tc.okUsage)
		}
		if _, ok := s.Preemptions(); ok != tc.okPreem {
			t.Errorf("%s: preemptions %s read: %v, want %v", tc.name, tc.preem, ok, tc.okPreem)
		}
	}
}

// The KV cache's capacity is read from vLLM's info gauge as vLLM writes it (its cache
// configuration in labels, one series per engine): num_gpu_blocks × block_size, summed over
// engines; labels missing or not positive integers are no reading. The simulator exposes the
// same gauge, and it reads as the profile's KV capacity.
func TestKVCacheTokens(t *testing.T) {
	const info = `vllm:cache_config_info{block_size="16",cache_dtype="auto",calculate_kv_scales="False",cpu_offload_gb="0",enable_prefix_caching="True",engine="%s",gpu_memory_utilization="0.9",is_attention_free="False",num_cpu_blocks="None",num_gpu_blocks="%s",num_gpu_blocks_override="None",prefix_caching_hash_algo="builtin",sliding_window="None",swap_space="4",swap_space_bytes="4294967296"} 1.0` + "\n"
	for _, tc := range []struct {
		name   string
		blocks []string
		want   int
		ok     bool
	}{
		{"one engine", []string{"77224"}, 77224 * 16, true},
		{"two engines", []string{"1000", "2000"}, 3000 * 16, true},
		{"not yet known", []string{"None"}, 0, false},
		{"zero blocks", []string{"0"}, 0, false},
		{"absurd", []string{"999999999999999"}, 0, false},
	} {
		text := "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n"
		for i, b := range tc.blocks {
			text += fmt.Sprintf(info, strconv.Itoa(i), b)
		}
		fams, err := Parse(strings.NewReader(text), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := &Snapshot{Engine: "vllm", fams: fams}
		if got, ok := s.KVCacheTokens(); got != tc.want || ok != tc.ok {
			t.Errorf("%s: KV cache %d tokens (%v), want %d (%v)", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := load(t, "sglang-after.txt").KVCacheTokens(); ok {
		t.Error("SGLang's metrics read as a vLLM cache configuration")
	}

	p, err := sim.LookupProfile("h200-glm47-flash")
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.Start(t, simtest.Config{Profile: p})
	snap, err := New(srv.URL+"/metrics", nil).Scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := snap.KVCacheTokens(); !ok || got != p.KVCapacityTokens() {
		t.Errorf("simulator's KV cache read as %d tokens (%v), want the profile's %d", got, ok, p.KVCapacityTokens())
	}
}
