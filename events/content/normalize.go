package content

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns the canonical form of observed or extracted text; its
// SHA-256 is the content hash, so it must equal the reference normalizeContent
// exactly. The steps run in the reference's order:
//
//  1. Unicode NFC;
//  2. typographic folding: U+201C/U+201D to '"', U+2018/U+2019 to "'",
//     U+2010..U+2015 to '-', U+2026 to "...";
//  3. deletion of U+200B..U+200D and U+FEFF;
//  4. every run of JavaScript \s whitespace becomes one space;
//  5. leading and trailing whitespace is trimmed.
//
// Because deletion (3) happens after NFC (1), deleting a zero-width character
// can leave a base and a combining mark adjacent but uncomposed. The reference
// keeps that output, and so do we; Normalize is therefore idempotent except on
// such inputs (see FuzzNormalize).
func Normalize(s string) string {
	s = norm.NFC.String(validUTF8(s))

	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for _, r := range s {
		switch {
		case r >= 0x200B && r <= 0x200D, r == 0xFEFF:
			// Deleted before whitespace collapsing, so it neither separates
			// nor splits a whitespace run.
			continue
		case isJSSpace(r):
			pendingSpace = true
			continue
		}
		if pendingSpace && b.Len() > 0 {
			b.WriteByte(' ')
		}
		pendingSpace = false
		switch {
		case r == 0x201C || r == 0x201D:
			b.WriteByte('"')
		case r == 0x2018 || r == 0x2019:
			b.WriteByte('\'')
		case r >= 0x2010 && r <= 0x2015:
			b.WriteByte('-')
		case r == 0x2026:
			b.WriteString("...")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WordCount counts whitespace-delimited words the way the reference does
// (text.split(/\s+/).filter(Boolean).length). Investigations are refused above
// WordCountLimit words, so the count must not drift from the extension's.
func WordCount(text string) int {
	n := 0
	inWord := false
	for _, r := range validUTF8(text) {
		if isJSSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			n++
			inWord = true
		}
	}
	return n
}

// WordCountLimit is the word count above which posts are not investigated.
const WordCountLimit = 10000
