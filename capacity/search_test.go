package capacity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/plan"
)

// model is a controlled server: each per-user metric is a pure function of concurrency, so the
// true capacity limit of a use case is known in advance.
type model struct {
	ttft  func(n int) float64 // mean TTFT, s
	speed func(n int) float64 // mean generation speed, tok/s
	e2e   func(n int) float64 // mean end-to-end latency, s
	rate  func(n int) float64 // success rate (1 when nil)
}

// table is a model's metric from measured levels: the value at a level in m, linear between the
// nearest levels around it elsewhere (the nearest one's value outside them).
func table(m map[int]float64) func(n int) float64 {
	return func(n int) float64 {
		if v, ok := m[n]; ok {
			return v
		}
		a, b := 0, 0
		for k := range m {
			if k < n && (a == 0 || k > a) {
				a = k
			}
			if k > n && (b == 0 || k < b) {
				b = k
			}
		}
		switch {
		case a == 0:
			return m[b]
		case b == 0:
			return m[a]
		}
		return m[a] + (m[b]-m[a])*float64(n-a)/float64(b-a)
	}
}

// flat summarises a constant value; p99 is 1.5 × the mean so percentile use cases differ.
func flat(v float64) servebench.Summary {
	return servebench.Summary{Count: 10, Mean: v, Min: servebench.Float(v), Max: servebench.Float(1.5 * v), P50: servebench.Float(v), P90: servebench.Float(v), P95: servebench.Float(v), P99: servebench.Float(1.5 * v)}
}

func (m model) cell(uc servebench.UseCase, n int) servebench.CellResult {
	c := servebench.CellResult{
		CellKey: servebench.CellKey{Scenario: uc.Name, LoadMode: servebench.ModeSustained,
			ContextTokens: int(uc.ContextTokens), OutputTokens: int(uc.OutputTokens), Concurrency: n},
		RequestsTotal: 10, RequestsSucceeded: 10, SuccessRate: 1,
		SystemOutputThroughputTPS: 100 * float64(n),
	}
	if m.ttft != nil {
		c.TTFTSeconds = flat(m.ttft(n))
	}
	if m.speed != nil {
		c.GenerationSpeedTPS = flat(m.speed(n))
	}
	if m.e2e != nil {
		c.E2ELatencySeconds = flat(m.e2e(n))
	}
	if m.rate != nil {
		c.SuccessRate = m.rate(n)
	}
	return c
}

// probe wraps the model as a Measure that fails the test when a level is measured twice and
// charges capacity.DefaultRequestsAt requests per level.
type probe struct {
	t     *testing.T
	uc    servebench.UseCase
	m     model
	calls []int
}

func (p *probe) measure(_ context.Context, n int) (servebench.CellResult, int, error) {
	if slices.Contains(p.calls, n) {
		p.t.Errorf("level %d measured twice (calls so far %v)", n, p.calls)
	}
	p.calls = append(p.calls, n)
	return p.m.cell(p.uc, n), capacity.DefaultRequestsAt(n), nil
}

func useCase(name string) servebench.UseCase {
	for _, uc := range plan.DefaultUseCases() {
		if uc.Name == name {
			return uc
		}
	}
	panic(name)
}

// cost sums DefaultRequestsAt over levels.
func cost(levels ...int) int {
	s := 0
	for _, n := range levels {
		s += capacity.DefaultRequestsAt(n)
	}
	return s
}

func dense(top int, skip ...int) int {
	s := 0
	for n := 1; n <= top; n++ {
		if !slices.Contains(skip, n) {
			s += capacity.DefaultRequestsAt(n)
		}
	}
	return s
}

