package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench"
)

// JoulesPerKWh is the energy of one kilowatt-hour (J).
const JoulesPerKWh = 3.6e6

// CostUSDPerHour is what drawing watts (W) costs for one hour at usdPerKWh (USD/kWh):
//
//	cost_usd_per_hour = watts / 1000 × price
func CostUSDPerHour(watts, usdPerKWh float64) float64 { return watts / 1000 * usdPerKWh }

// WindowReadings keeps the GPU readings a measured window [start, end] (s from the run origin)
// needs: those inside it plus the nearest one on each side, so that the readings bracket it.
// readings are in time order.
func WindowReadings(readings []servebench.PowerReading, start, end float64) []servebench.PowerReading {
	var in []servebench.PowerReading
	for i, rd := range readings {
		if rd.AtSeconds < start {
			if i+1 < len(readings) && readings[i+1].AtSeconds >= start {
				in = append(in, rd)
			}
			continue
		}
		in = append(in, rd)
		if rd.AtSeconds > end {
			break
		}
	}
	return in
}

// Power turns the GPU readings of a measured window (WindowReadings) into power, energy and
// cost, for outputTokens output tokens produced in the window and electricity at usdPerKWh
// (USD/kWh; 0: no cost):
//
//	energy (J)        = Σ over GPUs of (last energy counter − first), when every reading has
//	                    a counter and none went down ("energy-counter"); otherwise the
//	                    trapezoidal integral of total sampled power over time ("integrated-power")
//	mean power (W)    = energy / (last reading time − first reading time)
//	peak power (W)    = max over readings of the total sampled power (at least the mean)
//	J per token       = energy / output tokens completed in the window
//	cost per hour     = CostUSDPerHour(mean power, price) (USD)
//	cost per 1M tok   = energy / JoulesPerKWh × price / output tokens × 1e6 (USD)
//
// source names the telemetry ("nvml", "dcgm" …). With fewer than two readings nothing can be
// said and the reason is returned instead (window is the window's length, for that reason).
func Power(readings []servebench.PowerReading, window time.Duration, outputTokens int, usdPerKWh float64, source string) (*servebench.Power, *servebench.Energy, string) {
	if len(readings) < 2 {
		return nil, nil, fmt.Sprintf("fewer than two GPU readings from %s during the measured window (%s)", source, window.Round(time.Millisecond))
	}
	first, last := readings[0], readings[len(readings)-1]
	span := last.AtSeconds - first.AtSeconds
	if span <= 0 {
		return nil, nil, "GPU readings span no time"
	}
	total := func(r servebench.PowerReading) float64 {
		var w float64
		for _, g := range r.Watts {
			w += g
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
			dt := readings[i].AtSeconds - readings[i-1].AtSeconds
			joules += dt * (total(readings[i]) + total(readings[i-1])) / 2
		}
	}
	mean := joules / span
	p := &servebench.Power{MeanWatts: mean, PeakWatts: max(peak, mean), GPUs: len(last.Watts), Source: source}
	e := &servebench.Energy{Joules: joules, CostUSDPerHour: CostUSDPerHour(mean, usdPerKWh), ElectricityUSDPerKWh: usdPerKWh, Source: how}
	if outputTokens > 0 {
		e.JoulesPerOutputToken = joules / float64(outputTokens)
		e.CostUSDPerMillionOutputTokens = joules / JoulesPerKWh * usdPerKWh / float64(outputTokens) * 1e6
	}
	return p, e, ""
}

// counterEnergy is the energy-counter difference (J), or NaN when it cannot be used.
func counterEnergy(first, last servebench.PowerReading) (float64, string) {
	if len(first.Watts) == 0 || len(first.EnergyJoules) != len(first.Watts) || len(last.EnergyJoules) != len(first.EnergyJoules) {
		return math.NaN(), ""
	}
	var j float64
	for i := range first.EnergyJoules {
		a, b := first.EnergyJoules[i], last.EnergyJoules[i]
		if a == nil || b == nil || *b < *a {
			return math.NaN(), ""
		}
		j += *b - *a
	}
	return j, "energy-counter"
}

// ServerMean is a server-side per-request mean from a histogram's change over a cell:
//
//	mean = Δ_sum / Δ_count (s), over round(Δ_count) requests, source "prometheus:<metric>"
//
// nil when no observation was added (Δ_count ≤ 0).
func ServerMean(d *servebench.HistogramDelta) *servebench.ServerValue {
	if d == nil || d.Count <= 0 {
		return nil
	}
	return &servebench.ServerValue{Mean: d.Sum / d.Count, Source: "prometheus:" + d.Metric, Requests: int(math.Round(d.Count))}
}
