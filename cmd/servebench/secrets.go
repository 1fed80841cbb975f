package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/plan"
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

// envConsent is the environment variables the user allowed a run to read and send to its
// target. A plan file or a run folder may come from anyone, and whatever it names (the API key's
// variable, ${NAME} in a header) is sent to the URL it names, so a plan alone may name only
// OPENAI_API_KEY and SERVEBENCH_* variables (not SERVEBENCH_TOKEN, the distributed run's own
// secret); any other variable must be named on the command line: by --api-key-env, inside a
// --header value, or by --allow-env.
type envConsent map[string]bool

// newEnvConsent is the consent the command line gives: the --allow-env names, and the variables
// named by the plan flags the user set (--api-key-env, ${NAME} in a --header).
func newEnvConsent(allow []string, ov plan.Overrides) envConsent {
	c := envConsent{}
	for _, n := range allow {
		for _, n := range strings.Split(n, ",") {
			c[strings.TrimSpace(n)] = true
		}
	}
	if n, ok := ov["api-key-env"]; ok {
		c[n] = true
	}
	if h, ok := ov["header"]; ok {
		for _, n := range headerEnvNames(h) {
			c[n] = true
		}
	}
	return c
}

// allowed says whether the run may read variable name.
func (c envConsent) allowed(name string) bool {
	return c[name] || name == "OPENAI_API_KEY" || (strings.HasPrefix(name, "SERVEBENCH_") && name != tokenEnv)
}

// check refuses a plan that names a variable the user did not allow, naming every such variable,
// where the plan names it, and the fix.
func (c envConsent) check(p servebench.Plan) error {
	var refused, where []string
	add := func(name, at string) {
		if !c.allowed(name) && !slices.Contains(refused, name) {
			refused = append(refused, name)
			where = append(where, name+" ("+at+")")
		}
	}
	if p.Target.APIKeyEnv != "" {
		add(p.Target.APIKeyEnv, "target.api_key_env")
	}
	names := slices.Sorted(maps.Keys(p.Request.Headers))
	for _, h := range names {
		for _, n := range headerEnvNames(p.Request.Headers[h]) {
			add(n, "request.headers."+h)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	to := p.Target.URL
	if to == "" {
		to = "the target"
	}
	return fmt.Errorf("the plan names the environment variable%s %s, whose value%s would be sent to %s: a plan file or run folder may name only OPENAI_API_KEY and SERVEBENCH_* variables unless you allow more; if you mean it, pass --allow-env %s (a new run may instead name it itself with --api-key-env or --header), or put the value in a SERVEBENCH_* variable",
		map[bool]string{false: "", true: "s"}[len(refused) > 1], strings.Join(where, ", "), map[bool]string{false: "", true: "s"}[len(refused) > 1], to, strings.Join(refused, ","))
}

// headerEnvNames lists the environment variables a header value names ($NAME or ${NAME}), as
// requestControl expands them.
func headerEnvNames(v string) []string {
	var names []string
	os.Expand(v, func(k string) string {
		names = append(names, k)
		return ""
	})
	return names
}
