package runner_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/collect/gpu"
	"github.com/servebench/servebench/collect/promscrape"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/openai"
	"github.com/servebench/servebench/plan"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/workload"
)

// memRecorder keeps what a run writes in memory.
type memRecorder struct {
	mu   sync.Mutex
	recs []servebench.Record
	logs []servebench.CellLog
	res  servebench.Results
}

func (m *memRecorder) Append(r servebench.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}
func (m *memRecorder) AppendSamples([]servebench.Sample) error { return nil }
func (m *memRecorder) AppendCellLog(l servebench.CellLog) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, l)
	return nil
}
func (m *memRecorder) WriteResults(r servebench.Results) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.res = r
	return nil
}

// target is a simulator in memory (simtest.StartInMemory): run the test inside a synctest
// bubble and the run takes the simulator's virtual time.
type target struct {
	srv  *sim.Server
	base string
	hc   *http.Client // its side endpoints: /tokenize, metrics, GPU telemetry
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func startSim(t *testing.T, prof sim.Profile, opts sim.Options) target {
	t.Helper()
	return startSimConfig(t, simtest.Config{Profile: prof, Options: opts})
}

func startSimConfig(t *testing.T, c simtest.Config) target {
	t.Helper()
	s := simtest.StartInMemory(t, c)
	hc := s.HTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return target{srv: s.Server, base: s.URL, hc: hc, dial: s.Dial}
}

func newRunner(t *testing.T, tg target, p servebench.Plan, prompts runner.PromptBuilder) (*runner.Runner, *memRecorder) {
	t.Helper()
	ctx := context.Background()
	origin := time.Now()
	cfg := openai.Config{BaseURL: tg.base + "/v1", API: p.Target.API, Origin: origin, MaxConnections: 16, DialContext: tg.dial}
	info, q, err := openai.Discover(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Quirks, cfg.Model = q, info.Models[0]
	client, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if prompts == nil {
		b, err := workload.NewBuilder(ctx, workload.Config{RunID: fmt.Sprint(time.Now().UnixNano()), API: p.Target.API,
			BaseURL: tg.base + "/v1", Model: cfg.Model, HTTPClient: tg.hc, Probe: client.ProbePromptTokens})
		if err != nil {
			t.Fatal(err)
		}
		prompts = b
	}
	src, err := gpu.Open(ctx, "dcgm="+tg.base+"/dcgm/metrics", tg.hc)
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	return &runner.Runner{Plan: p, Server: info, Client: client, Prompts: prompts, Recorder: rec,
		Metrics: promscrape.New(tg.base+"/metrics", tg.hc), GPU: src, Origin: origin,
		RunInfo: servebench.RunInfo{ID: "test"}}, rec
}

func smallPlan(t *testing.T, contexts string, conc string, out int) servebench.Plan {
	t.Helper()
	p, err := plan.Resolve(nil, plan.Overrides{"url": "http://127.0.0.1:1/v1", "contexts": contexts, "concurrency": conc,
		"output-tokens": strconv.Itoa(out), "use-cases": "none", "min-requests": "4", "rounds": "1"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// With concurrency above what the simulated engine can run at once, requests queue; the queue
// wait and prefill time attributed to the cell from the server's histograms must match the
// simulator's own truth for that cell within 2%.
func TestQueueAndPrefillAttributionMatchTruth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		prof.Engine.MaxNumSeqs = 2 // 6 in flight, 2 running: queueing guaranteed
		tg := startSim(t, prof, sim.Options{Seed: 1})
		p := smallPlan(t, "2k", "6", 32)
		r, _ := newRunner(t, tg, p, nil)
		before := tg.srv.Truth()
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		after := tg.srv.Truth()
		res := r.Results()
		if len(res.Cells) != 1 {
			t.Fatalf("cells: %+v", res.Cells)
		}
		c := res.Cells[0]
		n := float64(after.RequestsFinished - before.RequestsFinished)
		wantQ := (after.QueueSecondsSum - before.QueueSecondsSum) / n
		wantP := (after.PrefillSecondsSum - before.PrefillSecondsSum) / n
		if c.QueueWaitSeconds == nil || c.PrefillSeconds == nil {
			t.Fatalf("server fields missing: %+v", c.Unavailable)
		}
		if wantQ <= 0 {
			t.Fatalf("the test needs queueing; truth queue wait = %v", wantQ)
		}
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"queue wait", c.QueueWaitSeconds.Mean, wantQ}, {"prefill", c.PrefillSeconds.Mean, wantP}} {
			if math.Abs(x.got-x.want) > 0.02*x.want {
				t.Errorf("%s: attributed %.6fs, truth %.6fs (more than 2%% apart)", x.name, x.got, x.want)
			}
		}
		if !strings.HasPrefix(c.QueueWaitSeconds.Source, "prometheus:") {
			t.Errorf("source = %q", c.QueueWaitSeconds.Source)
		}
		if c.GPUPowerWatts == nil || c.EnergyJoules == nil || c.PrefillSpeedTPS == nil {
			t.Errorf("power/energy/prefill speed missing: %+v", c.Unavailable)
		}
		if c.CacheContaminated {
			t.Error("unique prompts must not be flagged as cache-contaminated")
		}
	})
}

// sharedPrompts gives every request the same long prefix: what a careless benchmark does.
type sharedPrompts struct{ inner runner.PromptBuilder }

func (s sharedPrompts) Prompt(ctx context.Context, seq int64, tokens int) (string, error) {
	return s.inner.Prompt(ctx, 0, tokens) // every request gets request 0's prompt
}

func TestSharedPrefixIsFlaggedAsCacheContaminated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := sim.LookupProfile("fast")
		if err != nil {
			t.Fatal(err)
		}
		tg := startSim(t, prof, sim.Options{Seed: 2})
		p := smallPlan(t, "2k", "2", 16)
		r, _ := newRunner(t, tg, p, nil)
		r.Prompts = sharedPrompts{inner: r.Prompts}
		if err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		c := res.Cells[0]
		if !c.CacheContaminated || c.CacheHitTokens == nil || *c.CacheHitTokens == 0 {
			t.Fatalf("shared prompts must be flagged: contaminated=%v hits=%v", c.CacheContaminated, c.CacheHitTokens)
		}
		found := false
		for _, n := range res.Notes {
			found = found || strings.Contains(n, "cache-contaminated")
		}
		if !found {
			t.Errorf("no note about contamination in %q", res.Notes)
		}
	})
}
