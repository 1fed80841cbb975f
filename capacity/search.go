package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/servebench/servebench"
)

// Measure measures the use case at one concurrency level and returns the cell, the number of
// requests it sent (warm-up included; 0 when it served the cell from elsewhere) and an error
// that stops the search (a canceled context, a broken target).
type Measure func(ctx context.Context, concurrency int) (cell servebench.CellResult, requestsSpent int, err error)

// SearchConfig configures Search.
type SearchConfig struct {
	// Ceiling is the highest concurrency the search may measure (capacity.max_concurrency).
	Ceiling int
	// Known holds cells the sweep already measured for this use case (same load mode, context
	// and output length), by concurrency. They are evaluated first, reused as points
	// (Reused = true, not counted in RequestsSpent) and never measured again. Skipped or empty
	// cells and levels above Ceiling are ignored.
	Known map[int]servebench.CellResult
	// RequestsAt is the fewest requests measuring one level of the dense grid costs, used only
	// to estimate DenseGridRequests (a level the search measured costs at least what it sent
	// there; see Decide): the sweep's cell sizing (load.Sizing.Minimum). Nil means
	// DefaultRequestsAt.
	RequestsAt func(concurrency int) int
	// Start is the first level an empty search measures (nothing Known), at most Ceiling;
	// 0 or 1 means level 1. A users' search starts at its use case's limit in cold prompts
	// (see runner), a level it is likely to pass, rather than climbing 1, 2, 8, … to it. It is
	// measured and judged like any other level: if it fails, the search goes down from it.
	Start int
	// Fit is, for a users' search, the most users whose conversations the server's KV cache is
	// expected to hold (its capacity over the mean tokens one user's history keeps cached; see
	// runner); 0 when unknown. Up to Fit a population's turns re-send histories the cache
	// holds; past it they start to evict each other and each turn prefills more of its history
	// again, so metrics that barely moved below Fit jump past it. While no level has failed the
	// climb uses it: a level below Fit is followed by at most Fit (in place of the 4 × lo cap
	// when Fit is above it: the model's extrapolation holds up to where the cache stops
	// holding the histories; with a single level measured, Fit is next), and from Fit on by
	// at most lo + ⌈lo / 8⌉ at first (Fit is an estimate, and a server may prefill fast
	// enough to pass some way past it), the step doubling with each passing level above Fit,
	// not 4 × lo at once: a population far past the cache thrashes, every turn a cold
	// prefill of its whole history, and its level is the costliest of the search (480 chat
	// users on the H200 simulator, twice the cache: 9 minutes). It changes which levels are
	// measured, never how one is judged.
	Fit int
	// Resolution, when above 0, is the search's resolution as a share of the limit (a users'
	// search's is UsersResolution, 1/16; a cold-prompt search's the plan's capacity.resolution,
	// 0 by default: exact): the search ends once it knows the limit to within
	// ⌈Resolution × lo⌉ users (resolutionStep), in either of two ways.
	//
	//   - A bracket of lo passing and hi failing is done when hi − lo ≤ the step: its verdict is
	//     Decide's as for any bracket (an interpolated limit with its 95% range from the levels
	//     whose verdicts settled). Each level between would cost a whole population's warm-up and
	//     window, and where one end did not settle (the metric within its noise of the
	//     threshold), it would not settle either.
	//   - A climb (no level failed yet) is done at a passing level lo whose verdict did not settle
	//     when the model through the two highest passing levels (Predict) puts the crossing below
	//     lo + the step (nearCrossing): lo sits within its noise of the threshold, and the model
	//     says the next level the search could resolve would fail. The limit is then "about" lo
	//     (interpolated: its verdict is within its noise), with no failing level measured and
	//     none above lo claimed: its 95% range runs from the highest settled pass to the ceiling
	//     (the run measured no settled failure). Measuring lo + the step would cost the search's dearest
	//     level (a population past the KV cache, every turn a cold prefill of its history) to
	//     learn a verdict at the same noise: on the H200 simulator's plateau every population
	//     from 243 to 260 chat users sat within 5% of 15 tok/s, and 260 added about 4.6 minutes.
	//
	// With Fit, the climb past Fit steps by ⌈Resolution × lo⌉ first (in place of ⌈lo / 8⌉), and
	// the step doubles only after a passing level above Fit that settled (one that did not is
	// near the threshold: the next step stays small).
	Resolution float64
}

