package report

import (
	"fmt"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
)

func (b *builder) sectionPower() {
	const id, title = "power", "Power and Cost"
	intro := para("GPU power draw and energy over each cell's measured window, for operating cost, cooling and power budgeting.")
	if b.sweep.empty() || !b.sweep.has(valPower) {
		why := b.unavailable("gpu_power_watts")
		if why == "" {
			why = "no GPU telemetry was recorded"
		}
		b.add(id, title, 1, intro, missing(fmt.Sprintf("Power was not measured (%s). Pass --gpu nvml (local GPUs, cgo build), --gpu dcgm=URL (a DCGM exporter) or --gpu nvidia-smi.", why)))
		return
	}
	g := b.sweep
	ch := g.chart("chart-power", title, "Average GPU power draw", "watts", 0, valPower)
	pc, pv := g.extreme(true, valPeakPower)
	price := b.md.ElectricityUSDPerKWh
	blocks := []Block{intro, chartB(ch)}
	s := fmt.Sprintf("The highest power draw observed was %.0fW at %s context with %s (%s, %s)", pv, ctxLabel(pc.ContextTokens), capacity.Requests(pc.Concurrency), plural(pc.GPUPowerWatts.GPUs, "GPU"), pc.GPUPowerWatts.Source)
	if price > 0 {
		s += fmt.Sprintf(", costing approximately %s/hour at %s/kWh. Budget for peak draw when planning power.", fmtUSD(stats.CostUSDPerHour(pv, price)), fmtUSD(price))
	} else {
		s += ". Costs are not computed: set metadata.electricity_usd_per_kwh in the plan."
	}
	blocks = append(blocks, para("%s", s))
	t := &Table{Header: []string{"CONDITION", "MEAN POWER", "PEAK POWER", "J / OUTPUT TOKEN", "COST / HOUR", "COST / 1M OUTPUT TOKENS"}}
	bestJ := (*servebench.CellResult)(nil)
	for _, c := range g.ordered() {
		if c.GPUPowerWatts == nil {
			continue
		}
		row := []string{condition(c), fmt.Sprintf("%.0fW", c.GPUPowerWatts.MeanWatts), fmt.Sprintf("%.0fW", c.GPUPowerWatts.PeakWatts), "—", "—", "—"}
		if e := c.EnergyJoules; e != nil {
			row[3] = fmtNum(e.JoulesPerOutputToken, 2) + " J"
			if e.ElectricityUSDPerKWh > 0 {
				row[4], row[5] = fmtUSD(e.CostUSDPerHour), fmtUSD(e.CostUSDPerMillionOutputTokens)
			}
			if bestJ == nil || e.JoulesPerOutputToken < bestJ.EnergyJoules.JoulesPerOutputToken {
				bestJ = c
			}
		}
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, tableB(t))
	if bestJ != nil {
		e := bestJ.EnergyJoules
		s := fmt.Sprintf("The most energy-efficient point is %s at %s J per output token", condition(bestJ), fmtNum(e.JoulesPerOutputToken, 2))
		if e.ElectricityUSDPerKWh > 0 {
			s += fmt.Sprintf(", %s per million output tokens in electricity", fmtUSD(e.CostUSDPerMillionOutputTokens))
		}
		blocks = append(blocks, para("%s (energy source: %s).", s, e.Source))
	} else if why := b.unavailable("energy_joules"); why != "" {
		blocks = append(blocks, missing("Energy per token was not computed ("+why+")."))
	}
	b.add(id, title, 1, blocks...)
}
