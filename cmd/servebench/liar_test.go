package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// editWriter passes the simulator's event stream through edit, one whole event ("data: …\n\n")
// at a time; with hold, nothing goes out before the handler returns (a buffering proxy).
type editWriter struct {
	http.ResponseWriter
	edit    func(ev string) string
	hold    bool
	pending strings.Builder // an event not complete yet
	out     strings.Builder // held output
}

func (e *editWriter) Write(p []byte) (int, error) {
	e.pending.Write(p)
	s := e.pending.String()
	i := strings.LastIndex(s, "\n\n")
	if i < 0 {
		return len(p), nil
	}
	var b strings.Builder
	for _, ev := range strings.SplitAfter(s[:i+2], "\n\n") {
		if ev != "" {
			b.WriteString(e.edit(ev))
		}
	}
	e.pending.Reset()
	e.pending.WriteString(s[i+2:])
	if e.hold {
		e.out.WriteString(b.String())
		return len(p), nil
	}
	_, err := e.ResponseWriter.Write([]byte(b.String()))
	return len(p), err
}

func (e *editWriter) Flush() {
	if !e.hold {
		e.ResponseWriter.(http.Flusher).Flush()
	}
}

var (
	reCompletion = regexp.MustCompile(`"completion_tokens":\d+`)
	rePrompt     = regexp.MustCompile(`"prompt_tokens":\d+`)
	reModel      = regexp.MustCompile(`"model":"[^"]*"`)
)

// isUsage: the simulator's usage event.
func isUsage(ev string) bool { return strings.Contains(ev, `"usage":{`) }

// liar is the simulator behind a proxy that lies in one way.
type liar struct {
	name string
	edit func(ev string) string
	hold bool // deliver each response in one write
	// keepOpen: after [DONE] the body stays open (no end of the chunked body) for this long
	keepOpen time.Duration
	// reportSays is what report.md must say about what the server did
	reportSays string
}

