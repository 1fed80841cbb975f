package host

import (
	"runtime"
	"strings"
	"testing"
)

// TestRaisePriority: asking for the priority already in effect changes nothing and says so;
// asking for a higher one either takes effect on every thread (as root) or leaves the value as
// it was and names what is missing.
func TestRaisePriority(t *testing.T) {
	cur, ok := nice()
	if !ok {
		if _, note := RaisePriority(-5); !strings.Contains(note, "unknown") {
			t.Fatalf("note %q", note)
		}
		return
	}
	if got, note := RaisePriority(cur); got != cur || !strings.Contains(note, "already") {
		t.Fatalf("RaisePriority(%d) = %d, %q", cur, got, note)
	}
	if cur <= -19 {
		t.Skip("already at the highest priority")
	}
	want := cur - 1
	got, note := RaisePriority(want)
	switch {
	case got == want:
		if !strings.Contains(note, "raised from") {
			t.Errorf("note %q", note)
		}
		// a thread started after the change inherits it
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			n, _ := nice()
			done <- n
		}()
		if n := <-done; n != want {
			t.Errorf("a locked thread runs at nice %d, want %d", n, want)
		}
		setNice(cur) // leave the test process as it was (allowed: lowering priority)
	case got == cur:
		if !strings.Contains(note, "not raised") {
			t.Errorf("note %q", note)
		}
	default:
		t.Errorf("RaisePriority(%d) from %d = %d, %q", want, cur, got, note)
	}
}
