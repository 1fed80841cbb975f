package childserver

import (
	"os/exec"
	"testing"
)

// The child's first line is the URL, and the child is stopped (its standard input closed, and
// waited for) when the test that started it ends.
func TestStartReturnsTheURLAndStopsTheChild(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo http://127.0.0.1:1234; cat >/dev/null")
	t.Run("child", func(t *testing.T) {
		if got := Start(t, cmd); got != "http://127.0.0.1:1234" {
			t.Errorf("URL %q", got)
		}
		if cmd.ProcessState != nil {
			t.Error("the child was stopped before its test ended")
		}
	})
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("after its test the child is %v, want exited cleanly", cmd.ProcessState)
	}
}
