package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	servebench "github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/frontier"
)

// analyzeFrontier is the run's frontier analysis (package frontier) from its cells, capacity
// results, sizing plan and declared GPU.
func analyzeFrontier(man *servebench.Manifest, res *servebench.Results) frontier.Analysis {
	return frontier.Analyze(frontier.Input{Cells: res.Cells, Capacity: res.Capacity, Plan: man.Plan.Sizing, DeclaredGPU: man.Plan.Metadata.GPU})
}

// targetUsers is the user ladder the readings size for: the plan's, else Capacity Planning's
// default.
func targetUsers(p servebench.SizingPlan) []int {
	if len(p.TargetUsers) > 0 {
		return p.TargetUsers
	}
	return capacity.DefaultTargetUsers()
}

// workloadLabel writes "8K in / 2K out".
func workloadLabel(ctx, out int) string { return ctxLabel(ctx) + " in / " + ctxLabel(out) + " out" }

// curveLabel names a curve: its workload, or for user populations "users of chat (16K window)".
func curveLabel(c frontier.Curve) string {
	if c.Population != "" {
		return "users of " + c.Population + " (" + ctxLabel(c.ContextTokens) + " window)"
	}
	return workloadLabel(c.ContextTokens, c.OutputTokens)
}

// level writes a point's level: "8 requests" for a concurrency level, "40 users" for a
// population.
func level(c frontier.Curve, n int) string {
	if c.Population != "" {
		return plural(n, "user")
	}
	return reqs(n)
}

// xySeries is one series of an x–y chart: its points' x and y, and each point's cell verdict.
type xySeries struct {
	name, style string
	x, y        []float64
	verdicts    []servebench.Verdict
	axis        int
}

// xyChart lays series with their own x values on one numeric x axis: X is the union of every
// series' x values, each series nil where it has no point, and the chart connects each series
// across those gaps (Chart.Connect).
func xyChart(id, title, caption, xName, yName, y2Name string, decimals, decimals2 int, ss []xySeries) *Chart {
	ch := &Chart{ID: id, Title: title, Caption: caption, XName: xName, YName: yName, Y2Name: y2Name, Decimals: decimals, Decimals2: decimals2, XScale: "linear", Connect: true}
	var xs []float64
	for _, s := range ss {
		for _, x := range s.x {
			x = roundTo(x, 1)
			if !slices.Contains(xs, x) {
				xs = append(xs, x)
			}
		}
	}
	slices.Sort(xs)
	for _, x := range xs {
		ch.X = append(ch.X, fmtNum(x, 1))
		ch.XValues = append(ch.XValues, x)
	}
	for _, s := range ss {
		out := Series{Name: s.name, Style: s.style, Axis: s.axis}
		at := map[float64]int{}
		for i, x := range s.x {
			at[roundTo(x, 1)] = i
		}
		for _, x := range xs {
			i, ok := at[x]
			if !ok {
				out.add(nil, nil)
				continue
			}
			out.add(ptr(s.y[i]), &servebench.CellResult{Validity: servebench.Validity{Verdict: s.verdicts[i]}})
		}
		ch.Series = append(ch.Series, out)
	}
	ch.MarkNote = markNote(ch)
	return ch
}

