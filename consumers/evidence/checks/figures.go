package checks

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// op is how a text states a figure.
type op uint8

const (
	opEq     op = iota // "9,210"
	opApprox           // "about 7,500", "~7,500"
	opNearly           // "nearly 9,000", "almost 9,000": a little below
	opGT               // "more than", "exceeded", "over", ">"
	opGE               // "at least", "9,000 or more", "9,000+"
	opLT               // "less than", "under", "below", "<"
	opLE               // "at most", "up to", "no more than"
	opRange            // "80 to 90", "5–10%", "between 1979 and 2000"; dates
)

// figure is one number, measure or date read from a text, in the base unit
// of its kind. A date is the range of days [v, v2) it covers.
type figure struct {
	kind string
	op   op
	v    float64
	v2   float64 // the end of a range
	// step is one unit of the last stated digit, never more than one unit
	// of measure ("9,210" → 1, "1.5°C" → 0.1 °C); place the granularity of
	// the written number ("9,000" → 1,000, "9.2 million" → 100,000).
	step, place float64
}

// maxMagnitude bounds the figures read: anything larger is not a figure a
// claim can be checked against, and keeps interval arithmetic finite.
const maxMagnitude = 1e100

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// qty is a quantity as written, before conversion.
type qty struct {
	n       number
	neg     bool
	cur     string  // currency code
	mult    float64 // thousand, million … (1 when none)
	unit    *unit
	power   int // 2 or 3 when "²" or "³" follows a length unit
	ordinal bool
	decade  bool
	century bool
}

// yearLike reports whether q is a bare four-digit number that may be a
// year (1000-2199).
func (q qty) yearLike() bool {
	return q.n.plain && q.n.digits == 4 && q.n.value >= 1000 && q.n.value <= 2199 &&
		!q.neg && q.cur == "" && q.mult == 1 && q.unit == nil && !q.ordinal && !q.decade && !q.century
}

// base converts q to its kind and base-unit value. change: a temperature
// difference, converted without the Fahrenheit offset.
func (q qty) base(change bool) (kind string, v, step, place float64, ok bool) {
	factor, offset := 1.0, 0.0
	kind = kindCount
	switch {
	case q.cur != "":
		kind = kindMoney + q.cur
	case q.unit != nil:
		kind, factor, offset = q.unit.kind, q.unit.factor, q.unit.offset
		switch q.power {
		case 2:
			kind, factor = kindArea, factor*factor
		case 3:
			kind, factor = kindVolume, factor*factor*factor*1000
		}
		if kind == kindTemp && change {
			kind, offset = kindTempChange, 0
		}
	}
	stated := q.n.value * q.mult
	if q.neg {
		stated = -stated
	}
	v = stated*factor + offset
	step = math.Pow10(min(q.n.exp-q.n.decimals, 0)) * factor
	place = math.Pow10(q.n.exp-q.n.decimals+q.n.zeros) * q.mult * factor
	if !finite(v) || math.Abs(v) > maxMagnitude || !finite(place) || place > maxMagnitude {
		return "", 0, 0, 0, false
	}
	return kind, v, step, place, true
}

// extractor reads the figures of one text.
type extractor struct {
	toks []token
	figs []figure
	max  int
}

// extract returns the figures of the first limit bytes of s, at most most
// of them, in order.
func extract(s string, limit, most int) []figure {
	x := extractor{toks: scan(s, limit), max: most}
	for i := 0; i < len(x.toks) && len(x.figs) < x.max; {
		i += max1(x.next(i))
	}
	return x.figs
}

func max1(n int) int { return max(n, 1) }

func (x *extractor) at(i int) token {
	if i < 0 || i >= len(x.toks) {
		return token{}
	}
	return x.toks[i]
}

// word is the text of token i when it is a word.
func (x *extractor) word(i int) string {
	if t := x.at(i); t.kind == tWord {
		return t.text
	}
	return ""
}

// sym reports whether token i is one of the symbols.
func (x *extractor) sym(i int, syms ...string) bool {
	t := x.at(i)
	if t.kind != tSym {
		return false
	}
	for _, s := range syms {
		if t.text == s {
			return true
		}
	}
	return false
}

