package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxRedirects is how many same-origin redirects a request follows (as net/http's default).
const maxRedirects = 10

// CheckRedirect is the redirect policy of every HTTP client servebench points at a target
// (model discovery, /tokenize, probes, metrics): a redirect is followed only within the origin
// (scheme, host and port) of the request it answers. net/http would otherwise resend custom
// headers such as X-Api-Key to any host, the bearer key to another port of the same host, and
// the body of a POST (a /tokenize prompt) on a 307 or 308; servebench refuses instead, with an
// error that names both origins and the fix. The measuring requests follow no redirect at all (a
// 3xx answer fails with its status).
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	from := via[0].URL
	if origin(from) != origin(req.URL) {
		return fmt.Errorf("refused to follow a redirect from %s to %s, another origin: following it would send the API key, the configured headers and the request's body there; if the target really moved, point --url at it", origin(from), origin(req.URL))
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// origin is a URL's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// NewHTTPClient returns an HTTP client for a target's side endpoints (/tokenize, metrics,
// probes) with the given overall timeout and CheckRedirect's policy.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: CheckRedirect}
}
