package openai

// validJSON reports whether b is one JSON value (RFC 8259) with optional surrounding
// whitespace: exactly what encoding/json.Valid accepts, including its limit of 10,000
// nested arrays and objects and its acceptance of any byte ≥ 0x80 inside strings.
// encoding/json.Valid runs a byte-at-a-time state machine with an indirect call per byte
// and was two thirds of the client's cost per event; this single pass is several times
// faster. FuzzValidJSON checks it against encoding/json.Valid.
func validJSON(b []byte) bool {
	i, ok := jsonValue(b, skipWS(b, 0), 0)
	return ok && skipWS(b, i) == len(b)
}

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

// jsonValue checks the value starting at b[i] (whitespace already skipped), inside depth
// arrays and objects, and returns the index after it.
func jsonValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return jsonString(b, i)
	case c == '{' || c == '[':
		return jsonContainer(b, i, depth+1)
	case c == '-' || ('0' <= c && c <= '9'):
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, false
}

// jsonContainer checks the object or array starting at b[i], the depth-th one it is nested in:
// members are `"key": value` in an object and values in an array, separated by commas.
func jsonContainer(b []byte, i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	object, end := b[i] == '{', byte(']')
	if object {
		end = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			if i, ok = jsonString(b, i); !ok {
				return i, false
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
		if i, ok = jsonValue(b, i, depth); !ok {
			return i, false
		}
		if i = skipWS(b, i); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case end:
			return i + 1, true
		case ',':
			i = skipWS(b, i+1)
		default:
			return i, false
		}
	}
}

// jsonString checks the string starting at b[i] == '"': no control characters, only JSON's
// escapes.
func jsonString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch c {
		case '"':
			return i + 1, true
		case '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return len(b), false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? starting at b[i].
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return i, false
}