// attached reports whether token i follows token i-1 without a space.
func (x *extractor) attached(i int) bool {
	t := x.at(i)
	return t.kind != 0 && !t.space
}

// next reads whatever starts at token i and returns how many tokens it
// used (0: nothing starts there).
func (x *extractor) next(i int) int {
	t := x.toks[i]
	switch t.kind {
	case tWord:
		if _, ok := months[t.text]; ok {
			if n := x.monthFirst(i); n > 0 {
				return n
			}
		}
		if _, ok := currencyCodes[t.text]; ok && x.at(i+1).kind == tNum {
			return x.quantity(i)
		}
		if _, ok := dollarPrefixes[t.text]; ok && x.sym(i+1, "$") && x.attached(i+1) && x.at(i+2).kind == tNum {
			return x.quantity(i)
		}
		if n := x.wordOrdinal(i); n > 0 {
			return n
		}
		if _, ok := cardinals[t.text]; ok {
			return x.wordNumber(i)
		}
	case tNum:
		if n := x.numberFirst(i); n > 0 {
			return n
		}
		return x.quantity(i)
	case tSym:
		if _, ok := currencySymbols[t.text]; ok {
			return x.quantity(i)
		}
		if x.sym(i, "-", "−") && x.at(i+1).kind == tNum && x.attached(i+1) && (t.space || x.sym(i-1, "(")) {
			return x.quantity(i)
		}
	}
	return 1
}

// year returns the year of token i when it is a bare four-digit number
// from 1000 to 2199.
func (x *extractor) year(i int) (int, bool) {
	t := x.at(i)
	if t.kind != tNum || len(t.text) != 4 {
		return 0, false
	}
	n, ok := parseNumber(t.text)
	if !ok || !n.plain || n.value < 1000 || n.value > 2199 {
		return 0, false
	}
	return int(n.value), true
}

// small returns the value of token i when it is a plain number of one or
// two digits within [1, hi].
func (x *extractor) small(i, hi int) (int, bool) {
	t := x.at(i)
	if t.kind != tNum || len(t.text) > 2 {
		return 0, false
	}
	n, ok := parseNumber(t.text)
	if !ok || !n.plain || n.value < 1 || n.value > float64(hi) {
		return 0, false
	}
	return int(n.value), true
}

// ordinalSuffix reports whether token i is the suffix of the ordinal n
// attached to it ("1st", "22nd", "13th").
func (x *extractor) ordinalSuffix(i, n int) bool {
	if !x.attached(i) {
		return false
	}
	want := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			want = "st"
		case 2:
			want = "nd"
		case 3:
			want = "rd"
		}
	}
	return x.word(i) == want
}

// numberFirst reads the dates that start with a number: "2024-03-04",
// "4 March 2024", "4th of March 2024". A day and month without a year
// cannot be compared and is skipped.
func (x *extractor) numberFirst(i int) int {
	if y, ok := x.year(i); ok && x.sym(i+1, "-") && x.attached(i+1) && x.attached(i+2) && x.sym(i+3, "-") &&
		x.attached(i+3) && x.attached(i+4) {
		m, okm := x.small(i+2, 12)
		d, okd := x.small(i+4, 31)
		if okm && okd {
			if lo, ok := day(y, m, d); ok {
				x.addDate(i, lo, lo+1)
			}
			return 5
		}
	}
	d, ok := x.small(i, 31)
	if !ok {
		return 0
	}
	k := i + 1
	if x.ordinalSuffix(k, d) {
		k++
	}
	if x.word(k) == "of" {
		k++
	}
	m, ok := months[x.word(k)]
	if !ok {
		return 0
	}
	k++
	if x.sym(k, ".") && x.attached(k) {
		k++
	}
	if x.sym(k, ",") {
		k++
	}
	if y, ok := x.year(k); ok {
		if lo, ok := day(y, m, d); ok {
			x.addDate(i, lo, lo+1)
		}
		return k + 1 - i
	}
	return k - i
}

