package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/pgtest"
	"github.com/servebench/servebench/sim"
	"github.com/servebench/servebench/store"
)

const importFixtures = "../../exchange/testdata/import/"

// Each tool's file is recorded as a run folder and an index entry: runs lists it as imported
// from the tool, compare sets two imported runs side by side, and a second import of the same
// file replaces the first (same id) instead of adding a copy. The same holds against a shared
// PostgreSQL store.
func TestImportIntoIndex(t *testing.T) {
	pg := ""
	if s := pgtest.Shared(t); s != nil {
		pg = s.CreateDB(t, "imports")
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			tmp := t.TempDir()
			index := filepath.Join(tmp, "runs.db")
			if kind == "postgres" {
				if pg == "" {
					t.Skip("no PostgreSQL for the store's tests")
				}
				index = pg
			}
			for _, tc := range []struct{ from, file, label string }{
				{"vllm", "vllm_docs_sharegpt.json", "vllm docs"},
				{"guidellm", "guidellm_report_v2.json", "guidellm mock"},
				{"aiperf", "aiperf_streaming_schema_1.1.json", ""},
			} {
				args := []string{"import", "--from", tc.from, importFixtures + tc.file, "--index", index, "--out", filepath.Join(tmp, tc.from)}
				if tc.label != "" {
					args = append(args, "--label", tc.label)
				}
				code, stdout, stderr := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("import %s: exit %d\n%s", tc.file, code, stderr)
				}
				if !strings.Contains(stdout, "indexed in") || !strings.Contains(stdout, "docs/exchange.md") {
					t.Errorf("import %s says:\n%s", tc.file, stdout)
				}
				m, res, err := store.Load(filepath.Join(tmp, tc.from))
				if err != nil || m.Imported == nil || m.Imported.Format != tc.from || len(res.Cells) == 0 {
					t.Fatalf("run folder of %s: %v %+v", tc.file, err, m.Imported)
				}
			}
			code, stdout, stderr := runCLI(t, "runs", "--index", index)
			if code != 0 {
				t.Fatalf("runs: %d %s", code, stderr)
			}
			for _, want := range []string{"imported from vllm bench serve (vllm_docs_sharegpt.json)", "http://127.0.0.1:8765 (imported from GuideLLM)", "(imported from AIPerf)"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("runs does not list %q:\n%s", want, stdout)
				}
			}
			// the documents come back from the store whole: compare finds the runs by label
			code, stdout, stderr = runCLI(t, "compare", "vllm docs", "guidellm mock", "--index", index, "--out", filepath.Join(tmp, "cmp.html"))
			if code != 0 || !strings.Contains(stdout, "vllm docs") || !strings.Contains(stdout, "guidellm mock") {
				t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
			}
			// the pages list and render the imported runs, labelled as imported
			site := filepath.Join(tmp, "site")
			if code, _, stderr := runCLI(t, "site", site, "--index", index); code != 0 {
				t.Fatalf("site: exit %d\n%s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(site, "api", "v1", "runs.json"))
			if err != nil || !strings.Contains(string(b), "imported from GuideLLM") || !strings.Contains(string(b), "imported from vllm bench serve") {
				t.Errorf("site's runs.json does not list the imported runs (%v):\n%.2000s", err, b)
			}
			// importing the same file again replaces its entry
			if code, _, stderr := runCLI(t, "import", "--from", "vllm", importFixtures+"vllm_docs_sharegpt.json", "--index", index, "--out", filepath.Join(tmp, "again"), "--label", "vllm docs"); code != 0 {
				t.Fatal(stderr)
			}
			ix, err := openIndex(&env{getenv: func(string) string { return "" }}, index)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			list, err := ix.List(context.Background())
			if err != nil || len(list) != 3 {
				t.Fatalf("index holds %d runs (%v), want 3", len(list), err)
			}
		})
	}
}

