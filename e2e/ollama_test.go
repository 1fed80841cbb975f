package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	servebench "github.com/servebench/servebench"
)

// target is the Ollama under test, from the environment scripts/ollama.sh start writes.
func target(t *testing.T) (url, model string) {
	t.Helper()
	url = os.Getenv("SERVEBENCH_OLLAMA_URL")
	if url == "" {
		t.Skip("SERVEBENCH_OLLAMA_URL not set; run scripts/ollama.sh start --env-file FILE and source FILE")
	}
	model = os.Getenv("SERVEBENCH_OLLAMA_MODEL")
	if model == "" {
		model = "tiny"
	}
	return url, model
}

// cli builds cmd/servebench once per test binary.
func cli(t *testing.T) string { return build(t, "./cmd/servebench") }

// built holds, per package, the outcome of building it (build).
var built sync.Map // package path → *buildResult

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// build builds the main package pkg (a path from the module root) once per test binary, with
// CGO off and without the race detector whatever the tests run under, and returns the binary.
func build(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := built.LoadOrStore(pkg, &buildResult{})
	b := v.(*buildResult)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "servebench-e2e-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// run is one finished CLI run folder, decoded.
type run struct {
	manifest servebench.Manifest
	records  []servebench.Record
	results  servebench.Results
}

// bench runs `servebench run` with the grid the tests share plus extra flags and decodes the
// run folder.
func bench(t *testing.T, api servebench.API, extra ...string) *run {
	t.Helper()
	url, model := target(t)
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--url", url, "--api", string(api), "--model", model,
		"--contexts", "512,2000", "--concurrency", "1,2,4", "--output-tokens", "64",
		"--min-requests", "4", "--rounds", "2",
		// Bound each cell: these tests check conformance with a real engine, not precision, and
		// the default (measure until ±5% or 1,000 requests) would take minutes per cell here.
		"--max-requests", "16", "--max-duration", "20s",
		"--use-cases", "none", "--out", out, "--quiet", "--index", "none"}, extra...)
	cmd := exec.Command(cli(t), args...)
	cmd.Env = append(os.Environ(), "SERVEBENCH_DATA_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("servebench %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	r := &run{}
	readJSON(t, filepath.Join(out, "run.json"), &r.manifest)
	readJSON(t, filepath.Join(out, "results.json"), &r.results)
	r.records = readRecords(t, filepath.Join(out, "requests.jsonl"))
	if len(r.records) == 0 {
		t.Fatal("requests.jsonl is empty")
	}
	return r
}

// readRecords decodes a requests.jsonl.
func readRecords(t *testing.T, path string) []servebench.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []servebench.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec servebench.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s line %d: %v", path, len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkRun asserts what every flavour must deliver on this grid.
func checkRun(t *testing.T, r *run) {
	t.Helper()
	// Every request succeeded, with the exact prompt length the server counted and the exact
	// output length from usage (the tiny model never emits EOS).
	for _, rec := range r.records {
		where := fmt.Sprintf("record seq %d (cell %s, warmup %v)", rec.Seq, rec.CellKey.ID(), rec.Warmup)
		if rec.ErrorClass != "" || rec.Error != "" {
			t.Errorf("%s failed: %s: %s", where, rec.ErrorClass, rec.Error)
			continue
		}
		if rec.InputTokens != rec.ContextTokens {
			t.Errorf("%s: input_tokens %d (source %q), want the context %d exactly", where, rec.InputTokens, rec.InputTokensSource, rec.ContextTokens)
		}
		if rec.OutputTokens != 64 {
			t.Errorf("%s: output_tokens %d (source %q), want 64", where, rec.OutputTokens, rec.OutputTokensSource)
		}
		if !strings.Contains(rec.OutputTokensSource, "usage") && !strings.Contains(rec.OutputTokensSource, "eval_count") {
			t.Errorf("%s: output_tokens_source %q, want the server's count (usage / eval_count)", where, rec.OutputTokensSource)
		}
	}
	// The first request of the run carries the model load: it must be a warm-up.
	first := r.records[0]
	for _, rec := range r.records {
		if rec.StartOffsetSeconds < first.StartOffsetSeconds {
			first = rec
		}
	}
	if !first.Warmup {
		t.Errorf("the first request (seq %d, cell %s) is not a warm-up: the model load lands in a cell's statistics", first.Seq, first.CellKey.ID())
	}

	// 6 measured cells, all requests successful.
	cells := r.results.Cells
	if len(cells) != 6 {
		t.Fatalf("%d cells in results.json, want 6 (contexts 512,2000 × concurrency 1,2,4)", len(cells))
	}
	ttft := map[[2]int]float64{}
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].ContextTokens != cells[j].ContextTokens {
			return cells[i].ContextTokens < cells[j].ContextTokens
		}
		return cells[i].Concurrency < cells[j].Concurrency
	})
	for _, c := range cells {
		t.Logf("cell ctx=%d c=%d: ttft mean %.4fs, generation speed mean %.1f tok/s, success rate %.2f (%d requests, %d warm-up)",
			c.ContextTokens, c.Concurrency, c.TTFTSeconds.Mean, c.GenerationSpeedTPS.Mean, c.SuccessRate, c.RequestsTotal, c.WarmupRequests)
		if c.Skipped {
			t.Errorf("cell %s skipped: %s", c.CellKey.ID(), c.Note)
		}
		if c.SuccessRate != 1 || c.RequestsFailed != 0 || c.RequestsSucceeded == 0 {
			t.Errorf("cell %s: success rate %g (%d ok, %d failed), want 1", c.CellKey.ID(), c.SuccessRate, c.RequestsSucceeded, c.RequestsFailed)
		}
		if c.InputTokensMaxDeviation != 0 {
			t.Errorf("cell %s: input tokens deviate by up to %d from the context", c.CellKey.ID(), c.InputTokensMaxDeviation)
		}
		ttft[[2]int{c.ContextTokens, c.Concurrency}] = c.TTFTSeconds.Mean
	}
	// A longer prompt takes longer to prefill, at every concurrency.
	for _, n := range []int{1, 2, 4} {
		short, long := ttft[[2]int{512, n}], ttft[[2]int{2000, n}]
		if !(long > short) {
			t.Errorf("concurrency %d: mean TTFT %.4fs at 2000 tokens is not above %.4fs at 512", n, long, short)
		}
	}
}

func TestOllamaOpenAIChat(t *testing.T) {
	r := bench(t, servebench.APIChat)
	checkRun(t, r)
}

func TestOllamaOpenAICompletions(t *testing.T) {
	r := bench(t, servebench.APICompletions)
	checkRun(t, r)
}

// TestOllamaNative uses Ollama's own /api/chat, whose final object carries the server's
// prompt_eval_duration: every cell must report a server-side prefill time from it.
func TestOllamaNative(t *testing.T) {
	r := bench(t, servebench.APIOllama)
	checkRun(t, r)
	for _, c := range r.results.Cells {
		if c.PrefillSeconds == nil {
			t.Errorf("cell %s: prefill_seconds is null, want the server's prompt_eval_duration", c.CellKey.ID())
			continue
		}
		if !strings.Contains(strings.ToLower(c.PrefillSeconds.Source), "ollama") {
			t.Errorf("cell %s: prefill_seconds source %q, want one naming ollama", c.CellKey.ID(), c.PrefillSeconds.Source)
		}
		t.Logf("cell %s: server prefill mean %.4fs (%s, %d requests)", c.CellKey.ID(), c.PrefillSeconds.Mean, c.PrefillSeconds.Source, c.PrefillSeconds.Requests)
	}
}
