package report

import (
	"fmt"
	"slices"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/frontier"
)

// FrontierQuestion is what a comparison's frontier section answers: at TargetPerUserTPS tokens
// per second per user, each run's throughput per GPU and cost, and the GPUs for Users
// concurrent users. Prices overrides a run's price per GPU-hour by its label (declared).
type FrontierQuestion struct {
	TargetPerUserTPS float64
	Users            int
	Prices           map[string]float64
}

// DefaultFrontierQuestion: 50 tok/s per user (faster than reading, slower than a tool loop
// wants) and 1,000 concurrent users.
func DefaultFrontierQuestion() FrontierQuestion {
	return FrontierQuestion{TargetPerUserTPS: 50, Users: 1000}
}

// RunAnswer is one run's answer at the target speed.
type RunAnswer struct {
	Label    string            `json:"label"`
	Hardware frontier.Hardware `json:"hardware"`
	Reading  frontier.Reading  `json:"reading"`
	// Fleet is nil when the reading is out of range.
	Fleet *frontier.Fleet `json:"fleet,omitempty"`
}

// CompareFrontier is the frontier section of a comparison: the runs' frontiers overlaid per
// common workload, and each run's answer at the question's target speed.
type CompareFrontier struct {
	Question      FrontierQuestion `json:"-"`
	ContextTokens int              `json:"context_tokens"`
	OutputTokens  int              `json:"output_tokens"`
	Population    string           `json:"population,omitempty"`
	Answers       []RunAnswer      `json:"answers"`
}

// AddFrontier adds to cmp (made by Compare from the same ins) a section that overlays the
// runs' frontiers and answers q, placed before the capacity verdicts. It returns the answers
// of each workload every run measured.
func AddFrontier(cmp *Comparison, ins []Input, q FrontierQuestion) []CompareFrontier {
	type run struct {
		label string
		a     frontier.Analysis
	}
	var runs []run
	for i, in := range ins {
		in = displayInput(in)
		label := cmp.Labels[i]
		if p, ok := q.Prices[label]; ok && p > 0 {
			in.Manifest.Plan.Sizing.GPUUSDPerHour = p
		}
		a := analyzeFrontier(&in.Manifest, &in.Results)
		if p, ok := q.Prices[label]; ok && p > 0 && len(a.Hardware.Prices) > 0 {
			a.Hardware.Prices[0].From = "compare --gpu-price " + label + "=USD"
		}
		runs = append(runs, run{label, a})
	}
	// the workloads every run measured (a curve's identity: its workload and population)
	same := func(a, b frontier.Curve) bool {
		return a.ContextTokens == b.ContextTokens && a.OutputTokens == b.OutputTokens && a.Population == b.Population
	}
	var common []frontier.Curve
	if len(runs) > 0 {
		for _, w := range runs[0].a.Curves {
			k := frontier.Curve{ContextTokens: w.ContextTokens, OutputTokens: w.OutputTokens, Population: w.Population}
			all := true
			for _, r := range runs[1:] {
				all = all && slices.ContainsFunc(r.a.Curves, func(v frontier.Workload) bool { return same(v.Curve, k) })
			}
			if all {
				common = append(common, k)
			}
		}
	}
	const id, title = "frontier", "Tokens per GPU against Speed per User"
	sec := Section{ID: id, Title: title, Level: 1}
	if len(common) == 0 {
		sec.Blocks = append(sec.Blocks, missing("The runs share no workload (context and output length) measured in closed loop, so their frontiers cannot be laid over each other. Run them with the same --contexts, --output-tokens and --concurrency."))
		insertBefore(cmp, "capacity", sec)
		return nil
	}
	sec.Blocks = append(sec.Blocks, para("Each run's output tokens per second per GPU against tokens per second per user, the field's standard view of hardware: the frontier joins the levels no other level of the same run beats on both. At a given speed per user, the higher line gives more tokens per GPU, so fewer GPUs and a lower cost per token."))
	var out []CompareFrontier
	for _, k := range common {
		wl := curveLabel(k)
		cf := CompareFrontier{Question: q, ContextTokens: k.ContextTokens, OutputTokens: k.OutputTokens, Population: k.Population}
		var ss, cost []xySeries
		var inputs []string
		for _, r := range runs {
			i := slices.IndexFunc(r.a.Curves, func(v frontier.Workload) bool { return same(v.Curve, k) })
			w := r.a.Curves[i]
			h := r.a.Hardware
			name := r.label
			if len(common) > 1 {
				name += " · " + wl
			}
			for _, s := range frontierSeries("", w.Curve, func(p frontier.Point) float64 { return p.OutputTPSPerGPU }, 0, true) {
				s.name = name + strings.TrimPrefix(s.name, wl)
				ss = append(ss, s)
			}
			if _, ok := h.Primary(); ok {
				for _, s := range frontierSeries("", w.Curve, func(p frontier.Point) float64 {
					c, _ := primaryCost(p.Economics)
					return c.USDPerMillionOutputTokens
				}, 0, false) {
					s.name = name
					cost = append(cost, s)
				}
			}
			ans := RunAnswer{Label: r.label, Hardware: h, Reading: w.At(q.TargetPerUserTPS, h)}
			if f, ok := ans.Reading.Fleet(q.Users, h, k.Population, r.a.UsersPerSlot); ok {
				ans.Fleet = &f
			}
			cf.Answers = append(cf.Answers, ans)
			inputs = append(inputs, r.label+": "+h.Inputs())
		}
		caption := func(s string) string {
			if len(common) > 1 {
				return wl + ": " + s
			}
			return s + " (" + wl + ")"
		}
		sec.Blocks = append(sec.Blocks, chartB(xyChart(chartID("chart-frontier", k), "Frontiers", caption("Output tokens per second per GPU against tokens per second per user, one line per run through its Pareto-optimal levels."), "tok/s per user", "output tok/s per GPU", "", 1, 0, ss)))
		if len(cost) > 0 {
			sec.Blocks = append(sec.Blocks, chartB(xyChart(chartID("chart-frontier-cost", k), "Cost along the frontiers", caption("The cost of a million output tokens along each run's frontier, at each run's primary price per GPU-hour (the Inputs below)."), "tok/s per user", "$ per 1M output tokens", "", 2, 0, cost)))
		}
		sec.Blocks = append(sec.Blocks, tableB(answerTable(k, cf, caption)), para("%s", answerSentence(cf)), note("Inputs. "+strings.Join(inputs, ". ")+"."))
		out = append(out, cf)
	}
	insertBefore(cmp, "capacity", sec)
	cmp.Frontier = out
	return out
}

