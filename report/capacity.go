package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// metricName is the reader's name of a capacity metric at the use case's statistic, capitalised
// for headings and series ("TTFT", "P99 TTFT", "Generation speed").
func metricName(key string, st servebench.Statistic) string {
	return upperFirst(capacity.MetricLabel(key, st))
}

// fmtMetric writes a value of a capacity metric.
func fmtMetric(key string, v float64) string {
	switch key {
	case capacity.MetricE2ELatency, capacity.MetricITL:
		return fmt.Sprintf("%.0fms", v*1000)
	case capacity.MetricTTFT, capacity.MetricFirstContent:
		return fmt.Sprintf("%.1fs", v)
	case capacity.MetricGenerationSpeed, capacity.MetricSystemThroughput:
		return fmtTPS0(v)
	case capacity.MetricSuccessRate:
		return fmtPct(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtThreshold writes a threshold value: "8s", "2s", "50ms", "15 tok/s" (capacity.ThresholdValue).
func fmtThreshold(key string, v float64) string { return capacity.ThresholdValue(key, v) }

// describeCheck writes "TTFT ≤ 8s" / "generation speed ≥ 15 tok/s" (capacity.Check.Describe).
func describeCheck(k capacity.Check, st servebench.Statistic) string { return k.Describe(st) }

// verdicts builds one CapacityVerdict per capacity result.
func (b *builder) verdicts() []CapacityVerdict {
	var out []CapacityVerdict
	for _, cr := range b.res.Capacity {
		v := CapacityVerdict{UseCase: cr.UseCase, Title: useCaseTitle(cr), ContextTokens: cr.ContextTokens, Context: ctxLabel(cr.ContextTokens),
			LimitLabel: capacity.LimitLabel(cr), LimitPhrase: capacity.LimitPhrase(cr), LimitKind: string(cr.LimitKind), LimitRange: cr.LimitRange, Interrupted: cr.Interrupted}
		v.Analysis, v.Sentence = verdictText(cr)
		out = append(out, v)
	}
	return out
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lowerFirst(s string) string {
	if s == "TTFT" || s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
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

// verdictText is the guidance line of one use case (worded here from capacity.Explain) and its
// verdict sentence (capacity.Verdict, the one wording the report, the pages and the what-if
// share).
func verdictText(cr servebench.CapacityResult) (analysis, sentence string) {
	sentence = capacity.Verdict(cr)
	if cr.Skipped {
		return sentence, sentence
	}
	if cr.Interrupted {
		if cr.Limit != nil && *cr.Limit > 0 {
			return "At least " + capacity.Requests(*cr.Limit) + " so far (search interrupted): every threshold held up to there. Resume the run (servebench run --resume RUN_DIR) to finish the search.", sentence
		}
		return "Not measured (search interrupted before it measured a level). Resume the run (servebench run --resume RUN_DIR) to search this use case.", sentence
	}
	ex := capacity.Explain(cr)
	switch ex.Kind {
	case servebench.LimitNotViable:
		analysis = "Not viable even at a single request."
		p, ok := capacity.PointAt(cr, 1)
		if ok && slices.Contains(p.Failing, capacity.MetricSuccessRate) {
			if st, _ := servebench.MainHTTPStatus(p.ErrorsByHTTPStatus); st != 0 {
				// the server refused requests: name how (rate limited, overloaded), not a bare rate
				analysis = "Not viable even at a single request: " + servebench.HTTPStatusCause(st) + ". " + upperFirst(capacity.RefusedText(p)) + " at concurrency 1."
				break
			}
		}
		if ok && capacity.AllFailed(p) {
			analysis = "Not viable: every request failed at concurrency 1 (see Notes for the error classes)."
			break
		}
		for _, rd := range ex.AtLimit {
			if rd.Holds { // something still works at 1: name what does not
				analysis += " " + upperFirst(capacity.MetricLabel(cr.LimitingMetric, cr.Statistic)) + " is the limitation."
				break
			}
		}
	case servebench.LimitLowerBound:
		analysis = "Supports " + capacity.LimitPhrase(cr) + " within accepted thresholds; additional capacity likely available."
	case servebench.LimitMeasured, servebench.LimitInterpolated:
		if ex.Limit == 1 && ex.Kind == servebench.LimitMeasured {
			analysis = "Viable for a single request; concurrent serving exceeds the thresholds."
		} else {
			analysis = "Supports " + capacity.LimitPhrase(cr) + " within accepted thresholds."
		}
	default:
		analysis = "Not measured: the capacity search did not reach a verdict."
	}
	return analysis, sentence
}

func (b *builder) sectionCapacity() {
	if len(b.res.Capacity) == 0 {
		b.add("capacity", "Capacity Analysis", 1, missing("No use cases were analysed in this run. Run with --use-cases default (or name use cases in the plan) to search each use case's capacity limit."))
		return
	}
	b.add("capacity", "Capacity Analysis", 1,
		para("How many concurrent requests can this configuration handle for each workload? Each subsection shows the thresholded metrics as concurrency grows at the use case's context length; dashed lines mark the thresholds. The capacity limit is the largest concurrency at which every threshold still holds, searched upward from 1 with growing steps and then bisection, reusing sweep cells where they match."))
	for _, cr := range b.res.Capacity {
		b.capacityUseCase(cr)
	}
}

// capacityUseCase is one use case's subsection: its thresholds, charts of the thresholded
// metrics against concurrency, a table at the telling levels, the verdict and what the search
// cost.
func (b *builder) capacityUseCase(cr servebench.CapacityResult) {
	ths := capacity.Checks(cr.Thresholds)
	id := "capacity-" + slug(cr.UseCase)
	stat := "mean"
	if cr.Statistic != "" {
		stat = string(cr.Statistic)
	}
	var blocks []Block
	if d := b.useCaseDescription(cr.UseCase); d != "" {
		blocks = append(blocks, para("%s", d))
	}
	var desc []string
	for _, k := range ths {
		desc = append(desc, describeCheck(k, ""))
	}
	blocks = append(blocks, para("%s context, %s per request. Thresholds (on the %s): %s.", ctxLabel(cr.ContextTokens), counted(fmt.Sprint(cr.OutputTokens), "output token"), stat, strings.Join(desc, ", ")))
	if len(cr.Points) == 0 {
		blocks = append(blocks, verdictB(capacity.Headline(cr)))
		if d := capacity.Detail(cr); d != "" {
			blocks = append(blocks, para("%s", d))
		}
		b.add(id, useCaseHeading(cr), 2, blocks...)
		return
	}
	keys, hasRate := chartedMetrics(ths)
	blocks = append(blocks, b.capacityCharts(cr, id, stat, ths, keys)...)
	blocks = append(blocks, tableB(capacityTable(cr, ths, keys, hasRate)), verdictB(capacity.Headline(cr)))
	if d := capacity.Detail(cr); d != "" {
		if cr.LimitKind == servebench.LimitLowerBound && !cr.Interrupted && !stoppedBelowCeiling(cr) {
			d += " Raise capacity.max_concurrency (--capacity-max) to search further."
		}
		blocks = append(blocks, para("%s", d))
	}
	if cr.Note != "" {
		blocks = append(blocks, note(cr.Note))
	}
	if s := b.searchCost(cr); s != "" {
		blocks = append(blocks, para("%s", s))
	}
	if cr.ContextTokens >= 32*1024 && b.man.Plan.Sweep.SharedPrefix == 0 {
		blocks = append(blocks, note("About caching: users who build context incrementally (multi-turn chat, agents) hit the prefix cache on every turn when it is enabled, so only new tokens need prefill. These results are worst-case TTFT, with the whole context processed at once."))
	}
	b.add(id, useCaseHeading(cr), 2, blocks...)
}

// chartedMetrics are the metrics a use case's charts draw: its thresholded ones, plus system
// throughput when no threshold is a rate (hasRate says whether one is).
func chartedMetrics(ths []capacity.Check) (keys []string, hasRate bool) {
	for _, k := range ths {
		keys = append(keys, k.Metric)
		hasRate = hasRate || capacity.MetricUnit(k.Metric) == "tok/s"
	}
	if !hasRate {
		keys = append(keys, capacity.MetricSystemThroughput)
	}
	return keys, hasRate
}

// capacityCharts draws the metrics against concurrency, one chart per unit (seconds, tok/s), so
// a line is only ever read against thresholds of its own quantity; concurrency to scale, with a
// marker at the capacity limit.
func (b *builder) capacityCharts(cr servebench.CapacityResult, id, stat string, ths []capacity.Check, keys []string) []Block {
	pts := cr.Points // sorted by concurrency
	var units []string
	for _, key := range keys {
		if u := unitAxis(key); !slices.Contains(units, u) {
			units = append(units, u)
		}
	}
	var marker []Marker
	switch {
	case cr.Interrupted && cr.Limit != nil && *cr.Limit > 0:
		marker = []Marker{{Name: "at least " + strconv.Itoa(*cr.Limit) + " so far (search interrupted)", X: float64(*cr.Limit)}}
	case cr.Limit != nil && cr.LimitKind == servebench.LimitLowerBound && stoppedBelowCeiling(cr):
		marker = []Marker{{Name: fmt.Sprintf("limit %s (highest tested)", capacity.LimitLabel(cr)), X: float64(*cr.Limit)}}
	case cr.Limit != nil && cr.LimitKind == servebench.LimitLowerBound:
		marker = []Marker{{Name: fmt.Sprintf("limit %s (ceiling passes)", capacity.LimitLabel(cr)), X: float64(*cr.Limit)}}
	case cr.Limit != nil && *cr.Limit > 0:
		marker = []Marker{{Name: "capacity limit " + capacity.LimitLabel(cr), X: float64(*cr.Limit)}}
	}
	var blocks []Block
	for i, unit := range units {
		cid := "chart-" + id
		if i > 0 {
			cid += "-" + slug(unit)
		}
		ch := &Chart{ID: cid, Title: useCaseHeading(cr), XName: "concurrent requests", YName: unit, XScale: "linear", Markers: marker}
		ch.Decimals = 3
		if unit == "tok/s" {
			ch.Decimals = 1
		}
		for _, p := range pts {
			ch.X = append(ch.X, strconv.Itoa(p.Concurrency))
			ch.XValues = append(ch.XValues, float64(p.Concurrency))
		}
		for _, key := range keys {
			if unitAxis(key) != unit {
				continue
			}
			s := Series{Name: metricName(key, "")}
			for _, p := range pts {
				if val, ok := p.Values[key]; ok {
					s.add(ptr(val), b.cell(p.CellID))
				} else {
					s.add(nil, nil)
				}
			}
			ch.Series = append(ch.Series, s)
		}
		for _, k := range ths {
			if unitAxis(k.Metric) == unit {
				ch.Thresholds = append(ch.Thresholds, Threshold{Name: describeCheck(k, ""), Value: k.Limit})
			}
		}
		ch.Caption = fmt.Sprintf("%s %s vs concurrency at %s context, concurrency to scale.", upperFirst(stat), joinAnd(seriesNames(ch)), ctxLabel(cr.ContextTokens))
		blocks = append(blocks, chartB(ch))
	}
	return blocks
}

// capacityTable writes the metrics at 1, at the limit and at the first failing level (completed
// with measured levels to three columns), marking each value past its threshold.
func capacityTable(cr servebench.CapacityResult, ths []capacity.Check, keys []string, hasRate bool) *Table {
	pts := cr.Points
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
		rowKeys = append(append([]string(nil), keys...), capacity.MetricSystemThroughput)
	}
	for _, key := range rowKeys {
		row := []string{metricName(key, cr.Statistic)}
		var th *capacity.Check
		for j := range ths {
			if ths[j].Metric == key {
				th = &ths[j]
			}
		}
		for _, n := range cols {
			val, approx, ok := capacity.ValueAt(cr, key, n)
			if !ok {
				row = append(row, "—")
				continue
			}
			s := fmtMetric(key, val)
			if approx {
				s = "~" + s
			}
			if th != nil && !th.Holds(val) {
				s += " (threshold exceeded)"
			}
			row = append(row, s)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// searchCost says what the search measured and spent: so far, for an interrupted one; against
// the cost of a dense grid, for a finished one. Empty when there is nothing to say.
func (b *builder) searchCost(cr servebench.CapacityResult) string {
	pts := cr.Points
	if cr.Interrupted && len(pts) > 0 {
		return fmt.Sprintf("Before it was interrupted, the search measured %s%s and spent %s.", plural(len(pts), "concurrency level"), b.reusedText(pts), plural(cr.RequestsSpent, "request"))
	}
	if cr.DenseGridRequests <= 0 || len(pts) == 0 || cr.Interrupted {
		return ""
	}
	if stoppedBelowCeiling(cr) {
		// a search stopped below its ceiling (its run's time budget) is no dense grid's equal:
		// what measuring every level up to the ceiling would have cost says nothing about it
		spent := ""
		if cr.ServerSecondsSpent > 0 {
			spent = " (about " + fmtDur(cr.ServerSecondsSpent) + " of server time)"
		}
		return fmt.Sprintf("The search measured %s%s and spent %s%s before it stopped at %d, below its ceiling of %d.",
			plural(len(pts), "concurrency level"), b.reusedText(pts), plural(cr.RequestsSpent, "request"), spent, *cr.Limit, cr.Ceiling)
	}
	top := cr.Ceiling
	if cr.FirstFailing != nil {
		top = *cr.FirstFailing
	}
	spentTime, denseTime := "", ""
	if cr.ServerSecondsSpent > 0 && cr.DenseGridServerSeconds > 0 {
		spentTime, denseTime = " (about "+fmtDur(cr.ServerSecondsSpent)+" of server time)", " (about "+fmtDur(cr.DenseGridServerSeconds)+")"
	}
	sure, how := "", ""
	if r := cr.LimitRange; r != nil {
		how = ", stopping each as soon as its verdict was settled at 95% confidence,"
		if r[0] == r[1] {
			sure = " Both sides of the limit are settled at 95% confidence."
		} else {
			sure = fmt.Sprintf(" At 95%% confidence the data cannot tell the limit apart from %d–%d concurrent requests.", r[0], r[1])
		}
	}
	// A search that needed every level from 1 up (a limit of 0, 1 or 2) saves nothing.
	cost := fmt.Sprintf("it needed every level from 1 to %d, as a dense grid does, so it saved nothing", top)
	if top <= 1 {
		cost = "level 1 alone decides the verdict, so there was nothing to save"
	}
	if cr.DenseGridRequests > cr.RequestsSpent {
		saved := 1 - float64(cr.RequestsSpent)/float64(cr.DenseGridRequests)
		cost = fmt.Sprintf("measuring every level from 1 to %d would have cost %s%s (%s saved)", top, fmtInt(cr.DenseGridRequests), denseTime, fmtPct0(saved))
	}
	return fmt.Sprintf("The search measured %s%s%s and spent %s%s; %s.%s",
		plural(len(pts), "concurrency level"), b.reusedText(pts), how, plural(cr.RequestsSpent, "request"), spentTime, cost, sure)
}

// reusedText says where a search's levels came from, in parentheses: " (2 reused from the
// sweep, 1 from the chatbot search; 3 measured before the run was resumed)". A level is reused
// from the sweep only when its cell is a sweep cell (same context and output length); one from
// another use case's search is named as such.
func (b *builder) reusedText(pts []servebench.CapacityPoint) string {
	sweep, resumed := 0, 0
	var order []string
	others := map[string]int{}
	for _, p := range pts {
		switch {
		case p.Reused && b.cell(p.CellID) != nil && b.cell(p.CellID).Kind == servebench.KindSweep:
			sweep++
		case p.Reused:
			from, _, _ := strings.Cut(p.CellID, "/")
			if others[from] == 0 {
				order = append(order, from)
			}
			others[from]++
		case p.Resumed:
			resumed++
		}
	}
	parts := []string{fmt.Sprintf("%d reused from the sweep", sweep)}
	for _, from := range order {
		parts = append(parts, fmt.Sprintf("%d from the %s search", others[from], from))
	}
	s := " (" + strings.Join(parts, ", ")
	if resumed > 0 {
		s += fmt.Sprintf("; %d measured before the run was resumed", resumed)
	}
	return s + ")"
}

// cell is the run's cell with the given ID (a capacity point's CellID), nil when the results
// do not hold it.
func (b *builder) cell(id string) *servebench.CellResult {
	for i := range b.res.Cells {
		if b.res.Cells[i].ID() == id {
			return &b.res.Cells[i]
		}
	}
	return nil
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

// unitAxis is the axis a capacity metric is drawn on: "tok/s" for rates, "seconds" otherwise.
func unitAxis(key string) string {
	if capacity.MetricUnit(key) == "tok/s" {
		return "tok/s"
	}
	return "seconds"
}

// stoppedBelowCeiling reports whether a lower bound rests on a level below the search's ceiling:
// the search stopped before it (its run's time budget, a level it could not afford), so the
// ceiling was never tested and raising it is not what would search further.
func stoppedBelowCeiling(cr servebench.CapacityResult) bool {
	return cr.LimitKind == servebench.LimitLowerBound && cr.Limit != nil && cr.Ceiling > 0 && *cr.Limit < cr.Ceiling
}
