package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/runner"
	"github.com/servebench/servebench/stats"
)

// Off a terminal, a long cell is never silent: the view prints the cell's status every 30 s on
// its own clock (virtual time here), with what the runner last said: requests done of the
// planned minimum, the window and estimates with their precision, the time in the cell against
// its estimate, and the sweep's time left counting down. Phase headers print the runner's title.
func TestProgressPrintsInsideLongCells(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		p.start()
		defer p.finish()
		out := func() string {
			p.mu.Lock()
			defer p.mu.Unlock()
			return buf.String()
		}
		key := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 65536, OutputTokens: 1024, Concurrency: 4}
		p.handle(runner.Event{Kind: "phase", Phase: "sweep", Title: "sweep: 2 cells (contexts 32K, 64K × concurrency 4, 1024 output tokens, sustained)"})
		p.handle(runner.Event{Kind: "cell-start", Phase: "sweep", Cell: key, CellIndex: 2, CellCount: 2, Planned: 16,
			CellEstimate: 4 * time.Minute, Left: 4 * time.Minute})
		time.Sleep(29 * time.Second)
		synctest.Wait()
		if strings.Contains(out(), "of ≥16 requests") {
			t.Fatalf("status printed before 30 s:\n%s", out())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !strings.Contains(out(), "sweep cell 2/2 64K c=4 · 0 of ≥16 requests · in cell 30s of ~4m0s · sweep ~3m30s left") {
			t.Fatalf("no status line at 30 s:\n%s", out())
		}
		p.handle(runner.Event{Kind: "request", Phase: "sweep", Cell: key, CellIndex: 2, CellCount: 2, Requests: 12, Planned: 16,
			CellElapsed: 31 * time.Second, CellEstimate: 4 * time.Minute, Left: 3 * time.Minute,
			Progress: &runner.CellProgress{WindowSeconds: 20, TTFTMean: 12.5, TTFTRelHalfWidth: 0.12, Throughput: 380, ThroughputRelHalfWidth: 0.3, Target: 0.05}})
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if !strings.Contains(out(), "12 of ≥16 requests · window 20s · TTFT 12.50s ±12% · 380 tok/s ±30% (aiming ±5%) · in cell 1m0s of ~4m0s · sweep ~2m31s left") {
			t.Fatalf("status line lacks the cell's progress:\n%s", out())
		}
		p.finish()
		if got := strings.Count(out(), "\n"); got != 3 {
			t.Errorf("%d lines, want the header and two status lines:\n%s", got, out())
		}
		if !strings.HasPrefix(out(), "— sweep: 2 cells (contexts 32K, 64K") {
			t.Errorf("header:\n%s", out())
		}
	})
}

// The status line covers the whole run: after the sweep's time left it names the capacity
// searches still to come and says their time is not known yet, and with --max-time it says what
// is left of the budget, counting down on the view's clock.
func TestProgressCoversEveryPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		p.start()
		defer p.finish()
		key := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 8192, OutputTokens: 1024, Concurrency: 2}
		p.handle(runner.Event{Kind: "cell-start", Phase: "sweep", Cell: key, CellIndex: 1, CellCount: 4, Planned: 6,
			CellEstimate: time.Minute, Left: 3 * time.Minute, SearchesAfter: 5, Budget: 10 * time.Minute, BudgetLeft: 8 * time.Minute})
		time.Sleep(31 * time.Second)
		synctest.Wait()
		p.mu.Lock()
		got := buf.String()
		p.mu.Unlock()
		want := "sweep ~2m30s left, then 5 capacity searches (time not known until measured) · run ends within its 10m0s budget, 7m30s left"
		if !strings.Contains(got, want) {
			t.Errorf("status line:\n%s\nwant it to contain %q", got, want)
		}
	})
}

