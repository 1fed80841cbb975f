package capacity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
)

// TestNotStreamedIsNotNotViable: behind a buffering proxy every response arrives in one piece,
// so generation speed is unknown at every level. A use case with a speed threshold gets no
// verdict ("not measured", saying why), never "not viable" as if the speed were zero; one
// whose thresholds the responses can show is judged as usual.
func TestNotStreamedIsNotNotViable(t *testing.T) {
	ttft, speed := 2.0, 10.0
	cell := func(n int) servebench.CellResult {
		c := servebench.CellResult{CellKey: servebench.CellKey{LoadMode: servebench.ModeSustained, Concurrency: n},
			RequestsTotal: 50, RequestsSucceeded: 50, SuccessRate: 1,
			TTFTSeconds: servebench.Summary{Count: 50, Mean: 0.5 * float64(n)}}
		c.Validity = servebench.Valid()
		c.Validity.Add(servebench.ReasonNotStreamed, servebench.VerdictLowConfidence, "50 of 50 responses arrived in one piece")
		return c
	}
	measure := func(ctx context.Context, n int) (servebench.CellResult, int, error) { return cell(n), 50, nil }

	withSpeed := servebench.UseCase{Name: "chat", Thresholds: servebench.Thresholds{TTFTSecondsMax: &ttft, GenerationSpeedTPSMin: &speed}}
	res, err := capacity.Search(context.Background(), withSpeed, capacity.SearchConfig{Ceiling: 16}, measure)
	if err != nil {
		t.Fatal(err)
	}
	v := capacity.Verdict(res)
	if res.LimitKind == servebench.LimitNotViable || strings.Contains(strings.ToLower(v), "not viable") {
		t.Errorf("kind %q, verdict %q: an unknown speed is not a failing one", res.LimitKind, v)
	}
	if capacity.LimitLabel(res) != capacity.LabelNotMeasured || !strings.Contains(v, "not streamed") || !strings.Contains(v, "generation speed") {
		t.Errorf("label %q, verdict %q: should say not measured, and why", capacity.LimitLabel(res), v)
	}

	ttftOnly := servebench.UseCase{Name: "batch", Thresholds: servebench.Thresholds{TTFTSecondsMax: &ttft}}
	res, err = capacity.Search(context.Background(), ttftOnly, capacity.SearchConfig{Ceiling: 16}, measure)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped || res.Limit == nil || *res.Limit != 4 {
		t.Errorf("TTFT-only use case: skipped %v limit %v, want 4 (TTFT 0.5 s × n ≤ 2 s)", res.Skipped, res.Limit)
	}
}
