package parse

import (
	"regexp"
	"unicode/utf8"
)

// scanResult is what scanning one JSON value that starts at an opening
// bracket found.
type scanResult struct {
	// complete: the value ends at end (exclusive).
	complete bool
	end      int
	// truncated: the input ended while the value was still a valid prefix.
	// repair holds what must be appended when the cut is unambiguous
	// (repairable), else why holds the reason it is not.
	truncated  bool
	repairable bool
	repair     string
	why        string
	// otherwise: not JSON at this position; why says what broke, at where,
	// after tokens complete tokens (the opening bracket counts as one).
	at     int
	tokens int
}

type scanState int

const (
	stValue        scanState = iota // a value must follow (after ':' or ',' in an array)
	stValueOrClose                  // just after '['
	stKeyOrClose                    // just after '{'
	stKey                           // after ',' in an object
	stColon                         // after a key
	stCommaOrClose                  // after a complete value inside a container
)

var numberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// scanValue scans the JSON object or array starting at s[0] ('{' or '[').
// It follows RFC 8259 strictly (no comments, no trailing commas, no raw
// control characters in strings).
func scanValue(s string) scanResult {
	var stack []byte // open containers, '{' or '['
	state := stValue
	i := 0
	closers := func(extra string) string {
		out := []byte(extra)
		for j := len(stack) - 1; j >= 0; j-- {
			if stack[j] == '{' {
				out = append(out, '}')
			} else {
				out = append(out, ']')
			}
		}
		return string(out)
	}
	cut := func(why string) scanResult { return scanResult{truncated: true, why: why} }
	tokens := 0
	bad := func(why string) scanResult { return scanResult{why: why, at: i, tokens: tokens} }
	// afterValue moves to the state following a complete value, and reports
	// whether the top-level value is now complete.
	afterValue := func() bool {
		if len(stack) == 0 {
			return true
		}
		state = stCommaOrClose
		return false
	}
	for ; ; tokens++ {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			switch state {
			case stCommaOrClose:
				return scanResult{truncated: true, repairable: true, repair: closers("")}
			case stValueOrClose, stKeyOrClose:
				return cut("output ends right after an opening bracket")
			case stKey, stColon:
				return cut("output ends inside an object, before a member's value")
			default:
				return cut("output ends where a value was expected")
			}
		}
		c := s[i]
		switch state {
		case stValue, stValueOrClose:
			if state == stValueOrClose && c == ']' {
				stack = stack[:len(stack)-1]
				i++
				if afterValue() {
					return scanResult{complete: true, end: i}
				}
				continue
			}
			switch {
			case c == '{' || c == '[':
				stack = append(stack, c)
				if c == '{' {
					state = stKeyOrClose
				} else {
					state = stValueOrClose
				}
				i++
				continue
			case c == '"':
				end, ok, eofWhy := scanString(s, i)
				if !ok {
					if eofWhy == "" {
						return bad("invalid string")
					}
					if eofWhy != "ok" {
						return cut(eofWhy)
					}
					// A string value cut at the very end: closing the quote
					// and the open containers is the only possible repair.
					return scanResult{truncated: true, repairable: true, repair: closers(`"`)}
				}
				i = end
			case c == '-' || (c >= '0' && c <= '9'):
				j := i
				for j < len(s) && (s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || (s[j] >= '0' && s[j] <= '9')) {
					j++
				}
				if j >= len(s) {
					return cut("output ends inside a number, whose remaining digits are unknown")
				}
				if !numberRE.MatchString(s[i:j]) {
					return bad("invalid number")
				}
				i = j
			case c == 't' || c == 'f' || c == 'n':
				lit := map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
				rest := s[i:]
				if len(rest) < len(lit) {
					if lit[:len(rest)] == rest {
						return cut("output ends inside a literal")
					}
					return bad("invalid literal")
				}
				if rest[:len(lit)] != lit {
					return bad("invalid literal")
				}
				i += len(lit)
			default:
				return bad("unexpected character where a value was expected")
			}
			if afterValue() {
				return scanResult{complete: true, end: i}
			}
		case stKeyOrClose, stKey:
			if state == stKeyOrClose && c == '}' {
				stack = stack[:len(stack)-1]
				i++
				if afterValue() {
					return scanResult{complete: true, end: i}
				}
				continue
			}
			if c != '"' {
				return bad("expected an object key")
			}
			end, ok, eofWhy := scanString(s, i)
			if !ok {
				if eofWhy == "" {
					return bad("invalid key")
				}
				return cut("output ends inside an object key")
			}
			i = end
			state = stColon
		case stColon:
			if c != ':' {
				return bad("expected ':' after an object key")
			}
			i++
			state = stValue
		case stCommaOrClose:
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				i++
				if top == '{' {
					state = stKey
				} else {
					state = stValue
				}
			case (c == '}' && top == '{') || (c == ']' && top == '['):
				stack = stack[:len(stack)-1]
				i++
				if afterValue() {
					return scanResult{complete: true, end: i}
				}
			default:
				return bad("expected ',' or a closing bracket")
			}
		}
	}
}

// scanString scans the string starting at s[i] == '"'. It returns the index
// after the closing quote and ok; or !ok with eofWhy "" for a syntax error,
// "ok" when the input ends inside the string at a clean point (a missing
// closing quote is the only repair), or the reason the cut is ambiguous.
func scanString(s string, i int) (end int, ok bool, eofWhy string) {
	j := i + 1
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return j + 1, true, ""
		case c == '\\':
			if j+1 >= len(s) {
				return 0, false, "output ends inside an escape sequence"
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := 0; k < 4; k++ {
					if j+2+k >= len(s) {
						return 0, false, "output ends inside an escape sequence"
					}
					if !isHex(s[j+2+k]) {
						return 0, false, ""
					}
				}
				j += 6
			default:
				return 0, false, ""
			}
		case c < 0x20:
			return 0, false, ""
		default:
			j++
		}
	}
	// The input ended inside the string. A multi-byte character cut in half
	// is not a clean point.
	if !utf8.ValidString(s[i+1:]) {
		r, _ := utf8.DecodeLastRuneInString(s)
		if r == utf8.RuneError {
			return 0, false, "output ends inside a multi-byte character"
		}
	}
	return 0, false, "ok"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
