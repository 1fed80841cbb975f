package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/cells"
)

// Phase headers of the live view: what each phase measures, in a reader's words.

// sweepTitle: "sweep: 9 cells (contexts 1K, 8K, 32K × concurrency 1, 2, 4, 1024 output tokens,
// sustained), then 9 cells in 3 dedicated scenarios".
func (r *Runner) sweepTitle(keys []servebench.CellKey) string {
	var ctxs, loads []string
	seenC, seenL := map[string]bool{}, map[string]bool{}
	n, out, mode := 0, 0, servebench.LoadMode("")
	scen, scenCells := map[string]bool{}, 0
	for _, k := range keys {
		if k.Scenario != SweepScenario && k.Scenario != DatasetScenario && k.Scenario != TraceScenario {
			scen[k.Scenario] = true
			scenCells++
			continue
		}
		n++
		out, mode = k.OutputTokens, k.LoadMode
		if c := tokensLabel(k.ContextTokens); k.ContextTokens > 0 && !seenC[c] {
			seenC[c] = true
			ctxs = append(ctxs, c)
		}
		l := strconv.Itoa(k.Concurrency)
		if k.Concurrency == 0 && k.RatePerSecond > 0 {
			l = strconv.FormatFloat(k.RatePerSecond, 'g', 4, 64) + " req/s"
		}
		if !seenL[l] {
			seenL[l] = true
			loads = append(loads, l)
		}
	}
	then := ""
	if scenCells > 0 {
		then = fmt.Sprintf(", then %d cells in %d dedicated scenarios", scenCells, len(scen))
		if len(scen) == 1 {
			then = fmt.Sprintf(", then %d cells in 1 dedicated scenario", scenCells)
		}
	}
	if n == 0 {
		return "sweep: no grid cells" + then
	}
	s := fmt.Sprintf("sweep: %d cells (", n)
	if len(ctxs) > 0 {
		s += "contexts " + strings.Join(ctxs, ", ")
	}
	if len(keys) > 0 && keys[0].Concurrency == 0 {
		s += " × rates " + strings.Join(loads, ", ")
	} else {
		s += " × concurrency " + strings.Join(loads, ", ")
	}
	if out > 0 {
		s += fmt.Sprintf(", %d output tokens", out)
	}
	return s + ", " + string(mode) + ")" + then
}

// scenarioTitle: "scenario Chatbot: bursts of 1, 2, 4 requests released together, 2K in / 512 out tokens".
func (r *Runner) scenarioTitle(name string) string {
	for _, s := range r.Plan.Scenarios {
		if s.Name != name {
			continue
		}
		title := s.Title
		if title == "" {
			title = s.Name
		}
		levels := cells.ScenarioLevels(s)
		ls := make([]string, len(levels))
		for i, n := range levels {
			ls[i] = strconv.Itoa(n)
		}
		return fmt.Sprintf("scenario %s: bursts of %s requests released together, %s in / %d out tokens",
			title, strings.Join(ls, ", "), tokensLabel(int(s.ContextTokens)), s.OutputTokens)
	}
	return "scenario " + name
}

// capacityTitle: "capacity Code Completion: 1K in / 128 out tokens, mean end-to-end latency ≤ 2s,
// searching up to 128 concurrent requests".
func capacityTitle(p servebench.Plan, uc servebench.UseCase) string {
	title := uc.Title
	if title == "" {
		title = uc.Name
	}
	var th []string
	for _, c := range capacity.Checks(uc.Thresholds) {
		d := c.Describe(uc.Statistic)
		if uc.Statistic == "" || uc.Statistic == servebench.StatMean {
			d = "mean " + d
		}
		th = append(th, d)
	}
	s := fmt.Sprintf("capacity %s: %s in / %d out tokens", title, tokensLabel(int(uc.ContextTokens)), uc.OutputTokens)
	if len(th) > 0 {
		s += ", " + strings.Join(th, ", ")
	}
	return s + fmt.Sprintf(", searching up to %d concurrent requests", p.Capacity.MaxConcurrency)
}

func tokensLabel(n int) string {
	if n > 0 && n%1024 == 0 {
		return strconv.Itoa(n/1024) + "K"
	}
	return strconv.Itoa(n)
}
