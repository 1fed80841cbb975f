package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
)

// metricInfo describes a thresholded capacity metric.
type metricInfo struct {
	name string
	unit string // "s" (seconds) or "tok/s"
}

var metricInfos = map[string]metricInfo{
	"ttft_seconds":                 {"TTFT", "s"},
	"e2e_latency_seconds":          {"End-to-end latency", "s"},
	"itl_seconds":                  {"Inter-token latency", "s"},
	"first_content_seconds":        {"Time to first answer", "s"},
	"generation_speed_tps":         {"Generation speed", "tok/s"},
	"system_output_throughput_tps": {"Throughput", "tok/s"},
	"success_rate":                 {"Success rate", "%"},
}

func metricName(key string) string {
	if m, ok := metricInfos[key]; ok {
		return m.name
	}
	return key
}

// fmtMetric writes a value of a capacity metric.
func fmtMetric(key string, v float64) string {
	switch key {
	case "e2e_latency_seconds", "itl_seconds":
		return fmt.Sprintf("%.0fms", v*1000)
	case "ttft_seconds", "first_content_seconds":
		return fmt.Sprintf("%.1fs", v)
	case "generation_speed_tps", "system_output_throughput_tps":
		return fmtTPS0(v)
	case "success_rate":
		return fmtPct(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtThreshold writes a threshold value: "8s", "2s", "50ms", "15 tok/s".
func fmtThreshold(key string, v float64) string {
	switch key {
	case "ttft_seconds", "e2e_latency_seconds", "first_content_seconds":
		if v < 1 {
			return fmt.Sprintf("%gms", v*1000)
		}
		return fmt.Sprintf("%gs", v)
	case "itl_seconds":
		return fmt.Sprintf("%gms", v*1000)
	case "generation_speed_tps":
		return fmt.Sprintf("%g tok/s", v)
	}
	return fmt.Sprint(v)
}

// threshold is one threshold of a use case.
type threshold struct {
	key   string
	value float64
	max   bool // the value must stay at or below (true) or at or above (false)
}

func thresholdsOf(t servebench.Thresholds) []threshold {
	var out []threshold
	if t.E2ELatencySecondsMax != nil {
		out = append(out, threshold{"e2e_latency_seconds", *t.E2ELatencySecondsMax, true})
	}
	if t.TTFTSecondsMax != nil {
		out = append(out, threshold{"ttft_seconds", *t.TTFTSecondsMax, true})
	}
	if t.GenerationSpeedTPSMin != nil {
		out = append(out, threshold{"generation_speed_tps", *t.GenerationSpeedTPSMin, false})
	}
	if t.ITLSecondsMax != nil {
		out = append(out, threshold{"itl_seconds", *t.ITLSecondsMax, true})
	}
	if t.FirstContentSecondsMax != nil {
		out = append(out, threshold{"first_content_seconds", *t.FirstContentSecondsMax, true})
	}
	return out
}

func (t threshold) fails(v float64) bool {
	if t.max {
		return v > t.value
	}
	return v < t.value
}

// describe writes "TTFT < 8s" / "generation speed > 15 tok/s".
func (t threshold) describe() string {
	op := "<"
	if !t.max {
		op = ">"
	}
	return fmt.Sprintf("%s %s %s", lowerFirst(metricName(t.key)), op, fmtThreshold(t.key, t.value))
}

// limitLabel writes a capacity limit: "24", "~35", "125+", "not viable", "skipped".
func limitLabel(cr servebench.CapacityResult) string {
	switch {
	case cr.Skipped && cr.LimitKind == servebench.LimitNotViable:
		return "not viable"
	case cr.Skipped:
		return "skipped"
	case cr.LimitKind == servebench.LimitNotViable || cr.Limit == nil:
		return "not viable"
	case cr.LimitKind == servebench.LimitInterpolated:
		return "~" + strconv.Itoa(*cr.Limit)
	case cr.LimitKind == servebench.LimitLowerBound:
		return strconv.Itoa(*cr.Limit) + "+"
	}
	return strconv.Itoa(*cr.Limit)
}

// sortedPoints returns the capacity points by concurrency.
func sortedPoints(cr servebench.CapacityResult) []servebench.CapacityPoint {
	pts := append([]servebench.CapacityPoint(nil), cr.Points...)
	sort.Slice(pts, func(i, j int) bool { return pts[i].Concurrency < pts[j].Concurrency })
	return pts
}

func pointAt(pts []servebench.CapacityPoint, n int) *servebench.CapacityPoint {
	for i := range pts {
		if pts[i].Concurrency == n {
			return &pts[i]
		}
	}
	return nil
}

// valueAt returns the metric at concurrency n: measured when a point exists, otherwise linearly
// interpolated between the nearest measured levels (approx = true).
func valueAt(pts []servebench.CapacityPoint, key string, n int) (v float64, approx, ok bool) {
	if p := pointAt(pts, n); p != nil {
		v, ok = p.Values[key]
		return v, false, ok
	}
	var lo, hi *servebench.CapacityPoint
	for i := range pts {
		if pts[i].Concurrency < n {
			lo = &pts[i]
		} else if pts[i].Concurrency > n && hi == nil {
			hi = &pts[i]
		}
	}
	if lo == nil || hi == nil {
		return 0, false, false
	}
	a, okA := lo.Values[key]
	c, okC := hi.Values[key]
	if !okA || !okC {
		return 0, false, false
	}
	f := float64(n-lo.Concurrency) / float64(hi.Concurrency-lo.Concurrency)
	return a + f*(c-a), true, true
}

// verdicts builds one Verdict per capacity result.
func (b *builder) verdicts() []Verdict {
	var out []Verdict
	for _, cr := range b.res.Capacity {
		v := Verdict{UseCase: cr.UseCase, Title: useCaseTitle(cr), ContextTokens: cr.ContextTokens, Context: ctxLabel(cr.ContextTokens),
			LimitLabel: limitLabel(cr), LimitKind: string(cr.LimitKind)}
		v.Analysis, v.Sentence = verdictText(cr)
		out = append(out, v)
	}
	return out
}

// valuesSentence writes "TTFT is 6.7s and generation speed is 42 tok/s" at concurrency n.
func valuesSentence(pts []servebench.CapacityPoint, ths []threshold, n int) string {
	var parts []string
	for _, t := range ths {
		if v, approx, ok := valueAt(pts, t.key, n); ok {
			s := fmtMetric(t.key, v)
			if approx {
				s = "~" + s
			}
			parts = append(parts, fmt.Sprintf("%s is %s", lowerFirst(metricName(t.key)), s))
		}
	}
	return joinAnd(parts)
}

func lowerFirst(s string) string {
	if s == "TTFT" || s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// verdictText writes the guidance line and the verdict sentence of one use case.
func verdictText(cr servebench.CapacityResult) (analysis, sentence string) {
	pts := sortedPoints(cr)
	ths := thresholdsOf(cr.Thresholds)
	thr := func(key string) *threshold {
		for i := range ths {
			if ths[i].key == key {
				return &ths[i]
			}
		}
		return nil
	}
	// failingAt writes "TTFT reaches 14.4s, above the 12s threshold" for the failing metrics at n.
	failingAt := func(n int) string {
		p := pointAt(pts, n)
		if p == nil {
			return ""
		}
		var parts []string
		for _, key := range p.Failing {
			t := thr(key)
			v, ok := p.Values[key]
			if !ok {
				continue
			}
			if t == nil {
				parts = append(parts, fmt.Sprintf("%s is %s", lowerFirst(metricName(key)), fmtMetric(key, v)))
				continue
			}
			side := "above"
			if !t.max {
				side = "below"
			}
			parts = append(parts, fmt.Sprintf("%s reaches %s, %s the %s threshold", lowerFirst(metricName(key)), fmtMetric(key, v), side, fmtThreshold(key, t.value)))
		}
		return joinAnd(parts)
	}
	switch {
	case cr.Skipped:
		n := cr.Note
		if n == "" {
			n = "the use case was skipped"
		}
		return upperFirst(strings.TrimSuffix(n, ".")) + ".", upperFirst(strings.TrimSuffix(n, ".")) + "."
	case cr.LimitKind == servebench.LimitNotViable || cr.Limit == nil:
		analysis = "Not viable even at a single request."
		f := failingAt(1)
		if f == "" {
			f = "a threshold already fails"
		}
		sentence = fmt.Sprintf("Not viable: even at a single request, %s.", f)
		// Name what still works at 1, if anything.
		if p := pointAt(pts, 1); p != nil {
			var good []string
			for _, t := range ths {
				if v, ok := p.Values[t.key]; ok && !t.fails(v) {
					good = append(good, fmt.Sprintf("%s (%s) meets its %s threshold", lowerFirst(metricName(t.key)), fmtMetric(t.key, v), fmtThreshold(t.key, t.value)))
				}
			}
			if len(good) > 0 {
				sentence += " " + upperFirst(joinAnd(good)) + ", so " + lowerFirst(metricName(cr.LimitingMetric)) + " is the limitation."
				analysis += " " + upperFirst(metricName(cr.LimitingMetric)) + " is the limitation."
			}
		}
		return
	case cr.LimitKind == servebench.LimitLowerBound:
		n := *cr.Limit
		analysis = fmt.Sprintf("Supports %d+ concurrent requests within accepted thresholds; additional capacity likely available.", n)
		sentence = fmt.Sprintf("At %s (the search ceiling), %s, all within thresholds. Capacity likely extends higher: raise capacity.max_concurrency to search further.", requestsWord(n), valuesSentence(pts, ths, n))
		return
	case cr.LimitKind == servebench.LimitInterpolated:
		n := *cr.Limit
		analysis = fmt.Sprintf("Supports ~%d concurrent requests within accepted thresholds.", n)
		var lo, hi int
		for _, p := range pts {
			if p.Concurrency < n {
				lo = p.Concurrency
			} else if p.Concurrency > n && hi == 0 {
				hi = p.Concurrency
			}
		}
		sentence = fmt.Sprintf("Between %d (passing) and %d (failing) concurrent requests, %s crosses its threshold; interpolating on it puts the limit near %d, where %s.", lo, hi, lowerFirst(metricName(cr.LimitingMetric)), n, valuesSentence(pts, ths, n))
		if f := failingAt(hi); f != "" {
			sentence += fmt.Sprintf(" At %d, %s.", hi, f)
		}
		return
	}
	n := *cr.Limit
	if n == 1 {
		analysis = "Viable for a single request; concurrent serving exceeds the thresholds."
	} else {
		analysis = fmt.Sprintf("Supports %d concurrent requests within accepted thresholds.", n)
	}
	sentence = fmt.Sprintf("At %s, %s, within thresholds.", requestsWord(n), valuesSentence(pts, ths, n))
	if cr.FirstFailing != nil {
		if f := failingAt(*cr.FirstFailing); f != "" {
			sentence += fmt.Sprintf(" At %s, %s.", requestsWord(*cr.FirstFailing), f)
		}
	}
	return
}

func (b *builder) sectionCapacity() {
	if len(b.res.Capacity) == 0 {
		b.add("capacity", "Capacity Analysis", 1, missing("No use cases were analysed in this run. Run with --use-cases default (or name use cases in the plan) to search each use case's capacity limit."))
		return
	}
	b.add("capacity", "Capacity Analysis", 1,
		para("How many concurrent requests can this configuration handle for each workload? Each subsection shows the thresholded metrics as concurrency grows at the use case's context length; dashed lines mark the thresholds. The capacity limit is the largest concurrency at which every threshold still holds, searched upward from 1 with growing steps and then bisection, reusing sweep cells where they match."))
	for i, cr := range b.res.Capacity {
		b.capacityUseCase(i, cr)
	}
}

func (b *builder) capacityUseCase(i int, cr servebench.CapacityResult) {
	v := b.rep.Capacity[i]
	pts := sortedPoints(cr)
	ths := thresholdsOf(cr.Thresholds)
	id := "capacity-" + slug(cr.UseCase)
	var blocks []Block
	var desc []string
	for _, t := range ths {
		desc = append(desc, t.describe())
	}
	stat := "mean"
	if cr.Statistic != "" {
		stat = string(cr.Statistic)
	}
	if d := b.useCaseDescription(cr.UseCase); d != "" {
		blocks = append(blocks, para("%s", d))
	}
	blocks = append(blocks, para("%s context, %d output tokens per request. Thresholds (on the %s): %s.", ctxLabel(cr.ContextTokens), cr.OutputTokens, stat, strings.Join(desc, ", ")))
	if len(pts) == 0 {
		blocks = append(blocks, verdictB("Capacity limit: "+limitPhrase(v.LimitLabel)), para("%s", v.Sentence))
		b.add(id, useCaseHeading(cr), 2, blocks...)
		return
	}
	// chart: thresholded metrics vs concurrency; time on the left axis, rates on the right.
	ch := &Chart{ID: "chart-" + id, Title: useCaseHeading(cr), XName: "concurrent requests", YName: "seconds", Decimals: 3, Decimals2: 1}
	for _, p := range pts {
		ch.X = append(ch.X, strconv.Itoa(p.Concurrency))
	}
	keys := []string{}
	hasRate := false
	for _, t := range ths {
		keys = append(keys, t.key)
		hasRate = hasRate || metricInfos[t.key].unit == "tok/s"
	}
	if !hasRate {
		keys = append(keys, "system_output_throughput_tps")
	}
	leftUsed := false
	for _, key := range keys {
		axis := 0
		if metricInfos[key].unit == "tok/s" {
			axis = 1
			ch.Y2Name = "tok/s"
		} else {
			leftUsed = true
		}
		s := Series{Name: metricName(key), Axis: axis}
		for _, p := range pts {
			if val, ok := p.Values[key]; ok {
				s.Data = append(s.Data, ptr(val))
			} else {
				s.Data = append(s.Data, nil)
			}
		}
		ch.Series = append(ch.Series, s)
	}
	if !leftUsed { // only rate metrics: put them on the left axis
		ch.YName, ch.Y2Name, ch.Decimals = "tok/s", "", 1
		for j := range ch.Series {
			ch.Series[j].Axis = 0
		}
	}
	for _, t := range ths {
		axis := 0
		if metricInfos[t.key].unit == "tok/s" && leftUsed {
			axis = 1
		}
		ch.Thresholds = append(ch.Thresholds, Threshold{Name: t.describe(), Value: t.value, Axis: axis})
	}
	ch.Caption = fmt.Sprintf("%s %s vs concurrency at %s context. Dashed lines mark the thresholds.", upperFirst(stat), joinAnd(seriesNames(ch)), ctxLabel(cr.ContextTokens))
	blocks = append(blocks, chartB(ch))

	// table at 1 / limit / first failing (completed with measured levels to three columns)
	cols := []int{1}
	if cr.Limit != nil {
		cols = append(cols, *cr.Limit)
	}
	if cr.FirstFailing != nil {
		cols = append(cols, *cr.FirstFailing)
	}
	cols = uniqueInts(cols...)
	for j := len(pts) - 1; j >= 0 && len(cols) < 3; j-- {
		cols = uniqueInts(append(cols, pts[j].Concurrency)...)
	}
	sort.Ints(cols)
	t := &Table{Header: []string{"METRIC"}}
	for _, n := range cols {
		if n == 1 {
			t.Header = append(t.Header, "@ 1 request")
		} else {
			t.Header = append(t.Header, fmt.Sprintf("@ %d requests", n))
		}
	}
	rowKeys := keys
	if hasRate {
		rowKeys = append(append([]string(nil), keys...), "system_output_throughput_tps")
	}
	for _, key := range rowKeys {
		row := []string{metricName(key)}
		var th *threshold
		for j := range ths {
			if ths[j].key == key {
				th = &ths[j]
			}
		}
		for _, n := range cols {
			val, approx, ok := valueAt(pts, key, n)
			if !ok {
				row = append(row, "—")
				continue
			}
			s := fmtMetric(key, val)
			if approx {
				s = "~" + s
			}
			if th != nil && th.fails(val) {
				s += " (threshold exceeded)"
			}
			row = append(row, s)
		}
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, tableB(t), verdictB("Capacity limit: "+limitPhrase(v.LimitLabel)), para("%s", v.Sentence))
	if cr.Note != "" {
		blocks = append(blocks, note(cr.Note))
	}
	reused := 0
	for _, p := range pts {
		if p.Reused {
			reused++
		}
	}
	if cr.DenseGridRequests > cr.RequestsSpent {
		saved := 1 - float64(cr.RequestsSpent)/float64(cr.DenseGridRequests)
		blocks = append(blocks, para("The search measured %s (%d reused from the sweep) and spent %s requests; measuring every level from 1 to %d would have cost %s (%s saved).",
			plural(len(pts), "concurrency level"), reused, fmtInt(cr.RequestsSpent), pts[len(pts)-1].Concurrency, fmtInt(cr.DenseGridRequests), fmtPct0(math.Max(saved, 0))))
	}
	if cr.ContextTokens >= 32*1024 && b.man.Plan.Sweep.SharedPrefix == 0 {
		blocks = append(blocks, note("About caching: users who build context incrementally (multi-turn chat, agents) hit the prefix cache on every turn when it is enabled, so only new tokens need prefill. These results are worst-case TTFT, with the whole context processed at once."))
	}
	b.add(id, useCaseHeading(cr), 2, blocks...)
}

func seriesNames(ch *Chart) []string {
	var out []string
	for _, s := range ch.Series {
		out = append(out, lowerFirst(s.Name))
	}
	return out
}

func (b *builder) useCaseDescription(name string) string {
	for _, uc := range b.man.Plan.UseCases {
		if uc.Name == name {
			return uc.Description
		}
	}
	return ""
}

// slug makes an HTML id from a name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
