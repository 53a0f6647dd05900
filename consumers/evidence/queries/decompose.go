package queries

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query kinds.
const (
	KindKeyword  = "keyword"  // a short combination of the claim's keywords
	KindTimeline = "timeline" // when did the cause and the effect happen (causal claims only)
)

// Bounds of a plan.
const (
	MaxClaimBytes       = 10 << 10 // a longer claim is cut before it is read
	MaxContextScanBytes = 1 << 20  // the claim is looked for in the first 1 MiB of the context
	MaxContextBytes     = 64 << 10 // and only the last 64 KiB of context before it are read
	MinQueryWords       = 3
	MaxQueryWords       = 6
	MaxQueryBytes       = 200
	maxEntityWords      = 4 // names in one query, all told
	maxFigureWords      = 3 // numbers and dates in one query
	maxBackSentence     = 5 // how far back in the context a pronoun looks for its name
)

// Query is one search to run for a claim.
type Query struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

// Plan is what to search for a claim: two or three keyword queries (none
// when the claim has fewer than two words worth searching), then a
// timeline query when the claim is causal.
type Plan struct {
	Queries []Query `json:"queries"`
	Causal  bool    `json:"causal"`
}

// Decompose plans the searches for a claim, FAKTCHECK's lesson: short
// keyword combinations find sources, the whole sentence does not. context
// is the text of the post around the claim; it resolves pronouns.
//
// Keyword queries have three to six words: the names in the claim (a
// pronoun replaced by the name it stands for), its numbers and dates, and
// its most specific other words (longer words first, vague ones like
// "number" or "official" last), with stopwords removed. The first query
// is the names with the best words; the second adds the numbers and dates
// (when there are any); the third takes words the first left out. A claim
// too short for two distinct queries gets a search word added ("evidence",
// "study"); one with fewer than two words worth searching gets none.
//
// A pronoun (he, she, it, they, his, its, their …, or "the company",
// "this agency" …) is replaced only when the claim names nobody it could
// stand for, and only by a name found in the nearest of the five
// sentences before the claim that has any candidate, and only when that
// sentence has exactly one fitting name: a person for he and she (a name
// after a title such as "Senator", or of two or three words), an
// organisation for it and they (a name with Inc, Ministry, University …,
// or an acronym), or a single name of unknown type. Otherwise the pronoun
// is dropped.
//
// The claim is causal when it contains a causal marker as whole words
// (because, cause(s/d), led to, due to, resulted in, as a result,
// therefore, triggered, consequently, hence, thanks to, blamed on, and
// German weil, wegen, aufgrund, deshalb, daher, führte zu, verursachte,
// infolge, dadurch …) or a sentence opens with "After X, Y" ("Following",
// "Nachdem"). Only then is a timeline query added: the names, the most
// specific word on each side of the marker, a year when there is one, and
// "timeline". Running it on every claim buries verdicts in noise.
//
// Bounds: the claim is cut to MaxClaimBytes before it is read; the
// context is read up to the claim (when the claim appears in its first
// MaxContextScanBytes), at most its last MaxContextBytes; bytes that are
// not UTF-8, control and format characters separate words; a word is cut
// to 60 bytes, a query to six words and MaxQueryBytes. Stopwords are
// English, German (with er/sein… as pronouns), and basic French, Spanish
// and Russian; Japanese splits at Hiragana.
//
// Decompose is deterministic: the same claim and context give the same
// plan.
func Decompose(claim, context string) Plan {
	claim = clean(claim, MaxClaimBytes)
	context = contextBefore(clean(context, MaxContextScanBytes), claim)
	cw := split(claim)
	lang, stop := language(cw)
	var cx []word
	if needsContext(cw, stop, lang) {
		cx = split(context)
	}
	known := capitalised(cw, cx)
	units := keywordUnits(cw, cx, stop, known, lang)
	plan := Plan{Queries: keywordQueries(units, lang)}
	if at, ok := causalAt(cw); ok {
		plan.Causal = true
		if q, ok := timelineQuery(units, at, lang); ok {
			plan.Queries = append(plan.Queries, q)
		}
	}
	return plan
}

// contextBefore is the context up to the claim (where the claim appears
// in it), at most MaxContextBytes of it.
func contextBefore(context, claim string) string {
	probe := strings.TrimSpace(claim)
	if len(probe) > 200 {
		probe = truncate(probe, 200)
	}
	if probe != "" {
		if i := strings.Index(context, probe); i >= 0 {
			context = context[:i]
		}
	}
	if len(context) > MaxContextBytes {
		context = context[len(context)-MaxContextBytes:]
		for len(context) > 0 && !utf8.RuneStart(context[0]) {
			context = context[1:]
		}
	}
	return context
}

