package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench/internal/simtest"
	"github.com/servebench/servebench/sim"
)

// simBehind serves the fast simulated engine in memory behind a proxy: wrap gets the engine's
// handler and returns what the server serves.
func simBehind(t *testing.T, opts sim.Options, wrap func(engine http.Handler) http.HandlerFunc) *simtest.Server {
	t.Helper()
	return simtest.StartInMemory(t, simtest.Config{Options: opts, Wrap: func(h http.Handler) http.Handler { return wrap(h) }})
}

// echoingServer is the simulator behind a proxy that echoes the Authorization header: /tokenize
// answers 401 quoting it, and every third completion fails with a 500 quoting it too.
func echoingServer(t *testing.T) *simtest.Server {
	t.Helper()
	var n atomic.Int64
	return simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			measured := bytes.Contains(body, []byte(`"max_tokens":16`))
			switch {
			case strings.HasSuffix(r.URL.Path, "/tokenize"):
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error": {"message": "invalid header Authorization: %s"}}`, auth)
				return
			case measured && n.Add(1)%3 == 0:
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, "proxy error for request with %s %s", auth, strings.Repeat("x", 290))
				return
			}
			h.ServeHTTP(w, r)
		}
	})
}

// An API key never reaches stdout, stderr, the run folder or the runs index, whether it comes
// from the environment or from the URL, even when the server echoes it back.
func TestAPIKeyNeverInAnyOutput(t *testing.T) {
	const envKey = "sk-env-7f3a9c1e5b2d4f60"
	const urlKey = "sk-url-0c9e8d7f6a5b4c3d"
	tests := []struct {
		name, url string
		vars      map[string]string
		key       string
	}{
		// the key from OPENAI_API_KEY
		{"env", "http://HOST/v1", map[string]string{"OPENAI_API_KEY": envKey}, envKey},
		// the key as the password of the URL: used, never stored
		{"url", "http://bench:" + urlKey + "@HOST/v1", nil, urlKey},
		// a key as the user name alone
		{"user", "http://" + urlKey + "@HOST/v1", nil, urlKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := echoingServer(t)
				tt.url = strings.Replace(tt.url, "HOST", strings.TrimPrefix(srv.URL, "http://"), 1)
				tmp := t.TempDir()
				dir := filepath.Join(tmp, "run")
				index := filepath.Join(tmp, "runs.db")
				code, stdout, stderr := runCLIEnv(t, tt.vars, "run", "--url", tt.url, "--contexts", "1k", "--concurrency", "2",
					"--output-tokens", "16", "--min-requests", "6", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "none", "--scenarios", "none",
					"--out", dir, "--index", index, "--max-failure-rate", "1")
				if code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr)
				}
				for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
					if strings.Contains(out, tt.key) {
						t.Errorf("the key is in %s:\n%s", name, out)
					}
				}
				files, _ := os.ReadDir(dir)
				paths := []string{index}
				for _, f := range files {
					paths = append(paths, filepath.Join(dir, f.Name()))
				}
				sawEcho := false
				for _, p := range paths {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Contains(b, []byte(tt.key)) {
						t.Errorf("the key is in %s", p)
					}
					if bytes.Contains(b, []byte("[redacted]")) {
						sawEcho = true
					}
				}
				if !sawEcho {
					t.Errorf("no redacted echo anywhere: the test server did not echo the key (test is vacuous)")
				}
				if tt.name == "url" && bytes.Contains(mustRead(t, filepath.Join(dir, "run.json")), []byte("bench:")) {
					t.Errorf("the URL's credentials are stored in run.json")
				}
				if tt.name == "url" && strings.Contains(stdout, "serve[redacted]") {
					t.Errorf("the URL's user name garbles ordinary text:\n%s", stdout)
				}
			})
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// --api-key-env takes the name of a variable; a pasted key is refused without being repeated.
func TestAPIKeyEnvRefusesAKey(t *testing.T) {
	for _, v := range []string{"sk-proj-abcdefghijklmnop", "hf_AbCdEfGhIjKlMnOpQrStUvWx12", "not a name"} {
		code, stdout, stderr := runCLI(t, "run", "--api-key-env", v, "--out", filepath.Join(t.TempDir(), "r"), "--index", "none")
		if code != exitUsage {
			t.Errorf("--api-key-env %q: exit %d, want %d", v, code, exitUsage)
		}
		if strings.Contains(stdout+stderr, v) {
			t.Errorf("--api-key-env %q: the value is repeated in the output:\n%s", v, stderr)
		}
		if !strings.Contains(stderr, "api-key-env") {
			t.Errorf("--api-key-env %q: the message does not name the flag:\n%s", v, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "run", "--api-key-env", "MY_PROXY_KEY", "--contexts", "1k", "--concurrency", "1", "--output-tokens", "8",
		"--min-requests", "1", "--rounds", "1", "--use-cases", "none", "--scenarios", "none", "--out", filepath.Join(t.TempDir(), "r"),
		"--index", "none", "--no-report", "--quiet"); code != 0 {
		t.Errorf("a variable name is accepted: exit %d\n%s", code, stderr)
	}
}