// Bad invocations and bad files are usage errors (exit 2) that name the cause and the fix;
// nothing is written.
func TestImportRefuses(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad.json")
	os.WriteFile(bad, []byte(`{"duration": NaN, "completed": -1}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no --from", []string{"import", importFixtures + "vllm_docs_sharegpt.json"}, []string{`--from ""`, "vllm", "guidellm", "aiperf"}},
		{"unknown tool", []string{"import", "--from", "locust", importFixtures + "vllm_docs_sharegpt.json"}, []string{`--from "locust"`}},
		{"no file", []string{"import", "--from", "vllm"}, []string{"needs 1 result file"}},
		{"missing file", []string{"import", "--from", "vllm", filepath.Join(tmp, "nope.json")}, []string{"does not exist"}},
		{"a folder", []string{"import", "--from", "vllm", tmp}, []string{"is a folder"}},
		{"bad mode", []string{"import", "--from", "vllm", "--mode", "turbo", importFixtures + "vllm_docs_sharegpt.json"}, []string{`--mode "turbo"`}},
		{"negative context", []string{"import", "--from", "vllm", "--context", "-1", importFixtures + "vllm_docs_sharegpt.json"}, []string{"--context -1"}},
		{"hostile file", []string{"import", "--from", "vllm", bad}, []string{"duration: is NaN", "completed: is negative (-1)", "total_input_tokens: missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--index", filepath.Join(tmp, "runs.db"), "--out", filepath.Join(tmp, "out"))
			code, _, stderr := runCLI(t, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\n%s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(tmp, "out")); err == nil {
				t.Error("a run folder was written")
			}
		})
	}
}

// Done when: a `vllm bench serve` result file and a servebench run of the same simulated server,
// compared, agree within the definitions' documented differences (docs/exchange.md, "Where the
// definitions differ"). vllm cannot run here, so vllmBench measures the simulator the way vllm
// bench serve defines its metrics and writes its --save-detailed result file; servebench import
// reads it, and servebench compare sets it beside a servebench run of the same workload (1,024
// prompt tokens, 128 output tokens, 32 prompts, at most 4 in flight) on the same server.
//
// What must agree, and what must differ by the documented amount:
//   - on the same stream (exact): vllm's TTFT stops at the role-only chunk, before servebench's
//     first token; vllm's TPOT = servebench's ITL + (its TTFT − vllm's TTFT) / (output − 1);
//   - between the two runs (each on its own requests, so within run-to-run noise on a loaded
//     machine: 35%): end-to-end latency, output throughput, and TPOT against servebench's ITL
//     corrected by the TTFT difference as above.
func TestImportedVLLMAgreesWithServebench(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if testing.Short() {
			t.Skip("measures the simulator twice")
		}
		// the fast profile slowed eightfold: a request lasts about a second, so this machine's
		// scheduling delays (tens of ms when loaded) stay small beside what is measured
		slow := sim.FastProfile
		slow.Name = "fast-slowed"
		slow.Engine.BandwidthEfficiency /= 8
		slow.Engine.ComputeEfficiency /= 8
		slow.Engine.PrefillOverhead *= 8
		base := startSimProfile(t, slow)
		tmp := t.TempDir()
		index := filepath.Join(tmp, "runs.db")
		const prompts, conc, ctx, out = 32, 4, 1024, 128

		code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--mode", "fixed", "--requests", "32", "--concurrency", "4",
			"--contexts", "1k", "--output-tokens", "128", "--use-cases", "none", "--scenarios", "none", "--quiet", "--gpu", "none",
			"--format", "md", "--label", "servebench", "--index", index, "--out", filepath.Join(tmp, "sb"))
		if code != 0 {
			t.Fatalf("servebench run: exit %d\n%s", code, stderr)
		}

		vb := &vllmBench{base: base, model: firstModel(t, base), promptLen: ctx, outputLen: out, concurrency: conc}
		for i := range prompts {
			vb.prompts = append(vb.prompts, simPrompt(i, ctx-sim.ChatMessageOverheadTokens-sim.ChatGenerationPromptTokens))
		}
		result, outs := vb.run(t)
		file := filepath.Join(tmp, "openai-chat-infqps-concurrency4-sim.json")
		writeJSON(t, file, result)
		// on the same stream, the definitions differ exactly as documented
		for i, o := range outs {
			if !o.success || o.outputTokens != out {
				t.Fatalf("request %d: %+v", i, o)
			}
			if o.ttft >= o.firstContent {
				t.Errorf("request %d: vllm's TTFT %.4f s is not before the first content token %.4f s: the role-only chunk did not count", i, o.ttft, o.firstContent)
			}
			tpot := (o.latency - o.ttft) / float64(o.outputTokens-1)
			itl := (o.latency - o.firstContent) / float64(o.outputTokens-1)
			if d := tpot - (itl + (o.firstContent-o.ttft)/float64(o.outputTokens-1)); math.Abs(d) > 1e-12 {
				t.Errorf("request %d: TPOT %.6f ≠ ITL %.6f + TTFT difference / (n−1)", i, tpot, itl)
			}
		}

		code, stdout, stderr := runCLI(t, "import", "--from", "vllm", file, "--label", "vllm bench serve", "--simulated", "fast-slowed", "--index", index, "--out", filepath.Join(tmp, "vllm"))
		if code != 0 {
			t.Fatalf("import: exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "sweep/fixed/ctx=1024/out=128/c=4") {
			t.Errorf("the imported cell is not keyed like servebench's:\n%s", stdout)
		}
		code, cmp, stderr := runCLI(t, "compare", "vllm bench serve", "servebench", "--index", index, "--out", filepath.Join(tmp, "cmp.html"))
		if code != 0 {
			t.Fatalf("compare: exit %d\n%s", code, stderr)
		}
		if strings.Contains(cmp, "share no measured cell") || !strings.Contains(cmp, "1K in / 128 out") {
			t.Fatalf("compare does not line the runs up:\n%s", cmp)
		}

		cell := func(dir string) servebench.CellResult {
			_, res, err := store.Load(filepath.Join(tmp, dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Cells {
				if c.Scenario == "sweep" && c.Concurrency == conc && c.ContextTokens == ctx && c.RequestsSucceeded > 0 {
					return c
				}
			}
			t.Fatalf("%s has no cell at c=%d ctx=%d: %+v", dir, conc, ctx, res.Cells)
			return servebench.CellResult{}
		}
		v, s := cell("vllm"), cell("sb")
		if v.CellKey != s.CellKey {
			t.Errorf("keys differ: %+v vs %+v", v.CellKey, s.CellKey)
		}
		expTPOT := s.ITLSeconds.Mean + (s.TTFTSeconds.Mean-v.TTFTSeconds.Mean)/float64(out-1)
		rows := []struct {
			what       string
			vllm, sb   float64
			documented string
			tolerance  float64 // relative; 0: only logged
		}{
			{"TTFT mean (s)", v.TTFTSeconds.Mean, s.TTFTSeconds.Mean, "vllm stops at the role-only chunk: lower", 0},
			{"TPOT (vllm) vs ITL + ΔTTFT/(n−1) (s)", v.ITLSeconds.Mean, expTPOT, "vllm's TPOT spreads the prefill over the tokens", 0.35},
			{"ITL (vllm TPOT) vs servebench ITL (s)", v.ITLSeconds.Mean, s.ITLSeconds.Mean, "differ by ΔTTFT/(n−1)", 0},
			{"chunk gap mean (s)", v.ChunkGapSeconds.Mean, s.ChunkGapSeconds.Mean, "vllm's first gap is role chunk → first content", 0},
			{"E2E mean (s)", v.E2ELatencySeconds.Mean, s.E2ELatencySeconds.Mean, "vllm ends at the last token chunk, servebench at the last byte", 0.35},
			{"output throughput (tok/s)", v.SystemOutputThroughputTPS, s.SystemOutputThroughputTPS, "both: tokens / (first send → last end) in fixed mode", 0.35},
		}
		var report strings.Builder
		report.WriteString("\n| figure | vllm bench serve (imported) | servebench | ratio | documented difference |\n|---|---|---|---|---|\n")
		for _, r := range rows {
			ratio := r.vllm / r.sb
			report.WriteString(strings.Join([]string{"", r.what, fmtG(r.vllm), fmtG(r.sb), fmtG(ratio), r.documented, ""}, " | ")[1:] + "\n")
			if r.tolerance > 0 && math.Abs(ratio-1) > r.tolerance {
				t.Errorf("%s: vllm %.4g vs servebench %.4g (ratio %.3f) beyond %.0f%%", r.what, r.vllm, r.sb, ratio, r.tolerance*100)
			}
		}
		if v.TTFTSeconds.Mean >= s.TTFTSeconds.Mean {
			t.Errorf("vllm's TTFT %.4f s is not below servebench's %.4f s: the role-only chunk should stop vllm's clock first", v.TTFTSeconds.Mean, s.TTFTSeconds.Mean)
		}
		t.Logf("agreement at %s:%s", v.ID(), report.String())
		t.Logf("compare:\n%s", cmp)
	})
}

func fmtG(v float64) string { return fmt.Sprintf("%.4g", v) }