// language tells English, German or another language from the stopwords a
// claim uses, and returns its stopword test.
func language(ws []word) (lexicon, func(string) bool) {
	var en, de, rest int
	for _, w := range ws {
		e, g, o := englishStop[w.lower], germanStop[w.lower], otherStop[w.lower]
		switch {
		case e && !g:
			en++
		case g && !e:
			de++
		case o && !e && !g:
			rest++
		}
	}
	switch {
	case de > en && de >= rest:
		return german, func(s string) bool { return germanStop[s] || fillerWords[s] }
	case rest > en && rest > de:
		return otherLang, func(s string) bool { return otherStop[s] || fillerWords[s] }
	}
	return english, func(s string) bool { return englishStop[s] || fillerWords[s] }
}

// needsContext reports whether the context can change the plan: the claim
// has a pronoun to resolve, or a capitalised word opening a sentence that
// the context may show to be a name.
func needsContext(cw []word, stop func(string) bool, lang lexicon) bool {
	for i, w := range cw {
		if _, ok := lang.pronouns[w.lower]; ok {
			return true
		}
		if (w.lower == "the" || w.lower == "this") && i+1 < len(cw) && orgNouns[cw[i+1].lower] {
			return true
		}
		if w.first && w.upper && !w.caps && !stop(w.lower) {
			return true
		}
	}
	return false
}

// capitalised lists the words written with a capital inside a sentence
// somewhere in the claim or the context: a capital there marks a name, so
// the same word opening a sentence is a name too.
func capitalised(texts ...[]word) map[string]bool {
	out := map[string]bool{}
	for _, ws := range texts {
		for _, w := range ws {
			if w.upper && !w.first {
				out[w.lower] = true
			}
		}
	}
	return out
}

// unitKind is what a keyword unit is.
type unitKind uint8

const (
	unitName unitKind = iota + 1
	unitFigure
	unitWord
)

// unit is one keyword: a name (one to four words), a number or date (one
// to three words: "4 March 2024"), or a single word.
type unit struct {
	kind  unitKind
	words []string
	key   string // lower case, for de-duplication
	pos   int    // the index of its first word in the claim
	class int
}

func newUnit(kind unitKind, ws []string, pos int) unit {
	return unit{kind: kind, words: ws, key: strings.ToLower(strings.Join(ws, " ")), pos: pos}
}

// name is a proper-noun phrase found in a text: words [from, to).
type name struct {
	from, to int
	words    []string
	class    int
	sent     int
}

// names finds the proper-noun phrases of ws: runs of capitalised words
// that are not stopwords, months or pronouns, possibly joined by "of",
// "van" …; a capitalised word opening a sentence counts only when it is
// an acronym, is capitalised elsewhere, or the next word is a name too.
func names(ws []word, stop func(string) bool, known map[string]bool, lang lexicon) []name {
	isName := func(i int) bool {
		w := ws[i]
		if !w.upper || w.digit && !w.caps || stop(w.lower) || monthsAndDays[w.lower] || personTitles[w.lower] {
			return false
		}
		if _, ok := lang.pronouns[w.lower]; ok {
			return false
		}
		return true
	}
	titled := func(i int) bool { return i > 0 && personTitles[strings.TrimSuffix(ws[i-1].lower, ".")] }
	var out []name
	for i := 0; i < len(ws); {
		if !isName(i) {
			i++
			continue
		}
		j := i + 1
		for j < len(ws) && ws[j].sent == ws[i].sent {
			if isName(j) && !ws[j].first {
				j++
				continue
			}
			if nameJoiners[ws[j].lower] && j+1 < len(ws) && ws[j+1].sent == ws[i].sent && isName(j+1) && !ws[j+1].first {
				j += 2
				continue
			}
			break
		}
		w := ws[i]
		if w.first && !w.caps && !known[w.lower] && (j == i+1 || !isName(i+1)) && !coordinated(ws, i, isName) {
			// "Scientists say …", "Shares of Nvidia …": a capital because
			// it opens the sentence.
			i = i + 1
			continue
		}
		if lang.nouns && j == i+1 && !w.caps && !titled(i) && !coordinated(ws, i, isName) {
			i = j // a German noun
			continue
		}
		n := name{from: i, to: j, sent: w.sent}
		for k := i; k < j && len(n.words) < maxEntityWords; k++ {
			n.words = append(n.words, ws[k].text)
		}
		n.class = classify(ws, n)
		out = append(out, n)
		i = j
	}
	return out
}

