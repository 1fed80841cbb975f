package gpu

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DCGM reads a dcgm-exporter endpoint (Prometheus text): DCGM_FI_DEV_POWER_USAGE (W),
// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since boot), DCGM_FI_DEV_GPU_UTIL (%),
// DCGM_FI_DEV_FB_USED and DCGM_FI_DEV_FB_FREE (MiB), DCGM_FI_DEV_GPU_TEMP (°C), one series per
// GPU labelled gpu, UUID and modelName.
type DCGM struct {
	url string
	hc  *http.Client
}

// NewDCGM reads url.
func NewDCGM(url string, hc *http.Client) *DCGM {
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	return &DCGM{url: url, hc: hc}
}

// Name is "dcgm".
func (d *DCGM) Name() string { return "dcgm" }

// Read scrapes the exporter once. The reading is stamped at the middle of the request's round
// trip (sent → response headers), the best estimate of when the exporter wrote its values:
// stamping after the body is parsed would add the parse time, a few ms on a loaded client,
// to the time base of every power integral.
func (d *DCGM) Read(ctx context.Context) (Reading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return Reading{}, err
	}
	sent := time.Now()
	resp, err := d.hc.Do(req)
	if err != nil {
		return Reading{}, err
	}
	at := sent.Add(time.Since(sent) / 2)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Reading{}, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	r, err := ParseDCGM(io.LimitReader(resp.Body, 16<<20))
	r.Time = at
	return r, err
}

// ParseDCGM reads dcgm-exporter text into one reading (Time left zero).
func ParseDCGM(in io.Reader) (Reading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(in)
	if err != nil {
		return Reading{}, fmt.Errorf("not a dcgm-exporter page: %w", err)
	}
	byGPU := map[int]*GPUReading{}
	get := func(m *dto.Metric) *GPUReading {
		idx, name, uuid := 0, "", ""
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "gpu":
				idx, _ = strconv.Atoi(l.GetValue())
			case "modelName":
				name = l.GetValue()
			case "UUID":
				uuid = l.GetValue()
			}
		}
		g, ok := byGPU[idx]
		if !ok {
			g = &GPUReading{Index: idx, Name: name, UUID: uuid}
			byGPU[idx] = g
		}
		return g
	}
	val := func(m *dto.Metric) float64 {
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		}
		return m.GetUntyped().GetValue()
	}
	var free = map[int]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			v := val(m)
			switch name {
			case "DCGM_FI_DEV_POWER_USAGE":
				get(m).PowerWatts = v
			case "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION":
				j := v / 1000 // mJ → J
				get(m).EnergyJoules = &j
			case "DCGM_FI_DEV_GPU_UTIL":
				get(m).UtilPercent = v
			case "DCGM_FI_DEV_FB_USED":
				get(m).MemUsedBytes = v * (1 << 20)
			case "DCGM_FI_DEV_FB_FREE":
				g := get(m)
				free[g.Index] = v * (1 << 20)
			case "DCGM_FI_DEV_GPU_TEMP":
				get(m).TempC = v
			}
		}
	}
	if len(byGPU) == 0 {
		return Reading{}, fmt.Errorf("no DCGM_FI_DEV_* series: is this a dcgm-exporter endpoint?")
	}
	var out Reading
	for _, g := range byGPU {
		g.MemTotalBytes = g.MemUsedBytes + free[g.Index]
		out.GPUs = append(out.GPUs, *g)
	}
	sort.Slice(out.GPUs, func(i, j int) bool { return out.GPUs[i].Index < out.GPUs[j].Index })
	return out, nil
}
