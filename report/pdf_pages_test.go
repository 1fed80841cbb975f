package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every page of a simulated run's PDF says SIMULATED and carries the running header (model and
// hardware) and "Page N of M"; the cover holds the three highlight cards.
func TestPDFEveryPageSimulatedAndNumbered(t *testing.T) {
	requireChromium(t)
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	dir := t.TempDir()
	htmlPath, pdfPath := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	page := renderHTML(t, func(in *Input) { in.Manifest.Simulated = true })
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PDF(context.Background(), htmlPath, pdfPath); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-layout", pdfPath, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	pages := strings.Split(strings.TrimRight(string(out), "\f\n"), "\f")
	if len(pages) < 3 {
		t.Fatalf("%d pages", len(pages))
	}
	for i, p := range pages {
		for _, want := range []string{"SIMULATED", fmt.Sprintf("Page %d of %d", i+1, len(pages)), "GLM-4.7-Flash · 1x H200 SXM"} {
			if !strings.Contains(p, want) {
				t.Errorf("page %d lacks %q", i+1, want)
			}
		}
	}
	for _, card := range []string{"Peak Throughput", "Success Rate", "Concurrent Requests"} {
		if !strings.Contains(pages[0], card) {
			t.Errorf("the cover lacks the %q highlight card", card)
		}
	}
}