// MaxResolution is the coarsest resolution a search takes (SearchConfig.Resolution, the plan's
// capacity.resolution): half the limit.
const MaxResolution = 0.5

// ValidResolution reports whether r is a resolution a search takes: 0 (exact) up to
// MaxResolution; false for NaN.
func ValidResolution(r float64) bool { return r >= 0 && r <= MaxResolution }

// UsersResolution is the users' search's resolution (SearchConfig.Resolution): a sixteenth of
// the limit, about the ±5% precision a level aims for.
const UsersResolution = 1.0 / 16

// DefaultRequestsAt is the cost of a dense-grid level at the default sweep sizing: a warm-up
// of n plus max(10, 3 × n) measured requests.
func DefaultRequestsAt(n int) int { return n + max(10, 3*n) }

// Search finds the capacity limit of uc: the largest concurrency at which Evaluate passes,
// assuming quality only degrades as concurrency grows. It is sequential: measure (the runner)
// keeps each level measuring only until Settled says its verdict is certain at 95%, and Search
// picks each next level from a model of the measured ones (nextLevel):
//
//  1. Known cells (up to Ceiling) are evaluated first, for free.
//  2. Let hi be the lowest failing level seen and lo the highest passing level below it (0 if
//     none); with no failure yet, lo is the highest passing level.
//  3. It ends when hi = lo + 1 (the limit lo is measured: it passes, lo + 1 fails), when hi = 1
//     (not viable), or when lo = Ceiling with no failure (lower bound "Ceiling+").
//  4. Otherwise the next level comes from Predict: each thresholded metric is taken as linear in
//     concurrency between two measured levels (TTFT, end-to-end latency and ITL as they are,
//     per-user speed as its reciprocal, the time per token), through lo and hi when the limit is
//     bracketed and through the two highest passing levels when not; the predicted limit is
//     ⌊the lowest crossing of a threshold⌋. The next level is the level nearest the crossing
//     (see nearest: the limit or the level past it, both of which the search must measure), or
//     lo + 1 when that is lo (confirming the boundary), kept inside (lo, hi), at most 4 × lo while no
//     level has failed, and at most Ceiling. Levels 1 and 2 start an empty search (two points
//     to fit; Start, then twice it, when set); when a bound moved twice in a row without the other, or the model has nothing to
//     say (a metric that does not change, a failure on success rate), the step bisects
//     (lo + ⌊(hi − lo)/2⌋, or doubles lo when nothing failed yet).
//
// No level is measured twice. The verdict is Decide's. RequestsSpent and ServerSecondsSpent sum
// the measured levels' costs (what measure reported; server time estimated as requests × mean
// end-to-end latency / concurrency).
//
// On an error from measure or a canceled ctx, Search returns the points gathered so far with
// the error, marked Interrupted: no verdict, only the limit so far (see interrupted).
func Search(ctx context.Context, uc servebench.UseCase, cfg SearchConfig, measure Measure) (servebench.CapacityResult, error) {
	res := servebench.CapacityResult{
		UseCase: uc.Name, Title: uc.Title, ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens),
		Statistic: uc.Statistic, Thresholds: uc.Thresholds, Ceiling: cfg.Ceiling,
	}
	if res.Statistic == "" {
		res.Statistic = servebench.StatMean
	}
	if cfg.Ceiling < 1 {
		return res, fmt.Errorf("capacity search for %q: ceiling is %d; set capacity.max_concurrency to at least 1", uc.Name, cfg.Ceiling)
	}
	if len(Checks(uc.Thresholds)) == 0 {
		return res, fmt.Errorf("capacity search for %q: the use case has no thresholds; set at least one of ttft_seconds_max, generation_speed_tps_min, e2e_latency_seconds_max, itl_seconds_max", uc.Name)
	}
	points := make(map[int]servebench.CapacityPoint)
	for n, c := range cfg.Known {
		if n < 1 || n > cfg.Ceiling || c.Skipped || c.RequestsTotal == 0 {
			continue
		}
		p := Evaluate(uc, c)
		p.Concurrency, p.Reused = n, true
		points[n] = p
	}
	var moved []bool // per measured level: did it move lo (true) or hi (false)
	for {
		next, done := nextLevel(uc, cfg, points, moved)
		if done {
			out := DecideWithin(uc, cfg.Ceiling, sorted(points), cfg.RequestsAt, cfg.Resolution)
			out.UseCase, out.Title, out.ContextTokens, out.OutputTokens = res.UseCase, res.Title, res.ContextTokens, res.OutputTokens
			for _, p := range out.Points {
				out.RequestsSpent += p.RequestsSpent
				out.ServerSecondsSpent += p.ServerSeconds
			}
			return out, nil
		}
		if _, seen := points[next]; seen {
			// Impossible by construction (see nextLevel); guard against looping forever.
			res.Points = sorted(points)
			return res, fmt.Errorf("capacity search for %q: level %d proposed twice (internal error)", uc.Name, next)
		}
		if err := ctx.Err(); err != nil {
			return interrupted(res, points, 0), err
		}
		if measure == nil {
			res.Points = sorted(points)
			return res, fmt.Errorf("capacity search for %q: level %d must be measured but no measure function was given", uc.Name, next)
		}
		cell, spent, err := measure(ctx, next)
		if err != nil {
			return interrupted(res, points, spent), err
		}
		p := Evaluate(uc, cell)
		p.Concurrency, p.RequestsSpent = next, spent
		if spent > 0 {
			p.ServerSeconds = float64(spent) * cell.E2ELatencySeconds.Mean / float64(next)
		}
		points[next] = p
		moved = append(moved, p.Pass)
	}
}

