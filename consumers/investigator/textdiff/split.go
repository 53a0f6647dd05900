package textdiff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Paragraphs splits text into paragraphs: every line break ends one, blank
// lines and surrounding whitespace are dropped. Posts arrive as normalized
// text where a single newline already separates blocks, so a blank line is
// not required.
func Paragraphs(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if p := strings.TrimSpace(line); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Sentences splits one paragraph into sentences, each with its whitespace
// collapsed to single spaces. A sentence ends at '.', '!', '?' or '…'
// (possibly repeated and followed by closing quotes or brackets) when
// whitespace and then an upper-case letter, a digit or an opening quote or
// bracket follow. A period does not end a sentence after a known
// abbreviation ("Dr.", "No." before a number), a dotted abbreviation or
// acronym ("e.g.", "U.S.", "p.m.") or a single initial ("J. Smith"). The
// ideographic terminators '。', '！' and '？' always end one. The splitter
// errs on the side of not splitting: two sentences on one line only make a
// diff coarser.
func Sentences(paragraph string) []string {
	text := strings.Join(strings.Fields(paragraph), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJKTerminator(r):
			end := i + size
			end = skipClosers(text, end)
			out = appendSentence(out, text[start:end])
			start = skipSpaces(text, end)
			i = start
			continue
		case isTerminator(r):
			end := i + size
			for end < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[end:])
				if !isTerminator(r2) {
					break
				}
				end += s2
			}
			end = skipClosers(text, end)
			if endsSentence(text, start, i, end, r) {
				out = appendSentence(out, text[start:end])
				start = skipSpaces(text, end)
				i = start
				continue
			}
			i = end
			continue
		}
		i += size
	}
	return appendSentence(out, text[start:])
}

func appendSentence(out []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		out = append(out, s)
	}
	return out
}

// endsSentence decides whether the terminator run text[at:end] (starting
// with rune term) closes the sentence that began at start.
func endsSentence(text string, start, at, end int, term rune) bool {
	// Whitespace must follow, then a plausible sentence opening.
	if end >= len(text) || text[end] != ' ' {
		return false
	}
	next, _ := utf8.DecodeRuneInString(text[end+1:])
	if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !isOpener(next) {
		return false
	}
	if term != '.' || end-at > 1 && text[at+1] == '.' {
		// "!", "?", "…" and "..." end a sentence whatever precedes them.
		return true
	}
	return !isAbbreviation(lastWord(text[start:at]), next)
}

// lastWord returns the word right before a period, without leading
// punctuation such as an opening parenthesis or quote.
func lastWord(s string) string {
	i := strings.LastIndexByte(s, ' ')
	w := s[i+1:]
	return strings.TrimLeftFunc(w, func(r rune) bool { return isOpener(r) })
}

// titles are lower-cased abbreviations (without their period) that come
// before a name, so a period after them never ends a sentence. "etc." is
// left out on purpose: it ends sentences as often as not.
var titles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "mx": true, "dr": true, "prof": true,
	"sr": true, "jr": true, "st": true, "mt": true, "rev": true, "gen": true,
	"col": true, "lt": true, "sgt": true, "capt": true, "gov": true, "sen": true,
	"rep": true, "pres": true, "hon": true, "vs": true, "cf": true,
}

// numbered are abbreviations that precede a number ("No. 5", "Fig. 2",
// "Jan. 6"); before anything else they are ordinary words ("I said no.").
var numbered = map[string]bool{
	"no": true, "nos": true, "vol": true, "fig": true, "figs": true, "eq": true,
	"ch": true, "sec": true, "p": true, "pp": true, "ca": true, "approx": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true,
	"aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

// isAbbreviation reports whether word, followed by a period and then the
// rune next, is an abbreviation rather than the end of a sentence.
func isAbbreviation(word string, next rune) bool {
	if word == "" {
		return false
	}
	lower := strings.ToLower(word)
	if titles[lower] || numbered[lower] && unicode.IsDigit(next) {
		return true
	}
	// A single letter is an initial ("J. R. R. Tolkien").
	if utf8.RuneCountInString(word) == 1 {
		r, _ := utf8.DecodeRuneInString(word)
		return unicode.IsLetter(r)
	}
	// Dotted abbreviations and acronyms: "e.g", "i.e", "U.S", "p.m".
	if strings.Contains(word, ".") {
		for part := range strings.SplitSeq(word, ".") {
			if utf8.RuneCountInString(part) > 2 {
				return false
			}
		}
		return true
	}
	return false
}

func isTerminator(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

func isCJKTerminator(r rune) bool { return r == '。' || r == '！' || r == '？' }

func isOpener(r rune) bool {
	switch r {
	case '"', '\'', '“', '‘', '«', '„', '(', '[', '¿', '¡':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', '»', ')', ']':
		return true
	}
	return false
}

func skipClosers(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isCloser(r) {
			break
		}
		i += size
	}
	return i
}

func skipSpaces(text string, i int) int {
	for i < len(text) && text[i] == ' ' {
		i++
	}
	return i
}
