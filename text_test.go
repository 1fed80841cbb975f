package servebench

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	tests := []struct {
		name, in, want string
		secrets        []string
	}{
		// an echoed Authorization header
		{"header echo", `401: bad header "Authorization: Bearer ` + key + `"`, `401: bad header "Authorization: Bearer [redacted]"`, []string{key}},
		// every occurrence
		{"twice", key + " and " + key, "[redacted] and [redacted]", []string{key}},
		// no key configured: nothing changes
		{"empty secret", "Bearer x", "Bearer x", []string{""}},
		// several secrets (URL user and password)
		{"several", "u=alice p=s3cret!", "u=[redacted] p=[redacted]", []string{"alice", "s3cret!"}},
	}
	for _, tt := range tests {
		if got := Redact(tt.in, tt.secrets...); got != tt.want {
			t.Errorf("%s: Redact = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTerminalText(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		max   int
		multi bool
		want  string
	}{
		// plain text passes unchanged
		{"plain", "Qwen/Qwen3-30B-A3B", 0, false, "Qwen/Qwen3-30B-A3B"},
		// ESC-based clear screen and an OSC retitle with BEL are dropped
		{"escape", "m\x1b[2J\x1b]0;pwned\x07odel", 0, false, "m[2J]0;pwnedodel"},
		// C1 CSI and DEL dropped
		{"c1", "a\u009b31mb\x7fc", 0, false, "a31mbc"},
		// carriage return and backspace (line forging) dropped
		{"cr", "ok\rFAIL\b", 0, false, "okFAIL"},
		// bidi override and isolate dropped
		{"bidi", "abc\u202Edef\u2066g", 0, false, "abcdefg"},
		// newline and tab become spaces on one line
		{"one line", "a\nb\tc", 0, false, "a b c"},
		// and stay in multi-line text
		{"multi", "a\nb\tc\x1b", 0, true, "a\nb\tc"},
		// invalid UTF-8 becomes U+FFFD
		{"invalid", "a\xffb", 0, false, "a\uFFFDb"},
		// length cap with a cut mark
		{"cap", "abcdefghij", 5, false, "abcd…"},
		// exactly at the cap: unchanged
		{"at cap", "abcde", 5, false, "abcde"},
	}
	for _, tt := range tests {
		if got := TerminalText(tt.in, tt.max, tt.multi); got != tt.want {
			t.Errorf("%s: TerminalText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("x\x1b", 100_000)
	got := TerminalText(long, 80, false)
	if utf8.RuneCountInString(got) != 80 || strings.ContainsRune(got, 0x1b) {
		t.Errorf("100 KB hostile name: got %d runes, escape kept: %v", utf8.RuneCountInString(got), strings.ContainsRune(got, 0x1b))
	}
}

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "0"},               // no separator
		{999, "999"},           // three digits
		{1000, "1,000"},        // the first separator
		{2016, "2,016"},        // a year-like count
		{-33639, "-33,639"},    // the sign stays in front
		{1234567, "1,234,567"}, // two separators
	} {
		if got := Thousands(c.n); got != c.want {
			t.Errorf("Thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// A TerminalWriter lets through exactly what TerminalText keeps of multi-line text, however the
// stream is cut into writes (a rune split between two writes survives whole), and a carriage
// return only when asked.
func TestTerminalWriter(t *testing.T) {
	in := "Chat é 漢\x1b[2J\x1b]0;owned\x07\r\u202eFORGED\u009b31m\x7f\xff\nnext\tline 😀"
	want := TerminalText(in, 0, true)
	for _, size := range []int{1, 2, 3, 5, len(in)} {
		var b strings.Builder
		w := &TerminalWriter{W: &b}
		for i := 0; i < len(in); i += size {
			n, err := w.Write([]byte(in[i:min(i+size, len(in))]))
			if err != nil || n != min(size, len(in)-i) {
				t.Fatalf("write: %d, %v", n, err)
			}
		}
		if b.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, b.String(), want)
		}
	}
	var b strings.Builder
	w := &TerminalWriter{W: &b, KeepCR: true}
	w.Write([]byte("\rstep 1\x1b[K\rstep 2"))
	if b.String() != "\rstep 1[K\rstep 2" {
		t.Errorf("KeepCR: %q", b.String())
	}
}