// interrupted is the result of a search stopped before its verdict: res (the use case's
// fields) with the points measured so far, their requests and server time plus spent (what the
// level that was stopped had sent), Interrupted set, and, when a level passed, the limit so
// far: Limit = the highest passing level below the lowest failing one (LimitKind lower_bound:
// at least that), FirstFailing = that failing level when one failed.
func interrupted(res servebench.CapacityResult, points map[int]servebench.CapacityPoint, spent int) servebench.CapacityResult {
	res.Interrupted = true
	res.Points = sorted(points)
	for _, p := range res.Points {
		res.RequestsSpent += p.RequestsSpent
		res.ServerSecondsSpent += p.ServerSeconds
	}
	res.RequestsSpent += spent
	lo, hi := bounds(points)
	if lo > 0 {
		res.LimitKind, res.Limit = servebench.LimitLowerBound, servebench.Int(lo)
	}
	if hi > 0 {
		res.FirstFailing = servebench.Int(hi)
	}
	return res
}

// nextLevel is the level Search measures next, or done when the limit is established (see
// Search for the rule); an empty search starts at cfg.Start, a climb with no failure yet heeds
// cfg.Fit (0: none; see climbCap), and a bracket within cfg.Resolution with an unsettled end
// is done (see SearchConfig.Resolution).
func nextLevel(uc servebench.UseCase, cfg SearchConfig, points map[int]servebench.CapacityPoint, moved []bool) (next int, done bool) {
	ceiling, start, fit := cfg.Ceiling, cfg.Start, cfg.Fit
	lo, hi := bounds(points)
	switch {
	case hi == 1, hi == 0 && lo >= ceiling, hi > 0 && hi == lo+1:
		return 0, true
	case resolved(cfg.Resolution, lo, hi):
		return 0, true
	case hi == 0:
		if _, _, _, ok := nearCrossing(uc, cfg.Resolution, points, lo); ok {
			return 0, true
		}
	}
	var fallback int
	switch {
	case hi == 0 && fit > lo:
		fallback = min(fit, ceiling) // nothing to extrapolate from yet: the cache's bound is the next question
	case hi == 0:
		fallback = min(max(1, 2*lo), climbCap(lo, fit, cfg.Resolution, points), ceiling)
	default:
		fallback = lo + (hi-lo)/2
	}
	free := func(n int) bool {
		_, seen := points[n]
		return !seen && n >= 1 && n <= ceiling && (hi == 0 || n < hi) && n > lo
	}
	if k := len(moved); k >= 2 && moved[k-1] == moved[k-2] && hi > 0 && free(fallback) {
		// The same bound moved twice in a row: the model keeps landing on one side; halve.
		return fallback, false
	}
	x := Predict(uc, sorted(points), lo, hi)
	cand := fallback
	switch {
	case lo == 0 && hi == 0:
		cand = min(max(1, start), ceiling)
	case math.IsNaN(x):
	case hi == 0:
		l := min(x, float64(climbCap(lo, fit, cfg.Resolution, points)))
		cand = max(nearest(l), lo+1)
		cand = min(cand, ceiling)
	case x >= float64(hi):
		// The model says hi should pass, yet it failed (success rate, or a metric that jumps):
		// it has nothing useful to say inside the bracket.
	default:
		cand = max(min(nearest(max(x, float64(lo))), hi-1), lo+1)
	}
	cand = clearOfNoise(cfg.Resolution, points, lo, hi, cand, ceiling)
	if !free(cand) {
		cand = fallback
	}
	if !free(cand) {
		// Bracketed with nothing free between lo and hi is impossible (hi > lo + 1); with no
		// failure, lo < ceiling so lo + 1 is free.
		cand = lo + 1
	}
	return cand, false
}

