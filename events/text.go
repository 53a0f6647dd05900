package events

import (
	"strings"
	"unicode/utf8"
)

// Texts from outside (a model's answer, a search result, a provider's
// error) go into events bounded: valid UTF-8 without NUL (which Postgres
// text and jsonb refuse), cut to a number of bytes.

// Clean makes s valid UTF-8 without NUL bytes: invalid bytes become
// U+FFFD, NULs are dropped.
func Clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// Clip cuts s to at most n bytes on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
