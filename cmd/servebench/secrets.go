package main

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/servebench/servebench"
)

// secrets are the values that must never appear in any output: the API key and credentials
// found in a URL. Every output of a run goes through them (terminal, run folder, runs index).
type secrets struct {
	mu   sync.Mutex
	list []string
}

func (s *secrets) add(v ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range v {
		if x != "" {
			s.list = append(s.list, x)
		}
	}
}

func (s *secrets) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

func (s *secrets) redact(v string) string { return servebench.Redact(v, s.all()...) }

// redactValue redacts every string of v (through its JSON form); v must round-trip in JSON.
func redactValue[T any](s *secrets, v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	r := s.redact(string(b))
	if r == string(b) {
		return v
	}
	var out T
	if json.Unmarshal([]byte(r), &out) != nil {
		return v
	}
	return out
}

// redactingWriter passes writes through with every secret replaced.
type redactingWriter struct {
	w io.Writer
	s *secrets
}

func (r redactingWriter) Write(p []byte) (int, error) {
	out := r.s.redact(string(p))
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redacting returns a copy of e whose stdout and stderr redact s.
func (e *env) redacting(s *secrets) *env {
	c := *e
	c.stdout = redactingWriter{e.stdout, s}
	c.stderr = redactingWriter{e.stderr, s}
	return &c
}

// splitURLCredentials moves credentials out of a URL: it returns the URL without them, the
// credential to use as the API key (the password, or the user name when there is none) and
// every piece that must be redacted from outputs. A URL without credentials comes back as is.
func splitURLCredentials(raw string) (clean, key string, hide []string) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if i := strings.Index(raw, "@"); err != nil && i > 0 {
			// unparsable: hide everything between the scheme and the '@'
			start := strings.Index(raw, "://") + 3
			if start < 3 || start > i {
				start = 0
			}
			return raw, "", []string{raw[start:i]}
		}
		return raw, "", nil
	}
	user := u.User.Username()
	pass, hasPass := u.User.Password()
	// the password is the secret; a user name alone is used as the key and hidden too, but a
	// user name beside a password is not (hiding "bench" would garble every "servebench")
	hide = append(hide, u.User.String())
	key = user
	if hasPass {
		hide = append(hide, pass)
		key = pass
	} else {
		hide = append(hide, user)
	}
	u.User = nil
	return u.String(), key, hide
}