// monthFirst reads "March 2024", "October 16, 1898", "Oct. 16th 1898". A
// month word followed by no number is not a date ("may", "march").
func (x *extractor) monthFirst(i int) int {
	m := months[x.word(i)]
	k := i + 1
	if x.sym(k, ".") && x.attached(k) {
		k++
	}
	if d, ok := x.small(k, 31); ok {
		k++
		if x.ordinalSuffix(k, d) {
			k++
		}
		if x.sym(k, ",") {
			k++
		}
		if y, ok := x.year(k); ok {
			if lo, ok := day(y, m, d); ok {
				x.addDate(i, lo, lo+1)
			}
			return k + 1 - i
		}
		return k - i
	}
	if x.sym(k, ",") {
		k++
	}
	if y, ok := x.year(k); ok {
		lo, _ := day(y, m, 1)
		hi, _ := day(y+(m/12), m%12+1, 1)
		x.addDate(i, lo, hi)
		return k + 1 - i
	}
	return 0
}

// day is the day number of a calendar date, false when it does not exist
// (31 February).
func day(y, m, d int) (float64, bool) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return 0, false
	}
	return float64(t.Unix() / 86400), true
}

// yearSpan is the range of days of the years [from, to].
func yearSpan(from, to int) (lo, hi float64) {
	lo, _ = day(from, 1, 1)
	hi, _ = day(to+1, 1, 1)
	return lo, hi
}

// dateGuards before a date make it a bound or a guess ("since 1997",
// "before 2020", "circa 1500"), which this check does not compare.
var dateGuards = map[string]bool{
	"before": true, "after": true, "since": true, "until": true, "till": true, "by": true, "through": true,
	"thru": true, "from": true, "prior": true, "pre": true, "post": true, "circa": true, "ca": true, "c": true,
	"around": true, "about": true, "approximately": true, "roughly": true, "nach": true, "vor": true,
	"seit": true, "bis": true, "ab": true, "not": true, "never": true,
}

// guarded reports whether a date starting at token i follows a guard.
func (x *extractor) guarded(i int) bool {
	p := i - 1
	if x.sym(p, "-", ".") {
		p--
	}
	return dateGuards[x.word(p)]
}

func (x *extractor) addDate(start int, lo, hi float64) {
	if x.guarded(start) || hi <= lo {
		return
	}
	x.figs = append(x.figs, figure{kind: kindDate, op: opRange, v: lo, v2: hi})
}

// yearCues before a bare four-digit number make it a year.
var yearCues = map[string]bool{
	"in": true, "of": true, "during": true, "year": true, "early": true, "late": true, "mid": true,
	"spring": true, "summer": true, "autumn": true, "fall": true, "winter": true, "fy": true, "im": true,
	"jahr": true, "en": true, "year's": true,
}

// sentenceEnds before a token make it the start of a sentence or aside.
var sentenceEnds = map[string]bool{".": true, "!": true, "?": true, ";": true, ":": true, "(": true, "\"": true, "“": true, "—": true, "[": true}

// yearCue reports whether the bare number at token i reads as a year: it
// starts the text, a sentence or an aside, or follows a year cue ("in",
// "of", "during", "mid-" …).
func (x *extractor) yearCue(i int) bool {
	p := i - 1
	if p < 0 {
		return true
	}
	if t := x.at(p); t.kind == tSym {
		if t.text == "-" && x.attached(i) && yearCues[x.word(p-1)] {
			return true
		}
		return sentenceEnds[t.text]
	}
	return yearCues[x.word(p)]
}

// quantity reads a quantity, a range, a bare year, a decade, a century or
// an ordinal starting at token i.
func (x *extractor) quantity(i int) int {
	q, end, ok := x.read(i)
	if !ok {
		return end - i
	}
	if q.century {
		if n := int(q.n.value); n >= 1 && n <= 22 {
			lo, hi := yearSpan((n-1)*100, n*100) // both conventions: 1800-1899 and 1801-1900
			x.addDate(i, lo, hi)
		}
		return end - i
	}
	if q.decade {
		y := int(q.n.value)
		lo, hi := yearSpan(y, y+9)
		x.addDate(i, lo, hi)
		return end - i
	}
	if q.ordinal {
		x.figs = append(x.figs, figure{kind: kindOrdinal, v: q.n.value})
		return end - i
	}
	if n, handled := x.rangeFrom(i, end, q); handled {
		return n
	}
	if q.yearLike() {
		o, found, _ := x.prefixOp(i)
		switch {
		case found && (o == opApprox || o == opNearly):
			return end - i // "around 1900": a guess at a year or a count
		case found:
			// "more than 2000 people": a count
		case x.yearCue(i):
			if x.word(end) == "bc" || x.word(end) == "bce" {
				return end + 1 - i
			}
			lo, hi := yearSpan(int(q.n.value), int(q.n.value))
			x.addDate(i, lo, hi)
			return end - i
		default:
			return end - i // "the 1975 election", "1500 people": not sure which
		}
	}
	return x.emit(i, end, q)
}

