package page

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The page's script refuses run ids the server would refuse: app.js holds the same pattern as
// safeID, so an id from the URL is checked in the browser as the server checks it.
func TestPageScriptValidatesRunIDsAsTheServer(t *testing.T) {
	b, _, ok := Asset("app.js")
	if !ok {
		t.Fatal("no app.js")
	}
	m := regexp.MustCompile(`var runID = /(.*)/;`).FindSubmatch(b)
	if m == nil {
		t.Fatal("app.js has no runID pattern")
	}
	if string(m[1]) != safeID.String() {
		t.Fatalf("app.js checks run ids with /%s/, the server with /%s/", m[1], safeID)
	}
}

// compare.html#runs=..%2F..%2Fevil on the static site must not load ../../evil.js (or any
// script that is not a run's data file): the id is refused and named. The site is served as a
// common static file server serves it, decoding %2F and resolving "..", as python3 -m
// http.server does. A well-formed id is still asked for.
func TestCompareRefusesRunIDsThatClimbOut(t *testing.T) {
	needBrowser(t)
	site := filepath.Join(t.TempDir(), "site")
	if _, err := (&Pages{}).WriteSite(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	// a script anyone who can put a file on the same origin could plant
	evil := "window.pwned = (window.pwned || 0) + 1;"
	for _, p := range []string{"evil.js", "data/evil.js", "data/runs/evil.js"} {
		if err := os.WriteFile(filepath.Join(site, filepath.FromSlash(p)), []byte(evil), 0o644); err != nil {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(site, filepath.FromSlash(p))), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(site, filepath.FromSlash(p)), []byte(evil), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tctx := browser(t, 0, 0, 3*time.Minute)
	files := http.FileServer(http.Dir(site))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = path.Clean(r.URL.Path) // "/data/runs/../../evil.js" is "/evil.js"
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	base := srv.URL + "/compare.html"
	for _, tc := range []struct {
		hash    string
		refused string // the id the page must name as refused
	}{
		{"#runs=..%2F..%2Fevil", "../../evil"},                          // out of data/runs/ to the site's root
		{"#runs=..%2Fevil", "../evil"},                                  // to data/
		{"#runs=%2E%2E%2F%2E%2E%2Fevil", "../../evil"},                  // the dots encoded too
		{"#runs=good-1,.hidden", ".hidden"},                             // a leading dot
		{"#runs=" + strings.Repeat("a", 129), strings.Repeat("a", 129)}, // too long
		{"#runs=%E0%A4%A", "%E0%A4%A"},                                  // a malformed escape: refused, no crash
	} {
		type state struct {
			Pwned   int      `json:"pwned"`
			Scripts []string `json:"scripts"`
			Text    string   `json:"text"`
		}
		var st state
		err := chromedp.Do(tctx,
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(base+tc.hash),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				// until the page names a refused id or a planted script ran; appended script
				// elements are in the DOM at once, so the check below sees every one asked for
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					var err error
					st, err = chromedp.Evaluate[state](`({pwned: window.pwned || 0,
						scripts: Array.from(document.querySelectorAll("script[src]")).map(function (s) { return s.getAttribute("src"); }),
						text: document.body.innerText})`)(ctx, tg)
					if err != nil || st.Pwned > 0 || strings.Contains(st.Text, "Not a run id") || time.Now().After(deadline) {
						return err
					}
				}
			}),
		)
		if err != nil {
			t.Fatalf("%s: %v", tc.hash, err)
		}
		if st.Pwned != 0 {
			t.Errorf("%s: a planted script ran (%d times); scripts %v", tc.hash, st.Pwned, st.Scripts)
		}
		for _, s := range st.Scripts {
			if strings.Contains(s, "data/runs/") && !strings.Contains(s, "data/runs/good-1.js") {
				t.Errorf("%s: the page asked for %s", tc.hash, s)
			}
		}
		if !strings.Contains(st.Text, "Not a run id") || !strings.Contains(st.Text, tc.refused) {
			t.Errorf("%s: the page does not name %q as refused:\n%s", tc.hash, tc.refused, st.Text)
		}
		if strings.Contains(tc.hash, "good-1") && !strings.Contains(strings.Join(st.Scripts, " "), "data/runs/good-1.js") {
			t.Errorf("%s: the well-formed id good-1 was not asked for: %v", tc.hash, st.Scripts)
		}
	}
}
