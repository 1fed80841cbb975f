package host

import (
	"runtime/metrics"

	"github.com/servebench/servebench"
)

// schedLatency is runtime/metrics' histogram of the time goroutines spent runnable before
// running, in seconds.
const schedLatency = "/sched/latencies:seconds"

// SchedLatency reads the process's scheduler-latency histogram since start; the difference of
// two readings (stats.HistogramDelta) covers what happened between them. Empty when the
// runtime does not offer it.
func SchedLatency() servebench.Histogram {
	s := []metrics.Sample{{Name: schedLatency}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return servebench.Histogram{}
	}
	h := s[0].Value.Float64Histogram()
	return servebench.Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: append([]float64(nil), h.Buckets...)}
}