func TestSearch(t *testing.T) {
	general := useCase("general_chatbot") // TTFT ≤ 8 s, speed ≥ 15 tok/s
	code := useCase("code_completion")    // e2e ≤ 2 s
	chat := useCase("short_form_chatbot") // TTFT ≤ 10 s, speed ≥ 10 tok/s
	tests := []struct {
		name    string
		uc      servebench.UseCase
		m       model
		ceiling int
		known   []int // levels the sweep already measured (from the same model)

		kind      servebench.LimitKind
		limit     int // -1: nil
		first     int // -1: nil
		limiting  string
		calls     []int // the exact measurement order
		denseSkip []int
	}{
		{
			// speed 200/n ≥ 15 ⇔ n ≤ 13.3: 1 and 2 start the fit, which predicts 13 but may
			// jump only to 4 × 2 = 8; refitted through 2 and 8 it predicts 13: 13 passes, 14 fails.
			name: "speed-bound, measured", uc: general, ceiling: 64,
			m:    model{ttft: func(n int) float64 { return 1 }, speed: func(n int) float64 { return 200 / float64(n) }},
			kind: servebench.LimitMeasured, limit: 13, first: 14, limiting: capacity.MetricGenerationSpeed,
			calls: []int{1, 2, 8, 13, 14},
		},
		{
			// TTFT 0.5 + 0.2n ≤ 8 ⇔ n ≤ 37.5: jumps of at most 4× (8, 32), then the fit lands on
			// 37.5, whose nearest level 38 fails, and 37 confirms the boundary.
			name: "TTFT-bound, boundary confirmed far up", uc: general, ceiling: 128,
			m:    model{ttft: func(n int) float64 { return 0.5 + 0.2*float64(n) }, speed: func(int) float64 { return 50 }},
			kind: servebench.LimitMeasured, limit: 37, first: 38, limiting: capacity.MetricTTFT,
			calls: []int{1, 2, 8, 32, 38, 37},
		},
		{
			// The H200 simulator's General Chatbot at 32K in, 256 out, as measured (run of
			// 26 Nov, 21:46): per-user speed 174.0, 118.2, 28.1, 16.3, 15.07, 14.2 tok/s at 1, 2,
			// 8, 14, 15, 16. From 2 and 8 the time per token crosses 1/15 s at 14.87: the level
			// nearest it, 15, passes, and 16 fails; ⌊14.87⌋ measured 14 (about 100 s there) first.
			name: "a crossing predicted a little low lands on the limit", uc: general, ceiling: 128,
			m: model{ttft: table(map[int]float64{1: 1.66, 2: 2.27, 8: 4.62, 14: 4.35, 15: 4.28, 16: 4.30}),
				speed: table(map[int]float64{1: 174.0, 2: 118.2, 8: 28.1, 14: 16.3, 15: 15.07, 16: 14.2})},
			kind: servebench.LimitMeasured, limit: 15, first: 16, limiting: capacity.MetricGenerationSpeed,
			calls: []int{1, 2, 8, 15, 16},
		},
		{
			// e2e 0.5 + n/8 ≤ 2 ⇔ n ≤ 12 (12 is exactly at the threshold and holds).
			name: "e2e-bound, measured, value at threshold holds", uc: code, ceiling: 128,
			m:    model{e2e: func(n int) float64 { return 0.5 + float64(n)/8 }},
			kind: servebench.LimitMeasured, limit: 12, first: 13, limiting: capacity.MetricE2ELatency,
			calls: []int{1, 2, 8, 12, 13},
		},
		{
			// e2e 0.5 + n/64 ≤ 2 ⇔ n ≤ 96 (exactly 2 s at 96, which holds).
			name: "e2e-bound, limit exactly at the threshold far up", uc: code, ceiling: 200,
			m:    model{e2e: func(n int) float64 { return 0.5 + float64(n)/64 }},
			kind: servebench.LimitMeasured, limit: 96, first: 97, limiting: capacity.MetricE2ELatency,
			calls: []int{1, 2, 8, 32, 96, 97},
		},
		{
			// Everything holds: the search climbs by at most 4× to the ceiling, measured last.
			name: "lower bound at a ceiling off the grid", uc: chat, ceiling: 100,
			m:    model{ttft: func(n int) float64 { return 1 }, speed: func(int) float64 { return 30 }},
			kind: servebench.LimitLowerBound, limit: 100, first: -1, limiting: "",
			calls: []int{1, 2, 8, 32, 100},
		},
		{
			// TTFT 11 s already at one request.
			name: "not viable", uc: general, ceiling: 64,
			m:    model{ttft: func(n int) float64 { return 11 * float64(n) }, speed: func(int) float64 { return 90 }},
			kind: servebench.LimitNotViable, limit: -1, first: 1, limiting: capacity.MetricTTFT,
			calls: []int{1},
		},
		{
			// Both fail at 1: TTFT 9 s is 12.5 % over 8 s, speed 10 tok/s is 33 % under 15 → speed.
			name: "limiting metric is the largest relative violation", uc: general, ceiling: 8,
			m:    model{ttft: func(int) float64 { return 9 }, speed: func(int) float64 { return 10 }},
			kind: servebench.LimitNotViable, limit: -1, first: 1, limiting: capacity.MetricGenerationSpeed,
			calls: []int{1},
		},
		{
			// The sweep measured 1..5: reused, never re-run; the fit through 4 and 5 predicts 13.
			name: "known cells reused", uc: general, ceiling: 64, known: []int{1, 2, 3, 4, 5},
			m:    model{ttft: func(n int) float64 { return 1 }, speed: func(n int) float64 { return 200 / float64(n) }},
			kind: servebench.LimitMeasured, limit: 13, first: 14, limiting: capacity.MetricGenerationSpeed,
			calls: []int{13, 14}, denseSkip: []int{1, 2, 3, 4, 5},
		},
		{
			// The sweep already brackets the limit (2 passes, 3 fails): nothing is measured.
			name: "known cells decide alone", uc: general, ceiling: 64, known: []int{1, 2, 3, 4},
			m:    model{ttft: func(n int) float64 { return 3 * float64(n) }, speed: func(int) float64 { return 90 }},
			kind: servebench.LimitMeasured, limit: 2, first: 3, limiting: capacity.MetricTTFT,
			calls: nil, denseSkip: []int{1, 2, 3},
		},
		{
			// Falling success rate limits: 1 − n/256 ≥ 0.99 ⇔ n ≤ 2.56. The model (flat TTFT and
			// speed) cannot see it: 8 fails, then the fit says nothing inside (2, 8) and the
			// search bisects to 5, then 3.
			name: "success rate below 99 % fails", uc: chat, ceiling: 32,
			m: model{ttft: func(int) float64 { return 1 }, speed: func(int) float64 { return 30 },
				rate: func(n int) float64 { return 1 - float64(n)/256 }},
			kind: servebench.LimitMeasured, limit: 2, first: 3, limiting: capacity.MetricSuccessRate,
			calls: []int{1, 2, 8, 5, 3},
		},
		{
			// Ceiling 1 that holds: a lower bound of 1 after one measurement.
			name: "ceiling of one", uc: chat, ceiling: 1,
			m:    model{ttft: func(int) float64 { return 1 }, speed: func(int) float64 { return 30 }},
			kind: servebench.LimitLowerBound, limit: 1, first: -1, calls: []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &probe{t: t, uc: tt.uc, m: tt.m}
			known := map[int]servebench.CellResult{}
			for _, n := range tt.known {
				known[n] = tt.m.cell(tt.uc, n)
			}
			res, err := capacity.Search(context.Background(), tt.uc, capacity.SearchConfig{Ceiling: tt.ceiling, Known: known}, p.measure)
			if err != nil {
				t.Fatal(err)
			}
			if res.LimitKind != tt.kind {
				t.Errorf("kind %q, want %q", res.LimitKind, tt.kind)
			}
			checkInt(t, "limit", res.Limit, tt.limit)
			checkInt(t, "first failing", res.FirstFailing, tt.first)
			if res.LimitingMetric != tt.limiting {
				t.Errorf("limiting metric %q, want %q", res.LimitingMetric, tt.limiting)
			}
			if !slices.Equal(p.calls, tt.calls) {
				t.Errorf("measured %v, want %v", p.calls, tt.calls)
			}
			if want := cost(tt.calls...); res.RequestsSpent != want {
				t.Errorf("requests spent %d, want %d", res.RequestsSpent, want)
			}
			top := tt.ceiling
			if tt.first > 0 {
				top = tt.first
			}
			if want := dense(top, tt.denseSkip...); res.DenseGridRequests != want {
				t.Errorf("dense grid %d, want %d", res.DenseGridRequests, want)
			}
			// Points: every measured and known level, sorted, reused flagged, ids set.
			var levels []int
			for i, pt := range res.Points {
				levels = append(levels, pt.Concurrency)
				if i > 0 && res.Points[i-1].Concurrency >= pt.Concurrency {
					t.Errorf("points not sorted: %v", levels)
				}
				if pt.Reused != slices.Contains(tt.known, pt.Concurrency) {
					t.Errorf("point %d reused=%v", pt.Concurrency, pt.Reused)
				}
				if want := tt.m.cell(tt.uc, pt.Concurrency).ID(); pt.CellID != want {
					t.Errorf("point %d cell id %q, want %q", pt.Concurrency, pt.CellID, want)
				}
			}
			want := slices.Concat(tt.calls, tt.known)
			slices.Sort(want)
			if !slices.Equal(levels, want) {
				t.Errorf("point levels %v, want %v", levels, want)
			}
			if res.UseCase != tt.uc.Name || res.Ceiling != tt.ceiling || res.Statistic != servebench.StatMean {
				t.Errorf("header %+v", res)
			}
		})
	}
}

