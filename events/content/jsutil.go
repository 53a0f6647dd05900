package content

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isJSSpace reports whether r is in ECMAScript's \s class (WhiteSpace plus
// LineTerminator). It deliberately differs from unicode.IsSpace: U+0085 and
// U+180E are not whitespace to JavaScript, while U+FEFF is.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680,
		0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// isJSLineTerminator reports whether r ends a line for a multiline
// JavaScript regular expression (^ and $ with the m flag, and ".").
func isJSLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

// jsTrim is String.prototype.trim: it strips the \s set from both ends.
func jsTrim(s string) string {
	return strings.TrimFunc(s, isJSSpace)
}

// jsTrimLeft strips the \s set from the start only.
func jsTrimLeft(s string) string {
	return strings.TrimLeftFunc(s, isJSSpace)
}

// jsFields splits s on runs of \s and drops empty pieces, which is what
// s.split(/\s+/).filter(Boolean) does in the reference.
func jsFields(s string) []string {
	return strings.FieldsFunc(s, isJSSpace)
}

// jsToLower approximates String.prototype.toLowerCase closely enough for the
// comparisons this package makes: simple per-rune lower-casing plus the one
// unconditional multi-rune mapping (U+0130 becomes "i" + U+0307). The final
// sigma rule is not applied; it cannot change whether a title matches the
// ASCII section names compared here.
func jsToLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 0x0130 {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// validUTF8 replaces every invalid byte of s with U+FFFD, giving the string a
// JavaScript engine would hold after decoding. Valid input is returned as is.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
