package servebench

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret wherever it appears in an output.
const Redacted = "[redacted]"

// Redact replaces every occurrence of each non-empty secret in s with [redacted]. Secrets
// shorter than 4 bytes are ignored (replacing them would garble text without protecting
// anything). Apply it before clipping a message, so a cut cannot leave part of a secret.
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return s
}

// TerminalText makes text that came from a server or a plan safe to print on a terminal or in
// a heading: it drops every control character (ESC, BEL, C1 codes such as the OSC and CSI
// introducers, DEL) and every bidirectional override or isolate, keeps newline and tab only
// when multiLine is true (a tab becomes a space otherwise, a newline a space too), replaces
// invalid UTF-8, and cuts the result to at most maxRunes runes (0 = no limit), ending a cut
// with "…". The full value stays in the JSON files; this is only for display.
func TerminalText(s string, maxRunes int, multiLine bool) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !clean || unsafeRune(r) || (!multiLine && (r == '\n' || r == '\t')) {
			clean = false
			break
		}
	}
	if !clean {
		var b strings.Builder
		for _, r := range s { // invalid bytes come out as U+FFFD
			switch {
			case r == '\n' || r == '\t':
				if !multiLine {
					r = ' '
				}
			case unsafeRune(r):
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	if maxRunes > 0 && utf8.RuneCountInString(s) > maxRunes {
		n := 0
		for i := range s {
			if n == maxRunes-1 {
				return s[:i] + "…"
			}
			n++
		}
	}
	return s
}

// TerminalWriter passes everything written through the sanitiser before W: what TerminalText
// drops in multi-line text (every control character but newline and tab, bidirectional
// controls) never reaches W, and invalid UTF-8 becomes U+FFFD. It sanitises whole streams (a
// renderer's output, a command's stdout and stderr), so a string that missed its own
// TerminalText still cannot drive the terminal. A rune split across two writes is held until
// its last byte comes. Safe for concurrent use.
type TerminalWriter struct {
	W io.Writer
	// KeepCR passes carriage returns, which a live progress line uses to redraw itself; text
	// from outside has its own dropped by TerminalText before it is printed.
	KeepCR bool

	mu      sync.Mutex
	pending []byte // the start of a rune whose remaining bytes have not been written yet
}

// Write sanitises p and writes it to W; it reports all of p written when W took the result.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := p
	if len(t.pending) > 0 {
		b = append(t.pending, p...)
		t.pending = nil
	}
	// hold back an incomplete rune at the end (at most 3 bytes)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				t.pending = append([]byte(nil), b[i:]...)
				b = b[:i]
			}
			break
		}
	}
	var out []byte
	clean := true
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		bad := (r == utf8.RuneError && n == 1) || (unsafeRune(r) && !(t.KeepCR && r == '\r'))
		if bad && clean {
			clean = false
			out = append(make([]byte, 0, len(b)), b[:i]...)
		}
		switch {
		case r == utf8.RuneError && n == 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case bad:
		case !clean:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if clean {
		out = b
	}
	if _, err := t.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// unsafeRune reports control characters other than newline and tab, and the Unicode
// bidirectional controls that can reorder what a terminal shows.
func unsafeRune(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	if unicode.IsControl(r) {
		return true
	}
	switch {
	case r >= 0x202A && r <= 0x202E, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069,                // LRI, RLI, FSI, PDI
		r == 0x200E || r == 0x200F || r == 0x061C: // LRM, RLM, ALM
		return true
	}
	return false
}

// Thousands writes n with comma separators: 2016 → "2,016", −33639 → "-33,639".
func Thousands(n int) string {
	neg := n < 0
	s := strconv.Itoa(n)
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