// coordinated reports whether word i is joined to a name by "and", "or"
// or a comma ("Apple and Google"): then it is a name too.
func coordinated(ws []word, i int, isName func(int) bool) bool {
	if i+1 >= len(ws) || ws[i+1].sent != ws[i].sent {
		return false
	}
	if ws[i].comma {
		return isName(i + 1)
	}
	switch ws[i+1].lower {
	case "and", "or", "und", "oder", "&":
		return i+2 < len(ws) && ws[i+2].sent == ws[i].sent && isName(i+2)
	}
	return false
}

// classify tells a person from an organisation, when the words say so.
func classify(ws []word, n name) int {
	if n.from > 0 && personTitles[strings.TrimSuffix(ws[n.from-1].lower, ".")] {
		return classPerson
	}
	person := n.to-n.from >= 2 && n.to-n.from <= 3
	for k := n.from; k < n.to; k++ {
		w := ws[k]
		if orgWords[w.lower] || w.caps {
			return classOrg
		}
		if placeWords[w.lower] || nameJoiners[w.lower] {
			person = false
		}
	}
	if person {
		return classPerson
	}
	return classUnknown
}

// keywordUnits reads the claim's keywords in order: names, numbers and
// dates, and other words, with pronouns resolved from the context.
func keywordUnits(cw, cx []word, stop func(string) bool, known map[string]bool, lang lexicon) []unit {
	claimNames := names(cw, stop, known, lang)
	inName := make([]int, len(cw)) // 1 + index into claimNames
	for k, n := range claimNames {
		for i := n.from; i < n.to; i++ {
			inName[i] = k + 1
		}
	}
	var (
		units    []unit
		seen     = map[string]bool{}
		resolved = map[int]*name{} // pronoun class → name from the context
		ctxNames []name
		ctxLast  int // the context's last sentence
		ctxRead  bool
	)
	add := func(u unit) {
		if u.key == "" || seen[u.key] {
			return
		}
		for _, other := range units {
			if other.kind == unitName && u.kind == unitName && sameName(other.key, u.key) {
				return
			}
		}
		seen[u.key] = true
		units = append(units, u)
	}
	for i := 0; i < len(cw); i++ {
		w := cw[i]
		if k := inName[i]; k > 0 {
			n := claimNames[k-1]
			if n.from == i {
				u := newUnit(unitName, n.words, i)
				u.class = n.class
				add(u)
			}
			continue
		}
		class, isPronoun := lang.pronouns[w.lower]
		if !isPronoun && (w.lower == "the" || w.lower == "this") && i+1 < len(cw) && orgNouns[cw[i+1].lower] {
			class, isPronoun = classOrg, true
			i++ // "the company"
		}
		if isPronoun {
			if fits(claimNames, class) {
				continue // the claim names it already
			}
			if !ctxRead {
				ctxNames, ctxRead = names(cx, stop, known, lang), true
				if len(cx) > 0 {
					ctxLast = cx[len(cx)-1].sent
				}
			}
			if _, done := resolved[class]; !done {
				resolved[class] = resolve(ctxNames, ctxLast, class)
			}
			if n := resolved[class]; n != nil {
				u := newUnit(unitName, n.words, i)
				u.class = n.class
				add(u)
			}
			continue
		}
		if stop(w.lower) || particle(w.text) {
			continue
		}
		if w.digit || monthsAndDays[w.lower] && (digitAt(cw, i-1) || digitAt(cw, i+1)) {
			j := i + 1
			for j < len(cw) && j-i < maxFigureWords && (cw[j].digit || monthsAndDays[cw[j].lower] && digitAt(cw, j-1)) {
				j++
			}
			ws := make([]string, 0, j-i)
			for k := i; k < j; k++ {
				ws = append(ws, cw[k].text)
			}
			add(newUnit(unitFigure, ws, i))
			i = j - 1
			continue
		}
		if !hasLetter(w.text) {
			continue
		}
		text := w.lower
		if lang.nouns && w.upper {
			text = w.text // German nouns keep their capital
		}
		add(newUnit(unitWord, []string{text}, i))
	}
	return units
}

// hasYear reports whether a figure has a year (four digits, 1000-2199).
func hasYear(ws []string) bool {
	for _, w := range ws {
		if len(w) == 4 && (w[0] == '1' || w[0] == '2' && w[1] <= '1') && strings.Trim(w, "0123456789") == "" {
			return true
		}
	}
	return false
}