// The search is far cheaper than a dense grid once the limit is more than a few levels up.
func TestSearchCheaperThanDenseGrid(t *testing.T) {
	uc := useCase("general_chatbot")
	for _, limit := range []int{13, 37, 90} {
		m := model{ttft: func(n int) float64 { return 0.5 + 7.5*float64(n)/float64(limit) }, speed: func(int) float64 { return 50 }}
		p := &probe{t: t, uc: uc, m: m}
		res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 256}, p.measure)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequestsSpent >= res.DenseGridRequests {
			t.Errorf("limit %d: spent %d ≥ dense grid %d (levels %v)", limit, res.RequestsSpent, res.DenseGridRequests, p.calls)
		}
		if res.Limit == nil || *res.Limit > limit || *res.Limit < limit-limit/8 {
			t.Errorf("limit %d: found %v (%s)", limit, res.Limit, res.LimitKind)
		}
	}
}

func TestSearchRequestsAt(t *testing.T) {
	uc := useCase("code_completion")
	m := model{e2e: func(n int) float64 { return 0.5 + float64(n)/8 }} // limit 12, first failing 13
	p := &probe{t: t, uc: uc, m: m}
	res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 64,
		RequestsAt: func(n int) int { return 2*n + 7 }}, p.measure)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for n := 1; n <= 13; n++ {
		if slices.Contains(p.calls, n) { // a measured level costs at least what it spent
			want += max(2*n+7, capacity.DefaultRequestsAt(n))
		} else {
			want += 2*n + 7
		}
	}
	if res.DenseGridRequests != want {
		t.Errorf("dense grid %d, want %d", res.DenseGridRequests, want)
	}
}