// answerTable lays out each run's answer at the target speed.
func answerTable(k frontier.Curve, cf CompareFrontier, caption func(string) string) *Table {
	q := cf.Question
	t := &Table{Caption: caption(fmt.Sprintf("At %s tok/s per user: throughput per GPU read on each run's frontier (\"~\" interpolated between two measured levels), its cost at the run's primary price, and the fleet for %s (%s).", fmtNum(q.TargetPerUserTPS, 0), plural(q.Users, "user"), answerUsers(k.Population, cf.Answers))),
		Header: []string{"RUN", "GPUS PER REPLICA", "OUTPUT TOK/S PER GPU", "HOW", "PRICE PER GPU-HOUR", "$ / 1M OUTPUT", "OUTPUT TOKENS PER $", "TOK/S PER MW", strings.ToUpper(plural(q.Users, "user")), "$ PER MONTH"}}
	for _, a := range cf.Answers {
		h, r := a.Hardware, a.Reading
		row := []string{a.Label, fmt.Sprintf("%d (%s)", h.GPUs, h.GPUsSource), readingPerGPU(r), readingLabel(k, r)}
		p, ok := h.Primary()
		switch {
		case ok:
			row = append(row, priceName(p))
		default:
			row = append(row, "none: pass --gpu-price "+a.Label+"=USD")
		}
		c, okc := primaryCost(r.Economics)
		if okc && r.Kind != frontier.ReadOutOfRange {
			row = append(row, approx(r, fmtUSD(c.USDPerMillionOutputTokens)), approx(r, wholeTokens(c.OutputTokensPerUSD)))
		} else {
			row = append(row, "—", "—")
		}
		if r.Kind != frontier.ReadOutOfRange && r.Economics.OutputTPSPerMW > 0 {
			row = append(row, approx(r, wholeTokens(r.Economics.OutputTPSPerMW)))
		} else {
			row = append(row, "—")
		}
		if f := a.Fleet; f != nil {
			g := plural(f.GPUs, "GPU")
			m := "—"
			if f.MonthlyUSD > 0 {
				m = fmtMonthly(f.MonthlyUSD)
			}
			if f.Interpolated {
				g = "~" + g
				if m != "—" {
					m = "~" + m
				}
			}
			row = append(row, g, m)
		} else {
			row = append(row, "—", "—")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// answerSentence says which run gives the most tokens per dollar at the target speed and how
// many GPUs the users need on each.
func answerSentence(cf CompareFrontier) string {
	q := cf.Question
	speed := fmtNum(q.TargetPerUserTPS, 0) + " tok/s per user"
	best, bestV := -1, 0.0
	var fleets, unreached, unpriced []string
	for i, a := range cf.Answers {
		r := a.Reading
		if r.Kind == frontier.ReadOutOfRange {
			unreached = append(unreached, a.Label)
			continue
		}
		if c, ok := primaryCost(r.Economics); ok {
			if c.OutputTokensPerUSD > bestV {
				best, bestV = i, c.OutputTokensPerUSD
			}
		} else {
			unpriced = append(unpriced, a.Label)
		}
		if a.Fleet != nil {
			s := fmt.Sprintf("%s on %s", approxFleet(a.Fleet, plural(a.Fleet.GPUs, "GPU")), a.Label)
			if a.Fleet.MonthlyUSD > 0 {
				s += " (" + approxFleet(a.Fleet, fmtMonthly(a.Fleet.MonthlyUSD)) + " a month)"
			}
			fleets = append(fleets, s)
		}
	}
	var parts []string
	if best >= 0 {
		a := cf.Answers[best]
		c, _ := primaryCost(a.Reading.Economics)
		s := fmt.Sprintf("At %s, %s gives the most output tokens per dollar: %s per $ (%s per 1M output tokens at %s%s)", speed, a.Label,
			approx(a.Reading, wholeTokens(c.OutputTokensPerUSD)), approx(a.Reading, fmtUSD(c.USDPerMillionOutputTokens)), priceName(c.Price), inside(readingCaveat(a.Reading)))
		var others []string
		for i, o := range cf.Answers {
			if i == best || o.Reading.Kind == frontier.ReadOutOfRange {
				continue
			}
			if oc, ok := primaryCost(o.Reading.Economics); ok {
				others = append(others, fmt.Sprintf("%s %s", o.Label, approx(o.Reading, wholeTokens(oc.OutputTokensPerUSD))))
			}
		}
		if len(others) > 0 {
			s += "; " + joinAnd(others)
		}
		parts = append(parts, s+".")
	} else {
		parts = append(parts, fmt.Sprintf("At %s no run has a price per GPU-hour, so none can be called cheapest: pass --gpu-price LABEL=USD.", speed))
	}
	if len(fleets) > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s) need %s.", upperFirst(plural(q.Users, "user")), answerUsers(cf.Population, cf.Answers), joinAnd(fleets)))
	}
	if len(unpriced) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s no price per GPU-hour (the public defaults table does not know the GPU): pass --gpu-price LABEL=USD to compare its cost.", joinAnd(unpriced), hasHave(len(unpriced))))
	}
	if len(unreached) > 0 {
		parts = append(parts, fmt.Sprintf("%s did not reach %s at any measured level.", joinAnd(unreached), speed))
	}
	for _, a := range cf.Answers {
		if a.Reading.Kind == frontier.ReadInterpolated {
			parts = append(parts, "Figures marked ~ are read on the straight line between two measured levels, not measured; the measured level at or above the target speed is named in HOW.")
			break
		}
	}
	return strings.Join(parts, " ")
}

