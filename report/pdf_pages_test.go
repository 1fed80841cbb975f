package report

import (
	"bytes"
	"context"
	"fmt"
	pdfprint "github.com/servebench/servebench/report/pdf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	if err := pdfprint.Print(context.Background(), htmlPath, pdfPath); err != nil {
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

// A reader who opens report.html and prints it (Ctrl+P, or chromium --print-to-pdf) gets every
// chart whole: the page was laid out for the screen, and printing must redraw each chart at its
// print size, or the shorter print box cuts off the x axis. Chromium leaves text it clips out
// of the PDF, so each chart's x-axis name is a line of the PDF's text exactly when the axis
// was printed.
func TestPrintFromScreenKeepsXAxis(t *testing.T) {
	requireChromium(t)
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	rep := Build(loadFixture(t))
	var page bytes.Buffer
	if err := HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	tctx, u := openInBrowser(t, page.String(), nil)
	pdfPath := filepath.Join(t.TempDir(), "report.pdf")
	var pdf []byte
	// a screen layout (no print emulation before loading), as a reader's browser has it
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u), pdfprint.WaitCharts(), pdfprint.PrintPage(&pdf)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdfPath, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, pdfPath, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range strings.Split(string(out), "\n") {
		lines[strings.TrimSpace(l)]++
	}
	want := map[string]int{}
	for _, c := range charts(rep.Sections) {
		want[c.XName]++
	}
	if len(want) < 2 {
		t.Fatalf("the fixture should chart over contexts and over concurrency, got x axes %v", want)
	}
	for name, n := range want {
		if lines[name] < n {
			t.Errorf("x axis %q printed on %d of %d charts: the print layout cut the charts' bottom off", name, lines[name], n)
		}
	}
	if p := os.Getenv("SERVEBENCH_PDF"); p != "" {
		_ = os.WriteFile(strings.TrimSuffix(p, ".pdf")+"-from-screen.pdf", pdf, 0o644)
	}
}
