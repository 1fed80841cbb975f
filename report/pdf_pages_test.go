package report

import (
	"bytes"
	"context"
	"fmt"
	pdfprint "github.com/servebench/servebench/report/pdf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// The printed contents give each section's page, and the page is right: pdftotext finds the
// section's heading on the page the contents name. No page ends with a heading (the heading
// and its first block are kept together, keepGroups), and no page but the last is less than a
// fifth full.
// Checked on the recorded run and on a simulated one (testdata/simrun), whose per-cell summary
// broke before its last two rows.
func TestPDFContentsPagesAndNoOrphanHeadings(t *testing.T) {
	requireChromium(t)
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	for _, fixture := range []string{"run", "simrun", "budgetrun"} {
		t.Run(fixture, func(t *testing.T) { checkPDFPages(t, pdftotext, loadRun(t, filepath.Join("testdata", fixture))) })
	}
}

func checkPDFPages(t *testing.T, pdftotext string, in Input) {
	dir := t.TempDir()
	htmlPath, pdfPath := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	rep := Build(in)
	var page bytes.Buffer
	if err := HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(htmlPath, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pdfprint.Print(context.Background(), htmlPath, pdfPath); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(htmlPath); !bytes.Equal(after, page.Bytes()) {
		t.Error("printing changed report.html")
	}
	b, err := os.ReadFile(pdfPath)
	if err != nil {
		t.Fatal(err)
	}
	dests, err := pdfprint.DestinationPages(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-layout", pdfPath, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	pages := strings.Split(strings.TrimRight(string(out), "\f\n"), "\f")
	contents := pages[0] + pages[min(1, len(pages)-1)]
	// (case folded: a part's heading is printed in capitals)
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	for _, s := range rep.Sections {
		p, ok := dests[s.ID]
		if !ok {
			// the frontier and percentile tables stay in report.html (the print rule hides them)
			if s.ID != "frontier" && !strings.HasPrefix(s.ID, "percentiles") {
				t.Errorf("section %q: no destination in the PDF", s.ID)
			}
			continue
		}
		if p < 1 || p > len(pages) {
			t.Errorf("section %q on page %d of %d", s.ID, p, len(pages))
			continue
		}
		if !strings.Contains(norm(pages[p-1]), norm(s.Title)) {
			t.Errorf("section %q: its heading %q is not on page %d", s.ID, s.Title, p)
		}
		if !regexp.MustCompile(regexp.QuoteMeta(norm(s.Title)) + ` ` + strconv.Itoa(p) + `\b`).MatchString(norm(contents)) {
			t.Errorf("the contents do not give %q page %d", s.Title, p)
		}
	}
	// No page ends with a heading and its introduction while what they introduce starts the
	// next page: the chart or table of a heading's group (keepGroups) follows the heading on its
	// page, a long table after the introduction has its header there (headingLead), and a
	// section of text only shares its page with the next section's heading.
	checked := 0
	for i, s := range rep.Sections {
		p, ok := dests[s.ID]
		if !ok || p < 1 || p > len(pages) {
			continue
		}
		page := norm(pages[p-1])
		at := strings.Index(page, norm(s.Title))
		if at < 0 {
			continue // reported above
		}
		after := page[at+len(norm(s.Title)):]
		g := keepGroups(s.Blocks)
		var content *Block
		for j := range g[0] {
			if !isText(g[0][j]) {
				content = &g[0][j]
			}
		}
		if n := len(g[0]); content == nil && n < len(s.Blocks) && headingLead(s.Blocks) {
			content = &s.Blocks[n] // the long table whose first rows stay with the heading
		}
		switch {
		case content != nil:
			if mark := blockMark(*content); mark != "" {
				checked++
				if !strings.Contains(after, norm(mark)) {
					t.Errorf("page %d: %q and its introduction end the page; its %s (%q) starts the next", p, s.Title, content.Kind, mark)
				}
			}
		case len(g[0]) == len(s.Blocks) && i+1 < len(rep.Sections):
			if q, ok := dests[rep.Sections[i+1].ID]; ok {
				checked++
				if q != p {
					t.Errorf("page %d: %q (text only) ends the page; the next section, %q, starts page %d", p, s.Title, rep.Sections[i+1].Title, q)
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d headings' first content checked", checked)
	}
	titles := map[string]bool{}
	for _, s := range rep.Sections {
		titles[norm(s.Title)] = true
	}
	for i, p := range pages {
		var lines []string
		for _, l := range strings.Split(p, "\n") {
			if l = norm(l); l != "" && !strings.Contains(l, "servebench report") && !strings.Contains(l, "page ") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 && titles[lines[len(lines)-1]] {
			t.Errorf("page %d ends with the heading %q", i+1, lines[len(lines)-1])
		}
		if i < len(pages)-1 && len(lines) < 12 {
			t.Errorf("page %d holds %d lines of text: a near-empty page", i+1, len(lines))
		}
	}
	// A long table breaks between rows, but never after its first two nor before its last two
	// (its first three rows share a page, and so do its last three):
	// the per-cell summary of a 10-minute GLM-4.7-Flash run left 2 of its 22 rows alone at the top
	// of a page. A row is found by its second to fourth cells on one line (its first, a cell's
	// name, often wraps; a row whose cells wrap, or are found on two pages, is left out).
	pageOf := func(row []string) int {
		if len(row) < 4 {
			return 0
		}
		key, at := norm(strings.Join(row[1:4], " ")), 0
		for i, p := range pages {
			if strings.Contains(norm(p), key) {
				if at > 0 {
					return 0 // on two pages: not a key
				}
				at = i + 1
			}
		}
		return at
	}
	pairs := 0
	for _, s := range rep.Sections {
		for _, b := range s.Blocks {
			if b.Kind != BlockTable || b.Table == nil || smallTable(b.Table) {
				continue
			}
			rows := b.Table.Rows
			for _, pair := range [][2]int{{0, 2}, {len(rows) - 3, len(rows) - 1}} {
				a, z := pageOf(rows[pair[0]]), pageOf(rows[pair[1]])
				if a == 0 || z == 0 {
					continue
				}
				pairs++
				if a != z {
					t.Errorf("%q: rows %d and %d of %d on pages %d and %d (a table's first or last rows alone on a page)", s.Title, pair[0]+1, pair[1]+1, len(rows), a, z)
				}
			}
		}
	}
	t.Logf("%d pages, %d ends of long tables checked", len(pages), pairs)
}

// blockMark is text by which a chart or table can be found in the PDF's text: a chart's caption
// (its first words), a table's caption or its first header cell (printed in capitals).
func blockMark(b Block) string {
	switch {
	case b.Kind == BlockChart && b.Chart != nil:
		w := strings.Fields(b.Chart.Caption)
		return strings.Join(w[:min(6, len(w))], " ")
	case b.Kind == BlockTable && b.Table != nil && b.Table.Caption != "":
		return b.Table.Caption
	case b.Kind == BlockTable && b.Table != nil && len(b.Table.Header) > 0:
		return strings.Fields(b.Table.Header[0] + " x")[0]
	}
	return ""
}
