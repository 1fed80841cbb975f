package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// startSimWith serves the fast profile with options in memory (simtest.StartInMemory): runCLI
// reaches it; inside a synctest bubble the whole run takes virtual time.
func startSimWith(t *testing.T, o sim.Options) string {
	t.Helper()
	return simtest.StartInMemory(t, simtest.Config{Options: o}).URL
}

// seen is what a recording simulator received on its generation endpoints.
type seen struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
}

// startRecordingSim serves the simulator in memory behind a handler that keeps every
// generation request's body and headers, as the server received them.
func startRecordingSim(t *testing.T, o sim.Options) (string, *seen) {
	t.Helper()
	var got seen
	srv := simtest.StartInMemory(t, simtest.Config{Options: o, Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/completions") {
				b, _ := io.ReadAll(r.Body)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				got.mu.Lock()
				got.bodies = append(got.bodies, m)
				got.headers = append(got.headers, r.Header.Clone())
				got.mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			h.ServeHTTP(w, r)
		})
	}})
	return srv.URL, &got
}

// runQuick runs the CLI against base with args, no use cases, scenarios, GPU or index, and
// returns the run folder; a non-zero exit fails the test.
func runQuick(t *testing.T, base string, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args = append([]string{"run", "--url", base + "/v1", "--use-cases", "none", "--scenarios", "none",
		"--out", dir, "--quiet", "--index", "none", "--gpu", "none"}, args...)
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	return dir
}

func readResults(t *testing.T, dir string) servebench.Results {
	t.Helper()
	var res servebench.Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// Against a reasoning model (the simulator with 32 reasoning tokens), every record counts the
// reasoning from usage and times the answer after the first token; cells summarise both.
func TestRunReasoningModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 1, ReasoningTokens: 32})
		dir := runQuick(t, base, "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "64", "--min-requests", "3", "--rounds", "1", "--max-requests", "8")
		recs := readRecords(t, filepath.Join(dir, "requests.jsonl"))
		if len(recs) == 0 {
			t.Fatal("no records")
		}
		for _, r := range recs {
			if !r.OK() {
				t.Errorf("seq %d failed: %s", r.Seq, r.Error)
				continue
			}
			if r.ReasoningTokens != 32 || r.ReasoningTokensSource != servebench.SourceUsage {
				t.Errorf("seq %d: reasoning_tokens %d from %q, want 32 from usage", r.Seq, r.ReasoningTokens, r.ReasoningTokensSource)
			}
			if !(r.FirstContentSeconds > r.TTFTSeconds) {
				t.Errorf("seq %d: first_content_seconds %v not after ttft_seconds %v", r.Seq, r.FirstContentSeconds, r.TTFTSeconds)
			}
		}
		for _, c := range readResults(t, dir).Cells {
			if c.ReasoningTokensMean != 32 || c.ReasoningShare != 0.5 {
				t.Errorf("cell %s: reasoning mean %v share %v, want 32 and 0.5", c.ID(), c.ReasoningTokensMean, c.ReasoningShare)
			}
			if !(c.FirstContentSeconds.Mean > c.TTFTSeconds.Mean) {
				t.Errorf("cell %s: first content mean %v not after TTFT mean %v", c.ID(), c.FirstContentSeconds.Mean, c.TTFTSeconds.Mean)
			}
		}
	})
}

