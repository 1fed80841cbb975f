package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A distributed run refuses a weak token before it listens, naming the command that makes a
// good one and never quoting the token; so do a worker and the Kubernetes manifests.
func TestWeakTokenRefusedAtStart(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("target:\n  url: http://10.0.0.9:8000/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"k8s", "manifests", "--workers", "2", "--plan", plan, "--image", "registry.example/servebench:0.1", "--out", filepath.Join(t.TempDir(), "k.yaml")},
		{"run", "--workers", "1", "--listen", "127.0.0.1:0", "--out", filepath.Join(t.TempDir(), "r"), "--quiet", "--index", "none"},
		{"worker", "--coordinator", "tcp://127.0.0.1:9"},
	} {
		for _, token := range []string{"s3cret", "abc", "test-token-never-printed"} {
			code, _, stderr := runCLIEnv(t, map[string]string{tokenEnv: token}, args...)
			if code != exitUsage || !strings.Contains(stderr, "openssl rand -hex 16") || !strings.Contains(stderr, "too weak") || strings.Contains(stderr, token) {
				t.Errorf("%s with token %q: exit %d, want %d naming the fix without the token:\n%s", args[0], token, code, exitUsage, stderr)
			}
		}
	}
}

// A worker refuses a coordinator address it cannot use with the form it takes.
func TestWorkerCoordinatorAddress(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://10.0.0.5:7070", "--coordinator tcp://10.0.0.5:7070"},
		{"10.0.0.5", "tcp://HOST:PORT"},
	} {
		code, _, stderr := runCLIEnv(t, map[string]string{tokenEnv: "9f2c61d0a4b85e37c1d06f9ab2e4c873"}, "worker", "--coordinator", tc.in)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("--coordinator %s: exit %d, want %d with %q:\n%s", tc.in, code, exitUsage, tc.want, stderr)
		}
	}
}