// TestRunAgainstLyingServers is the end-to-end check: against a server that lies in each way
// the run finishes, no statistic in results.json takes an impossible value, and the report
// names what the server did.
func TestRunAgainstLyingServers(t *testing.T) {
	const e18 = "1000000000000000000"
	liars := []liar{
		{name: "usage-1e18", edit: func(ev string) string {
			if isUsage(ev) {
				return reCompletion.ReplaceAllString(ev, `"completion_tokens":`+e18)
			}
			return ev
		}, reportSays: "usage-over-max-tokens"},
		{name: "usage-negative", edit: func(ev string) string {
			if isUsage(ev) {
				return reCompletion.ReplaceAllString(ev, `"completion_tokens":-5`)
			}
			return ev
		}, reportSays: "usage-negative"},
		{name: "two-usages", edit: func(ev string) string {
			if isUsage(ev) {
				return ev + reCompletion.ReplaceAllString(ev, `"completion_tokens":48`)
			}
			return ev
		}, reportSays: "usage-changed"},
		{name: "prompt-1e18", edit: func(ev string) string {
			if isUsage(ev) {
				return rePrompt.ReplaceAllString(ev, `"prompt_tokens":`+e18)
			}
			return ev
		}, reportSays: "prompt-tokens-implausible"},
		{name: "queue-negative", edit: func(ev string) string {
			if isUsage(ev) {
				return strings.Replace(ev, `"usage":{`, `"metrics":{"arrival_time":1000,"first_scheduled_time":1000.001,"first_token_time":1000.002,"time_in_queue":-123456,"finished_time":1000.01},"usage":{`, 1)
			}
			return ev
		}, reportSays: "server-timing-out-of-span"},
		{name: "other-model", edit: func(ev string) string {
			return reModel.ReplaceAllString(ev, `"model":"someone-else/other-model"`)
		}, reportSays: "model-mismatch"},
		{name: "buffering-proxy", edit: func(ev string) string { return ev }, hold: true, reportSays: "arrived in one piece"},
		{name: "done-keeps-body-open", edit: func(ev string) string { return ev }, keepOpen: 5 * time.Second},
	}
	for _, l := range liars {
		t.Run(l.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				srv := simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
					return func(w http.ResponseWriter, r *http.Request) {
						if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
							h.ServeHTTP(w, r)
							return
						}
						ew := &editWriter{ResponseWriter: w, edit: l.edit, hold: l.hold}
						if l.keepOpen > 0 {
							// the chunked body never ends by itself: the handler returns only later
							defer func() {
								select {
								case <-r.Context().Done():
								case <-time.After(l.keepOpen):
								}
							}()
						}
						h.ServeHTTP(ew, r)
						if l.hold {
							mu.Lock()
							_, _ = w.Write([]byte(ew.out.String() + ew.pending.String()))
							mu.Unlock()
						} else if ew.pending.Len() > 0 {
							_, _ = w.Write([]byte(ew.pending.String()))
						}
						w.(http.Flusher).Flush()
					}
				})
				dir := filepath.Join(t.TempDir(), "run")
				start := time.Now()
				code, _, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--contexts", "1k", "--concurrency", "1,2",
					"--output-tokens", "16", "--min-requests", "6", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s",
					"--use-cases", "none", "--scenarios", "none", "--out", dir, "--index", "none", "--quiet")
				took := time.Since(start)
				if code != 0 {
					t.Fatalf("run: exit %d\n%s", code, stderr)
				}
				var res servebench.Results
				b, err := os.ReadFile(filepath.Join(dir, "results.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Cells) == 0 {
					t.Fatal("no cells")
				}
				for _, c := range res.Cells {
					id := c.ID()
					sane := func(what string, v, hi float64) {
						if math.IsNaN(v) || v < 0 || v > hi {
							t.Errorf("%s: %s = %g, impossible", id, what, v)
						}
					}
					sane("output throughput", c.SystemOutputThroughputTPS, 1e6)
					sane("total throughput", c.TotalThroughputTPS, 1e7)
					sane("output tokens mean", c.OutputTokensMean, 16)
					sane("input tokens mean", c.InputTokensMean, 4096)
					sane("generation speed max", orZero(c.GenerationSpeedTPS.Max), 1e6)
					if q := c.QueueWaitSeconds; q != nil {
						sane("queue wait", q.Mean, orZero(c.E2ELatencySeconds.Max))
					}
					if c.RequestsSucceeded == 0 {
						t.Errorf("%s: no request succeeded (%v)", id, c.ErrorsByClass)
					}
					if l.hold && c.GenerationSpeedTPS.Count != 0 {
						t.Errorf("%s: a generation speed (%d requests) from responses that were not streamed", id, c.GenerationSpeedTPS.Count)
					}
					if l.keepOpen > 0 && orZero(c.E2ELatencySeconds.Max) > 1 {
						t.Errorf("%s: a request lasted %g s: [DONE] must end it", id, orZero(c.E2ELatencySeconds.Max))
					}
					// a slot held for a 2 s grace after [DONE] gives at most 16 tokens / 2 s per slot;
					// the simulator streams 16 tokens in well under 0.2 s
					if l.keepOpen > 0 && c.SystemOutputThroughputTPS < 80*float64(c.Concurrency) {
						t.Errorf("%s: output throughput %.1f tok/s: the slots were held after [DONE]", id, c.SystemOutputThroughputTPS)
					}
				}
				if l.keepOpen > 0 && took > 30*time.Second {
					t.Errorf("the run took %v: slots wait for the body's end after [DONE]", took)
				}
				report := string(mustRead(t, filepath.Join(dir, "report.md")))
				if os.Getenv("LIAR_KEEP") != "" {
					_ = os.WriteFile(filepath.Join(os.Getenv("LIAR_KEEP"), l.name+".md"), []byte(report), 0o644)
				}
				if l.reportSays != "" && !strings.Contains(report, l.reportSays) {
					t.Errorf("report.md does not say what the server did (%q)", l.reportSays)
				}
				if strings.Contains(report, e18) || strings.Contains(report, "-123456") {
					t.Errorf("report.md prints the server's impossible value")
				}
				if l.hold && (strings.Contains(report, "Generation Speed Single Request | 0.0 tok/s") || !strings.Contains(report, "unknown (responses not streamed)")) {
					t.Errorf("report.md gives a zero speed for responses that were not streamed:\n%s", grepLines(report, "Single Request"))
				}
			})
		})
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return fmt.Sprint(out)
}

// orZero is *p, or 0 for a summary's unknown minimum or maximum (an empty summary's).
func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
