package results

import (
	"fmt"
	"math"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
)

// Cell computes a measured cell from its records and what the run kept of it (l, its line of
// cells.jsonl) under plan p: the only path from records to a CellResult, for a cell just
// measured and for one Recompute reads back from the run folder. It is pure: the same plan,
// log and records give the same cell. What the cell tells the run (saturation, cache
// contamination) is in the cell itself and said by Notes.
func Cell(p servebench.Plan, l servebench.CellLog, recs []servebench.Record) servebench.CellResult {
	recs = stats.Sanitize(recs) // no value a server claimed that cannot be true enters the cell
	key := l.Cell
	w := stats.Window{Start: l.WindowStartSeconds, End: l.WindowEndSeconds}
	cell := stats.Cell(key, recs, w)
	cell.Attempt = l.Attempt
	// how the cell was timed, and whether the client kept up
	var sched servebench.Histogram
	if l.SchedLatency != nil {
		sched = *l.SchedLatency
	}
	ct := stats.ClientTiming(recs, sched)
	cell.Client = &ct
	if bound, note := stats.ClientBound(ct, cell.LateSends); bound {
		cell.Validity.Add(servebench.ReasonClientBound, servebench.VerdictLowConfidence, note)
	}
	cell.Unavailable = map[string]string{}
	// the plan's objectives (goodput) and the open-loop verdicts
	if p.SLO != nil {
		stats.Goodput(&cell, recs, *p.SLO)
	}
	stats.OpenLoop(&cell, recs)
	// server-side queue wait and prefill: per-request timings first, histograms otherwise
	attributeServer(p, &cell, recs, l)
	// GPU power and energy over the measured window
	attributePower(p, &cell, l, w)
	// how far the numbers can be trusted
	stats.Assess(&cell, recs, w, aim(p, cell))
	if len(cell.Unavailable) == 0 {
		cell.Unavailable = nil
	}
	return cell
}

// aim is the relative half-width of its intervals a cell is judged against (too-few-samples):
// the plan's precision, except for a level of a use case's search (in concurrent requests or
// in users) whose verdict is settled at 95% (capacity.Settled: every threshold's interval on
// one side of it). Such a level was measured to decide pass or fail, and stops as soon as it
// has, so a mean less precise than the sweep's target is what it aimed for, not a shortfall:
// it is judged on its verdict (+Inf here) and its intervals are shown as they are. A level
// stopped by its cap before its verdict was certain keeps the plan's precision, and with it
// too-few-samples; so does any level of fewer than stats.MinIntervalSamples successes, whose
// intervals are not shown at all (stats.Assess).
func aim(p servebench.Plan, c servebench.CellResult) float64 {
	if c.Kind != servebench.KindCapacity && c.Kind != servebench.KindUsers {
		return p.Sweep.Precision
	}
	for _, uc := range p.UseCases {
		if uc.Name == c.Scenario && capacity.Settled(uc, c) {
			return math.Inf(1)
		}
	}
	return p.Sweep.Precision
}

// Notes are the run-level facts a cell makes the report state: an open-loop cell past
// saturation, a cell whose prompts the server served from its prefix cache although the plan
// meant every one to be unique. Results lists them in the order the cells were folded.
func Notes(c servebench.CellResult) []string {
	var notes []string
	if c.Saturated {
		notes = append(notes, fmt.Sprintf("Cell %s is past saturation: %g requests/s were asked for, %.2f/s were sent and %.2f/s completed (%d late sends); the queue grew during the cell, so its latencies measure queue growth, not a steady state.",
			c.ID(), c.RatePerSecond, c.AchievedRatePerSecond, c.RequestThroughputRPS, c.LateSends))
	}
	if c.CacheContaminated && c.CacheHitTokens != nil {
		notes = append(notes, fmt.Sprintf("Cell %s is cache-contaminated: the server served %d input tokens from its prefix cache although every prompt was meant to be unique; its TTFT is optimistic.", c.ID(), *c.CacheHitTokens))
	}
	return notes
}

