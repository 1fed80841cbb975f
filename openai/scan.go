package openai

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// The fast path for chunk events. encoding/json costs about 2 µs and 8 allocations per
// event; almost every event is a small chunk whose only interesting facts are "does it carry
// a token", the id, the finish_reason and, rarely, a usage/timings/metrics/error object. scanChunk
// walks an event already checked by validJSON (no allocation) and picks exactly
// those facts out; the rare objects are decoded with encoding/json. Any shape it does not
// expect (a key with escapes, a field of an unexpected type, repeated "choices") makes it
// give up with errSlowPath, and the event is decoded by encoding/json into chunkJSON instead,
// so both paths have the same semantics; FuzzScanChunk checks that they agree.

var errSlowPath = errors.New("shape needs the full decoder")

// chunkFacts is what one chat/completions event says.
type chunkFacts struct {
	id                            []byte // raw (escape-free) id, nil when absent
	model                         []byte // raw (escape-free) model, nil when absent
	tok, content, reasoning       bool
	textBytes                     int    // textLen of the token values, summed over the choices
	finish                        []byte // last non-null finish_reason, raw, escape-free
	hasFinish                     bool
	usage, timings, metrics, errv []byte // raw values, nil when absent or null
}

// present reports whether a raw JSON value is a non-empty string, array or object (or any
// other non-null value): the definition of "carries a token" shared with presence.
func present(raw []byte) bool {
	switch string(raw) {
	case "null", `""`, "[]", "{}", "":
		return false
	}
	return true
}

// textLen is the size of a token value as sent (bytes): a string's raw JSON without its
// quotes, any other non-empty value's raw JSON; 0 when the value carries no token (present).
// It bounds the text's bytes from above (an escape counts as sent), which is the safe side for
// servebench.MaxPlausibleOutputTokens.
func textLen(raw []byte) int {
	if !present(raw) {
		return 0
	}
	if raw[0] == '"' {
		return len(raw) - 2
	}
	return len(raw)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"' and whether it held
// a backslash.
func skipString(b []byte, i int) (int, bool) {
	esc := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			return i + 1, esc
		}
	}
	return len(b), esc
}

// skipValue returns the index after the (valid) value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		j, _ := skipString(b, i)
		return j
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// object calls f for each key of the object at b[i] with the index where its value starts;
// f returns the index after the value (skipValue, or the end of its own walk of it, so
// nested objects the scanner reads are walked once). object returns the index after the
// object. b must be valid JSON.
func object(b []byte, i int, f func(key []byte, v0 int) (int, error)) (int, error) {
	if b[i] != '{' {
		return 0, errSlowPath
	}
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return i + 1, nil
	}
	for {
		k1, esc := skipString(b, i)
		if esc {
			return 0, errSlowPath
		}
		key := b[i+1 : k1-1]
		for _, c := range key {
			if c >= 0x80 || ('A' <= c && c <= 'Z') {
				return 0, errSlowPath // encoding/json matches keys case-insensitively
			}
		}
		v0 := skipWS(b, skipWS(b, k1)+1) // past ':'
		v1, err := f(key, v0)
		if err != nil {
			return 0, err
		}
		i = skipWS(b, v1)
		if b[i] == '}' {
			return i + 1, nil
		}
		i = skipWS(b, i+1) // past ','
	}
}

// scanChunk fills facts from a valid JSON event, or returns errSlowPath.
func scanChunk(b []byte, facts *chunkFacts) error {
	*facts = chunkFacts{}
	i := skipWS(b, 0)
	seenChoices := false
	var seen uint8 // bits of usage, timings, metrics, error
	_, err := object(b, i, func(key []byte, v0 int) (int, error) {
		if string(key) == "choices" {
			if seenChoices {
				return 0, errSlowPath
			}
			seenChoices = true
			if b[v0] != '[' {
				if b[v0] == 'n' { // null
					return v0 + 4, nil
				}
				return 0, errSlowPath
			}
			return choices(b, v0, facts)
		}
		v1 := skipValue(b, v0)
		v := b[v0:v1]
		switch string(key) {
		case "id": // the first non-empty string, as firstString
			if v[0] == '"' && len(facts.id) == 0 {
				if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
					return 0, errSlowPath // escapes and invalid UTF-8 need unquoting
				}
				facts.id = v[1 : len(v)-1]
			}
		case "model": // the first non-empty string, as firstString
			if v[0] == '"' && len(facts.model) == 0 {
				if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
					return 0, errSlowPath
				}
				facts.model = v[1 : len(v)-1]
			}
		case "usage", "timings", "metrics", "error":
			var bit uint8
			switch string(key) {
			case "usage":
				bit, facts.usage = 1, nonNull(v)
			case "timings":
				bit, facts.timings = 2, nonNull(v)
			case "metrics":
				bit, facts.metrics = 4, nonNull(v)
			default:
				bit, facts.errv = 8, nonNull(v)
			}
			if seen&bit != 0 {
				return 0, errSlowPath // encoding/json would merge the two objects
			}
			seen |= bit
		}
		return v1, nil
	})
	return err
}

func nonNull(v []byte) []byte {
	if string(v) == "null" {
		return nil
	}
	return v
}

// choices reads the choices array starting at b[i] == '[' and returns the index after it.
func choices(b []byte, i int, facts *chunkFacts) (int, error) {
	i = skipWS(b, i+1)
	if b[i] == ']' {
		return i + 1, nil
	}
	for {
		if b[i] == 'n' { // null element: a zero choice
			i = skipValue(b, i)
		} else {
			var content, reasoning, rc, tools, text int // textLen of each value
			end, err := object(b, i, func(key []byte, v0 int) (int, error) {
				if string(key) == "delta" {
					if b[v0] == 'n' { // null: encoding/json leaves the struct as it was
						return v0 + 4, nil
					}
					return object(b, v0, func(k []byte, w0 int) (int, error) {
						w1 := skipValue(b, w0)
						w := b[w0:w1]
						switch string(k) {
						case "content":
							content = textLen(w)
						case "reasoning":
							reasoning = textLen(w)
						case "reasoning_content":
							rc = textLen(w)
						case "tool_calls":
							tools = textLen(w)
						}
						return w1, nil
					})
				}
				v1 := skipValue(b, v0)
				v := b[v0:v1]
				switch string(key) {
				case "text":
					text = textLen(v)
				case "finish_reason":
					switch {
					case string(v) == "null":
					case v[0] == '"' && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v):
						if len(v) > 2 {
							facts.finish, facts.hasFinish = v[1:len(v)-1], true
						}
					default:
						return 0, errSlowPath
					}
				}
				return v1, nil
			})
			if err != nil {
				return 0, err
			}
			i = end
			if content > 0 || text > 0 {
				facts.content = true
			}
			if n := content + text + reasoning + rc + tools; n > 0 {
				facts.tok = true
				facts.textBytes += n
			}
			if reasoning > 0 || rc > 0 {
				facts.reasoning = true
			}
		}
		i = skipWS(b, i)
		if b[i] == ']' {
			return i + 1, nil
		}
		i = skipWS(b, i+1)
	}
}