// The dense grid is counted like the search's spending: requests sent, including those still
// running when a level stopped. A search that had to measure every level from 1 up (the
// README demo's General Chatbot: limit 1, levels 1 and 2) spends exactly the dense grid, never
// more, whatever its levels cost beyond the sizing rule's fewest; a level that settled early
// (fewer requests than the fewest) still prices the dense grid at the rule's fewest.
func TestDenseGridCountsWhatTheSearchSpent(t *testing.T) {
	general := useCase("general_chatbot") // TTFT ≤ 8 s, speed ≥ 15 tok/s
	code := useCase("code_completion")    // e2e ≤ 2 s
	tests := []struct {
		name  string
		uc    servebench.UseCase
		m     model
		spent func(n int) int // what measuring level n sent
		dense int
		calls []int
	}{
		{
			// level 2's window rule wanted one round more: its n − 1 requests still running at
			// the stop are spent, as in the demo (3 + 7 against a fewest of 3 + 6)
			name: "limit 1, levels still running at the stop", uc: general,
			m:     model{ttft: func(n int) float64 { return 4.2 * float64(n) }, speed: func(int) float64 { return 2400 }},
			spent: func(n int) int { return capacity.DefaultRequestsAt(n) + n - 1 },
			dense: capacity.DefaultRequestsAt(1) + capacity.DefaultRequestsAt(2) + 1,
			calls: []int{1, 2},
		},
		{
			name: "limit 2 measured from 1 up, each level over its fewest", uc: code,
			m:     model{e2e: func(n int) float64 { return 0.9 * float64(n) }}, // 2 passes, 3 fails
			spent: func(n int) int { return capacity.DefaultRequestsAt(n) + 2*n },
			dense: cost(1, 2, 3) + 2*(1+2+3),
			calls: []int{1, 2, 3},
		},
		{
			name: "levels settled early cost the dense grid its fewest", uc: general,
			m:     model{ttft: func(n int) float64 { return 4.2 * float64(n) }, speed: func(int) float64 { return 2400 }},
			spent: func(n int) int { return n + 1 },
			dense: cost(1, 2),
			calls: []int{1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []int
			res, err := capacity.Search(context.Background(), tt.uc, capacity.SearchConfig{Ceiling: 64},
				func(_ context.Context, n int) (servebench.CellResult, int, error) {
					calls = append(calls, n)
					return tt.m.cell(tt.uc, n), tt.spent(n), nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(calls, tt.calls) {
				t.Fatalf("measured %v, want %v", calls, tt.calls)
			}
			spent := 0
			for _, n := range calls {
				spent += tt.spent(n)
			}
			if res.RequestsSpent != spent || res.DenseGridRequests != tt.dense {
				t.Errorf("spent %d, dense %d; want spent %d, dense %d", res.RequestsSpent, res.DenseGridRequests, spent, tt.dense)
			}
			if res.RequestsSpent > res.DenseGridRequests {
				t.Errorf("measuring exactly the dense grid's levels spent %d, more than the dense grid's %d", res.RequestsSpent, res.DenseGridRequests)
			}
			// the server time is counted the same way
			if res.ServerSecondsSpent > res.DenseGridServerSeconds*(1+1e-9) {
				t.Errorf("server time spent %.3f s, more than the dense grid's %.3f s", res.ServerSecondsSpent, res.DenseGridServerSeconds)
			}
			// recomputing from the stored points decides the same costs
			again := capacity.Decide(tt.uc, 64, res.Points, nil)
			if again.DenseGridRequests != res.DenseGridRequests || again.DenseGridServerSeconds != res.DenseGridServerSeconds {
				t.Errorf("Decide from the points: dense %d (%.3f s), search said %d (%.3f s)", again.DenseGridRequests, again.DenseGridServerSeconds, res.DenseGridRequests, res.DenseGridServerSeconds)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	uc := useCase("short_form_chatbot")
	m := model{ttft: func(int) float64 { return 1 }, speed: func(int) float64 { return 30 }}

	// A failing measurement stops the search; what was spent is still counted.
	boom := errors.New("target went away")
	var calls []int
	res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 64},
		func(_ context.Context, n int) (servebench.CellResult, int, error) {
			calls = append(calls, n)
			if n == 8 {
				return servebench.CellResult{}, 3, boom
			}
			return m.cell(uc, n), 10, nil
		})
	if !errors.Is(err, boom) || len(res.Points) != 2 || res.RequestsSpent != 23 || !slices.Equal(calls, []int{1, 2, 8}) {
		t.Errorf("err %v, points %d, spent %d, calls %v", err, len(res.Points), res.RequestsSpent, calls)
	}

	// A canceled context measures nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = capacity.Search(ctx, uc, capacity.SearchConfig{Ceiling: 8}, func(context.Context, int) (servebench.CellResult, int, error) {
		t.Error("measure called after cancel")
		return servebench.CellResult{}, 0, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err %v", err)
	}

	// Bad configuration is reported with its fix.
	if _, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 0}, nil); err == nil {
		t.Error("ceiling 0 accepted")
	}
	if _, err := capacity.Search(context.Background(), servebench.UseCase{Name: "none"}, capacity.SearchConfig{Ceiling: 4}, nil); err == nil {
		t.Error("use case without thresholds accepted")
	}
}

func checkInt(t *testing.T, name string, got *int, want int) {
	t.Helper()
	switch {
	case want < 0 && got != nil:
		t.Errorf("%s = %d, want nil", name, *got)
	case want >= 0 && got == nil:
		t.Errorf("%s = nil, want %d", name, want)
	case want >= 0 && *got != want:
		t.Errorf("%s = %d, want %d", name, *got, want)
	}
}

// A search given a Start measures it first and climbs from it, never below, when it passes
// (a users' search starts at the cold-prompt limit); when Start fails, it goes down from it and
// still finds the limit.
func TestSearchStart(t *testing.T) {
	uc := useCase("general_chatbot")
	for _, tc := range []struct{ limit, start int }{{90, 36}, {20, 36}} {
		m := model{ttft: func(n int) float64 { return 0.5 + 7.5*float64(n)/float64(tc.limit) }, speed: func(int) float64 { return 50 }}
		p := &probe{t: t, uc: uc, m: m}
		res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 512, Start: tc.start}, p.measure)
		if err != nil {
			t.Fatal(err)
		}
		if p.calls[0] != tc.start {
			t.Errorf("limit %d, start %d: first level %d (levels %v)", tc.limit, tc.start, p.calls[0], p.calls)
		}
		if tc.limit > tc.start && slices.Min(p.calls) < tc.start {
			t.Errorf("limit %d, start %d passed yet levels below it were measured: %v", tc.limit, tc.start, p.calls)
		}
		if res.Limit == nil || *res.Limit != tc.limit || res.FirstFailing == nil || *res.FirstFailing != tc.limit+1 {
			t.Errorf("limit %d, start %d: found %v, first failing %v (levels %v)", tc.limit, tc.start, res.Limit, res.FirstFailing, p.calls)
		}
	}
}

