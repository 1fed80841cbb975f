package dist

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"unicode"
)

// MakeToken is the command that prints a good token (16 random bytes as 32 hex digits).
const MakeToken = "openssl rand -hex 16"

// MinTokenBits and MinTokenChars are the strength a token must have (see TokenBits).
const (
	MinTokenBits  = 128
	MinTokenChars = 32
)

// TokenBits estimates a token's strength (bits) as a guesser sees it:
//
//	bits = length × log2(alphabet)
//
// where length counts characters and alphabet is the size of the character classes the token
// uses: 16 when it is only hex digits (what MakeToken prints), otherwise 10 for digits, 26 for
// lower-case, 26 for upper-case and 33 for any other character, summed over the classes present.
// It overrates a long token made of words or a pattern; it catches short and repetitive ones.
func TokenBits(token string) float64 {
	var digit, lower, upper, other, hexOnly bool
	hexOnly = true
	n := 0
	for _, r := range token {
		n++
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z':
			lower = true
			hexOnly = hexOnly && r <= 'f'
		case r >= 'A' && r <= 'Z':
			upper = true
			hexOnly = hexOnly && r <= 'F'
		default:
			other = true
			hexOnly = false
		}
	}
	alphabet := 0
	if hexOnly {
		alphabet = 16
	} else {
		for _, c := range []struct {
			on   bool
			size int
		}{{digit, 10}, {lower, 26}, {upper, 26}, {other, 33}} {
			if c.on {
				alphabet += c.size
			}
		}
	}
	if n == 0 || alphabet < 2 {
		return 0
	}
	return float64(n) * math.Log2(float64(alphabet))
}

// CheckToken refuses a token a guesser could find: one with fewer than MinTokenChars
// characters, fewer than MinTokenBits bits (TokenBits), a character that makes up more than a
// quarter of it, or a blank or control character. The error names the variable envName (where
// the token came from) and the command that makes a good one; it never quotes the token.
func CheckToken(token, envName string) error {
	fix := fmt.Sprintf("make one with  export %s=$(%s)  and give every worker the same value", envName, MakeToken)
	if token == "" {
		return fmt.Errorf("no token: %s", fix)
	}
	count := map[rune]int{}
	n := 0
	for _, r := range token {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("$%s holds a blank or control character: %s", envName, fix)
		}
		count[r]++
		n++
	}
	bits := TokenBits(token)
	switch {
	case n < MinTokenChars || bits < MinTokenBits:
		return fmt.Errorf("$%s is too weak (%d characters, about %.0f bits; at least %d characters and %d bits are needed, because whoever sees one handshake can test guesses offline): %s",
			envName, n, bits, MinTokenChars, MinTokenBits, fix)
	}
	for _, c := range count {
		if 4*c > n {
			return fmt.Errorf("$%s is too weak (one character makes up %d of its %d characters): %s", envName, c, n, fix)
		}
	}
	return nil
}

// ParseCoordinator reads a coordinator address as a person types it: HOST:PORT or
// tcp://HOST:PORT (a trailing slash is forgiven). It returns HOST:PORT, or an error that gives
// the accepted form, for example for http://HOST:PORT (the protocol is not HTTP).
func ParseCoordinator(s string) (string, error) {
	in := strings.TrimSpace(s)
	rest := in
	if scheme, after, ok := strings.Cut(in, "://"); ok {
		rest = strings.TrimSuffix(after, "/")
		switch strings.ToLower(scheme) {
		case "tcp":
		case "http", "https":
			return "", fmt.Errorf("--coordinator %q: the coordinator speaks servebench's own protocol over TCP, not HTTP: write it --coordinator tcp://%s (the host and port of the coordinator's --listen)", s, orText(hostPortOf(rest), "HOST:PORT"))
		default:
			return "", fmt.Errorf("--coordinator %q: unknown scheme %q: write it --coordinator tcp://HOST:PORT (the host and port of the coordinator's --listen)", s, scheme)
		}
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || strings.ContainsAny(rest, "/?#@") {
		return "", fmt.Errorf("--coordinator %q is not HOST:PORT: write it --coordinator tcp://HOST:PORT, for example tcp://10.0.0.5:7070 (the host and port of the coordinator's --listen)", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("--coordinator %q: port %q is not a number from 1 to 65535: write it --coordinator tcp://HOST:PORT", s, port)
	}
	if host == "" {
		return "", fmt.Errorf("--coordinator %q has no host: write it --coordinator tcp://HOST:PORT, for example tcp://10.0.0.5:%s", s, port)
	}
	return net.JoinHostPort(host, port), nil
}

// hostPortOf is the host:port at the start of an URL's rest (its path dropped), or "".
func hostPortOf(rest string) string {
	hp, _, _ := strings.Cut(rest, "/")
	if _, _, err := net.SplitHostPort(hp); err != nil {
		return ""
	}
	return hp
}
