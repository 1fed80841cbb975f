package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/servebench/servebench/sim"
)

// hostileName is a model name a hostile server could send: clear screen, retitle the terminal
// (OSC … BEL), a forged summary line after a carriage return, a right-to-left override, and
// 100 KB of padding.
var hostileName = "evil\x1b[2J\x1b]0;owned\x07\rFORGED ok 100%\u202Eledom" + strings.Repeat("A", 100_000)

// badTerminalBytes lists the bytes below 0x20 (other than newline and tab), DEL and C1 or bidi
// controls in s.
func badTerminalBytes(s string) []rune {
	var bad []rune
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x202E {
			bad = append(bad, r)
		}
	}
	return bad
}

// No control character from a server reaches the terminal through run, runs or compare, and the
// 100 KB name is cut on the terminal (the JSON keeps it whole).
func TestHostileServerTextNeverDrivesTheTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		srv := simBehind(t, sim.Options{Seed: 1, ServedModelName: hostileName}, func(h http.Handler) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/completions") && n.Add(1) > 20 && n.Load()%4 == 0 {
					w.WriteHeader(http.StatusInternalServerError)
					fmt.Fprint(w, "\x1b[31mfailed\x1b[0m\a\x1b]8;;http://evil/\x07link\x1b]8;;\x07\r\x08")
					return
				}
				h.ServeHTTP(w, r)
			}
		})

		tmp := t.TempDir()
		index := filepath.Join(tmp, "runs.db")
		var dirs []string
		for i := range 2 {
			dir := filepath.Join(tmp, fmt.Sprintf("run%d", i))
			dirs = append(dirs, dir)
			code, stdout, stderr := runCLI(t, "run", "--url", srv.URL+"/v1", "--contexts", "1k", "--concurrency", "1,2",
				"--output-tokens", "16", "--min-requests", "6", "--rounds", "1", "--max-requests", "24", "--max-duration", "1s", "--use-cases", "none", "--scenarios", "none",
				"--out", dir, "--index", index, "--max-failure-rate", "1")
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, stderr)
			}
			check(t, "run", stdout+stderr)
			if !strings.Contains(string(mustRead(t, filepath.Join(dir, "run.json"))), strings.Repeat("A", 100_000)) {
				t.Errorf("run.json lost the full model name")
			}
			check(t, "report.md", string(mustRead(t, filepath.Join(dir, "report.md"))))
		}
		code, stdout, stderr := runCLI(t, "runs", "--index", index)
		if code != 0 {
			t.Fatalf("runs: exit %d\n%s", code, stderr)
		}
		check(t, "runs", stdout+stderr)
		code, stdout, stderr = runCLI(t, "compare", dirs[0], dirs[1], "--out", filepath.Join(tmp, "cmp.html"))
		if code != 0 {
			t.Fatalf("compare: exit %d\n%s", code, stderr)
		}
		check(t, "compare", stdout+stderr)
	})
}

func check(t *testing.T, what, out string) {
	t.Helper()
	if bad := badTerminalBytes(out); len(bad) > 0 {
		t.Errorf("%s: %d control characters reach the output, e.g. %q", what, len(bad), bad[:min(5, len(bad))])
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, "A") > 2000 {
			t.Errorf("%s: a line of %d bytes carries the 100 KB name uncut: %q", what, len(line), debugLine(line))
			break
		}
	}
}

// debugLine shows the two ends of a long line.
func debugLine(s string) string {
	if len(s) > 300 {
		return s[:150] + " ... " + s[len(s)-150:]
	}
	return s
}
