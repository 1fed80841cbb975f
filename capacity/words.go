package capacity

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
)

// Words of a limit kind that LimitLabel does not already say.
const (
	// KindNotDecided is the kind of a result whose search reached no verdict.
	KindNotDecided = "not decided"
	// KindUndecidedByLevels is the kind of a what-if (Reconsider) that the measured levels do
	// not decide.
	KindUndecidedByLevels = "not decided by the measured levels"
)

// KindWords says how a limit was established, in words: "measured", "interpolated", "lower
// bound: the highest level passed", LabelNotViable, or KindNotDecided when the search reached
// no verdict. The report, the pages and the page's what-if all take it from here.
func KindWords(k servebench.LimitKind) string {
	return kindWords(k)
}

// KindWordsOf is KindWords of r's limit kind, and for an interrupted search "at least this so far:
// the search was interrupted".
func KindWordsOf(r servebench.CapacityResult) string {
	if r.Interrupted {
		return "at least this so far: the search was interrupted"
	}
	if DoesNotFit(r) {
		return "does not fit the target's maximum model length (not measured)"
	}
	return kindWords(r.LimitKind)
}

func kindWords(k servebench.LimitKind) string {
	switch k {
	case servebench.LimitMeasured, servebench.LimitInterpolated:
		return string(k)
	case servebench.LimitLowerBound:
		return "lower bound: the highest level passed"
	case servebench.LimitNotViable:
		return LabelNotViable
	case "":
		return KindNotDecided
	}
	return string(k)
}

// Field is one settable threshold of a use case, as a form shows it.
type Field struct {
	// Key is the threshold's JSON name in Thresholds ("ttft_seconds_max").
	Key string `json:"key"`
	// Metric is the metric it bounds (MetricTTFT, …), Label the metric's name (MetricLabel)
	// and Unit its unit (MetricUnit).
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Unit   string `json:"unit"`
	// Upper is true for a maximum, false for a minimum.
	Upper bool `json:"upper"`
	// Caption is the field's caption: "TTFT max (s)", "Generation speed min (tok/s)".
	Caption string `json:"caption"`
}

// Vocabulary is every word the benchmark page needs to show capacity results it did not
// receive already worded (Reconsidered carries its label, KindWords and verdict): each
// metric's name and unit, and the thresholds a use case can set, in the order of Checks. The
// page takes it from the WebAssembly build of this package, so it never keeps a copy.
type Vocabulary struct {
	// Metrics maps each metric a capacity point holds to its name (MetricLabel at the mean).
	Metrics map[string]string `json:"metrics"`
	// Units maps each metric to MetricUnit.
	Units map[string]string `json:"units"`
	// Fields are the thresholds, in the order of Checks.
	Fields []Field `json:"fields"`
}

// Words returns the Vocabulary.
func Words() Vocabulary {
	v := Vocabulary{Metrics: map[string]string{}, Units: map[string]string{}}
	for _, m := range []string{MetricTTFT, MetricGenerationSpeed, MetricE2ELatency, MetricITL, MetricFirstContent, MetricSuccessRate, MetricSystemThroughput} {
		v.Metrics[m], v.Units[m] = MetricLabel(m, ""), MetricUnit(m)
	}
	v.Fields = Fields()
	return v
}

// Fields lists the thresholds a use case can set, in the order of Checks: each field of
// servebench.Thresholds, named by its JSON key, with the check Checks makes of it.
func Fields() []Field {
	t := reflect.TypeFor[servebench.Thresholds]()
	var all servebench.Thresholds
	byMetric := map[string]Field{}
	for i := range t.NumField() {
		var th servebench.Thresholds
		one := 1.0
		reflect.ValueOf(&th).Elem().Field(i).Set(reflect.ValueOf(&one))
		reflect.ValueOf(&all).Elem().Field(i).Set(reflect.ValueOf(&one))
		ks := Checks(th)
		if len(ks) != 1 {
			panic("capacity: Checks does not read Thresholds." + t.Field(i).Name)
		}
		k := ks[0]
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := Field{Key: key, Metric: k.Metric, Label: MetricLabel(k.Metric, ""), Unit: MetricUnit(k.Metric), Upper: k.Upper}
		bound := " min"
		if k.Upper {
			bound = " max"
		}
		f.Caption = strings.ToUpper(f.Label[:1]) + f.Label[1:] + bound + " (" + f.Unit + ")"
		byMetric[k.Metric] = f
	}
	var out []Field
	for _, k := range Checks(all) {
		out = append(out, byMetric[k.Metric])
	}
	return out
}

// ThresholdValue writes a threshold of metric m compactly, as tables and progress lines show
// it: "8s", "300ms" (under a second), "50ms" (ITL always in ms), "15 tok/s", "99.0%".
func ThresholdValue(m string, v float64) string {
	switch m {
	case MetricTTFT, MetricE2ELatency, MetricFirstContent:
		if v < 1 {
			return strconv.FormatFloat(v*1000, 'g', -1, 64) + "ms"
		}
		return strconv.FormatFloat(v, 'g', -1, 64) + "s"
	case MetricITL:
		return strconv.FormatFloat(v*1000, 'g', -1, 64) + "ms"
	case MetricGenerationSpeed, MetricSystemThroughput:
		return strconv.FormatFloat(v, 'g', -1, 64) + " tok/s"
	case MetricSuccessRate:
		return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Describe writes the check at statistic st: "TTFT ≤ 8s", "p99 TTFT ≤ 2s", "generation speed ≥
// 15 tok/s" (≤ and ≥: a value at the threshold holds, see Holds).
func (k Check) Describe(st servebench.Statistic) string {
	op := "≥"
	if k.Upper {
		op = "≤"
	}
	return MetricLabel(k.Metric, st) + " " + op + " " + ThresholdValue(k.Metric, k.Limit)
}