// A 12-entry dataset of chat messages with output lengths 8/16/32 is replayed exactly: the
// server receives those 12 conversations, each once, and produces those lengths; every request
// carries the request-control headers and body fields, and the secret header never reaches the
// run folder.
func TestRunReplaysDatasetWithRequestControl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, got := startRecordingSim(t, sim.Options{Seed: 1})
		dir := t.TempDir()
		var lines []string
		want := map[string]int{} // user text → output tokens
		for i := range 12 {
			text := fmt.Sprintf("Dataset question number %d: what is continuous batching?", i)
			out := []int{8, 16, 32}[i%3]
			want[text] = out
			b, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": text}}, "output_tokens": out})
			lines = append(lines, string(b))
		}
		ds := filepath.Join(dir, "prompts.jsonl")
		if err := os.WriteFile(ds, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "run")
		code, stdout, stderr := runCLIEnv(t, map[string]string{"SB_TEST_TOKEN": "tok-very-secret-123"},
			"run", "--url", base+"/v1", "--dataset", ds, "--mode", "fixed", "--requests", "12", "--concurrency", "3",
			"--use-cases", "none", "--scenarios", "none", "--out", out, "--quiet", "--index", "none", "--gpu", "none",
			"--header", "X-Tenant: acme", "--header", "Authorization: Bearer ${SB_TEST_TOKEN}", "--header", "X-Api-Key: key-literal-5555",
			"--extra-body", `{"top_k": 20}`, "--temperature", "0.5", "--seed", "7")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		got.mu.Lock()
		defer got.mu.Unlock()
		if len(got.bodies) != 12 {
			t.Fatalf("the server received %d generation requests, want 12", len(got.bodies))
		}
		sent := map[string]int{}
		for i, b := range got.bodies {
			msgs := b["messages"].([]any)
			if len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "Answer briefly." {
				t.Errorf("request %d: messages %v, want the entry's two messages", i, msgs)
				continue
			}
			text := msgs[1].(map[string]any)["content"].(string)
			sent[text]++
			if int(b["max_tokens"].(float64)) != want[text] {
				t.Errorf("request %d (%q): max_tokens %v, want %d", i, text, b["max_tokens"], want[text])
			}
			if b["top_k"] != 20.0 || b["temperature"] != 0.5 || b["seed"] != 7.0 {
				t.Errorf("request %d: top_k %v temperature %v seed %v", i, b["top_k"], b["temperature"], b["seed"])
			}
			if h := got.headers[i]; h.Get("X-Tenant") != "acme" || h.Get("Authorization") != "Bearer tok-very-secret-123" || h.Get("X-Api-Key") != "key-literal-5555" {
				t.Errorf("request %d: headers X-Tenant %q Authorization %q X-Api-Key %q", i, h.Get("X-Tenant"), h.Get("Authorization"), h.Get("X-Api-Key"))
			}
		}
		for text := range want {
			if sent[text] != 1 {
				t.Errorf("%q was sent %d times, want once", text, sent[text])
			}
		}
		recs := readRecords(t, filepath.Join(out, "requests.jsonl"))
		idx := map[int]bool{}
		for _, r := range recs {
			if !r.OK() || r.DatasetIndex == nil {
				t.Errorf("seq %d: %s %s, dataset index %v", r.Seq, r.ErrorClass, r.Error, r.DatasetIndex)
				continue
			}
			idx[*r.DatasetIndex] = true
			if wantOut := []int{8, 16, 32}[*r.DatasetIndex%3]; r.OutputTokens != wantOut || r.OutputTokensSource != servebench.SourceUsage {
				t.Errorf("entry %d: %d output tokens (%s), want %d", *r.DatasetIndex, r.OutputTokens, r.OutputTokensSource, wantOut)
			}
		}
		if len(recs) != 12 || len(idx) != 12 {
			t.Errorf("%d records over %d distinct entries, want 12 and 12", len(recs), len(idx))
		}
		res := readResults(t, out)
		if len(res.Cells) != 1 || res.Cells[0].Scenario != "dataset" || res.Cells[0].CacheContaminated {
			t.Errorf("cells %+v: want one dataset cell, not flagged cache-contaminated", res.Cells)
		}
		for _, f := range []string{"run.json", "requests.jsonl", "results.json", "report.md"} {
			b, _ := os.ReadFile(filepath.Join(out, f))
			for _, secret := range []string{"tok-very-secret-123", "key-literal-5555"} {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s holds the secret header value %s", f, secret)
				}
			}
		}
		if strings.Contains(stdout+stderr, "tok-very-secret-123") || strings.Contains(stdout+stderr, "key-literal-5555") {
			t.Error("the terminal output holds a secret header value")
		}
		var man servebench.Manifest
		b, _ := os.ReadFile(filepath.Join(out, "run.json"))
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatal(err)
		}
		if h := man.Plan.Request.Headers; h["Authorization"] != "Bearer ${SB_TEST_TOKEN}" || h["X-Api-Key"] != servebench.Redacted || h["X-Tenant"] != "acme" ||
			man.Plan.Dataset == nil || man.Plan.Request.Temperature == nil {
			t.Errorf("run.json plan: headers %v dataset %v: want the header template kept, the literal secret redacted, the dataset and sampling saved", man.Plan.Request.Headers, man.Plan.Dataset)
		}
	})
}

