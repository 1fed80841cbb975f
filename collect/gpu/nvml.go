//go:build nvml

package gpu

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var nvmlInit = sync.OnceValue(func() nvml.Return { return nvml.Init() })

// NVML reads local GPUs through the NVIDIA Management Library, with the total-energy counter.
// Each device's name and UUID are read once, when it is opened: a reading asks only for what
// changes (five calls per GPU).
type NVML struct {
	devices     []nvml.Device
	names, uuid []string
}

func openNVML() (Source, error) {
	if ret := nvmlInit(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML init: %s (is the NVIDIA driver installed?)", nvml.ErrorString(ret))
	}
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS || n == 0 {
		return nil, fmt.Errorf("NVML found no GPU: %s", nvml.ErrorString(ret))
	}
	src := &NVML{}
	for i := 0; i < n; i++ {
		d, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d: %s", i, nvml.ErrorString(ret))
		}
		name, _ := d.GetName()
		uuid, _ := d.GetUUID()
		src.devices = append(src.devices, d)
		src.names, src.uuid = append(src.names, name), append(src.uuid, uuid)
	}
	return src, nil
}

// Name is "nvml".
func (s *NVML) Name() string { return "nvml" }

// Read reads every device once.
func (s *NVML) Read(ctx context.Context) (Reading, error) {
	r := Reading{Time: time.Now()}
	for i, d := range s.devices {
		g := GPUReading{Index: i, Name: s.names[i], UUID: s.uuid[i]}
		if mw, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			g.PowerWatts = float64(mw) / 1000
		}
		if mj, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			j := float64(mj) / 1000
			g.EnergyJoules = &j
		}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			g.UtilPercent = float64(u.Gpu)
		}
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemUsedBytes, g.MemTotalBytes = float64(m.Used), float64(m.Total)
		}
		if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			g.TempC = float64(t)
		}
		r.GPUs = append(r.GPUs, g)
	}
	return r, nil
}