// rangeFrom reads a range whose first end is q (tokens [i, end)): "80 to
// 90 years", "5–10%", "between 1979 and 2000", "$5-$10 million". A first
// end without a unit takes the second end's. handled is false when no
// range follows.
func (x *extractor) rangeFrom(i, end int, q qty) (n int, handled bool) {
	k := end
	switch {
	case x.sym(k, "-", "–", "—"):
	case x.word(k) == "to" || x.word(k) == "through":
		if x.word(i-1) == "from" && !q.yearLike() {
			return 0, false // "rose from 5% to 10%": a change, two figures
		}
	case x.word(k) == "and" && x.word(i-1) == "between":
	default:
		return 0, false
	}
	if x.at(k+1).kind != tNum && !x.sym(k+1, "$", "€", "£", "¥", "-", "−") {
		return 0, false
	}
	q2, end2, ok := x.read(k + 1)
	if !ok {
		return 0, false
	}
	used := end2 - i
	if q2.ordinal || q2.decade || q2.century {
		return used, true
	}
	if q.yearLike() || q2.yearLike() {
		if q.yearLike() && q2.yearLike() && q2.n.value >= q.n.value {
			lo, hi := yearSpan(int(q.n.value), int(q2.n.value))
			start := i
			if w := x.word(i - 1); w == "from" || w == "between" {
				start-- // "from 1979 to 2000" is a period, not a bound
			}
			x.addDate(start, lo, hi)
		}
		return used, true // "1979-80", "2000 to 3000": not sure what
	}
	if q.cur == "" && q.unit == nil && q.mult == 1 {
		q.cur, q.unit, q.mult, q.power = q2.cur, q2.unit, q2.mult, q2.power
	}
	if q2.cur == "" && q2.unit == nil && q2.mult == 1 {
		q2.cur, q2.unit, q2.mult, q2.power = q.cur, q.unit, q.mult, q.power
	}
	change := x.isChange(q, i, end2)
	kind, v, step, place, ok1 := q.base(change)
	kind2, v2, step2, place2, ok2 := q2.base(change)
	if !ok1 || !ok2 || kind != kind2 || v2 < v || kind == ambiguous {
		return used, true
	}
	if x.negated(i) || x.era(end2) {
		return used, true
	}
	x.figs = append(x.figs, figure{kind: kind, op: opRange, v: v, v2: v2, step: max(step, step2), place: max(place, place2)})
	return used, true
}

