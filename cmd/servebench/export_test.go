package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench/internal/jsonschema"
	"github.com/servebench/servebench/sim"
)

// A run measured against the simulator, exported as llm-d Benchmark Reports, gives one report
// per measured cell, each valid against the v0.2.1 schema.
func TestExportBenchmarkReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := startSimWith(t, sim.Options{})
		tmp := t.TempDir()
		dir := filepath.Join(tmp, "run")
		if code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1,2", "--output-tokens", "16",
			"--min-requests", "2", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "none", "--scenarios", "none",
			"--quiet", "--index", "none", "--gpu", "none", "--format", "md", "--metadata", "gpu=2x H100 SXM", "--out", dir); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		out := filepath.Join(tmp, "br")
		code, stdout, stderr := runCLI(t, "export", dir, "--format", "llmd-br", "--out", out)
		if code != 0 || !strings.Contains(stdout, "wrote 2 llm-d Benchmark Reports v0.2.1") {
			t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
		}
		schema, err := jsonschema.Load("../../exchange/testdata/br_v0_2_1_json_schema.json")
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(out, "*.json"))
		if len(files) != 2 {
			t.Fatalf("%d files written, want 2", len(files))
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := jsonschema.Decode(b, &v); err != nil {
				t.Fatal(err)
			}
			if errs := schema.Validate(v); len(errs) != 0 {
				t.Errorf("%s does not validate: %s", f, strings.Join(errs, "\n"))
			}
			if !strings.Contains(string(b), `"model": "H100 SXM"`) || !strings.Contains(string(b), `"count": 2`) {
				t.Errorf("%s: the accelerator is not 2 × H100 SXM", f)
			}
		}
		if code, _, stderr := runCLI(t, "export", dir, "--format", "parquet", "--out", out); code != exitUsage || !strings.Contains(stderr, "parquet") {
			t.Errorf("unknown format: exit %d %q", code, stderr)
		}
	})
}