// climbCap is the highest level a climb from lo (no level failed yet) may measure next: 4 × lo;
// with fit known (> 0), fit itself while lo is below it (a larger jump than 4 × lo where fit is
// further), and from fit on lo + ⌈lo / 8⌉ × 2^k, k the passing levels already measured above
// fit (see SearchConfig.Fit): an eighth past the cache first, the step doubling each time the
// climb passes again, never more than 4 × lo. With a resolution (SearchConfig.Resolution > 0)
// the first step is ⌈resolution × lo⌉ and only settled passes above fit double it. At least
// lo + 1.
func climbCap(lo, fit int, resolution float64, points map[int]servebench.CapacityPoint) int {
	switch {
	case fit <= 0:
		return max(4*lo, lo+1)
	case lo < fit:
		return fit
	}
	step := max(1, (lo+7)/8)
	if resolution > 0 {
		step = resolutionStep(resolution, lo)
	}
	for n, p := range points {
		if n > fit && p.Pass && step < 4*lo && (resolution <= 0 || p.Settled) {
			step *= 2
		}
	}
	return max(min(lo+step, 4*lo), lo+1)
}

// clearOfNoise moves a users' search's candidate level cand (SearchConfig.Resolution > 0) at
// least a resolution step (resolutionStep of lo) away from a bracket end whose verdict did not
// settle: a level that close to it would sit within the same noise of the threshold. Climbing
// (hi = 0) from an unsettled lo, cand is at least lo + step (at most ceiling); bracketed, cand
// goes to hi − step below an unsettled hi, or lo + step above an unsettled lo, when that lies
// inside the bracket. Otherwise cand is unchanged.
func clearOfNoise(resolution float64, points map[int]servebench.CapacityPoint, lo, hi, cand, ceiling int) int {
	if resolution <= 0 || lo < 1 {
		return cand
	}
	step := resolutionStep(resolution, lo)
	loNoisy := !points[lo].Settled
	switch {
	case hi == 0:
		if loNoisy {
			return min(max(cand, lo+step), ceiling)
		}
	case !points[hi].Settled && cand > hi-step && hi-step > lo:
		return hi - step
	case loNoisy && cand < lo+step && lo+step < hi:
		return lo + step
	}
	return cand
}

