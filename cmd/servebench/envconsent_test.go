package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/servebench/servebench/sim"
)

// A plan file names environment variables it has no business reading (the AWS secret as the
// API key's variable, ${GITHUB_TOKEN} in a header): the run refuses before anything is sent,
// naming each variable, where the plan names it and the fix; with --allow-env (or the variable
// named on the command line) it sends them. OPENAI_API_KEY and SERVEBENCH_* need no leave;
// SERVEBENCH_TOKEN, the distributed run's secret, does.
func TestPlanCannotSendEnvironmentVariablesUnasked(t *testing.T) {
	vars := map[string]string{"AWS_SECRET_ACCESS_KEY": "aws-secret-value-1", "GITHUB_TOKEN": "ghp-token-value-2",
		"SERVEBENCH_KEY": "sb-key-value-3", "SERVEBENCH_TOKEN": "sb-dist-token-4", "OPENAI_API_KEY": "openai-value-5"}
	var mu sync.Mutex
	var requests int
	var sent []string // every secret value any request carried
	srv := simBehind(t, sim.Options{Seed: 1}, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests++
			for _, vs := range r.Header {
				for _, v := range vs {
					for _, secret := range vars {
						if strings.Contains(v, secret) {
							sent = append(sent, secret)
						}
					}
				}
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		}
	})
	dir := t.TempDir()
	cases := []struct {
		name     string
		plan     string   // the plan file's target and request sections
		flags    []string // beyond the common ones
		refused  []string // the variables the error must name; none: the run must go
		mustSend []string // values the server must have received when the run goes
	}{
		{"api key from AWS", "api_key_env: AWS_SECRET_ACCESS_KEY\n", nil, []string{"AWS_SECRET_ACCESS_KEY (target.api_key_env)"}, nil},
		{"header from GITHUB_TOKEN", "headers: {X-Token: \"${GITHUB_TOKEN}\"}\n", nil, []string{"GITHUB_TOKEN (request.headers.X-Token)"}, nil},
		{"both at once", "api_key_env: AWS_SECRET_ACCESS_KEY\nheaders: {Authorization: \"Bearer $GITHUB_TOKEN\"}\n", nil,
			[]string{"AWS_SECRET_ACCESS_KEY (target.api_key_env)", "GITHUB_TOKEN (request.headers.Authorization)", "--allow-env AWS_SECRET_ACCESS_KEY,GITHUB_TOKEN"}, nil},
		{"the distributed token", "headers: {X-T: \"${SERVEBENCH_TOKEN}\"}\n", nil, []string{"SERVEBENCH_TOKEN (request.headers.X-T)"}, nil},
		{"allowed", "api_key_env: AWS_SECRET_ACCESS_KEY\nheaders: {X-Token: \"${GITHUB_TOKEN}\"}\n",
			[]string{"--allow-env", "AWS_SECRET_ACCESS_KEY", "--allow-env", "GITHUB_TOKEN"}, nil, []string{"aws-secret-value-1", "ghp-token-value-2"}},
		{"named on the command line", "", []string{"--api-key-env", "AWS_SECRET_ACCESS_KEY", "--header", "X-Token: ${GITHUB_TOKEN}"}, nil,
			[]string{"aws-secret-value-1", "ghp-token-value-2"}},
		{"SERVEBENCH_ needs no leave", "api_key_env: SERVEBENCH_KEY\n", nil, nil, []string{"sb-key-value-3"}},
		{"nor the default", "", nil, nil, []string{"openai-value-5"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			requests, sent = 0, nil
			mu.Unlock()
			planFile := filepath.Join(dir, "plan.yaml")
			target, request := "target:\n  url: "+srv.URL+"/v1\n", ""
			for _, l := range strings.Split(strings.TrimSpace(c.plan), "\n") {
				if strings.HasPrefix(l, "headers:") {
					request += "  " + l + "\n"
				} else if l != "" {
					target += "  " + l + "\n"
				}
			}
			if request != "" {
				request = "request:\n" + request
			}
			if err := os.WriteFile(planFile, []byte(target+request), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"run", "--config", planFile, "--contexts", "1k", "--concurrency", "1", "--output-tokens", "8",
				"--mode", "fixed", "--requests", "2", "--use-cases", "none", "--scenarios", "none", "--out", filepath.Join(dir, "run"+string(rune('a'+i))),
				"--quiet", "--index", "none", "--gpu", "none", "--format", "json"}, c.flags...)
			code, stdout, stderr := runCLIEnv(t, vars, args...)
			mu.Lock()
			defer mu.Unlock()
			if len(c.refused) > 0 {
				if code != exitUsage {
					t.Fatalf("exit %d, want %d (refused)\n%s", code, exitUsage, stderr)
				}
				for _, w := range append(c.refused, "--allow-env", "OPENAI_API_KEY and SERVEBENCH_*") {
					if !strings.Contains(stderr, w) {
						t.Errorf("the error does not say %q:\n%s", w, stderr)
					}
				}
				if requests > 0 {
					t.Errorf("the target received %d requests before the refusal", requests)
				}
				for _, v := range vars {
					if strings.Contains(stdout+stderr, v) {
						t.Errorf("the output holds the value %s", v)
					}
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, v := range c.mustSend {
				if !strings.Contains(strings.Join(sent, " "), v) {
					t.Errorf("the server never received %s; it received %v", v, sent)
				}
			}
		})
	}
}
