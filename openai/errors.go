package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// clip shortens s to at most n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// looksHTML reports whether a body starts like an HTML document.
func looksHTML(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '<' {
		return false
	}
	l := bytes.ToLower(b[:min(len(b), 512)])
	return bytes.HasPrefix(l, []byte("<!doctype")) || bytes.Contains(l, []byte("<html")) ||
		bytes.Contains(l, []byte("<head")) || bytes.Contains(l, []byte("<body")) || bytes.Contains(l, []byte("<title"))
}

var (
	reTitle  = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	reDrop   = regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>`)
	reTag    = regexp.MustCompile(`(?s)<[^>]*>`)
	reSpaces = regexp.MustCompile(`\s+`)
)

// htmlHint turns an HTML page into a short plain-text hint: its title and first words.
func htmlHint(b []byte) string {
	s := string(b)
	title := ""
	if m := reTitle.FindStringSubmatch(s); m != nil {
		title = strings.TrimSpace(reSpaces.ReplaceAllString(m[1], " "))
	}
	text := reDrop.ReplaceAllString(s, " ")
	text = strings.TrimSpace(reSpaces.ReplaceAllString(reTag.ReplaceAllString(text, " "), " "))
	if title != "" {
		text = strings.TrimSpace(strings.TrimPrefix(text, title))
	}
	switch {
	case title != "" && text != "":
		return fmt.Sprintf("an HTML page titled %q: %q", clip(title, 100), clip(text, 160))
	case title != "":
		return fmt.Sprintf("an HTML page titled %q", clip(title, 100))
	case text != "":
		return fmt.Sprintf("an HTML page reading %q", clip(text, 160))
	}
	return "an empty HTML page"
}

// bodyHint renders the start of an error body: the message of a JSON error, a hint for an
// HTML page, or the first ~300 bytes of anything else.
func bodyHint(contentType string, b []byte) string {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return "empty body"
	}
	if strings.Contains(strings.ToLower(contentType), "text/html") || looksHTML(t) {
		return htmlHint(t)
	}
	if t[0] == '{' {
		// OpenAI/vLLM {"error": {"message"}}, llama.cpp/TGI/Ollama {"error": "..."},
		// FastAPI {"detail": ...}, SGLang {"message": ...}.
		var e struct {
			Error   json.RawMessage `json:"error"`
			Detail  json.RawMessage `json:"detail"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(t, &e) == nil {
			var obj struct {
				Message string `json:"message"`
			}
			var str string
			switch {
			case len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
				return fmt.Sprintf("%q", clip(obj.Message, 300))
			case len(e.Error) > 0 && json.Unmarshal(e.Error, &str) == nil && str != "":
				return fmt.Sprintf("%q", clip(str, 300))
			case e.Message != "":
				return fmt.Sprintf("%q", clip(e.Message, 300))
			case len(e.Detail) > 0:
				return clip(string(e.Detail), 300)
			}
		}
	}
	return fmt.Sprintf("%q", clip(string(t), 300))
}

// maxRetryAfterSeconds bounds the Retry-After a record keeps: a day. A server may send any
// number; a longer wait is kept as a day, a negative or unreadable one not at all.
const maxRetryAfterSeconds = 86400

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3: delay-seconds, or an HTTP date, taken
// relative to now, the time the answer arrived) as seconds in [0, maxRetryAfterSeconds]; nil
// when v is empty or neither form.
func retryAfter(v string, now time.Time) *float64 {
	v = strings.TrimSpace(v)
	var s float64
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		s = float64(min(n, maxRetryAfterSeconds))
	} else if t, err := http.ParseTime(v); err == nil {
		s = min(max(t.Sub(now).Seconds(), 0), maxRetryAfterSeconds)
	} else {
		return nil
	}
	return &s
}

// statusMessage explains a non-2xx answer (status e.g. "404 Not Found", code 404, to a request
// for path), with the fix for the usual causes.
func statusMessage(status string, code int, path, contentType string, body []byte, base string) string {
	msg := fmt.Sprintf("HTTP %s from %s: %s", status, path, bodyHint(contentType, body))
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		msg += "; check the API key (OPENAI_API_KEY or the variable --api-key-env names)"
	case code == http.StatusNotFound && !strings.HasSuffix(base, "/v1"):
		msg += "; check --url is the API base ending in /v1 (e.g. http://host:8000/v1) and --model is served"
	case code == http.StatusNotFound:
		msg += "; check --model names a served model and --api matches the server"
	case looksHTML(body) || strings.Contains(strings.ToLower(contentType), "text/html"):
		msg += "; a web server or proxy answered, not the inference API: check --url is the API base ending in /v1"
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		msg += "; the server is refusing load (rate limit or overload)"
	}
	return msg
}
