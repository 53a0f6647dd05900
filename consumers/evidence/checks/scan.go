package checks

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tWord tokKind = iota + 1 // a run of letters, lower-cased
	tNum                     // a run of ASCII digits with its separators, as written
	tSym                     // any other single character
)

// token is one piece of a text. space records whether whitespace (or the
// start of the text) comes before it: "9k" is a number with a word attached,
// "9 k" is not.
type token struct {
	text  string
	kind  tokKind
	space bool
}

// groupSpaces are the spaces that may separate thousands: "9 210".
func isGroupSpace(r rune) bool {
	return r == ' ' || r == '\u00a0' || r == '\u2009' || r == '\u202f'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// scan splits s (at most limit bytes of it) into tokens. Whitespace, control
// characters and bytes that are not UTF-8 separate tokens and are dropped.
func scan(s string, limit int) []token {
	if len(s) > limit {
		s = s[:limit]
	}
	toks := make([]token, 0, len(s)/4)
	space := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1, unicode.IsSpace(r), unicode.IsControl(r):
			space = true
			i += size
		case isDigit(s[i]): // an ASCII digit is its own rune
			end := scanNumber(s, i)
			toks = append(toks, token{text: s[i:end], kind: tNum, space: space})
			space = false
			i = end
		case unicode.IsLetter(r):
			end := i + size
			for end < len(s) {
				r2, n := utf8.DecodeRuneInString(s[end:])
				if !unicode.IsLetter(r2) && !unicode.Is(unicode.Mn, r2) && !unicode.Is(unicode.Mc, r2) {
					break
				}
				end += n
			}
			toks = append(toks, token{text: strings.ToLower(s[i:end]), kind: tWord, space: space})
			space = false
			i = end
		default:
			toks = append(toks, token{text: s[i : i+size], kind: tSym, space: space})
			space = false
			i += size
		}
	}
	return toks
}

// scanNumber returns the end of the numeric chunk starting at i: digits,
// separators (',' or '.') each followed by a digit, thousands separated by
// single spaces ("9 210", only after a first group of one to three digits
// and only before exactly three digits), and an exponent ("1e9").
func scanNumber(s string, i int) int {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	spaced := j-i <= 3 // a first group that space grouping may follow
	for {
		if j+1 < len(s) && (s[j] == ',' || s[j] == '.') && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			spaced = false
			continue
		}
		if spaced && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			k := j + size
			if isGroupSpace(r) && k+3 <= len(s) && isDigit(s[k]) && isDigit(s[k+1]) && isDigit(s[k+2]) &&
				(k+3 == len(s) || !isDigit(s[k+3])) {
				j = k + 3
				continue
			}
		}
		break
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			// "2e" followed by letters is a word ("2eme"), not an exponent.
			if r, _ := utf8.DecodeRuneInString(s[k:]); k == len(s) || !unicode.IsLetter(r) {
				j = k
			}
		}
	}
	return j
}

// number is a numeral as written.
type number struct {
	value float64
	// decimals is the number of digits after the decimal separator; exp
	// the written exponent; zeros the trailing zeros of an integer.
	decimals, exp, zeros int
	// plain: only digits, no separator or exponent ("1975", not "1,975").
	plain  bool
	digits int // digits before the decimal separator
}

// maxNumeralBytes bounds a numeral; longer runs are not read as numbers.
const maxNumeralBytes = 40

// parseNumber reads a numeric chunk from scanNumber. Grouping must be
// regular: "9,210" and "1.234.567" are thousands, "9.21" and "9 210,5"
// decimals; "1,5", "192.168.1.1" and "1,2,3" are not numbers. A value that
// is not finite (1e400) is not a number either.
func parseNumber(raw string) (number, bool) {
	if raw == "" || len(raw) > maxNumeralBytes {
		return number{}, false
	}
	mant, exp := raw, 0
	if k := strings.IndexAny(raw, "eE"); k >= 0 {
		e, err := strconv.Atoi(raw[k+1:])
		if err != nil || strings.ContainsAny(raw[:k], ", \u00a0\u2009\u202f") {
			return number{}, false
		}
		mant, exp = raw[:k], e
	}
	spaced := strings.ContainsFunc(mant, isGroupSpace)
	if spaced {
		mant = strings.Map(func(r rune) rune {
			if isGroupSpace(r) {
				return -1
			}
			return r
		}, mant)
	}
	intPart, frac, ok := splitSeparators(mant, spaced)
	if !ok {
		return number{}, false
	}
	n := number{decimals: len(frac), exp: exp, digits: len(intPart), plain: intPart == raw}
	if frac == "" && exp == 0 {
		trimmed := strings.TrimRight(intPart, "0")
		if trimmed != "" {
			n.zeros = len(intPart) - len(trimmed)
		}
	}
	lit := intPart
	if frac != "" {
		lit += "." + frac
	}
	if exp != 0 {
		lit += "e" + strconv.Itoa(exp)
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil || !finite(v) {
		return number{}, false
	}
	n.value = v
	return n, true
}

// splitSeparators returns the integer digits and the fraction digits of a
// mantissa, or false when its separators are irregular.
func splitSeparators(m string, spaced bool) (intPart, frac string, ok bool) {
	commas, dots := strings.Count(m, ","), strings.Count(m, ".")
	switch {
	case commas == 0 && dots == 0:
		return m, "", true
	case spaced: // "9 210,5", "9 210.5": the one separator left is decimal
		if commas+dots != 1 {
			return "", "", false
		}
		k := strings.IndexAny(m, ",.")
		return m[:k], m[k+1:], true
	case dots == 0: // "9,210", "1,234,567"
		g, ok := groups(m, ",")
		return g, "", ok
	case commas == 0 && dots == 1: // "9.21"
		k := strings.IndexByte(m, '.')
		return m[:k], m[k+1:], true
	case commas == 0: // "1.234.567"
		g, ok := groups(m, ".")
		return g, "", ok
	}
	last := strings.LastIndexAny(m, ",.")
	dec, grp := string(m[last]), ","
	if dec == "," {
		grp = "."
	}
	if strings.Count(m, dec) != 1 {
		return "", "", false
	}
	g, ok := groups(m[:last], grp) // "9,210.5" or "9.210,5"
	return g, m[last+1:], ok
}

// groups joins thousands groups: a first group of one to three digits,
// then groups of exactly three.
func groups(m, sep string) (string, bool) {
	parts := strings.Split(m, sep)
	if len(parts[0]) < 1 || len(parts[0]) > 3 {
		return "", false
	}
	for _, p := range parts[1:] {
		if len(p) != 3 {
			return "", false
		}
	}
	return strings.Join(parts, ""), true
}
