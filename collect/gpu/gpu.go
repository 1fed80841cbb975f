// Package gpu reads GPU telemetry — power, energy, utilisation, memory, temperature — from NVML
// (behind the nvml build tag: it needs cgo), a DCGM exporter URL, or nvidia-smi. It only reads;
// package stats turns the readings of a measured window into power, energy and cost.
package gpu

import (
	"context"
	"errors"
	"fmt"
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