// --rate 2,4 --requests 16 --slo ttft=0.5s: two open-loop cells, one per rate, each with a
// goodput in [0, 1], the achieved rate and the SLO saved in the plan.
func TestRunRateSweepWithGoodput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 1})
		dir := runQuick(t, base, "--contexts", "1k", "--output-tokens", "32", "--rate", "2,4", "--requests", "16", "--slo", "ttft=0.5s")
		res := readResults(t, dir)
		rates := map[float64]bool{}
		for _, c := range res.Cells {
			rates[c.RatePerSecond] = true
			if c.LoadMode != servebench.ModeRate || c.RequestsTotal != 16 {
				t.Errorf("cell %s: mode %s, %d requests; want rate mode, 16", c.ID(), c.LoadMode, c.RequestsTotal)
			}
			if c.Goodput == nil || *c.Goodput < 0 || *c.Goodput > 1 || c.GoodputRPS == nil {
				t.Errorf("cell %s: goodput %v (rps %v), want a fraction in [0, 1]", c.ID(), c.Goodput, c.GoodputRPS)
			}
			if !(c.AchievedRatePerSecond > 0) {
				t.Errorf("cell %s: achieved rate %v", c.ID(), c.AchievedRatePerSecond)
			}
		}
		if len(res.Cells) != 2 || !rates[2] || !rates[4] {
			t.Errorf("cells at rates %v, want exactly 2 and 4", rates)
		}
	})
}

// A trace of 100 requests whose prompts share blocks is replayed on its schedule: each request
// is sent at its trace time (late sends counted), and the simulator's prefix cache serves
// exactly the shared blocks it has seen before — 60 % of the prompt tokens here.
func TestRunReplaysTraceWithSharedBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 1})
		dir := t.TempDir()
		var lines []string
		for i := range 100 {
			doc := i % 10 // ten documents of 4 blocks, each read by 10 requests
			ids := []int{doc*100 + 1, doc*100 + 2, doc*100 + 3, doc*100 + 4, 10000 + 2*i, 10001 + 2*i}
			b, _ := json.Marshal(map[string]any{"timestamp": 1000 + 25*i, "input_length": 6 * 32, "output_length": 8, "hash_ids": ids})
			lines = append(lines, string(b))
		}
		tr := filepath.Join(dir, "trace.jsonl")
		if err := os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runQuick(t, base, "--trace", tr, "--config", writePlan(t, dir, "trace:\n  path: "+tr+"\n  block_tokens: 32\n"))
		recs := readRecords(t, filepath.Join(out, "requests.jsonl"))
		if len(recs) != 100 {
			t.Fatalf("%d records, want 100", len(recs))
		}
		var cached, input int
		for _, r := range recs {
			if !r.OK() || r.CachedTokens == nil || r.DatasetIndex == nil {
				t.Fatalf("seq %d: %s %s (cached %v, entry %v)", r.Seq, r.ErrorClass, r.Error, r.CachedTokens, r.DatasetIndex)
			}
			if r.InputTokens != 192 {
				t.Errorf("entry %d: the server counted %d prompt tokens, want 192", *r.DatasetIndex, r.InputTokens)
			}
			// on schedule: entry i at 25·i ms after the cell's first send
			if want := recs[0].ScheduledOffsetSeconds + 0.025*float64(*r.DatasetIndex-*recs[0].DatasetIndex); diff(r.ScheduledOffsetSeconds, want) > 1e-6 {
				t.Errorf("entry %d scheduled at %.4f s, want %.4f s", *r.DatasetIndex, r.ScheduledOffsetSeconds, want)
			}
			cached += *r.CachedTokens
			input += r.InputTokens
		}
		// 90 requests re-read a document's 4 blocks of 32 tokens: 90·128 of 100·192 tokens
		if rate, want := float64(cached)/float64(input), 90.0*128/(100*192); diff(rate, want) > 0.01 {
			t.Errorf("prefix-cache hit rate %.3f, want the share of shared blocks %.3f", rate, want)
		}
		res := readResults(t, out)
		if len(res.Cells) != 1 || res.Cells[0].Scenario != "trace" || res.Cells[0].CacheContaminated {
			t.Fatalf("cells %+v: want one trace cell, not flagged cache-contaminated", res.Cells)
		}
		c := res.Cells[0]
		late := 0 // a busy machine may send late: the cell must count exactly the records that were
		for _, r := range recs {
			if r.StartOffsetSeconds-r.ScheduledOffsetSeconds > 0.010 {
				late++
			}
		}
		if c.LateSends != late || c.RequestsTotal != 100 || diff(c.RatePerSecond, 40) > 1e-9 {
			t.Errorf("trace cell: %d requests, %d late sends (records say %d), rate %g; want 100, %d, 40/s", c.RequestsTotal, c.LateSends, late, c.RatePerSecond, late)
		}
	})
}

