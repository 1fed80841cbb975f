package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// What the process writes to its stdout and stderr passes the terminal sanitiser whatever the
// command forgot: escape sequences, C1 controls and bidi overrides never reach the terminal;
// stderr keeps the carriage return of the live progress line.
func TestProcessOutputPassesTheSanitiser(t *testing.T) {
	dir := t.TempDir()
	files := map[string]**os.File{"stdout": &os.Stdout, "stderr": &os.Stderr}
	for name, std := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer func(old *os.File) { *std = old; f.Close() }(*std)
		*std = f
	}
	e := osEnv()
	const hostile = "Chat\x1b[2J\x1b]0;owned\x07\r\u202eFORGED\u009b31m\n"
	fmt.Fprint(e.stdout, hostile)
	fmt.Fprint(e.stderr, hostile)
	for name, want := range map[string]string{"stdout": "Chat[2J]0;ownedFORGED31m\n", "stderr": "Chat[2J]0;owned\rFORGED31m\n"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s got %q, want %q", name, b, want)
		}
	}
}