func digitAt(ws []word, i int) bool { return i >= 0 && i < len(ws) && ws[i].digit }

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// sameName reports whether one name is part of the other ("Hafenecker"
// and "Christian Hafenecker").
func sameName(a, b string) bool {
	return a == b || strings.HasSuffix(a, " "+b) || strings.HasSuffix(b, " "+a) ||
		strings.HasPrefix(a, b+" ") || strings.HasPrefix(b, a+" ")
}

// fits reports whether some name could stand for a pronoun of the class.
func fits(ns []name, class int) bool {
	for _, n := range ns {
		if n.class == class || n.class == classUnknown {
			return true
		}
	}
	return false
}

// resolve finds the name a pronoun of the class stands for: in the
// nearest sentence (of the last five of the context) with a name that
// fits, the one name of that class, or else the one name of unknown
// class. More than one candidate: nil, the pronoun stays unresolved.
func resolve(ns []name, last, class int) *name {
	for s := last; s > last-maxBackSentence && s >= 0; s-- {
		var strong, weak []*name
		for k := range ns {
			n := &ns[k]
			if n.sent != s {
				continue
			}
			switch n.class {
			case class:
				strong = appendDistinct(strong, n)
			case classUnknown:
				weak = appendDistinct(weak, n)
			}
		}
		switch {
		case len(strong) == 1:
			return strong[0]
		case len(strong) > 1:
			return nil
		case len(weak) == 1:
			return weak[0]
		case len(weak) > 1:
			return nil
		}
	}
	return nil
}

// appendDistinct adds n unless the same name (or a longer form of it) is
// there; a longer form replaces a shorter one.
func appendDistinct(ns []*name, n *name) []*name {
	key := strings.ToLower(strings.Join(n.words, " "))
	for k, m := range ns {
		mk := strings.ToLower(strings.Join(m.words, " "))
		if sameName(mk, key) {
			if len(key) > len(mk) {
				ns[k] = n
			}
			return ns
		}
	}
	return append(ns, n)
}

// demote turns the names that did not fit in a query into plain words,
// so they can still fill one.
func demote(units, kept []unit) []unit {
	keep := map[string]bool{}
	for _, u := range kept {
		keep[u.key] = true
	}
	out := make([]unit, 0, len(units))
	for _, u := range units {
		if u.kind != unitName || keep[u.key] {
			out = append(out, u)
			continue
		}
		for k, w := range u.words {
			out = append(out, newUnit(unitWord, []string{w}, u.pos+k))
		}
	}
	return out
}