// read reads one quantity as written at token i: an optional currency, an
// optional sign, a number, a multiplier and a unit. ok is false when the
// tokens are not a quantity this check reads (an identifier such as "CO2"
// or "COVID-19", a fraction, a time, a footnote "[12]", an unknown unit
// such as "4G"); end is then past what was skipped.
func (x *extractor) read(i int) (q qty, end int, ok bool) {
	j := i
	t := x.at(j)
	switch {
	case t.kind == tSym && currencySymbols[t.text] != "":
		q.cur = currencySymbols[t.text]
		if t.text == "$" && x.attached(j) && x.at(j-1).kind == tWord {
			return q, j + 1, false // "XY$": a dollar we do not know
		}
		j++
	case t.kind == tWord && currencyCodes[t.text] != "":
		q.cur = currencyCodes[t.text]
		j++
	case t.kind == tWord && dollarPrefixes[t.text] != "" && x.sym(j+1, "$"):
		q.cur = dollarPrefixes[t.text]
		j += 2
	}
	if x.sym(j, "-", "−") && x.at(j+1).kind == tNum && x.attached(j+1) {
		q.neg = true
		j++
	}
	nt := x.at(j)
	if nt.kind != tNum {
		return q, max(j, i+1), false
	}
	if j == i && x.identifier(j) {
		return q, j + 1, false
	}
	if x.sym(j+1, "/", ":") && x.attached(j+1) && x.at(j+2).kind == tNum && x.attached(j+2) {
		k := j + 2
		for x.sym(k+1, "/", ":", ".") && x.attached(k+1) && x.at(k+2).kind == tNum && x.attached(k+2) {
			k += 2
		}
		return q, k + 1, false // "24/7", "3:45", "1/3", "03/04/2024"
	}
	n, ok := parseNumber(nt.text)
	if !ok {
		return q, j + 1, false
	}
	q.n, q.mult = n, 1
	j++
	if w := x.at(j); w.kind == tWord && !w.space {
		isInt := n.decimals == 0 && n.exp == 0 && n.value < 1e6
		switch {
		case isInt && x.ordinalSuffix(j, int(n.value)) && q.cur == "" && !q.neg:
			q.ordinal = true
			j++
			if x.word(j) == "century" || x.word(j) == "centuries" {
				q.century = true
				j++
			} else if x.sym(j, "-") && x.word(j+1) == "century" {
				q.century = true
				j += 2
			}
			return q, j, true
		case w.text == "s" && n.plain && n.digits == 4 && int(n.value)%10 == 0 && n.value >= 1000 && n.value <= 2190 && q.cur == "" && !q.neg:
			q.decade = true
			return q, j + 1, true
		case w.text == "k":
			q.mult = 1e3
		case multipliers[w.text] != 0:
			q.mult = multipliers[w.text]
		case w.text == "bn" || (q.cur != "" && w.text == "b"):
			q.mult = 1e9
		case w.text == "tn" || w.text == "trn":
			q.mult = 1e12
		case q.cur != "" && (w.text == "m" || w.text == "mn"):
			q.mult = 1e6
		case w.text == "x":
			q.unit = &ratioUnit
		default:
			un, used := x.unitAt(j)
			if un == nil {
				return q, j + 1, false // "4G", "3D", "5m" (metres or millions?)
			}
			q.unit = un
			j += used - 1
		}
		j++
	}
	if q.mult == 1 && q.unit == nil && x.at(j).space {
		if m, ok := multipliers[x.word(j)]; ok {
			q.mult = m
			j++
		} else if q.cur != "" && (x.word(j) == "m" || x.word(j) == "b") {
			q.mult = map[string]float64{"m": 1e6, "b": 1e9}[x.word(j)]
			j++
		}
	}
	if q.unit == nil && q.mult == 1 && x.sym(j, "-") && x.attached(j) && x.attached(j+1) {
		if un, _ := x.unitAt(j + 1); un != nil {
			j++ // "a 30-year trend", "a 5-km walk"
		}
	}
	if q.unit == nil {
		if un, used := x.unitAt(j); un != nil {
			q.unit = un
			j += used
		}
	}
	if q.unit != nil && q.unit.linear && x.attached(j) {
		switch {
		case x.sym(j, "²") || x.at(j).text == "2" && x.at(j).kind == tNum:
			q.power = 2
			j++
		case x.sym(j, "³") || x.at(j).text == "3" && x.at(j).kind == tNum:
			q.power = 3
			j++
		}
	}
	if q.unit != nil && strings.HasPrefix(q.unit.kind, kindMoney) {
		c := strings.TrimPrefix(q.unit.kind, kindMoney)
		if q.cur != "" && q.cur != c {
			return q, j, false
		}
		q.cur, q.unit = c, nil
	}
	if q.unit != nil && (q.unit.kind == ambiguous || q.cur != "") {
		return q, j, false // "5 pounds", "$5 kg"
	}
	return q, j, true
}

var ratioUnit = unit{words: []string{"x"}, kind: kindRatio, factor: 1}

// identifierPrefixes may be joined to a number by a hyphen without making
// it a name: "mid-1970s", "pre-2000".
var identifierPrefixes = map[string]bool{"mid": true, "early": true, "late": true, "pre": true, "post": true}

