// Package gpu reads GPU telemetry — power, energy, utilisation, memory, temperature — from NVML
// (behind the nvml build tag: it needs cgo), a DCGM exporter URL, or nvidia-smi. It only reads;
// package stats turns the readings of a measured window into power, energy and cost.
package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench"
)

// GPUReading is one GPU at one moment.
type GPUReading struct {
	Index      int
	Name, UUID string
	PowerWatts float64
	// EnergyJoules is the GPU's cumulative energy counter (nil when it has none).
	EnergyJoules                             *float64
	UtilPercent, MemUsedBytes, MemTotalBytes float64
	TempC                                    float64
}

// Reading is every GPU at one moment.
type Reading struct {
	Time time.Time
	GPUs []GPUReading
}

// Source reads all GPUs once.
type Source interface {
	Name() string
	Read(ctx context.Context) (Reading, error)
}

// Open resolves a --gpu spec: "none" or "" gives no source; "auto" tries NVML (when built with
// the nvml tag) then nvidia-smi on PATH; "dcgm=URL" scrapes a dcgm-exporter; "nvidia-smi" and
// "nvml" name one source.
func Open(ctx context.Context, spec string, hc *http.Client) (Source, error) {
	switch {
	case spec == "" || spec == "none":
		return nil, nil
	case spec == "auto":
		if src, err := openNVML(); err == nil {
			return src, nil
		}
		if _, err := exec.LookPath("nvidia-smi"); err == nil {
			return NewNvidiaSMI(nil), nil
		}
		return nil, errors.New("no NVML (build with -tags nvml) and no nvidia-smi on PATH; pass --gpu dcgm=URL or --gpu none")
	case strings.HasPrefix(spec, "dcgm="):
		url := strings.TrimPrefix(spec, "dcgm=")
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("dcgm=%s: write the exporter's URL, e.g. dcgm=http://127.0.0.1:9400/metrics", url)
		}
		src := NewDCGM(url, hc)
		if _, err := src.Read(ctx); err != nil {
			return nil, fmt.Errorf("the DCGM exporter at %s cannot be read: %w", url, err)
		}
		return src, nil
	case spec == "nvidia-smi":
		if _, err := exec.LookPath("nvidia-smi"); err != nil {
			return nil, errors.New("nvidia-smi is not on PATH: install the NVIDIA driver utilities or pass --gpu dcgm=URL")
		}
		return NewNvidiaSMI(nil), nil
	case spec == "nvml":
		return openNVML()
	}
	return nil, fmt.Errorf("unknown GPU source %q: use auto, nvml, dcgm=URL, nvidia-smi or none", spec)
}

// Meter samples a source in the background.
type Meter struct {
	src      Source
	interval time.Duration
	mu       sync.Mutex
	readings []Reading
	// refused counts the readings Check refused; firstRefusal is the first one's reason
	refused      int
	firstRefusal error
	stop         chan struct{}
	done         chan struct{}
	ctx          context.Context
}

// NewMeter samples src every interval between Start and Stop.
func NewMeter(src Source, interval time.Duration) *Meter {
	return &Meter{src: src, interval: interval}
}

func (m *Meter) read() {
	r, err := m.src.Read(m.ctx)
	if err != nil || len(r.GPUs) == 0 {
		return
	}
	m.mu.Lock()
	if err := Check(r); err != nil {
		// an impossible figure (a driver's or an exporter's) is not averaged into the cell's
		// power: the reading is left out, and Refused says so
		m.refused++
		if m.firstRefusal == nil {
			m.firstRefusal = err
		}
		m.mu.Unlock()
		return
	}
	// a source that keeps its latest sample (a looping nvidia-smi) may give the same one twice
	if n := len(m.readings); n == 0 || r.Time.After(m.readings[n-1].Time) {
		m.readings = append(m.readings, r)
	}
	m.mu.Unlock()
}

// Start takes a first reading and keeps sampling until Stop.
func (m *Meter) Start(ctx context.Context) {
	m.ctx = context.WithoutCancel(ctx)
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	m.read()
	go func() {
		defer close(m.done)
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.read()
			}
		}
	}()
}

// Refused is how many readings Check refused since Start, and the first one's reason (nil when
// none was).
func (m *Meter) Refused() (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused, m.firstRefusal
}

// Plausible bounds of one GPU's figures, beyond which a reading is refused: no accelerator
// draws more than MaxWatts (the largest boards today are rated near 1.2-1.4 kW) or runs hotter
// than MaxTempC before it throttles and shuts down.
const (
	MaxWatts = 10_000.0
	MaxTempC = 200.0
)

// Check refuses a reading that no GPU can give: a power, utilisation, memory, temperature or
// energy counter that is NaN or infinite, negative, power above MaxWatts, utilisation above
// 100%, memory used above its total, or a temperature outside −60 to MaxTempC °C. The error
// names the GPU and the field. A field the source could not read is 0 ("[N/A]") and passes.
func Check(r Reading) error {
	for _, g := range r.GPUs {
		bad := func(field string, v float64) error {
			return fmt.Errorf("GPU %d: %s %v is impossible", g.Index, field, v)
		}
		for _, f := range []struct {
			name   string
			v, max float64
		}{
			{"power (W)", g.PowerWatts, MaxWatts},
			{"utilisation (%)", g.UtilPercent, 100},
			{"memory used (bytes)", g.MemUsedBytes, math.MaxFloat64},
			{"memory total (bytes)", g.MemTotalBytes, math.MaxFloat64},
			{"temperature (°C)", g.TempC, MaxTempC},
		} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v > f.max || (f.v < 0 && f.name != "temperature (°C)") || f.v < -60 {
				return bad(f.name, f.v)
			}
		}
		if g.MemTotalBytes > 0 && g.MemUsedBytes > g.MemTotalBytes {
			return fmt.Errorf("GPU %d: memory used %.0f B is above its total %.0f B", g.Index, g.MemUsedBytes, g.MemTotalBytes)
		}
		if e := g.EnergyJoules; e != nil && (math.IsNaN(*e) || math.IsInf(*e, 0) || *e < 0) {
			return bad("energy counter (J)", *e)
		}
	}
	return nil
}

// Stop takes a last reading and returns them all in time order.
func (m *Meter) Stop() []Reading {
	close(m.stop)
	<-m.done
	m.read()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.readings
}

// Power is the reading as the run keeps it: its time as an offset from the run origin, each
// GPU's power and energy counter (package stats turns readings into power, energy and cost).
func (r Reading) Power(origin time.Time) servebench.PowerReading {
	p := servebench.PowerReading{AtSeconds: r.Time.Sub(origin).Seconds(), Watts: make([]float64, len(r.GPUs))}
	counters := false
	for i, g := range r.GPUs {
		p.Watts[i] = g.PowerWatts
		counters = counters || g.EnergyJoules != nil
	}
	if counters {
		p.EnergyJoules = make([]*float64, len(r.GPUs))
		for i, g := range r.GPUs {
			p.EnergyJoules[i] = g.EnergyJoules
		}
	}
	return p
}