// rankWords orders the plain words by how specific they are: vague words
// last, then longer first, then in claim order.
func rankWords(units []unit) []unit {
	var ws []unit
	for _, u := range units {
		if u.kind == unitWord {
			ws = append(ws, u)
		}
	}
	slices.SortStableFunc(ws, func(a, b unit) int {
		if c := cmp.Compare(b2i(weakWords[a.key]), b2i(weakWords[b.key])); c != 0 {
			return c
		}
		if c := cmp.Compare(min(utf8.RuneCountInString(b.key), 12), min(utf8.RuneCountInString(a.key), 12)); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	return ws
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pick selects units of a kind, in claim order, while their words fit in
// budget.
func pick(units []unit, kind unitKind, budget int) []unit {
	var out []unit
	used := 0
	for _, u := range units {
		if u.kind != kind {
			continue
		}
		if used+len(u.words) > budget {
			if used == 0 && kind == unitName {
				u.words = u.words[:budget]
				out = append(out, u)
			}
			break
		}
		out = append(out, u)
		used += len(u.words)
	}
	return out
}

func countWords(us []unit) int {
	n := 0
	for _, u := range us {
		n += len(u.words)
	}
	return n
}

// fill adds words from ws (skipping those in skip) until the query has
// MaxQueryWords words; it returns the query's units and the words added.
// Vague words ("number", "official") are added only to reach
// MinQueryWords.
func fill(base, ws []unit, skip map[string]bool) (q []unit, added []unit) {
	q = slices.Clone(base)
	for _, w := range ws {
		n := countWords(q)
		if n >= MaxQueryWords || weakWords[w.key] && n >= MinQueryWords {
			break
		}
		if skip[w.key] {
			continue
		}
		q = append(q, w)
		added = append(added, w)
	}
	return q, added
}

// render writes a query's units in claim order, within the bounds.
func render(us []unit, extra ...string) string {
	us = slices.Clone(us)
	slices.SortStableFunc(us, func(a, b unit) int { return cmp.Compare(a.pos, b.pos) })
	var words []string
	for _, u := range us {
		words = append(words, u.words...)
	}
	words = append(words, extra...)
	if len(words) > MaxQueryWords {
		words = words[:MaxQueryWords]
	}
	for len(words) > MinQueryWords && len(strings.Join(words, " ")) > MaxQueryBytes {
		words = words[:len(words)-1]
	}
	return strings.Join(words, " ")
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// keywordQueries builds two or three distinct keyword queries, or none.
func keywordQueries(units []unit, lang lexicon) []Query {
	names := pick(units, unitName, maxEntityWords)
	figures := pick(units, unitFigure, maxFigureWords)
	ranked := rankWords(demote(units, names))

	var texts []string
	seen := map[string]bool{}
	try := func(s string) {
		key := wordSet(s)
		if wordCount(s) >= MinQueryWords && !seen[key] && len(texts) < 3 {
			seen[key] = true
			texts = append(texts, s)
		}
	}
	topic, used := fill(names, ranked, nil)
	try(render(topic))
	if len(figures) > 0 {
		withFigures, _ := fill(append(slices.Clone(names), figures...), ranked, nil)
		try(render(withFigures))
	}
	skip := map[string]bool{}
	for _, u := range used {
		skip[u.key] = true
	}
	if detail, added := fill(names, ranked, skip); slices.ContainsFunc(added, func(u unit) bool { return !weakWords[u.key] }) {
		try(render(detail))
	}
	if len(texts) >= 2 {
		return toQueries(texts)
	}
	// Too few words for two distinct queries: add a search word.
	base := append(append(slices.Clone(names), figures...), ranked...)
	for countWords(base) > MaxQueryWords-1 {
		base = base[:len(base)-1]
	}
	if countWords(base) < MinQueryWords-1 {
		return nil
	}
	for _, angle := range lang.angles {
		if len(texts) >= 2 {
			break
		}
		try(render(base, angle))
	}
	if len(texts) < 2 {
		return nil
	}
	return toQueries(texts)
}

func wordSet(s string) string {
	ws := strings.Fields(strings.ToLower(s))
	slices.Sort(ws)
	return strings.Join(ws, " ")
}

func toQueries(texts []string) []Query {
	out := make([]Query, len(texts))
	for i, t := range texts {
		out[i] = Query{Text: t, Kind: KindKeyword}
	}
	return out
}

// causalAt finds the first causal marker of the claim and returns the
// index of the word where cause and effect divide: the marker, or the
// first word after the comma of "After X, Y".
func causalAt(cw []word) (int, bool) {
	for i := range cw {
		for _, parts := range causalPhrases {
			if cw[i].lower != parts[0] || i+len(parts) > len(cw) {
				continue
			}
			match := true
			for k, p := range parts {
				if cw[i+k].lower != p {
					match = false
					break
				}
			}
			if match {
				return i, true
			}
		}
	}
	for i, w := range cw {
		if w.first && afterOpeners[w.lower] {
			if k, ok := commaAfter(cw, i); ok {
				return k, true
			}
		}
	}
	return 0, false
}

// commaAfter reports whether the sentence of word i has a clause break
// (a comma) after at least one more word, "After the tax cut, jobs
// grew.", and returns the first word after it.
func commaAfter(cw []word, i int) (int, bool) {
	for k := i + 1; k+1 < len(cw) && cw[k+1].sent == cw[i].sent; k++ {
		if cw[k].comma {
			return k + 1, true
		}
	}
	return 0, false
}

// timelineQuery builds the timeline query of a causal claim whose marker
// is at word at: names, the best word on each side, a year, "timeline".
func timelineQuery(units []unit, at int, lang lexicon) (Query, bool) {
	names := pick(units, unitName, 2)
	var figure []unit
	for _, u := range units {
		if u.kind == unitFigure && len(u.words) <= 2 && hasYear(u.words) {
			figure = []unit{u}
			break
		}
	}
	var before, after []unit
	for _, u := range rankWords(units) {
		if causalWords[strings.ToLower(u.key)] {
			continue
		}
		if u.pos < at {
			before = append(before, u)
		} else {
			after = append(after, u)
		}
	}
	per := 1
	if len(names) == 0 {
		per = 2
	}
	q := slices.Clone(names)
	q = append(q, before[:min(per, len(before))]...)
	q = append(q, after[:min(per, len(after))]...)
	if countWords(q)+countWords(figure) <= MaxQueryWords-1 {
		q = append(q, figure...)
	}
	text := render(q, lang.timeline)
	if wordCount(text) < MinQueryWords {
		return Query{}, false
	}
	return Query{Text: text, Kind: KindTimeline}, true
}
