package gpu

import (
	"context"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/sim"
)

func f(v float64) *float64 { return &v }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func reading(sec float64, gpus ...GPUReading) Reading {
	return Reading{Time: t0.Add(time.Duration(sec * float64(time.Second))), GPUs: gpus}
}

func TestSummarize(t *testing.T) {
	cases := []struct {
		name               string
		rs                 []Reading
		tokens             int
		joules, mean, peak float64
		source             string
	}{
		// two GPUs with energy counters: (1300−1000) + (700−500) J over 2 s
		{"counter", []Reading{
			reading(0, GPUReading{PowerWatts: 100, EnergyJoules: f(1000)}, GPUReading{PowerWatts: 90, EnergyJoules: f(500)}),
			reading(1, GPUReading{PowerWatts: 160, EnergyJoules: f(1150)}, GPUReading{PowerWatts: 110, EnergyJoules: f(600)}),
			reading(2, GPUReading{PowerWatts: 140, EnergyJoules: f(1300)}, GPUReading{PowerWatts: 100, EnergyJoules: f(700)}),
		}, 1000, 500, 250, 270, "energy-counter"},
		// no counter: trapezoids (100+200)/2·1 + (200+300)/2·1 = 400 J over 2 s
		{"integrated", []Reading{reading(0, GPUReading{PowerWatts: 100}), reading(1, GPUReading{PowerWatts: 200}), reading(2, GPUReading{PowerWatts: 300})},
			400, 400, 200, 300, "integrated-power"},
		// a counter that went down (driver reload) falls back to integration
		{"reset", []Reading{reading(0, GPUReading{PowerWatts: 100, EnergyJoules: f(5000)}), reading(4, GPUReading{PowerWatts: 100, EnergyJoules: f(10)})},
			0, 400, 100, 100, "integrated-power"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, e, why := Summarize(c.rs, 2*time.Second, c.tokens, 0.10, "test")
			if p == nil || e == nil {
				t.Fatalf("nil: %s", why)
			}
			if e.Joules != c.joules || p.MeanWatts != c.mean || p.PeakWatts != c.peak || e.Source != c.source {
				t.Fatalf("joules %v mean %v peak %v source %s", e.Joules, p.MeanWatts, p.PeakWatts, e.Source)
			}
			if want := c.mean / 1000 * 0.10; math.Abs(e.CostUSDPerHour-want) > 1e-12 {
				t.Errorf("cost/hour %v want %v", e.CostUSDPerHour, want)
			}
			if c.tokens > 0 {
				if e.JoulesPerOutputToken != c.joules/float64(c.tokens) {
					t.Errorf("J/token %v", e.JoulesPerOutputToken)
				}
				if want := c.joules / 3.6e6 * 0.10 / float64(c.tokens) * 1e6; math.Abs(e.CostUSDPerMillionOutputTokens-want) > 1e-12 {
					t.Errorf("cost per 1M tokens %v want %v", e.CostUSDPerMillionOutputTokens, want)
				}
			} else if e.JoulesPerOutputToken != 0 {
				t.Error("no tokens: no per-token figures")
			}
		})
	}
	if p, e, why := Summarize([]Reading{reading(0, GPUReading{PowerWatts: 1})}, time.Second, 1, 0.1, "x"); p != nil || e != nil || why == "" {
		t.Fatal("one reading cannot give energy")
	}
}

func TestParseDCGM(t *testing.T) {
	fh, _ := os.Open("testdata/dcgm.txt")
	defer fh.Close()
	r, err := ParseDCGM(fh)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 2 {
		t.Fatalf("%d GPUs", len(r.GPUs))
	}
	g := r.GPUs[1]
	if g.Index != 1 || g.UUID != "GPU-bbbb" || g.PowerWatts != 488.75 || *g.EnergyJoules != 98765.432 || g.UtilPercent != 95 ||
		g.MemUsedBytes != 72000*(1<<20) || g.MemTotalBytes != 81559*(1<<20) || g.TempC != 58 || !strings.Contains(g.Name, "H100") {
		t.Fatalf("gpu 1: %+v", g)
	}
	if _, err := ParseDCGM(strings.NewReader("# TYPE up gauge\nup 1\n")); err == nil {
		t.Fatal("a page without DCGM series must be refused")
	}
}

func TestParseSMI(t *testing.T) {
	r, err := ParseSMI("0, NVIDIA A100-SXM4-80GB, GPU-1234, 312.45, 88, 70000, 81920, 64\n1, NVIDIA A100-SXM4-80GB, GPU-5678, [N/A], 0, 10, 81920, 40\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 2 || r.GPUs[0].PowerWatts != 312.45 || r.GPUs[1].PowerWatts != 0 || r.GPUs[0].MemTotalBytes != 81920*(1<<20) || r.GPUs[0].EnergyJoules != nil {
		t.Fatalf("%+v", r.GPUs)
	}
	if _, err := ParseSMI("garbage"); err == nil {
		t.Fatal("want an error")
	}
}

func TestOpenSpecs(t *testing.T) {
	ctx := context.Background()
	if s, err := Open(ctx, "none", nil); s != nil || err != nil {
		t.Fatal("none is no source and no error")
	}
	if _, err := Open(ctx, "amd-smi", nil); err == nil || !strings.Contains(err.Error(), "dcgm=URL") {
		t.Fatalf("unknown spec: %v", err)
	}
	if _, err := Open(ctx, "dcgm=localhost:9400", nil); err == nil {
		t.Fatal("a dcgm spec without a URL scheme must be refused")
	}
	if _, err := Open(ctx, "dcgm=http://127.0.0.1:1/metrics", nil); err == nil {
		t.Fatal("an unreachable exporter must be reported at once")
	}
}

// The simulator's dcgm-exporter endpoint, metered while it idles: the energy counter
// difference and the integrated power agree with idle power.
func TestMeterAgainstSimulatorDCGM(t *testing.T) {
	p, _ := sim.LookupProfile("fast")
	s := sim.New(p, sim.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	src, err := Open(ctx, "dcgm="+srv.URL+"/dcgm/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMeter(src, 20*time.Millisecond)
	m.Start(ctx)
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // let the meter take several readings
	}
	rs := m.Stop()
	if len(rs) < 3 {
		t.Fatalf("%d readings", len(rs))
	}
	pw, e, why := Summarize(rs, 0, 0, 0.1, src.Name())
	if pw == nil {
		t.Fatal(why)
	}
	if e.Source != "energy-counter" {
		t.Fatalf("source %s", e.Source)
	}
	if math.Abs(pw.MeanWatts-p.GPU.IdleWatts) > 0.02*p.GPU.IdleWatts {
		t.Fatalf("idle mean power %.2f W, simulator idles at %.0f W", pw.MeanWatts, p.GPU.IdleWatts)
	}
}

type fakeSource struct{ n atomic.Int64 }

func (f *fakeSource) Name() string { return "fake" }
func (f *fakeSource) Read(ctx context.Context) (Reading, error) {
	f.n.Add(1)
	return Reading{Time: time.Now(), GPUs: []GPUReading{{PowerWatts: 1}}}, nil
}

func TestMeterReadsAtStartAndStop(t *testing.T) {
	src := &fakeSource{}
	m := NewMeter(src, time.Hour) // no tick in between
	m.Start(context.Background())
	rs := m.Stop()
	if len(rs) != 2 || src.n.Load() != 2 {
		t.Fatalf("%d readings, %d reads: want one at Start and one at Stop", len(rs), src.n.Load())
	}
}
