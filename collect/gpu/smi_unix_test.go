//go:build unix

package gpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSMILoopProcess runs a fake nvidia-smi (a shell script on PATH) the way the real one is run:
// once, then looping with -lms; Close kills the loop.
func TestSMILoopProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "loop.pid")
	script := "#!/bin/sh\ncase \"$*\" in\n*-lms\\ 250*)\n  echo $$ > " + pidFile + "\n  while :; do printf '%s' '" +
		smiLine(0, 222.5) + smiLine(1, 333.5) + "'; sleep 0.05; done;;\nesac\nprintf '%s' '" + smiLine(0, 111.5) + smiLine(1, 111.5) + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	src, err := Open(context.Background(), "nvidia-smi", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*NvidiaSMI)
	defer s.Close()
	r, err := s.Read(context.Background())
	if err != nil || r.GPUs[0].PowerWatts != 111.5 {
		t.Fatalf("first read %+v, %v: want the single run's 111.5 W", r, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.GPUs[0].PowerWatts != 222.5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if r, err = s.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if r.GPUs[0].PowerWatts != 222.5 || r.GPUs[1].PowerWatts != 333.5 {
		t.Fatalf("no sample from the loop within 10 s: %+v", r.GPUs)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	s.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the looping nvidia-smi (pid %d) outlived Close: %v", pid, err)
	}
}
