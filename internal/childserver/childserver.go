// Package childserver starts a test server in a process of its own: the child prints its base
// URL on the first line of its standard output and serves until its standard input closes, so
// it never outlives the test that started it. Tests use it where a server inside the test
// process would share that process's scheduler (and race detector) with the client it serves.
package childserver

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Start runs cmd, returns the URL it printed, and stops it when the test ends (closing its
// standard input), failing the test if it did not exit cleanly then. cmd's Stdin, Stdout and
// Stderr must be unset.
func Start(tb testing.TB, cmd *exec.Cmd) string {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			tb.Errorf("server process %s: %v\n%s", cmd.Path, err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http") {
		tb.Fatalf("server process %s printed %q, not its URL (%v)\n%s", cmd.Path, line, err, stderr.String())
	}
	return strings.TrimSpace(line)
}
