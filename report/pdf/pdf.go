// Package pdf prints a report's HTML to PDF in headless Chromium. It is the only importer of
// the browser-driving library, so what serves or renders reports without printing (package
// page, report) does not carry it.
package pdf

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// browserNames are the executables PDF looks for on PATH, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// FindBrowser returns the path of a Chromium-family browser, or an error naming what to
// install.
func FindBrowser() (string, error) {
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no headless Chromium found on PATH (looked for %v): install it (Debian/Ubuntu: apt-get install chromium) to print PDF reports; report.html opens in any browser meanwhile", browserNames)
}

// BrowserContext starts a headless browser that makes no background connections, with a
// throw-away profile in userDataDir. Cancel the returned func to stop it.
func BrowserContext(parent context.Context, exe, userDataDir string, listen func(ev any)) (context.Context, context.CancelFunc) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(parent, opts...)
	var copts []chromedp.ContextOption
	if listen != nil {
		copts = append(copts, chromedp.WithListener(listen))
	}
	ctx, cancelC := chromedp.NewContext(actx, copts...)
	return ctx, func() { cancelC(); cancelA() }
}

// FileURL turns a path into a file:// URL.
func FileURL(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// WaitCharts polls until the report's script has initialised its charts.
func WaitCharts() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](`document.documentElement.getAttribute("data-charts-ready") !== null`)(ctx, t)
		return err
	})
}

// pageTemplates returns the header and footer printed on every PDF page: the running header
// (model, hardware, engine) at the top, "Page N of M" at the bottom, and SIMULATED in red in
// both when the run was simulated. Chromium fills the pageNumber and totalPages spans.
func pageTemplates(running string, simulated bool) (header, footer string) {
	const style = `font-family: -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; font-size: 8px; color: #5b6475; width: 100%; margin: 0 12mm; display: flex; justify-content: space-between;`
	sim := ""
	if simulated {
		sim = `<span style="color:#b42318; font-weight:700; letter-spacing:.08em">SIMULATED — not a hardware measurement</span>`
	}
	header = `<div style="` + style + `"><span>` + html.EscapeString(running) + `</span>` + sim + `</div>`
	footer = `<div style="` + style + `"><span>servebench report</span>` + sim + `<span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`
	return header, footer
}

// Print prints the HTML report at htmlPath to pdfPath on A4 with headless Chromium (found on PATH
// as chromium, chromium-browser or google-chrome). The page is laid out for print media before
// the charts are drawn, so they are sized for the page. Without a browser it returns an error
// naming the package to install.
func Print(ctx context.Context, htmlPath, pdfPath string) error {
	if _, err := os.Stat(htmlPath); err != nil {
		return fmt.Errorf("printing PDF: %w (render the HTML report first)", err)
	}
	exe, err := FindBrowser()
	if err != nil {
		return err
	}
	u, err := FileURL(htmlPath)
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "servebench-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	bctx, cancel := BrowserContext(ctx, exe, profile, nil)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil { // start the browser without a deadline
		return fmt.Errorf("starting %s: %w", exe, err)
	}
	tctx, cancelT := context.WithTimeout(bctx, 2*time.Minute)
	defer cancelT()
	var pdf []byte
	err = chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
			return err
		}),
		chromedp.EmulateViewport(794, 1123), // A4 at 96 dpi
		chromedp.Navigate(u),
		WaitCharts(),
		PrintNumbered(&pdf),
	)
	if err != nil {
		return fmt.Errorf("printing %s to PDF with %s: %w", htmlPath, exe, err)
	}
	if err := os.WriteFile(pdfPath, pdf, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", pdfPath, err)
	}
	return nil
}

// PrintNumbered prints the loaded report like PrintPage, with the page of each section written
// in its contents: it prints once, reads on which page each section's heading landed
// (DestinationPages: the contents link to every section), writes the numbers into the contents'
// page-number slots (nav.toc [data-pg], a fixed width in print, so filling them moves nothing)
// and prints again, until the numbers it wrote are the pages the sections are on (at most three
// prints). A report without contents is printed once.
func PrintNumbered(pdf *[]byte) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var written map[string]int
		for range 3 {
			if _, err := PrintPage(pdf)(ctx, t); err != nil {
				return err
			}
			pages, err := DestinationPages(*pdf)
			if err != nil {
				return fmt.Errorf("reading the section pages of the printed PDF: %w", err)
			}
			if len(pages) == 0 || maps.Equal(pages, written) {
				return nil
			}
			if _, err := chromedp.Evaluate[int](fillPagesJS(pages))(ctx, t); err != nil {
				return err
			}
			written = pages
		}
		return nil
	})
}

// fillPagesJS writes each section's page into its contents slot and returns how many it wrote.
func fillPagesJS(pages map[string]int) string {
	b, _ := json.Marshal(pages)
	return `(function(p){var n=0;document.querySelectorAll("nav.toc [data-pg]").forEach(function(e){var v=p[e.getAttribute("data-pg")];e.textContent=v?String(v):"";if(v)n++;});document.documentElement.setAttribute("data-toc-pages","filled");return n;})(` + string(b) + `)`
}

// PrintPage prints the loaded report to *pdf on A4, with the running header and page numbers
// read from the page's meta tags.
func PrintPage(pdf *[]byte) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		head, err := chromedp.Evaluate[[]string](`(function(){var m=function(n){var e=document.querySelector('meta[name="'+n+'"]');return e?e.content:"";};return [m("servebench-running-header"), m("servebench-simulated")];})()`)(ctx, t)
		if err != nil || len(head) != 2 {
			head = []string{"", ""}
		}
		header, footer := pageTemplates(head[0], head[1] == "true")
		*pdf, err = chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPrintBackground(), chromedp.PDFPreferCSSPageSize(),
			chromedp.PDFHeaderTemplate(header), chromedp.PDFFooterTemplate(footer))(ctx, t)
		return err
	})
}