// nearest is the level nearest a predicted crossing x (⌊x + ½⌋), the next level a search
// measures from the model (Search step 4). The limit is ⌊x⌋ when the model is right, and a search
// ends only once it has measured both ⌊x⌋ (passing) and ⌊x⌋ + 1 (failing); so its next level
// saves a step when it is either of the two, which from a prediction off by e holds for
// e ∈ [−½ − f, 1½ − f) (f the crossing's fraction past ⌊x⌋) where ⌊x⌋ allows only [−f, 2 − f):
// a crossing just past a whole level, predicted a little low by the noise of the levels it was
// fitted to, no longer costs a level below the limit. (The H200 simulator's General Chatbot
// at 32K, 256-token answers: 28.1 tok/s at 8 users gave x = 14.87 for a crossing at 15.1;
// ⌊x⌋ measured 14, 15 and 16, about 100 s more than 15 and 16.)
func nearest(x float64) int { return int(math.Floor(x + 0.5)) }

// resolutionStep is ⌈resolution × lo⌉, at least 1.
func resolutionStep(resolution float64, lo int) int {
	return max(1, int(math.Ceil(resolution*float64(lo)-1e-9)))
}

// resolved reports whether the bracket lo (passing) … hi (failing) is within resolution
// (hi − lo ≤ resolutionStep; see SearchConfig.Resolution). False with no resolution or no
// bracket.
func resolved(resolution float64, lo, hi int) bool {
	return resolution > 0 && lo >= 1 && hi > lo && hi-lo <= resolutionStep(resolution, lo)
}

// crossingNote says why a limit decided by nearCrossing (metric crossing at x) has no failing
// level.
func crossingNote(uc servebench.UseCase, byN map[int]servebench.CapacityPoint, lo, limit int, metric string, x, resolution float64) string {
	below := 0
	for n, p := range byN {
		if n < lo && p.Pass && n > below {
			below = n
		}
	}
	value := ""
	if _, ok := checkFor(uc, metric); ok {
		value = " (" + metricAt(uc, byN[lo], metric) + ")"
	}
	return fmt.Sprintf("No failing level was measured: at %d the verdict did not settle%s, the metric within its noise of the threshold, and the model through %d and %d crosses the threshold at %.1f, before %d, the next level the search's resolution (1/%.0f of the limit) would measure. So the limit is about %d, no level above it measured; its range runs from the highest level whose pass settled to the search's ceiling.",
		lo, value, below, lo, x, lo+resolutionStep(resolution, lo), 1/resolution, limit)
}

// nearCrossing is a search's ending without a failing level (SearchConfig.Resolution):
// lo, the highest passing level with none failing, did not settle, and Predict through the two
// highest passing levels puts the crossing x below lo + resolutionStep(resolution, lo). limit is
// lo itself: no level above it was measured, so none is claimed, even where x is past it (on the
// H200 simulator's chat plateau the model through 229 and 244 users crossed at 245.6, and fixed
// populations of 245 failed twice); metric is the threshold's metric that crosses at x. ok is
// false with no resolution, when lo settled or is not measured, or when the model cannot say
// (a single level, a metric that does not move) or puts the crossing further.
func nearCrossing(uc servebench.UseCase, resolution float64, points map[int]servebench.CapacityPoint, lo int) (limit int, metric string, x float64, ok bool) {
	p, measured := points[lo]
	if resolution <= 0 || lo < 1 || !measured || !p.Pass || p.Settled {
		return 0, "", 0, false
	}
	x, metric = predict(uc, sorted(points), lo, 0)
	step := resolutionStep(resolution, lo)
	if math.IsNaN(x) || math.IsInf(x, 0) || x >= float64(lo+step) || metric == "" {
		return 0, "", 0, false
	}
	return lo, metric, x, true
}

