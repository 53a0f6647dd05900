package queries

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// word is one word of a text, as written.
type word struct {
	text  string // as written, a possessive "'s" removed, at most maxWordBytes
	lower string
	sent  int  // the sentence it belongs to
	first bool // the first word of its sentence
	upper bool // starts with an upper-case letter
	caps  bool // an acronym: two or more letters, all upper case ("NASA", "ÖVP")
	digit bool // has a digit ("9,000", "2024", "COVID-19")
	comma bool // a comma or semicolon follows it
	start int  // byte offset in the text
}

// clean makes s safe to read: valid UTF-8, no control characters (NUL
// included), at most limit bytes cut on a rune boundary.
func clean(s string, limit int) string {
	s = truncate(strings.ToValidUTF8(truncate(s, limit), " "), limit)
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// titleAbbreviations end with a dot that does not end a sentence.
var titleAbbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "sen": true, "rep": true,
	"gov": true, "gen": true, "jr": true, "sr": true, "inc": true, "co": true, "corp": true, "ltd": true,
	"vs": true, "no": true, "mt": true, "ft": true, "hr": true, "fr": true, "nr": true, "bzw": true, "ca": true,
}

// split reads the words of s: runs of letters, digits and marks, joined by
// an apostrophe or hyphen between them ("don't", "COVID-19",
// "U-Ausschuss"), a dot or comma between digits ("9,210", "2.5"), a dot
// between single letters ("U.S."), a currency sign before digits ("$9")
// and a percent sign after them ("40%"). Sentences end at ". ", "! ",
// "? " and line breaks, except after a title ("Mr.") or an initial ("J.").
func split(s string) []word {
	var out []word
	sent, first := 0, true
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n':
			if !first {
				sent, first = sent+1, true
			}
			i += size
			continue
		case '。', '！', '？':
			if !first {
				sent, first = sent+1, true
			}
			i += size
			continue
		case '.', '!', '?', '…':
			end := i + size
			if end >= len(s) || s[end] == ' ' || s[end] == '\n' || s[end] == '"' || s[end] == ')' {
				if r != '.' || len(out) == 0 || !abbreviation(out[len(out)-1]) {
					if !first {
						sent, first = sent+1, true
					}
				}
			}
			i = end
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !(strings.ContainsRune("$€£¥", r) && i+size < len(s) && isDigitByte(s[i+size])) {
			i += size
			continue
		}
		start := i
		j := i + size
		for j < len(s) {
			r2, n := utf8.DecodeRuneInString(s[j:])
			if isWordRune(r2) {
				if c, p := script(r2), script(lastRune(s[start:j])); c != p && (c == 1 || p == 1) {
					break // Japanese: Hiragana particles separate the words
				}
				j += n
				continue
			}
			if j+n < len(s) {
				prev, _ := utf8.DecodeLastRuneInString(s[start:j])
				nxt, _ := utf8.DecodeRuneInString(s[j+n:])
				joins := false
				switch r2 {
				case '\'', '’', '-', '‐':
					joins = isWordRune(prev) && isWordRune(nxt)
				case ',', '.':
					joins = unicode.IsDigit(prev) && unicode.IsDigit(nxt) ||
						r2 == '.' && unicode.IsLetter(nxt) && singleLetterTail(s[start:j])
				}
				if joins {
					j += n
					continue
				}
			}
			if r2 == '%' && unicode.IsDigit(lastRune(s[start:j])) {
				j += n
			}
			break
		}
		// "U.S." keeps its last dot.
		if j < len(s) && s[j] == '.' && singleLetterTail(s[start:j]) && strings.Contains(s[start:j], ".") {
			j++
		}
		w := newWord(s[start:j], start, sent, first)
		w.comma = j < len(s) && (s[j] == ',' || s[j] == ';')
		out = append(out, w)
		first = false
		i = j
	}
	return out
}

// script tells Hiragana (1) from Han and Katakana (2) and the rest (0):
// Japanese, written without spaces, splits where Hiragana starts or ends.
func script(r rune) int {
	switch {
	case r < 0x3000:
		return 0
	case unicode.Is(unicode.Hiragana, r):
		return 1
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Katakana, r):
		return 2
	}
	return 0
}

// particle reports whether w is a short run of Hiragana: a Japanese
// particle or inflection, not a keyword.
func particle(w string) bool {
	n := 0
	for _, r := range w {
		if script(r) != 1 {
			return false
		}
		n++
	}
	return n > 0 && n <= 2
}

func isDigitByte(b byte) bool { return b >= '0' && b <= '9' }

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// singleLetterTail reports whether s ends with a lone letter ("U", "U.S").
func singleLetterTail(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	if !unicode.IsLetter(r) {
		return false
	}
	rest := s[:len(s)-n]
	if rest == "" {
		return true
	}
	p := lastRune(rest)
	return p == '.'
}

// abbreviation reports whether a dot after w does not end a sentence.
func abbreviation(w word) bool {
	if titleAbbreviations[w.lower] {
		return true
	}
	if strings.HasSuffix(w.text, ".") {
		return true // "U.S."
	}
	return utf8.RuneCountInString(w.text) == 1 && w.upper
}

// maxWordBytes bounds a word, so that three words always fit in a query.
const maxWordBytes = 60

func newWord(text string, start, sent int, first bool) word {
	for _, suffix := range []string{"'s", "’s"} {
		if len(text) > len(suffix)+1 && strings.HasSuffix(strings.ToLower(text), suffix) {
			text = text[:len(text)-len(suffix)]
		}
	}
	text = truncate(text, maxWordBytes)
	w := word{text: text, lower: strings.ToLower(text), sent: sent, first: first, start: start}
	r, _ := utf8.DecodeRuneInString(text)
	w.upper = unicode.IsUpper(r) || unicode.IsTitle(r)
	letters, uppers := 0, 0
	for _, c := range text {
		switch {
		case unicode.IsDigit(c):
			w.digit = true
		case unicode.IsLetter(c):
			letters++
			if unicode.IsUpper(c) {
				uppers++
			}
		}
	}
	w.caps = letters >= 2 && uppers == letters
	return w
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