// identifier reports whether the number at token j is part of a name:
// "CO2", "Q1", "COVID-19", "F-35", "#5", or a footnote "[12]".
func (x *extractor) identifier(j int) bool {
	if !x.attached(j) {
		return false
	}
	p := x.at(j - 1)
	switch {
	case p.kind == tWord:
		return true
	case p.text == "-" || p.text == "_":
		return x.attached(j-1) && x.at(j-2).kind == tWord && !identifierPrefixes[x.word(j-2)]
	case p.text == "#" || p.text == "№":
		return true
	case p.text == "[":
		return x.sym(j+1, "]")
	}
	return false
}

// unitAt matches the longest unit starting at token j and returns it with
// the number of tokens it spans.
func (x *extractor) unitAt(j int) (*unit, int) {
	t := x.at(j)
	if t.kind == 0 {
		return nil, 0
	}
	cands := unitTable[t.text]
	for k := range cands {
		un := &cands[k]
		if un.spaced && !t.space {
			continue
		}
		match := true
		for w := 1; w < len(un.words); w++ {
			if x.at(j+w).text != un.words[w] {
				match = false
				break
			}
		}
		if match {
			return un, len(un.words)
		}
	}
	return nil, 0
}

// changeWords near a temperature make it a difference ("2°C warmer",
// "rose by 1.1°C", "1.5°C above pre-industrial levels").
var changeWords = map[string]bool{
	"warmer": true, "cooler": true, "hotter": true, "colder": true, "warming": true, "cooling": true,
	"rise": true, "rose": true, "risen": true, "rising": true, "increase": true, "increased": true,
	"decrease": true, "decreased": true, "higher": true, "lower": true, "above": true, "below": true,
	"change": true, "anomaly": true, "by": true, "drop": true, "dropped": true, "fell": true, "fallen": true,
	"up": true, "down": true, "wärmer": true, "erwärmung": true,
}

// era reports whether an era follows token k-1: "AD", "A.D.", "BC", "BCE", "CE".
func (x *extractor) era(k int) bool {
	switch x.word(k) {
	case "ad", "bc", "bce", "ce", "v", "n":
		return x.word(k) != "v" && x.word(k) != "n" || x.sym(k+1, ".") && x.word(k+2) == "chr" // German "v. Chr."
	case "a", "b":
		return x.sym(k+1, ".") && (x.word(k+2) == "d" || x.word(k+2) == "c")
	}
	return false
}

// isChange reports whether q, read from tokens [i, end), is a temperature
// difference.
func (x *extractor) isChange(q qty, i, end int) bool {
	return q.unit != nil && q.unit.kind == kindTemp && x.tempChange(i, end)
}

// tempChange reports whether a temperature at tokens [i, end) is a
// difference: "to" right before it makes it a level ("rose to 40°C");
// otherwise a change word within four tokens either side makes it a
// difference.
func (x *extractor) tempChange(i, end int) bool {
	if x.word(i-1) == "to" || x.word(i-1) == "of" || x.word(i-1) == "at" {
		return false
	}
	for k := i - 4; k < end+4; k++ {
		if k >= i && k < end {
			continue
		}
		if changeWords[x.word(k)] {
			return true
		}
	}
	return false
}