// Predict is the concurrency (a real number) at which the first of uc's thresholds is crossed,
// by the model of Search step 4: each metric linear in concurrency between two measured levels
// (per-user speed as its reciprocal). The two levels are lo and hi when both are measured
// (hi > 0, lo > 0), otherwise the two highest measured levels at or below lo (with hi = 0) or
// the two lowest at or above hi (with lo = 0). NaN when no metric can be modelled; +Inf when no
// modelled metric ever crosses its threshold.
func Predict(uc servebench.UseCase, points []servebench.CapacityPoint, lo, hi int) float64 {
	x, _ := predict(uc, points, lo, hi)
	return x
}

// predict is Predict with the metric whose crossing it returns ("" when none crosses or none
// can be modelled).
func predict(uc servebench.UseCase, points []servebench.CapacityPoint, lo, hi int) (float64, string) {
	byN := map[int]servebench.CapacityPoint{}
	var levels []int
	for _, p := range points {
		byN[p.Concurrency] = p
		levels = append(levels, p.Concurrency)
	}
	sort.Ints(levels)
	var a, b int
	switch {
	case lo > 0 && hi > 0:
		a, b = lo, hi
	case hi == 0:
		var below []int
		for _, n := range levels {
			if n <= lo {
				below = append(below, n)
			}
		}
		if len(below) < 2 {
			return math.NaN(), ""
		}
		a, b = below[len(below)-2], below[len(below)-1]
	default:
		var above []int
		for _, n := range levels {
			if n >= hi {
				above = append(above, n)
			}
		}
		if len(above) < 2 {
			return math.NaN(), ""
		}
		a, b = above[0], above[1]
	}
	pa, pb := byN[a], byN[b]
	best, metric, any := math.Inf(1), "", false
	for _, k := range Checks(uc.Thresholds) {
		va, okA := pa.Values[k.Metric]
		vb, okB := pb.Values[k.Metric]
		if !okA || !okB {
			continue
		}
		// f grows as quality degrades; f ≤ t holds.
		f := func(v float64) float64 { return v }
		if !k.Upper {
			f = func(v float64) float64 { return 1 / v }
		}
		fa, fb, t := f(va), f(vb), f(k.Limit)
		if math.IsNaN(fa) || math.IsNaN(fb) || math.IsInf(fa, 0) || math.IsInf(fb, 0) {
			continue
		}
		any = true
		if fb == fa {
			if fb > t && float64(a) < best {
				best, metric = float64(a), k.Metric // fails and does not move: crossed at or before a
			}
			continue
		}
		x := float64(a) + (t-fa)*float64(b-a)/(fb-fa)
		if fb < fa && fb <= t {
			continue // improving and holding: no crossing ahead
		}
		if x < best {
			best, metric = x, k.Metric
		}
	}
	if !any {
		return math.NaN(), ""
	}
	return best, metric
}

// bounds returns hi, the lowest failing level (0 if none), and lo, the highest passing level
// below hi (any passing level when hi = 0; 0 if none).
func bounds(points map[int]servebench.CapacityPoint) (lo, hi int) {
	for n, p := range points {
		if !p.Pass && (hi == 0 || n < hi) {
			hi = n
		}
	}
	for n, p := range points {
		if p.Pass && n > lo && (hi == 0 || n < hi) {
			lo = n
		}
	}
	return lo, hi
}

// sorted returns the points ordered by concurrency.
func sorted(points map[int]servebench.CapacityPoint) []servebench.CapacityPoint {
	out := make([]servebench.CapacityPoint, 0, len(points))
	for _, p := range points {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Concurrency < out[j].Concurrency })
	return out
}

// unknownOnly reports whether p failed only on metrics its responses could not show (not
// streamed).
func unknownOnly(p servebench.CapacityPoint) bool {
	if len(p.NotStreamed) == 0 {
		return false
	}
	for _, m := range p.Failing {
		if !slices.Contains(p.NotStreamed, m) {
			return false
		}
	}
	return true
}

// labels names metrics for a reader.
func labels(uc servebench.UseCase, ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = MetricLabel(m, uc.Statistic)
	}
	return out
}

