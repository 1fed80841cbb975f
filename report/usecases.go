package report

import (
	"fmt"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

func (b *builder) sectionUseCases() {
	if len(b.res.Capacity) == 0 {
		b.add("use-case-guidance", "Use Case Guidance", 1,
			missing("No capacity analysis in this run: use cases were disabled (--use-cases none) or the run stopped before them. Run with --use-cases default to fill this section."))
		return
	}
	t := &Table{Header: []string{"USE CASE", "TTFT THRESHOLD", "SPEED THRESHOLD", "CAPACITY", "ANALYSIS"}}
	for i, cr := range b.res.Capacity {
		v := b.rep.Capacity[i]
		ttft, speed := thresholdColumns(cr.Thresholds)
		t.Rows = append(t.Rows, []string{useCaseHeading(cr), ttft, speed, v.LimitLabel, v.Analysis})
	}
	b.add("use-case-guidance", "Use Case Guidance", 1,
		para("The table maps this configuration's measured performance to common deployment scenarios. A capacity limit is the largest concurrency at which every threshold of the use case still holds (on the %s unless a use case says otherwise). Details and charts are in Capacity Analysis.", statName(b.res.Capacity[0].Statistic)),
		tableB(t),
		para("The limits are conservative: beyond them the system keeps working, with slower responses that may still suit a particular application."))
}

func statName(s servebench.Statistic) string {
	if s == "" || s == servebench.StatMean {
		return "mean"
	}
	return string(s)
}

func useCaseTitle(cr servebench.CapacityResult) string {
	if cr.Title != "" {
		return cr.Title
	}
	return cr.UseCase
}

func useCaseHeading(cr servebench.CapacityResult) string {
	return fmt.Sprintf("%s (%s Context)", useCaseTitle(cr), ctxLabel(cr.ContextTokens))
}

// thresholdColumns writes the TTFT and speed columns of the guidance table.
func thresholdColumns(t servebench.Thresholds) (ttft, speed string) {
	var a, s []string
	if t.TTFTSecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricTTFT, *t.TTFTSecondsMax))
	}
	if t.E2ELatencySecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricE2ELatency, *t.E2ELatencySecondsMax)+" e2e")
	}
	if t.FirstContentSecondsMax != nil {
		a = append(a, fmtThreshold(capacity.MetricFirstContent, *t.FirstContentSecondsMax)+" to first answer")
	}
	if t.GenerationSpeedTPSMin != nil {
		s = append(s, fmtThreshold(capacity.MetricGenerationSpeed, *t.GenerationSpeedTPSMin))
	}
	if t.ITLSecondsMax != nil {
		s = append(s, termITL+" "+fmtThreshold(capacity.MetricITL, *t.ITLSecondsMax))
	}
	ttft, speed = strings.Join(a, ", "), strings.Join(s, ", ")
	if ttft == "" {
		ttft = "N/A"
	}
	if speed == "" {
		speed = "N/A"
	}
	return
}