// emit appends the quantity q read from tokens [i, end), with its rate
// ("per year"), a comparator after it ("or more", "+") and one before it
// ("more than"), and returns the tokens used.
func (x *extractor) emit(i, end int, q qty) int {
	kind, v, step, place, ok := q.base(x.isChange(q, i, end))
	if !ok {
		return end - i
	}
	k := end
	switch w := x.word(k); {
	case w == "per" || x.sym(k, "/") || ((w == "a" || w == "an" || w == "each" || w == "every") && timeUnit(x.word(k+1)) != ""):
		if x.at(k+1).kind == tNum {
			return k + 2 - i // "3 per 100,000": a rate against a count
		}
		if next := x.word(k + 1); next != "" {
			tu := timeUnit(next)
			if tu == "" {
				tu = next
			}
			kind += "/" + tu
			k += 2
		}
	case (w == "a" || w == "an") && strings.HasPrefix(kind, kindMoney) && x.word(k+1) != "":
		kind += "/" + x.word(k+1) // "$70 a barrel"
		k += 2
	case w == "annually" || w == "yearly":
		kind += "/year"
		k++
	case w == "daily":
		kind += "/day"
		k++
	case w == "monthly":
		kind += "/month"
		k++
	}
	o := opEq
	switch {
	case x.sym(k, "+") && x.attached(k):
		o = opGE
		k++
	case x.word(k) == "or" || x.word(k) == "and":
		switch x.word(k + 1) {
		case "more", "above", "over", "higher", "greater":
			o = opGE
			k += 2
		case "less", "fewer", "below", "under", "lower":
			o = opLE
			k += 2
		}
	case x.sym(k, "-") && x.word(k+1) == "plus":
		o = opGE
		k += 2
	}
	if x.era(k) {
		return k - i // "200 A.D.": a year of an era this check does not read
	}
	if po, found, drop := x.prefixOp(i); drop {
		return k - i
	} else if found && o == opEq {
		o = po
	}
	if o == opEq && x.negated(i) {
		return k - i // "is not 9,000": says what it is not
	}
	if kind == kindOrdinal {
		o = opEq
	}
	x.figs = append(x.figs, figure{kind: kind, op: o, v: v, step: step, place: place})
	return k - i
}

func timeUnit(w string) string {
	if tu, ok := timeUnits[w]; ok {
		return tu
	}
	if tu, ok := timeUnits[strings.TrimSuffix(w, "s")]; ok && strings.HasSuffix(w, "s") {
		return tu
	}
	return ""
}

type phrase struct {
	words []string
	op    op
}

// comparators are the words before a figure that make it a bound or an
// estimate, longest first.
var comparators = buildComparators()

func buildComparators() []phrase {
	table := map[op][]string{
		opGT: {"more than", "over", "exceeded", "exceeds", "exceed", "exceeding", "surpassed", "surpasses", "surpass",
			"surpassing", "topped", "tops", "above", "greater than", "higher than", "larger than", "bigger than",
			"upwards of", "in excess of", "just over", "well over", "beyond", "mehr als", "über"},
		opGE: {"at least", "no fewer than", "no less than", "not less than", "a minimum of", "minimum of", "mindestens"},
		opLT: {"less than", "fewer than", "under", "below", "lower than", "smaller than", "well under", "weniger als", "unter"},
		opLE: {"at most", "no more than", "not more than", "up to", "a maximum of", "maximum of", "not exceeding",
			"höchstens", "bis zu"},
		opNearly: {"nearly", "almost", "close to", "just under", "just shy of", "not quite", "knapp", "fast"},
		opApprox: {"about", "around", "approximately", "approx", "roughly", "some", "circa", "ca", "an estimated",
			"estimated", "est", "on the order of", "more or less", "etwa", "rund", "ungefähr", "zirka"},
	}
	var out []phrase
	for o, list := range table {
		for _, p := range list {
			out = append(out, phrase{words: strings.Fields(p), op: o})
		}
	}
	// Longest first, then alphabetical, so the table is read the same way
	// on every run.
	slices.SortFunc(out, func(a, b phrase) int {
		if c := cmp.Compare(len(b.words), len(a.words)); c != 0 {
			return c
		}
		return cmp.Compare(strings.Join(a.words, " "), strings.Join(b.words, " "))
	})
	return out
}

var symbolOps = map[string]op{"~": opApprox, "≈": opApprox, "∼": opApprox, ">": opGT, "<": opLT, "≥": opGE, "≤": opLE}