// Decide is the verdict of uc from measured points (any order; Concurrency, Pass, Values,
// Settled and Reused as Evaluate and Search set them) under the given ceiling: the one decision
// used by Search and by recomputing results from disk. cost is a level's price in requests for
// the dense-grid comparison (nil: DefaultRequestsAt). It fills Limit, LimitKind,
// LimitingMetric, FirstFailing, LimitRange, Points (sorted), DenseGridRequests and
// DenseGridServerSeconds; RequestsSpent and the identity fields are the caller's.
//
//   - no failure and the highest passing level lo = ceiling: lower bound, limit lo;
//     no failure below the ceiling: lower bound at lo as well (the search stopped early);
//   - level 1 fails: not viable; but when it fails only on ITL or generation speed its
//     responses could not show (CapacityPoint.NotStreamed), no verdict: Skipped, with a Note;
//   - hi = lo + 1: measured, limit lo; a wider gap: interpolated (see interpolate).
//
// LimitingMetric is the failing metric at FirstFailing with the largest relative violation
// ((v − max)/max, (min − v)/min, or for the success rate (0.99 − v)/0.01).
//
// DenseGridRequests is what measuring every level n = 1 … hi (ceiling for a lower bound), less
// the reused levels, would have cost, counted as RequestsSpent counts: requests sent to the
// server, warm-up included and requests still running when the level stopped included. Where
// the search measured n, the dense grid's level n costs max(RequestsSpent, cost(n)): a dense
// grid measures n by a rule at least as demanding (the sweep's floors on top of the same window
// and precision rules), so it sends at least what the search sent there, and cost(n), the
// fewest requests that rule allows, may leave out the requests a stopping level still had
// running. Elsewhere it costs cost(n). So a search that measured exactly the dense grid's levels
// never spent more than the dense grid. DenseGridServerSeconds is the same levels' estimated
// server time: each level's requests × its mean end-to-end latency / n (s), the latency
// interpolated between measured levels where n was not measured.
func Decide(uc servebench.UseCase, ceiling int, points []servebench.CapacityPoint, cost func(int) int) servebench.CapacityResult {
	return DecideWithin(uc, ceiling, points, cost, 0)
}

// DecideWithin is Decide for a search with a resolution (SearchConfig.Resolution; 0 is Decide):
// with no failing level, a highest passing level whose verdict did not settle and whose modelled
// crossing lies within its resolution step (nearCrossing) gives an interpolated limit at it,
// FirstFailing nil, LimitingMetric the crossing metric, Crossing the modelled crossing, its range
// from the highest settled pass to the ceiling. The users' search decides with
// UsersResolution, and so do its what-if and tiers (ReconsiderUsers), so that the page and a
// recomputed run reach the search's own verdict.
func DecideWithin(uc servebench.UseCase, ceiling int, points []servebench.CapacityPoint, cost func(int) int, resolution float64) servebench.CapacityResult {
	res := servebench.CapacityResult{UseCase: uc.Name, Title: uc.Title, ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens),
		Statistic: uc.Statistic, Thresholds: uc.Thresholds, Ceiling: ceiling}
	if res.Statistic == "" {
		res.Statistic = servebench.StatMean
	}
	res.Resolution = resolution
	byN := map[int]servebench.CapacityPoint{}
	for _, p := range points {
		byN[p.Concurrency] = p
	}
	res.Points = sorted(byN)
	lo, hi := bounds(byN)
	top := hi
	limit, metric, x, crossed := nearCrossing(uc, resolution, byN, lo)
	switch {
	case len(byN) == 0:
		res.LimitKind = servebench.LimitLowerBound
		res.Limit = servebench.Int(0)
		top = 0
	case hi == 0 && lo < ceiling && crossed:
		res.LimitKind, res.Limit, res.LimitingMetric = servebench.LimitInterpolated, servebench.Int(limit), metric
		res.LimitRange = limitRange(byN, limit, ceiling)
		res.Crossing = servebench.Float(x)
		res.Note = crossingNote(uc, byN, lo, limit, metric, x, resolution)
		top = limit + 1
	case hi == 0:
		res.LimitKind = servebench.LimitLowerBound
		res.Limit = servebench.Int(lo)
		top = ceiling
	case hi == 1 && unknownOnly(byN[1]):
		// Level 1 "fails" only on metrics the target's responses cannot show: no verdict.
		res.Skipped = true
		res.Note = fmt.Sprintf("not measured: %s cannot be measured on this target, whose responses arrive in one piece, not streamed (a buffering proxy between client and server?); the capacity for this use case is unknown, not zero", strings.Join(labels(uc, byN[1].NotStreamed), " and "))
	case hi == 1:
		res.LimitKind = servebench.LimitNotViable
		res.FirstFailing = servebench.Int(1)
		res.LimitingMetric = limitingMetric(uc, byN[1])
	default:
		res.FirstFailing = servebench.Int(hi)
		res.LimitingMetric = limitingMetric(uc, byN[hi])
		if hi == lo+1 {
			res.LimitKind = servebench.LimitMeasured
			res.Limit = servebench.Int(lo)
		} else {
			res.LimitKind = servebench.LimitInterpolated
			res.Limit = servebench.Int(interpolate(uc, byN[lo], byN[hi], res.LimitingMetric))
		}
		res.LimitRange = limitRange(byN, *res.Limit, ceiling)
	}
	if cost == nil {
		cost = DefaultRequestsAt
	}
	for n := 1; n <= top; n++ {
		p, measured := byN[n]
		if measured && p.Reused {
			continue
		}
		requests := cost(n)
		if measured {
			requests = max(requests, p.RequestsSpent)
		}
		res.DenseGridRequests += requests
		e := p.E2ESeconds
		if !measured || e <= 0 {
			e = e2eAt(res.Points, n)
		}
		if e > 0 {
			res.DenseGridServerSeconds += float64(requests) * e / float64(n)
		}
	}
	return res
}