// answerUsers says what the runs' users are (usersDefinition), naming each run's users per
// request slot where the runs differ.
func answerUsers(pop string, as []RunAnswer) string {
	per, differ := 0.0, false
	var each []string
	for _, a := range as {
		if a.Fleet == nil {
			continue
		}
		if per != 0 && a.Fleet.UsersPerSlot != per {
			differ = true
		}
		per = a.Fleet.UsersPerSlot
		each = append(each, a.Label+" "+fmtUsers(a.Fleet.UsersPerSlot))
	}
	switch {
	case pop != "" || per == 0:
		return usersDefinition(pop, per)
	case differ:
		return "as in each run's Capacity Planning, active users per request in flight: " + strings.Join(each, ", ")
	}
	return usersDefinition(pop, per)
}

func approxFleet(f *frontier.Fleet, s string) string {
	if f.Interpolated {
		return "~" + s
	}
	return s
}

func readingCaveat(r frontier.Reading) string {
	if r.Verdict == "" || r.Verdict == servebench.VerdictValid {
		return ""
	}
	return string(r.Verdict)
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// chartID names a curve's chart: "chart-frontier-8K-2K", "chart-frontier-16K-0-chat".
func chartID(prefix string, k frontier.Curve) string {
	id := prefix + "-" + ctxLabel(k.ContextTokens) + "-" + ctxLabel(k.OutputTokens)
	if k.Population != "" {
		id += "-" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' {
				return r
			}
			return '-'
		}, k.Population)
	}
	return id
}

// insertBefore puts s before the section with id before (at the end when there is none).
func insertBefore(cmp *Comparison, before string, s Section) {
	i := slices.IndexFunc(cmp.Sections, func(x Section) bool { return x.ID == before })
	if i < 0 {
		i = len(cmp.Sections)
	}
	cmp.Sections = slices.Insert(cmp.Sections, i, s)
}