func writePlan(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func diff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}

// A sessions: plan of 4 turns against the simulator over HTTP gives one cell per turn whose
// later turns report cached tokens and a TTFT below the fresh prompts of the same length, every
// record names its turn, and the report has its Prompt Caching section.
func TestRunSessionsPlanReportsPromptCaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{Seed: 5})
		cfg := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(cfg, []byte("sessions:\n  turns: 4\n  first_turn_tokens: 4k\n  turn_tokens: 256\n  output_tokens: 16\n  concurrency: [2]\n  think_time: 10ms\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := runQuick(t, base, "--config", cfg)
		res := readResults(t, dir)
		fresh := map[int]servebench.CellResult{}
		for _, c := range res.Cells {
			if c.Scenario == "session-fresh" {
				fresh[c.Turn] = c
			}
		}
		later := 0
		for _, c := range res.Cells {
			if c.Scenario != "session" || c.Turn < 2 {
				continue
			}
			later++
			f, ok := fresh[c.Turn]
			if !ok {
				t.Errorf("turn %d has no fresh cell beside it", c.Turn)
				continue
			}
			if c.CachedTokensMean == nil || *c.CachedTokensMean <= 0 {
				t.Errorf("turn %d: cached_tokens_mean %v, want > 0", c.Turn, c.CachedTokensMean)
			}
			if !(c.TTFTSeconds.Mean < f.TTFTSeconds.Mean) {
				t.Errorf("turn %d: TTFT %v not below the fresh %v", c.Turn, c.TTFTSeconds.Mean, f.TTFTSeconds.Mean)
			}
		}
		if later != 3 {
			t.Errorf("%d session cells of turn ≥ 2, want 3", later)
		}
		for _, r := range readRecords(t, filepath.Join(dir, "requests.jsonl")) {
			if r.Turn < 1 || r.Turn > 4 || (r.Scenario != "session" && r.Scenario != "session-fresh") {
				t.Errorf("seq %d: scenario %q turn %d", r.Seq, r.Scenario, r.Turn)
			}
		}
		md, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`<a id="prompt-caching"></a>Prompt Caching`, "| 2 concurrent | 4 |", "of the input tokens from its prefix cache"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		html, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil || !strings.Contains(string(html), "Prompt Caching") {
			t.Errorf("report.html lacks the Prompt Caching section (%v)", err)
		}
	})
}

// Behind a gateway that refuses every request without the user's header, prompts are still
// sized by the server's /tokenize: the counting calls carry --header like the generation ones.
func TestTokenizeCarriesTheHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		tokenize, refused := 0, []string{}
		srv := simBehind(t, sim.Options{Seed: 6}, func(h http.Handler) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if r.Header.Get("X-Tenant") != "acme" {
					refused = append(refused, r.URL.Path)
					mu.Unlock()
					http.Error(w, `{"error": "no tenant"}`, http.StatusUnauthorized)
					return
				}
				if r.URL.Path == "/tokenize" {
					tokenize++
				}
				mu.Unlock()
				h.ServeHTTP(w, r)
			}
		})
		dir := runQuick(t, srv.URL, "--header", "X-Tenant: acme", "--contexts", "1k", "--concurrency", "1", "--output-tokens", "8",
			"--min-requests", "2", "--rounds", "1", "--max-requests", "4")
		var man servebench.Manifest
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil || json.Unmarshal(b, &man) != nil {
			t.Fatalf("run.json: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if man.Server.TokenCounting != "tokenize-endpoint" || tokenize == 0 {
			t.Errorf("prompts sized by %q with %d /tokenize calls, want the tokenize endpoint", man.Server.TokenCounting, tokenize)
		}
		for _, p := range refused {
			if p == "/tokenize" || strings.HasSuffix(p, "/completions") {
				t.Errorf("%s was sent without the header", p)
			}
		}
	})
}

