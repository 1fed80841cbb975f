package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/sim"
)

// startSimWith serves the fast profile with options over real HTTP (loopback).
func startSimWith(t *testing.T, o sim.Options) string {
	t.Helper()
	s := sim.New(sim.FastProfile, o)
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); cancel(); s.Close() })
	return ts.URL
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
	base := startSimWith(t, sim.Options{Seed: 1, ReasoningTokens: 32})
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "run", "--url", base+"/v1", "--contexts", "1k", "--concurrency", "1,2",
		"--output-tokens", "64", "--min-requests", "3", "--rounds", "1", "--use-cases", "none", "--scenarios", "none",
		"--out", dir, "--quiet", "--index", "none", "--gpu", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
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
}
