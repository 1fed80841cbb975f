package page

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is where the browser tests find Chromium (Debian's package).
const chromium = "/usr/bin/chromium"

// needBrowser skips t on a machine without Chromium at chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("skipping the browser test: no chromium at " + chromium + " (apt-get install chromium)")
	}
}

// browser starts a headless Chromium for t (its own profile folder, file:// pages allowed to
// load their neighbours, a window of width × height, or Chromium's default with 0) and returns
// a context for its actions that ends timeout after the browser has started, or with the test.
// A browser that does not start fails t, naming the cause.
func browser(t *testing.T, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("allow-file-access-from-files", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	if width > 0 {
		opts = append(opts, chromedp.WindowSize(width, height))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelA()
		t.Fatalf("starting %s: %v", chromium, err)
	}
	tctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	return tctx
}