// --dataset-sessions runs each ShareGPT conversation whole: turn t sends its system prompt, its
// first t human turns as written and the model's own answers between them; a conversation with
// fewer turns leaves the later cells, and every record names its dataset entry.
func TestRunShareGPTConversationsAsSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, got := startRecordingSim(t, sim.Options{Seed: 8})
		long := strings.Repeat("context words for the cache ", 120)
		convs := [][]string{
			{long + "first question one?", "and the second one?", "a third?"},
			{long + "question two <b>?</b>", "more on two", "last on two"},
			{long + "three, once", "three again"},
			{long + "four, only once"},
		}
		var arr []map[string]any
		for _, c := range convs {
			turns := []map[string]string{{"from": "system", "value": "be brief"}}
			for _, h := range c {
				turns = append(turns, map[string]string{"from": "human", "value": h}, map[string]string{"from": "gpt", "value": "the dataset's answer, never sent"})
			}
			arr = append(arr, map[string]any{"conversations": turns})
		}
		dir := t.TempDir()
		ds := filepath.Join(dir, "sharegpt.json")
		b, _ := json.Marshal(arr)
		cfg := filepath.Join(dir, "plan.yaml")
		if os.WriteFile(ds, b, 0o644) != nil || os.WriteFile(cfg, []byte("sessions:\n  concurrency: [2]\n  output_tokens: 8\n"), 0o644) != nil {
			t.Fatal("writing the test files")
		}
		out := runQuick(t, base, "--config", cfg, "--dataset", ds, "--dataset-sessions")

		perTurn := map[int]int{}
		for _, r := range readRecords(t, filepath.Join(out, "requests.jsonl")) {
			if r.Scenario != "session" {
				continue
			}
			perTurn[r.Turn]++
			if r.DatasetIndex == nil || !r.OK() {
				t.Errorf("seq %d: dataset index %v, error %q", r.Seq, r.DatasetIndex, r.Error)
			}
		}
		if perTurn[1] != 4 || perTurn[2] != 3 || perTurn[3] != 2 || len(perTurn) != 3 {
			t.Errorf("session requests per turn %v, want 4, 3, 2", perTurn)
		}
		got.mu.Lock()
		defer got.mu.Unlock()
		checked := 0
		for _, body := range got.bodies {
			msgs, _ := body["messages"].([]any)
			if len(msgs) < 2 || len(msgs)%2 != 0 {
				continue // a fresh prompt or a probe
			}
			first, _ := msgs[1].(map[string]any)
			ci := -1
			for i, c := range convs {
				if first["content"] == c[0] {
					ci = i
				}
			}
			if ci < 0 {
				continue
			}
			if sys, _ := msgs[0].(map[string]any); sys["role"] != "system" || sys["content"] != "be brief" {
				t.Errorf("conversation %d: first message %v, want the system prompt", ci, sys)
			}
			for j := 1; j < len(msgs); j++ {
				m, _ := msgs[j].(map[string]any)
				if j%2 == 1 && (m["role"] != "user" || m["content"] != convs[ci][j/2]) {
					t.Errorf("conversation %d message %d: %v, want human turn %d as written", ci, j, m, j/2)
				}
				if j%2 == 0 && (m["role"] != "assistant" || m["content"] == "" || m["content"] == "the dataset's answer, never sent") {
					t.Errorf("conversation %d message %d: %v, want the model's own answer", ci, j, m)
				}
			}
			checked++
		}
		if checked != 9 {
			t.Errorf("checked %d session requests, want 9", checked)
		}
		for _, c := range readResults(t, out).Cells {
			if c.Scenario == "session" && c.Turn >= 2 && (c.CachedTokensMean == nil || *c.CachedTokensMean <= 0) {
				t.Errorf("turn %d: cached_tokens_mean %v, want > 0", c.Turn, c.CachedTokensMean)
			}
		}
	})
}

// A bad dataset or trace is refused before anything is created: exit 2, the file's line named,
// no run folder.
func TestBadWorkloadFileCreatesNoRunFolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{})
		tmp := t.TempDir()
		trace := filepath.Join(tmp, "trace.jsonl")
		dataset := filepath.Join(tmp, "data.jsonl")
		if err := os.WriteFile(trace, []byte("{\"timestamp\": 0, \"input_length\": 0}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dataset, []byte("{\"messages\": []}\n{\"prompt\": \"hi\"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ flag, path, want string }{
			{"--trace", trace, "line 1 lacks a valid input_length"},
			{"--dataset", dataset, "line 1 has neither messages nor prompt"},
		} {
			out := filepath.Join(tmp, strings.TrimPrefix(tt.flag, "--"))
			code, _, stderr := runCLI(t, "run", "--url", base+"/v1", tt.flag, tt.path, "--out", out, "--index", "none", "--quiet")
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("%s: exit %d, want %d naming %q:\n%s", tt.flag, code, exitUsage, tt.want, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s: a run folder was created for a refused file (%v)", tt.flag, err)
			}
		}
	})
}