// A users' search told how many users' histories the KV cache holds (Fit) climbs to Fit while
// every level passes, and past it by an eighth first, the step doubling while levels keep
// passing: with metrics flat up to the limit and a cliff after it (the cache evicting), a limit
// near Fit is found without measuring a level more than an eighth past it, where without Fit
// the search jumps to four times the last passing level; a limit far past Fit (a server that
// prefills fast enough) is still reached at a growing pace. Fit changes which levels are
// measured, not the verdict: both searches find the same limit.
func TestSearchFit(t *testing.T) {
	uc := useCase("general_chatbot")
	for _, tc := range []struct{ limit, fit int }{{240, 233}, {233, 233}, {200, 233}, {47, 47}, {52, 47}, {12, 47}, {120, 47}} {
		// TTFT barely moves while the histories fit, then jumps: each turn re-prefills its history.
		m := model{ttft: func(n int) float64 {
			if n > tc.limit {
				return 8.5 + float64(n-tc.limit)
			}
			return 0.1 + 7.5*float64(n)/float64(tc.limit*50)
		}, speed: func(int) float64 { return 50 }}
		with := &probe{t: t, uc: uc, m: m}
		res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 512, Start: 15, Fit: tc.fit}, with.measure)
		if err != nil {
			t.Fatal(err)
		}
		without := &probe{t: t, uc: uc, m: m}
		res0, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 512, Start: 15}, without.measure)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("limit %d, fit %d: levels %v with Fit, %v without", tc.limit, tc.fit, with.calls, without.calls)
		for _, r := range []servebench.CapacityResult{res, res0} {
			if r.Limit == nil || *r.Limit != tc.limit || r.FirstFailing == nil || *r.FirstFailing != tc.limit+1 {
				t.Errorf("limit %d, fit %d: found %v, first failing %v", tc.limit, tc.fit, r.Limit, r.FirstFailing)
			}
		}
		if top := slices.Max(with.calls); tc.limit <= tc.fit+tc.fit/8 && top > max(tc.limit, tc.fit)+(max(tc.limit, tc.fit)+7)/8 {
			t.Errorf("limit %d, fit %d: measured %d users, more than an eighth past the limit and the fit (levels %v)", tc.limit, tc.fit, top, with.calls)
		}
		// Each climbing step past Fit: at most ⌈lo/8⌉, doubled per passing level above Fit.
		for i, n := range with.calls {
			lo, above, failed := 0, 0, false
			for _, m := range with.calls[:i] {
				pass := m <= tc.limit
				if pass && m > lo {
					lo = m
				}
				if pass && m > tc.fit {
					above++
				}
				failed = failed || !pass
			}
			if step := max(1, (lo+7)/8) << above; !failed && lo >= tc.fit && n > lo+step {
				t.Errorf("limit %d, fit %d: %d users after %d passed (%d above the fit): a step over %d (levels %v)", tc.limit, tc.fit, n, lo, above, step, with.calls)
			}
		}
		// The climb above Fit to the first failure: the step doubles, so a limit 2.5 × Fit is
		// passed within 5 levels (steps of an eighth each would take 8).
		climb := 0
		for _, n := range with.calls {
			if n > tc.fit {
				climb++
			}
			if n > tc.limit {
				break
			}
		}
		if tc.limit > 2*tc.fit && climb > 5 {
			t.Errorf("limit %d far past fit %d: %d levels above the fit up to the first failure (levels %v): the climb is too timid", tc.limit, tc.fit, climb, with.calls)
		}
		if tc.limit < tc.fit && !slices.Contains(with.calls, tc.fit) && slices.Max(with.calls) > tc.fit {
			t.Errorf("limit %d, fit %d: climbed past the fit without measuring it (levels %v)", tc.limit, tc.fit, with.calls)
		}
	}
}