// The live status line writes a precision as the reports do: never "±0%" (a width under half a
// percent is "±<1%"), and "(n<min)" while the cell has fewer requests than an interval is shown
// from (stats.MinIntervalSamples); the bug report saw "108 tok/s ±0%" from 8 requests.
func TestProgressNeverPrintsZeroOrSmallSampleIntervals(t *testing.T) {
	key := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 8192, OutputTokens: 2048, Concurrency: 1}
	for _, tc := range []struct {
		requests int
		want     string
	}{
		{stats.MinIntervalSamples - 2, "TTFT 1.77s (n<min) · 108 tok/s (n<min)"},
		{stats.MinIntervalSamples, "TTFT 1.77s ±3% · 108 tok/s ±<1%"},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		p.cur = &runner.Event{Kind: "request", Phase: "sweep", Cell: key, CellIndex: 1, CellCount: 3, Requests: tc.requests, Planned: 11,
			Progress: &runner.CellProgress{WindowSeconds: 114, TTFTMean: 1.77, TTFTRelHalfWidth: 0.03, Throughput: 108, ThroughputRelHalfWidth: 0.004, Target: 0.1}}
		if got := p.status(); !strings.Contains(got, tc.want) || strings.Contains(got, "±0%") {
			t.Errorf("%d requests: %q, want %q", tc.requests, got, tc.want)
		}
	}
}

// A cell that outlasts its estimate says by how much, with or without a time left to count
// down: the 10-minute GLM-4.7-Flash run's General Chatbot level at 8 read "in cell 1m31s
// (estimated ~40s)", its 51 s overrun left to the reader's subtraction.
func TestProgressSaysACellsOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		p.start()
		defer p.finish()
		key := servebench.CellKey{Scenario: "general_chatbot", LoadMode: servebench.ModeSustained, ContextTokens: 32768, OutputTokens: 1024, Concurrency: 8}
		p.handle(runner.Event{Kind: "cell-start", Phase: "capacity general_chatbot", Cell: key, Planned: 24,
			CellEstimate: 40 * time.Second, Left: 40 * time.Second, SearchesAfter: 2, Budget: 10 * time.Minute, BudgetLeft: 4 * time.Minute})
		time.Sleep(91 * time.Second)
		synctest.Wait()
		p.mu.Lock()
		got := buf.String()
		p.mu.Unlock()
		lines := strings.Split(strings.TrimSpace(got), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, "in cell 1m30s (estimated ~40s, over by 50s)") {
			t.Errorf("status line:\n%s\nwant it to say the cell's 50 s overrun", last)
		}
		if strings.Contains(last, "overrunning its estimate") {
			t.Errorf("status line says the overrun twice:\n%s", last)
		}
	})
}

// Under --max-time the capacity searches run together, one level at a time: the status line
// says so instead of "then 4 capacity searches" (which read as searches to come one after
// the other, while they were open beside the level being measured), and once every search is
// decided it names none.
func TestProgressSaysSearchesAreInterleaved(t *testing.T) {
	sweepKey := servebench.CellKey{Scenario: "sweep", LoadMode: servebench.ModeSustained, ContextTokens: 8192, OutputTokens: 1024, Concurrency: 2}
	levelKey := servebench.CellKey{Scenario: "general_chatbot", LoadMode: servebench.ModeSustained, ContextTokens: 32768, OutputTokens: 1024, Concurrency: 8}
	for _, tc := range []struct {
		name      string
		ev        runner.Event
		want, not string
	}{
		{"sweep before the searches", runner.Event{Kind: "cell-start", Phase: "sweep", Cell: sweepKey, CellIndex: 1, CellCount: 4, SearchesAfter: 5, Interleaved: true},
			"then 5 capacity searches together, level by level while the budget lasts", "time not known"},
		{"a search's level", runner.Event{Kind: "cell-start", Phase: "capacity general_chatbot", Cell: levelKey, SearchesAfter: 3, Interleaved: true},
			"3 other capacity searches open: level by level, the cheapest next, while the budget lasts", "then 3"},
		{"the last search open", runner.Event{Kind: "cell-start", Phase: "capacity general_chatbot", Cell: levelKey, SearchesAfter: 1, Interleaved: true},
			"1 other capacity search open", "searches open"},
		{"the sweep after the searches", runner.Event{Kind: "cell-start", Phase: "sweep", Cell: sweepKey, CellIndex: 1, CellCount: 2, Interleaved: true},
			"", "capacity search"},
		{"no budget: one after the other", runner.Event{Kind: "cell-start", Phase: "capacity general_chatbot", Cell: levelKey, SearchesAfter: 3},
			"then 3 capacity searches (time not known until measured)", "open"},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf, false)
		ev := tc.ev
		p.cur = &ev
		got := p.status()
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s: %q, want it to contain %q and not %q", tc.name, got, tc.want, tc.not)
		}
	}
}
