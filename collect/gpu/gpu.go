// Package gpu reads GPU telemetry — power, energy, utilisation, memory, temperature — from NVML
// (behind the nvml build tag: it needs cgo), a DCGM exporter URL, or nvidia-smi, and turns the
// readings of a measured window into power, energy and cost.
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
	stop     chan struct{}
	done     chan struct{}
	ctx      context.Context
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
	m.readings = append(m.readings, r)
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

// Stop takes a last reading and returns them all in time order.
func (m *Meter) Stop() []Reading {
	close(m.stop)
	<-m.done
	m.read()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.readings
}

// Summarize turns the readings of a measured window into power, energy and cost:
//
//	energy (J)        = Σ over GPUs of (last energy counter − first), when every reading has
//	                    a counter and none went down ("energy-counter"); otherwise the
//	                    trapezoidal integral of total sampled power over time ("integrated-power")
//	mean power (W)    = energy / (last reading time − first reading time)
//	peak power (W)    = max over readings of the total sampled power
//	J per token       = energy / output tokens completed in the window
//	cost per hour     = mean power / 1000 × price (USD/kWh)
//	cost per 1M tok   = energy / 3.6e6 × price / output tokens × 1e6
//
// The window argument is the cell's measured window; readings should bracket it. With fewer
// than two readings nothing can be said and the reason is returned.
func Summarize(readings []Reading, window time.Duration, outputTokens int, usdPerKWh float64, source string) (*servebench.Power, *servebench.Energy, string) {
	if len(readings) < 2 {
		return nil, nil, fmt.Sprintf("fewer than two GPU readings from %s during the measured window (%s)", source, window.Round(time.Millisecond))
	}
	first, last := readings[0], readings[len(readings)-1]
	span := last.Time.Sub(first.Time).Seconds()
	if span <= 0 {
		return nil, nil, "GPU readings span no time"
	}
	total := func(r Reading) float64 {
		var w float64
		for _, g := range r.GPUs {
			w += g.PowerWatts
		}
		return w
	}
	var peak float64
	for _, r := range readings {
		peak = max(peak, total(r))
	}
	joules, how := counterEnergy(first, last)
	if math.IsNaN(joules) {
		how, joules = "integrated-power", 0
		for i := 1; i < len(readings); i++ {
			dt := readings[i].Time.Sub(readings[i-1].Time).Seconds()
			joules += dt * (total(readings[i]) + total(readings[i-1])) / 2
		}
	}
	mean := joules / span
	p := &servebench.Power{MeanWatts: mean, PeakWatts: max(peak, mean), GPUs: len(last.GPUs), Source: source}
	e := &servebench.Energy{Joules: joules, CostUSDPerHour: mean / 1000 * usdPerKWh, ElectricityUSDPerKWh: usdPerKWh, Source: how}
	if outputTokens > 0 {
		e.JoulesPerOutputToken = joules / float64(outputTokens)
		e.CostUSDPerMillionOutputTokens = joules / 3.6e6 * usdPerKWh / float64(outputTokens) * 1e6
	}
	return p, e, ""
}

// counterEnergy is the energy-counter difference, or NaN when it cannot be used.
func counterEnergy(first, last Reading) (float64, string) {
	if len(first.GPUs) == 0 || len(first.GPUs) != len(last.GPUs) {
		return math.NaN(), ""
	}
	var j float64
	for i := range first.GPUs {
		a, b := first.GPUs[i].EnergyJoules, last.GPUs[i].EnergyJoules
		if a == nil || b == nil || *b < *a {
			return math.NaN(), ""
		}
		j += *b - *a
	}
	return j, "energy-counter"
}