// attributeServer adds what the server says of the cell's requests: queue wait and prefill
// (per-request timings first, the Prometheus histograms' difference over the cell otherwise),
// prefix-cache hits, and why a value is unavailable.
func attributeServer(p servebench.Plan, cell *servebench.CellResult, recs []servebench.Record, l servebench.CellLog) {
	var qSum, pSum float64
	var qN, pN int
	var src string
	var cached int
	var sawCached bool
	for i := range recs {
		rec := &recs[i]
		if rec.Warmup || !rec.OK() {
			continue
		}
		if rec.CachedTokens != nil {
			sawCached = true
			cached += *rec.CachedTokens
		}
		if st := rec.Server; st != nil {
			src = st.Source
			if st.QueueSeconds != nil {
				qSum += *st.QueueSeconds
				qN++
			}
			if st.PrefillSeconds != nil {
				pSum += *st.PrefillSeconds
				pN++
			}
			if st.CachedTokens != nil {
				sawCached = true
				cached += *st.CachedTokens
			}
		}
	}
	if qN > 0 {
		cell.QueueWaitSeconds = &servebench.ServerValue{Mean: qSum / float64(qN), Source: "server-timings:" + src, Requests: qN}
	}
	if pN > 0 {
		cell.PrefillSeconds = &servebench.ServerValue{Mean: pSum / float64(pN), Source: "server-timings:" + src, Requests: pN}
	}
	stats.CachedTokens(cell, recs)
	restarted := "" // why the server evidently restarted between the scrapes
	if d := l.Metrics; d != nil {
		restarted = d.Restarted
	}
	if d := l.Metrics; d != nil && restarted == "" {
		// The histograms cover warm-up requests too; per-request timings (above) are exact
		// for the measured requests and win when present.
		if cell.QueueWaitSeconds == nil {
			cell.QueueWaitSeconds = stats.ServerMean(d.QueueWait)
		}
		if cell.PrefillSeconds == nil {
			cell.PrefillSeconds = stats.ServerMean(d.Prefill)
		}
		if d.PrefixCacheHits != nil {
			stats.CachedFromCounter(cell, float64(*d.PrefixCacheHits))
			sawCached = true
			if int(*d.PrefixCacheHits) > cached {
				cached = int(*d.PrefixCacheHits)
			}
		}
		for k, v := range d.Unavailable {
			cell.Unavailable[k] = v
		}
	}
	reason := l.ServerNote
	if reason == "" {
		reason = "the server reported neither per-request timings nor Prometheus histograms for it"
	}
	if cell.QueueWaitSeconds == nil {
		setDefault(cell.Unavailable, "queue_wait_seconds", reason)
	}
	if cell.PrefillSeconds == nil {
		setDefault(cell.Unavailable, "prefill_seconds", reason)
		setDefault(cell.Unavailable, "prefill_speed_tps", "needs prefill_seconds: "+reason)
	} else if cell.PrefillSeconds.Mean > 0 {
		cell.PrefillSpeedTPS = &servebench.ServerValue{Mean: stats.PrefillSpeedTPS(cell.InputTokensMean, cell.PrefillSeconds.Mean),
			Source: cell.PrefillSeconds.Source, Requests: cell.PrefillSeconds.Requests}
		delete(cell.Unavailable, "prefill_speed_tps")
	}
	if restarted != "" {
		// numbers from before and after a restart do not describe the cell's requests
		cell.QueueWaitSeconds, cell.PrefillSeconds, cell.PrefillSpeedTPS = nil, nil, nil
		for _, k := range []string{"queue_wait_seconds", "prefill_seconds", "prefill_speed_tps"} {
			cell.Unavailable[k] = restarted
		}
		cell.Validity.Add(servebench.ReasonServerRestart, servebench.VerdictInvalid, restarted)
		sawCached = false
	}
	if sawCached {
		cell.CacheHitTokens = servebench.Int(cached)
		// a plan that means every prompt to be unique: a shared prefix, a dataset, a trace,
		// sessions and users all reuse text on purpose
		if cached > 0 && p.Sweep.SharedPrefix == 0 && p.Dataset == nil && p.Trace == nil && cell.Scenario != stats.SessionScenario && cell.Kind != servebench.KindUsers {
			cell.CacheContaminated = true
		}
	}
}

func setDefault(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// attributePower adds GPU power and energy over the cell's measured window w, or why there is
// none.
func attributePower(p servebench.Plan, cell *servebench.CellResult, l servebench.CellLog, w stats.Window) {
	if l.PowerSource == "" {
		reason := l.PowerNote
		if reason == "" {
			reason = "no GPU telemetry source (pass --gpu nvml, dcgm=URL or nvidia-smi)"
		}
		cell.Unavailable["gpu_power_watts"] = reason
		cell.Unavailable["energy_joules"] = reason
		return
	}
	in := stats.WindowReadings(l.Power, w.Start, w.End)
	outTok := int(cell.SystemOutputThroughputTPS*cell.WindowSeconds + 0.5)
	pw, e, why := stats.Power(in, time.Duration(cell.WindowSeconds*float64(time.Second)), outTok, p.Metadata.ElectricityUSDPerKWh, l.PowerSource)
	cell.GPUPowerWatts, cell.EnergyJoules = pw, e
	if l.PowerNote != "" {
		why = l.PowerNote + "; " + why // readings refused by the meter (gpu.Check)
	}
	if pw == nil {
		cell.Unavailable["gpu_power_watts"] = why
	}
	if e == nil {
		cell.Unavailable["energy_joules"] = why
	}
}