// noisy is a model cell whose metrics carry 95% intervals of ±half (relative) around their
// means, so Evaluate settles a level only where every interval clears its threshold.
func noisy(m model, uc servebench.UseCase, n int, half float64) servebench.CellResult {
	c := m.cell(uc, n)
	for _, s := range []*servebench.Summary{&c.TTFTSeconds, &c.GenerationSpeedTPS, &c.E2ELatencySeconds} {
		if s.Mean > 0 {
			s.CI95 = &servebench.Interval{Low: s.Mean * (1 - half), High: s.Mean * (1 + half)}
		}
	}
	return c
}

// A users' search with a resolution (SearchConfig.Resolution) ends on a bracket within
// ⌈Resolution × lo⌉ (a cliff: coding agents evicting each other), or at a passing level within
// its noise of the threshold whose modelled crossing comes before the next level it could
// resolve (a chat population past the KV cache: per-user speed flat near the floor, ±5%),
// instead of measuring every level down to lo + 1 or up past the crossing, each running its
// whole window. Without a resolution the same plateau is narrowed to lo + 1.
func TestSearchResolution(t *testing.T) {
	uc := useCase("general_chatbot") // TTFT ≤ 8 s, speed ≥ 15 tok/s (mean)
	plateau := model{ttft: func(n int) float64 { return 1 + max(0, float64(n-240))*0.2 }, speed: func(n int) float64 {
		switch {
		case n <= 229:
			return 24
		case n <= 240:
			return 24 - 8.5*float64(n-229)/11 // the cliff: 15.5 at 240
		}
		return 15.5 - 0.06*float64(n-240) // the plateau: 15 at about 248
	}, e2e: func(int) float64 { return 20 }}
	cliff := model{ttft: func(n int) float64 { return 0.5 }, speed: func(n int) float64 {
		if n <= 48 {
			return 33
		}
		return 17 - float64(n-49)
	}, e2e: func(int) float64 { return 20 }}
	agent := useCase("automated_coding_assistant") // speed ≥ 20
	for _, tc := range []struct {
		name        string
		uc          servebench.UseCase
		m           model
		fit, start  int
		resolution  float64
		maxLevels   int
		limitLo     int // the limit found lies in [limitLo, limitHi]
		limitHi     int
		wantAdjoins bool // hi = lo + 1
	}{
		// (levels: the start, then Fit, then at most one more)
		// the plateau: 229 settles (24 tok/s), 244 passes within 5% of 15 and the model through
		// 229 and 244 crosses 15 before 260: done there, no failing level measured
		{"plateau", uc, plateau, 229, 15, capacity.UsersResolution, 3, 244, 244, false},
		// the same without a resolution measures down to adjoining levels
		{"plateau, no resolution", uc, plateau, 229, 15, 0, 12, 247, 248, true},
		// a cliff settles on both sides: 46 and 49 are within the resolution (3 agents), so the
		// limit is interpolated between them (48: 33 tok/s at 46, 17 at 49, 20 crossed at 48.1)
		{"cliff", agent, cliff, 46, 1, capacity.UsersResolution, 3, 48, 48, true},
	} {
		var calls []int
		measure := func(_ context.Context, n int) (servebench.CellResult, int, error) {
			if slices.Contains(calls, n) {
				t.Errorf("%s: level %d measured twice", tc.name, n)
			}
			calls = append(calls, n)
			return noisy(tc.m, tc.uc, n, 0.05), 10, nil
		}
		res, err := capacity.Search(context.Background(), tc.uc, capacity.SearchConfig{Ceiling: 512, Start: tc.start, Fit: tc.fit, Resolution: tc.resolution}, measure)
		if err != nil {
			t.Fatal(err)
		}
		if res.Limit != nil {
			t.Logf("%s: levels %v, limit %d (%s), range %v", tc.name, calls, *res.Limit, res.LimitKind, *res.LimitRange)
		}
		if len(calls) > tc.maxLevels {
			t.Errorf("%s: %d levels %v, want at most %d", tc.name, len(calls), calls, tc.maxLevels)
		}
		if res.Limit == nil || *res.Limit < tc.limitLo || *res.Limit > tc.limitHi {
			t.Errorf("%s: limit %v, want within %d–%d", tc.name, res.Limit, tc.limitLo, tc.limitHi)
		}
		if adj := res.FirstFailing != nil && res.Limit != nil && *res.FirstFailing == *res.Limit+1; adj != tc.wantAdjoins {
			t.Errorf("%s: limit %v, first failing %v: adjoining %v, want %v", tc.name, res.Limit, res.FirstFailing, adj, tc.wantAdjoins)
		}
		if res.LimitRange == nil || res.LimitRange[0] > *res.Limit || res.LimitRange[1] < *res.Limit {
			t.Errorf("%s: range %v does not hold the limit %v", tc.name, res.LimitRange, res.Limit)
		}
	}
}

