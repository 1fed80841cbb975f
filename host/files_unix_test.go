//go:build unix

package host

import (
	"fmt"
	"strings"
	"testing"
)

func TestEnsureOpenFiles(t *testing.T) {
	soft, hard, ok := openFileLimit()
	if !ok {
		t.Skip("no open-file limit")
	}
	t.Cleanup(func() { _ = setOpenFileLimit(soft) })
	if hard < 2000 {
		t.Skipf("hard limit %d too low to test raising", hard)
	}
	if err := setOpenFileLimit(1000); err != nil {
		t.Fatal(err)
	}
	// below the soft limit: nothing to do
	if err := EnsureOpenFiles(900); err != nil {
		t.Fatal(err)
	}
	// above the soft limit, below the hard one: raised
	if err := EnsureOpenFiles(1500); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := openFileLimit(); s != 1500 {
		t.Errorf("soft limit %d after EnsureOpenFiles(1500)", s)
	}
	// above the hard limit: refused, naming the numbers and the fix
	need := int(hard) + 1
	err := EnsureOpenFiles(need)
	if err == nil {
		t.Fatalf("EnsureOpenFiles(%d) above the hard limit %d passed", need, hard)
	}
	for _, want := range []string{fmt.Sprint(hard), fmt.Sprintf("ulimit -n %d", need), "lower the concurrency"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