// prefixOp finds a comparator ending right before token i (an article
// may sit between: "surpassed the 9k mark"). A negated comparator is
// inverted ("did not exceed" → at most); drop is true when a negation
// makes the figure meaningless ("not about 9,000").
func (x *extractor) prefixOp(i int) (o op, found, drop bool) {
	end := i
	if x.sym(end-1, "$", "€", "£", "¥") {
		end--
	}
	if x.sym(end-1, "=") && x.sym(end-2, ">", "<") {
		return map[string]op{">": opGE, "<": opLE}[x.at(end-2).text], true, false
	}
	if o, ok := symbolOps[x.at(end-1).text]; ok && x.at(end-1).kind == tSym {
		return o, true, false
	}
	if x.sym(end-1, ".") && (x.word(end-2) == "ca" || x.word(end-2) == "approx" || x.word(end-2) == "est") {
		return opApprox, true, false
	}
	for _, e := range []int{end, end - 1} {
		if e != end && x.word(end-1) != "the" && x.word(end-1) != "a" && x.word(end-1) != "an" {
			break
		}
		for _, p := range comparators {
			a := e - len(p.words)
			if a < 0 {
				continue
			}
			match := true
			for w, pw := range p.words {
				if x.word(a+w) != pw {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			if x.negated(a) {
				inv, ok := map[op]op{opGT: opLE, opGE: opLT, opLT: opGE, opLE: opGT}[p.op]
				return inv, ok, !ok
			}
			return p.op, true, false
		}
	}
	return opEq, false, false
}

// negated reports whether a negation ends right before token i: "not",
// "never", "n't", "nicht", "kein".
func (x *extractor) negated(i int) bool {
	switch x.word(i - 1) {
	case "not", "never", "nicht", "nie", "kein", "keine":
		return true
	case "t":
		return x.sym(i-2, "'", "’")
	}
	return false
}

// wordOrdinal reads "second-largest", "third most", "nineteenth century",
// "twenty-first century".
func (x *extractor) wordOrdinal(i int) int {
	n, ok := ordinalWords[x.word(i)]
	k := i + 1
	if !ok {
		tens, isTens := cardinals[x.word(i)]
		unit, isUnit := ordinalWords[x.word(i+2)]
		if !isTens || tens < 20 || tens%10 != 0 || !x.sym(i+1, "-") || !isUnit || unit > 9 || !x.attached(i+2) {
			return 0
		}
		n, k = tens+unit, i+3
	}
	if x.sym(k, "-") {
		k++
	}
	switch w := x.word(k); {
	case w == "century":
		lo, hi := yearSpan((n-1)*100, n*100)
		x.addDate(i, lo, hi)
		return k + 1 - i
	case rankWords[w]:
		x.figs = append(x.figs, figure{kind: kindOrdinal, v: float64(n)})
		return k + 1 - i
	}
	return 0
}

// wordNumber reads a number in words. It is a figure only with a unit or
// a magnitude: "five years", "fifty-five thousand", "ten per cent"; a bare
// "one" or "three" is too often not a figure ("one of the factors").
func (x *extractor) wordNumber(i int) int {
	j := i
	var total, cur float64
	var scaled, last bool // a magnitude word was read; the last word was a cardinal
	for {
		w := x.word(j)
		if v, ok := cardinals[w]; ok && !last {
			cur += float64(v)
			j++
			if v >= 20 && x.sym(j, "-") && x.attached(j) && x.attached(j+1) {
				if u, ok := cardinals[x.word(j+1)]; ok && u >= 1 && u <= 9 {
					cur += float64(u)
					j += 2
				}
			}
			last = true
			continue
		}
		if w == "hundred" && j > i {
			cur = max(cur, 1) * 100
			j++
			last = false
			continue
		}
		if s, ok := scales[w]; ok && j > i && s > 100 {
			total += max(cur, 1) * s
			cur, scaled, last = 0, true, false
			j++
			continue
		}
		if w == "and" && j > i && !last {
			if _, ok := cardinals[x.word(j+1)]; ok {
				j++
				continue
			}
		}
		break
	}
	if j == i {
		return 0
	}
	value := total + cur
	q := qty{n: number{value: value, zeros: trailingZeros(value)}, mult: 1}
	if un, used := x.unitAt(j); un != nil {
		q.unit = un
		j += used
		if strings.HasPrefix(un.kind, kindMoney) {
			q.cur, q.unit = strings.TrimPrefix(un.kind, kindMoney), nil
		} else if un.kind == ambiguous {
			return j - i
		}
	} else if !scaled {
		return j - i
	}
	return x.emit(i, j, q)
}

func trailingZeros(v float64) int {
	if v <= 0 || v != math.Trunc(v) || v > 1e15 {
		return 0
	}
	n := 0
	for math.Mod(v, 10) == 0 {
		v /= 10
		n++
	}
	return n
}