// A users' search ends at a crossing (no failing level) only where the passing level sits within
// its noise of the threshold and the model through the two highest passing levels crosses before
// lo + ⌈lo/16⌉; a settled pass, or a crossing modelled further, climbs on. The result is the one
// DecideWithin gives from the same points (what a recomputed run and the page decide).
func TestSearchEndsAtCrossing(t *testing.T) {
	uc := useCase("general_chatbot") // speed ≥ 15 tok/s (mean)
	for _, tc := range []struct {
		name     string
		speed    map[int]float64
		levels   []int
		limit    int
		low      int // the range's low end (a crossing's high end is the ceiling)
		crossing bool
	}{
		// 15.3 ± 5% at 244: unsettled; 1/speed through 229 and 244 crosses 1/15 at 244.8 < 260
		{"steep", map[int]float64{229: 24, 244: 15.3, 260: 14.7}, []int{229, 244}, 244, 229, true},
		// 15.7 ± 5% at 244: unsettled, but the model through 15.9 and 15.7 crosses at 299.6, and
		// through 260's 15.5 at 301.9: the search goes on to 277 (14.0, failing), a bracket
		// within 17 users: 260 + (15 − 15.5)/(14 − 15.5) × 17 = 265.7
		{"shallow", map[int]float64{229: 15.9, 244: 15.7, 260: 15.5, 276: 14.0}, []int{229, 244, 260, 277}, 265, 0, false},
		// 16.0 ± 5% at 244 settles (15.2 > 15): the model through 229 and 244 says 247, which
		// passes within its noise (15.6), and the model through 244 and 247 crosses at 252.3: the
		// limit is 247, the level measured, not the crossing
		{"settled", map[int]float64{229: 24, 244: 16, 260: 14}, []int{229, 244, 247}, 247, 244, true},
	} {
		m := model{ttft: func(int) float64 { return 1 }, speed: table(tc.speed), e2e: func(int) float64 { return 20 }}
		var calls []int
		var pts []servebench.CapacityPoint
		measure := func(_ context.Context, n int) (servebench.CellResult, int, error) {
			calls = append(calls, n)
			return noisy(m, uc, n, 0.05), 10, nil
		}
		res, err := capacity.Search(context.Background(), uc, capacity.SearchConfig{Ceiling: 512, Start: 229, Fit: 229, Resolution: capacity.UsersResolution}, measure)
		if err != nil {
			t.Fatal(err)
		}
		pts = res.Points
		if !slices.Equal(calls, tc.levels) {
			t.Errorf("%s: levels %v, want %v", tc.name, calls, tc.levels)
		}
		if res.Limit == nil || *res.Limit != tc.limit || res.LimitKind != servebench.LimitInterpolated {
			t.Errorf("%s: limit %v (%s), want ~%d", tc.name, res.Limit, res.LimitKind, tc.limit)
		}
		if got := res.Crossing != nil; got != tc.crossing || tc.crossing && (res.FirstFailing != nil || res.LimitingMetric != "generation_speed_tps" ||
			res.LimitRange == nil || *res.LimitRange != [2]int{tc.low, 512} || !strings.Contains(res.Note, "No failing level was measured")) {
			t.Errorf("%s: crossing %v, first failing %v, limiting %q, range %v, note %q", tc.name, res.Crossing, res.FirstFailing, res.LimitingMetric, res.LimitRange, res.Note)
		}
		again := capacity.DecideWithin(uc, 512, pts, nil, capacity.UsersResolution)
		if again.Limit == nil || *again.Limit != *res.Limit || (again.Crossing == nil) != (res.Crossing == nil) || again.LimitingMetric != res.LimitingMetric {
			t.Errorf("%s: DecideWithin over the search's points gives %v (crossing %v), the search %v (crossing %v)", tc.name, again.Limit, again.Crossing, res.Limit, res.Crossing)
		}
		if plain := capacity.Decide(uc, 512, pts, nil); tc.crossing && (plain.LimitKind != servebench.LimitLowerBound || plain.Crossing != nil) {
			t.Errorf("%s: Decide without a resolution gives %s, want a lower bound", tc.name, plain.LimitKind)
		}
	}
}