func roundTo(v float64, decimals int) float64 {
	p := 1.0
	for range decimals {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// frontierSeries is a curve's measured points and its frontier, for the frontier chart; label
// prefixes the series' names (a run's label in a comparison, "" in a report).
func frontierSeries(label string, w frontier.Curve, y func(frontier.Point) float64, axis int, withAll bool) []xySeries {
	name := curveLabel(w)
	if label != "" {
		name = label + " · " + name
	}
	all := xySeries{name: name + ": measured levels", style: "points", axis: axis}
	fr := xySeries{name: name + ": frontier", axis: axis}
	for _, p := range w.Points {
		v := y(p)
		if v <= 0 {
			continue
		}
		all.x, all.y, all.verdicts = append(all.x, p.PerUserTPS), append(all.y, v), append(all.verdicts, p.Verdict)
		if p.Pareto {
			fr.x, fr.y, fr.verdicts = append(fr.x, p.PerUserTPS), append(fr.y, v), append(fr.verdicts, p.Verdict)
		}
	}
	var out []xySeries
	if len(fr.x) > 0 {
		out = append(out, fr)
	}
	if withAll && len(all.x) > len(fr.x) {
		out = append(out, all)
	}
	return out
}

// primaryCost is the cost at the hardware's primary price, ok false without one.
func primaryCost(e frontier.Economics) (frontier.Cost, bool) {
	if len(e.Costs) == 0 {
		return frontier.Cost{}, false
	}
	return e.Costs[0], true
}

// priceName writes a price and its tier: "$3.70/GPU·h rental (default)", "$3.50/GPU·h
// (declared)".
func priceName(p frontier.Price) string {
	if p.Source == frontier.Declared {
		return fmt.Sprintf("%s/GPU·h (declared)", fmtUSD(p.USDPerGPUHour))
	}
	return fmt.Sprintf("%s/GPU·h %s (%s)", fmtUSD(p.USDPerGPUHour), p.Tier, p.Source)
}

// readingLabel writes how a reading on curve c was obtained: "measured (32 requests)",
// "interpolated between 16 and 32 requests", "not reached".
func readingLabel(c frontier.Curve, r frontier.Reading) string {
	s := ""
	switch r.Kind {
	case frontier.ReadMeasured:
		s = "measured (" + level(c, r.Measured.Concurrency) + ")"
	case frontier.ReadInterpolated:
		s = fmt.Sprintf("interpolated between %d and %s", r.Above.Concurrency, level(c, r.Below.Concurrency))
	default:
		return "not reached"
	}
	if r.Verdict != "" && r.Verdict != servebench.VerdictValid {
		s += ", " + string(r.Verdict)
	}
	return s
}

// readingPerGPU writes a reading's throughput per GPU with its interval: "399.3 tok/s ±4%" or
// "~399.3 tok/s ±4%" when interpolated, "—" when not reached.
func readingPerGPU(r frontier.Reading) string {
	if r.Kind == frontier.ReadOutOfRange {
		return "—"
	}
	s := fmtTPS(r.OutputTPSPerGPU) + PlusMinusOrWithheld(r.OutputTPSPerGPUCI95, r.OutputTPSPerGPU, r.OutputCI95Withheld)
	if r.Kind == frontier.ReadInterpolated {
		s = "~" + s
	}
	return s
}

// usersDefinition is frontier.UsersDefinition: said beside every figure counted in users.
func usersDefinition(pop string, usersPerSlot float64) string {
	return frontier.UsersDefinition(pop, usersPerSlot)
}

// deployment writes the GPUs (and monthly cost at the primary price) for users users (of a
// curve of population pop, usersPerSlot per request in flight: Reading.Fleet) at a reading:
// "252 GPUs, $680,652/month", "~" before an interpolated one.
func deployment(h frontier.Hardware, r frontier.Reading, users int, pop string, usersPerSlot float64) string {
	f, ok := r.Fleet(users, h, pop, usersPerSlot)
	if !ok {
		return "—"
	}
	s := plural(f.GPUs, "GPU")
	if f.MonthlyUSD > 0 {
		s += ", " + fmtMonthly(f.MonthlyUSD) + "/month"
	}
	if f.Interpolated {
		s = "~" + s
	}
	return s
}

// wholeTokens writes a token figure to the token: "388,459".
func wholeTokens(v float64) string { return fmtInt(int(math.Round(v))) }

// sectionFrontier is the buyer's frontier: throughput per GPU against per-user speed, what it
// costs and draws, the cheapest measured cell under each TTFT cap, and the SLO tiers.
func (b *builder) sectionFrontier() {
	const id, title = "frontier", "Tokens per GPU against Speed per User"
	a := analyzeFrontier(b.man, b.res)
	if len(a.Curves) == 0 && b.speedUnknown() {
		b.add(id, title, 1, missing("No measured level has a known speed per user (generation speed: "+orDefault(b.unavailable("generation_speed_tps"), "no request streamed two tokens or more")+"), so no level can be placed on this chart; an unknown speed is never drawn as 0."))
		return
	}
	if len(a.Curves) == 0 {
		b.add(id, title, 1, missing("No concurrency level was measured in closed loop (sweep or capacity search), so there is no frontier to draw. Run a sweep (--contexts, --concurrency) to fill this section."))
		return
	}
	b.rep.Frontier = &a
	h := a.Hardware
	blocks := []Block{para("What one GPU of this system produces at each speed a user sees: every measured concurrency level as output tokens per second per GPU (the system's output throughput ÷ %s) against the mean generation speed of one request. More users at once give more tokens per GPU and fewer per user; the frontier joins the levels no other level beats on both (Pareto-optimal), and a buyer chooses a point on it: the speed their users need fixes the tokens per GPU, and with them the cost per token and the number of GPUs.", plural(h.GPUs, "GPU")),
		note("Inputs: " + h.Inputs() + ".")}

	var ss, cost []xySeries
	for _, w := range a.Curves {
		ss = append(ss, frontierSeries("", w.Curve, func(p frontier.Point) float64 { return p.OutputTPSPerGPU }, 0, true)...)
	}
	blocks = append(blocks, chartB(xyChart("chart-frontier", "Frontier", "Output tokens per second per GPU against tokens per second per user, each measured level a point; the line joins the Pareto-optimal levels. Between two of them a value is interpolated, never measured.", "tok/s per user", "output tok/s per GPU", "", 1, 0, ss)))

	p, havePrice := h.Primary()
	for _, w := range a.Curves {
		if havePrice {
			s := frontierSeries("", w.Curve, func(p frontier.Point) float64 {
				c, _ := primaryCost(p.Economics)
				return c.USDPerMillionOutputTokens
			}, 0, false)
			for i := range s {
				s[i].name = strings.TrimSuffix(s[i].name, ": frontier") + ": cost"
			}
			cost = append(cost, s...)
		}
		if h.AllInKWPerGPU > 0 {
			s := frontierSeries("", w.Curve, func(p frontier.Point) float64 { return p.Economics.OutputTPSPerMW / 1000 }, 1, false)
			for i := range s {
				s[i].name = strings.TrimSuffix(s[i].name, ": frontier") + ": per MW"
				s[i].style = "dashed"
			}
			cost = append(cost, s...)
		}
	}
	switch {
	case len(cost) > 0:
		yName, y2 := "$ per 1M output tokens", ""
		if !havePrice {
			yName = ""
		}
		if h.AllInKWPerGPU > 0 {
			y2 = "thousand output tok/s per all-in MW"
		}
		capt := "Along the frontier: the cost of a million output tokens"
		if havePrice {
			capt += " at " + priceName(p)
		}
		if h.AllInKWPerGPU > 0 {
			capt += fmt.Sprintf("; the throughput one megawatt of facility power sustains at %s kW all-in per GPU (%s, dashed, right axis)", fmtNum(h.AllInKWPerGPU, 2), h.KWSource)
		}
		blocks = append(blocks, chartB(xyChart("chart-frontier-cost", "Cost and power along the frontier", capt+".", "tok/s per user", yName, y2, 2, 1, cost)))
	default:
		blocks = append(blocks, missing("No cost or power per token: the GPU is not one the public defaults table knows ("+strings.TrimSuffix(h.GPU+")", " )")+" and no price was given. Pass --gpu-price USD per GPU-hour (or sizing.gpu_usd_per_hour) and declare metadata.gpu (\"8x H100\")."))
	}
	users := targetUsers(b.man.Plan.Sizing)
	for _, w := range a.Curves {
		blocks = append(blocks, frontierBlocks(h, w, users, a.UsersPerSlot, len(a.Curves) > 1)...)
	}
	b.add(id, title, 1, blocks...)
}

// frontierBlocks are one workload's tables: its measured levels, readings at the tiers' speed
// floors, the first-token limits and the SLO tiers; users are counted at usersPerSlot per
// request in flight (frontier.UsersPerLevel).
func frontierBlocks(h frontier.Hardware, w frontier.Workload, users []int, usersPerSlot float64, named bool) []Block {
	wl := curveLabel(w.Curve)
	caption := func(s string) string {
		if named {
			return wl + ": " + s
		}
		return s
	}
	var blocks []Block
	// the measured levels
	head := []string{map[bool]string{true: "USERS", false: "REQUESTS"}[w.Population != ""], "TOK/S PER USER", "OUTPUT TOK/S PER GPU", "MEAN TTFT", "ON THE FRONTIER"}
	for _, p := range h.Prices {
		head = append(head, "$ / 1M OUTPUT ("+strings.ToUpper(p.Tier)+")")
	}
	if len(h.Prices) > 0 {
		head = append(head, "$ / 1M INPUT ("+strings.ToUpper(h.Prices[0].Tier)+")", "OUTPUT TOKENS PER $")
	}
	if h.AllInKWPerGPU > 0 {
		head = append(head, "TOK/S PER MW", "J / TOKEN ALL-IN")
	}
	head = append(head, "J / TOKEN MEASURED", "VALIDITY")
	t := &Table{Caption: caption("Every measured level, slowest per user first (" + wl + ")."), Header: head}
	for _, p := range w.Points {
		row := []string{fmtInt(p.Concurrency), fmtNum(p.PerUserTPS, 1) + PlusMinusOrWithheld(p.PerUserTPSCI95, p.PerUserTPS, p.PerUserCI95Withheld), fmtNum(p.OutputTPSPerGPU, 1) + PlusMinusOrWithheld(p.OutputTPSPerGPUCI95, p.OutputTPSPerGPU, p.OutputCI95Withheld),
			fmtDur(p.TTFTSeconds), map[bool]string{true: "yes", false: "no"}[p.Pareto]}
		for _, c := range p.Economics.Costs {
			row = append(row, fmtUSD(c.USDPerMillionOutputTokens))
		}
		if c, ok := primaryCost(p.Economics); ok {
			in := "—"
			if c.USDPerMillionInputTokens > 0 {
				in = fmtUSD(c.USDPerMillionInputTokens)
			}
			row = append(row, in, wholeTokens(c.OutputTokensPerUSD))
		}
		if h.AllInKWPerGPU > 0 {
			row = append(row, wholeTokens(p.Economics.OutputTPSPerMW), fmtNum(p.Economics.AllInJoulesPerOutputToken, 2)+" J")
		}
		meas := "—"
		if p.MeasuredJoulesPerOutputToken > 0 {
			meas = fmtNum(p.MeasuredJoulesPerOutputToken, 2) + " J"
		}
		v := string(p.Verdict)
		if v == "" {
			v = "—"
		}
		row = append(row, meas, v)
		t.Rows = append(t.Rows, row)
	}
	blocks = append(blocks, tableB(t))
	blocks = append(blocks, para("Cost per 1M tokens = $ per GPU-hour ÷ (tok/s per GPU × 3,600 ÷ 10⁶), the whole GPU-hour charged to output tokens (or, in the input column, to input tokens instead); tokens per $ is its reciprocal × 10⁶; tok/s per MW = tok/s per GPU × 1,000 ÷ all-in kW per GPU. Measured J / token counts the GPUs' sampled power only; all-in counts the facility's."))

	// readings at target speeds
	rt := &Table{Caption: caption("At a target speed per user: throughput per GPU read on the frontier, and the fleet for each number of users (" + usersDefinition(w.Population, usersPerSlot) + "): ⌈users ÷ (the level the reading stands for × users per level)⌉ replicas × GPUs per replica."),
		Header: []string{"TARGET TOK/S PER USER", "OUTPUT TOK/S PER GPU", "HOW"}}
	if p, ok := h.Primary(); ok {
		rt.Header = append(rt.Header, "$ / 1M OUTPUT ("+strings.ToUpper(p.Tier)+")", "OUTPUT TOKENS PER $")
	}
	if h.AllInKWPerGPU > 0 {
		rt.Header = append(rt.Header, "TOK/S PER MW")
	}
	for _, n := range users {
		rt.Header = append(rt.Header, strings.ToUpper(plural(n, "user")))
	}
	for _, target := range frontier.DefaultSpeedFloors() {
		r := w.At(target, h)
		if r.Kind == frontier.ReadOutOfRange && target > w.Points[len(w.Points)-1].PerUserTPS*2 {
			continue // far beyond the fastest level: one "not reached" row says it
		}
		row := []string{fmtNum(target, 0), readingPerGPU(r), readingLabel(w.Curve, r)}
		if _, ok := h.Primary(); ok {
			if c, ok := primaryCost(r.Economics); ok && r.Kind != frontier.ReadOutOfRange {
				row = append(row, approx(r, fmtUSD(c.USDPerMillionOutputTokens)), approx(r, wholeTokens(c.OutputTokensPerUSD)))
			} else {
				row = append(row, "—", "—")
			}
		}
		if h.AllInKWPerGPU > 0 {
			v := "—"
			if r.Kind != frontier.ReadOutOfRange {
				v = approx(r, wholeTokens(r.Economics.OutputTPSPerMW))
			}
			row = append(row, v)
		}
		for _, n := range users {
			row = append(row, deployment(h, r, n, w.Population, usersPerSlot))
		}
		rt.Rows = append(rt.Rows, row)
	}
	blocks = append(blocks, tableB(rt))

	// measured rows only
	ft := &Table{Caption: caption(fmt.Sprintf("First-token limits, measured rows only: under each TTFT cap, the measured level with the most output tokens per GPU (the cheapest) whose mean TTFT is within the cap and whose mean speed per user is at least %s tok/s. Never interpolated.", fmtNum(frontier.DefaultMinPerUserTPS, 0))),
		Header: []string{"TTFT CAP", "CELL", "MEAN TTFT", "TOK/S PER USER", "OUTPUT TOK/S PER GPU"}}
	if p, ok := h.Primary(); ok {
		ft.Header = append(ft.Header, "$ / 1M OUTPUT ("+strings.ToUpper(p.Tier)+")")
	}
	for _, r := range w.FirstToken {
		row := []string{fmtDur(r.TTFTCapSeconds)}
		if r.Point == nil {
			row = append(row, "none meets it", "—", "—", "—")
			if _, ok := h.Primary(); ok {
				row = append(row, "—")
			}
			ft.Rows = append(ft.Rows, row)
			continue
		}
		p := r.Point
		cell := level(w.Curve, p.Concurrency)
		if p.Verdict != "" && p.Verdict != servebench.VerdictValid {
			cell += " (" + string(p.Verdict) + ")"
		}
		row = append(row, cell, fmtDur(p.TTFTSeconds), fmtNum(p.PerUserTPS, 1), fmtNum(p.OutputTPSPerGPU, 1)+PlusMinusOrWithheld(p.OutputTPSPerGPUCI95, p.OutputTPSPerGPU, p.OutputCI95Withheld))
		if c, ok := primaryCost(p.Economics); ok {
			row = append(row, fmtUSD(c.USDPerMillionOutputTokens))
		}
		ft.Rows = append(ft.Rows, row)
	}
	blocks = append(blocks, tableB(ft))

	// SLO tiers
	if len(w.Tiers) > 0 {
		t0 := w.Tiers[0]
		who := fmt.Sprintf("the default TTFT ceiling of %s (Artificial Analysis' agent tiers)", fmtDur(t0.TTFTCeilingSecond))
		if t0.UseCase != "" {
			who = fmt.Sprintf("the TTFT ceiling of use case %s (%s)", t0.UseCase, fmtDur(t0.TTFTCeilingSecond))
		}
		st := &Table{Caption: caption(fmt.Sprintf("SLO tiers: at each speed floor under %s, the most users a replica held (the highest measured level whose %s TTFT and speed per user meet both; %s), per GPU, per all-in megawatt and per dollar-hour. Measured levels only; \"+\" where the highest level measured still met the tier.", who, statName(t0.Statistic), usersDefinition(w.Population, usersPerSlot))),
			Header: []string{"SPEED FLOOR", "TTFT CEILING", "USERS", "CELL", "USERS PER GPU", "USERS PER MW", "USERS PER $/H"}}
		for _, tr := range w.Tiers {
			row := []string{fmtNum(tr.SpeedFloorTPS, 0) + " tok/s", fmtDur(tr.TTFTCeilingSecond)}
			if tr.Level == 0 {
				row = append(row, "none", "no level meets it", "—", "—", "—")
				st.Rows = append(st.Rows, row)
				continue
			}
			u := fmtUsers(tr.Users)
			if tr.Lower {
				u += "+"
			}
			cell := level(w.Curve, tr.Level)
			if tr.Verdict != "" && tr.Verdict != servebench.VerdictValid {
				cell += " (" + string(tr.Verdict) + ")"
			}
			perMW, perUSD := "—", "—"
			if tr.UsersPerMW > 0 {
				perMW = wholeTokens(tr.UsersPerMW)
			}
			if tr.UsersPerUSDHour > 0 {
				perUSD = fmtNum(tr.UsersPerUSDHour, 2)
			}
			row = append(row, u, cell, fmtNum(tr.UsersPerGPU, 2), perMW, perUSD)
			st.Rows = append(st.Rows, row)
		}
		blocks = append(blocks, tableB(st))
	}
	return blocks
}

// approx prefixes "~" to a value read between two measured points.
func approx(r frontier.Reading, s string) string {
	if r.Kind == frontier.ReadInterpolated {
		return "~" + s
	}
	return s
}

// FrontierCSV writes one row per measured level of the frontier analysis (frontier.csv): the
// workload (context_tokens, output_tokens), the replica's GPUs and where that count came from,
// then every field of the point named by its JSON path as in CellsCSV (per_user_tps,
// output_tps_per_gpu, pareto, economics.costs.0.tier, economics.costs.0.usd_per_million_output_tokens,
// economics.output_tps_per_mw …). Each cost column's tier and source sit beside it.
func FrontierCSV(w io.Writer, a *frontier.Analysis) error {
	var rows []flatRow
	if a != nil {
		h := a.Hardware
		for _, wl := range a.Curves {
			for _, p := range wl.Points {
				r, err := flatten(p)
				if err != nil {
					return err
				}
				r.set("context_tokens", strconv.Itoa(wl.ContextTokens))
				r.set("output_tokens", strconv.Itoa(wl.OutputTokens))
				r.set("gpus", strconv.Itoa(h.GPUs))
				r.set("gpus_source", string(h.GPUsSource))
				r.set("all_in_kw_per_gpu", strconv.FormatFloat(h.AllInKWPerGPU, 'f', -1, 64))
				r.set("kw_source", string(h.KWSource))
				rows = append(rows, r)
			}
		}
	}
	return writeFlat(w, rows, []string{"context_tokens", "output_tokens", "concurrency", "cell_id", "gpus", "gpus_source", "all_in_kw_per_gpu", "kw_source"})
}

// speedUnknown reports whether some closed-loop level completed requests but none has a known
// speed per user: the frontier then has nothing to place, for want of speed, not of levels.
func (b *builder) speedUnknown() bool {
	levels := 0
	for _, c := range b.res.Cells {
		if c.Skipped || c.RequestsSucceeded == 0 || c.Concurrency <= 0 || c.RatePerSecond > 0 {
			continue
		}
		if c.GenerationSpeedTPS.Count > 0 {
			return false
		}
		levels++
	}
	return levels > 0
}