// limitRange is [low, high] of CapacityResult.LimitRange for a limit between measured levels.
func limitRange(byN map[int]servebench.CapacityPoint, limit, ceiling int) *[2]int {
	low, high := 0, ceiling
	for n, p := range byN {
		if n <= limit && p.Pass && p.Settled && n > low {
			low = n
		}
		if n > limit && !p.Pass && p.Settled && n-1 < high {
			high = n - 1
		}
	}
	if low == 0 {
		low = 1
	}
	return &[2]int{low, max(high, low)}
}

// e2eAt is the mean end-to-end latency at level n, interpolated linearly between the nearest
// measured levels around it (the nearest one's value outside them); 0 when none has one.
func e2eAt(points []servebench.CapacityPoint, n int) float64 {
	var a, b *servebench.CapacityPoint
	for i := range points {
		p := &points[i]
		if p.E2ESeconds <= 0 {
			continue
		}
		if p.Concurrency <= n && (a == nil || p.Concurrency > a.Concurrency) {
			a = p
		}
		if p.Concurrency >= n && (b == nil || p.Concurrency < b.Concurrency) {
			b = p
		}
	}
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return b.E2ESeconds
	case b == nil:
		return a.E2ESeconds
	case a.Concurrency == b.Concurrency:
		return a.E2ESeconds
	}
	t := float64(n-a.Concurrency) / float64(b.Concurrency-a.Concurrency)
	return a.E2ESeconds + t*(b.E2ESeconds-a.E2ESeconds)
}

// interpolate estimates the largest level in [lo, hi−1] at which metric m still meets its
// threshold, by linear interpolation between the measured points lo and hi.
func interpolate(uc servebench.UseCase, lo, hi servebench.CapacityPoint, m string) int {
	a, b := lo.Concurrency, hi.Concurrency
	k, ok := checkFor(uc, m)
	vlo, okLo := lo.Values[m]
	vhi, okHi := hi.Values[m]
	if !ok || !okLo || !okHi || vhi == vlo {
		return a
	}
	x := float64(a) + (k.Limit-vlo)/(vhi-vlo)*float64(b-a)
	if math.IsNaN(x) {
		return a
	}
	return min(max(int(math.Floor(x)), a), b-1)
}
