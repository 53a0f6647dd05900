package fetchurl

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxTitleRunes caps the title; a longer one is junk or an attack on the
// context window.
const maxTitleRunes = 300

// skipped are elements whose subtree is never text a reader came for:
// code, styling, graphics, embedded objects, site chrome and controls.
// header is handled separately: inside <main> or <article> it holds the
// headline.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Title: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Canvas: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Audio: true,
	atom.Video: true, atom.Nav: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
	atom.Input: true, atom.Dialog: true, atom.Menu: true,
}

// Block elements and the break they put around their content: 2 is a
// paragraph break (blank line), 1 a line break.
var blocks = map[atom.Atom]int{
	atom.P: 2, atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2, atom.H6: 2,
	atom.Blockquote: 2, atom.Pre: 2, atom.Table: 2, atom.Ul: 2, atom.Ol: 2, atom.Dl: 2,
	atom.Figure: 2, atom.Section: 2, atom.Article: 2, atom.Main: 2, atom.Header: 2,
	atom.Hr: 2, atom.Address: 2, atom.Details: 2, atom.Fieldset: 2,
	atom.Div: 1, atom.Li: 1, atom.Tr: 1, atom.Dt: 1, atom.Dd: 1, atom.Figcaption: 1,
	atom.Br: 1, atom.Summary: 1, atom.Caption: 1,
}

// extractHTML returns the title and the readable text of an HTML document:
// the content of its <main> (or its largest <article>, or else the body)
// without scripts, styles, navigation and other page furniture, with
// paragraph, heading and list-item breaks kept, headings marked with "#"
// and list items with "- ", whitespace collapsed and entities decoded.
func extractHTML(src string) (title, text string) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		// html.Parse only fails on reader errors; a string reader has none.
		return "", ""
	}
	title = findTitle(doc)
	for _, root := range contentRoots(doc) {
		if text = renderText(root); text != "" {
			break
		}
	}
	return title, text
}

// findTitle is the <title>, else the og:title meta property, else the
// first <h1>.
func findTitle(doc *html.Node) string {
	if n := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title && !inForeign(n) }); n != nil {
		if t := clip(collapse(textContent(n)), maxTitleRunes); t != "" {
			return t
		}
	}
	if n := findFirst(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Meta && attr(n, "property") == "og:title"
	}); n != nil {
		if t := clip(collapse(attr(n, "content")), maxTitleRunes); t != "" {
			return t
		}
	}
	if n := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.H1 }); n != nil {
		return clip(collapse(textContent(n)), maxTitleRunes)
	}
	return ""
}

// contentRoots lists, best first, the subtrees that may hold the page's
// content: <main> (or role="main"), the <article> with the most text, the
// body, the whole document. The first one with any text wins.
func contentRoots(doc *html.Node) []*html.Node {
	var roots []*html.Node
	if m := findFirst(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Main || attr(n, "role") == "main"
	}); m != nil {
		roots = append(roots, m)
	}
	var best *html.Node
	bestLen := 0
	walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Article {
			if l := len(renderText(n)); l > bestLen {
				best, bestLen = n, l
			}
			return false // an article inside an article is part of it
		}
		return true
	})
	if best != nil {
		roots = append(roots, best)
	}
	if body := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body }); body != nil {
		roots = append(roots, body)
	}
	return append(roots, doc)
}

// renderText renders the readable text under root.
func renderText(root *html.Node) string {
	w := &textWriter{}
	w.node(root)
	return w.String()
}

// textWriter accumulates text with collapsed whitespace. Breaks, spaces
// and prefixes ("## ", "- ", " | ") are held back until the next visible
// character, so empty elements leave no trace and breaks never pile up.
type textWriter struct {
	b       strings.Builder
	space   bool   // whitespace seen since the last character
	brk     int    // pending break: 0, 1 (new line) or 2 (blank line)
	prefix  string // written before the next character
	pre     int    // depth of <pre> elements
	content int    // depth of <main> and <article> elements
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.preText(n.Data)
		} else {
			w.text(n.Data)
		}
		return
	case html.DocumentNode:
		w.children(n)
		return
	case html.ElementNode:
	default:
		return
	}
	if skip(n, w.content > 0) {
		return
	}
	brk := blocks[n.DataAtom]
	w.block(brk)
	prefix := ""
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		prefix = strings.Repeat("#", int(n.Data[1]-'0')) + " "
	case atom.Li:
		prefix = "- "
	case atom.Td, atom.Th:
		if prevCell(n) {
			prefix = " | "
		}
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	}
	if n.DataAtom == atom.Main || n.DataAtom == atom.Article || attr(n, "role") == "main" {
		w.content++
		defer func() { w.content-- }()
	}
	if prefix != "" {
		w.prefix = prefix
	}
	w.children(n)
	if prefix != "" && w.prefix == prefix {
		// The element had no text: its marker must not label the next one.
		w.prefix = ""
	}
	w.block(brk)
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// block requests a break of the given strength (0: none).
func (w *textWriter) block(brk int) {
	if brk > w.brk {
		w.brk = brk
	}
	if brk > 0 {
		w.space = false
	}
}

// text writes inline text with whitespace collapsed.
func (w *textWriter) text(s string) {
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			w.space = true
		case invisible(r):
		default:
			w.char(r)
		}
	}
}

// preText writes preformatted text keeping its line breaks and indentation
// (trailing spaces are trimmed at the end).
func (w *textWriter) preText(s string) {
	for i, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if i > 0 {
			w.block(1)
		}
		for _, r := range line {
			switch {
			case r == '\t' || r == ' ':
				// Indentation matters in code; whitespace before the first
				// character of the page does not.
				if w.b.Len() > 0 {
					w.flush()
					w.b.WriteRune(r)
				}
			case unicode.IsSpace(r), invisible(r):
			default:
				w.char(r)
			}
		}
	}
}

// char writes one visible character after whatever is pending.
func (w *textWriter) char(r rune) {
	w.flush()
	if w.space && w.b.Len() > 0 && !w.atLineStart() {
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteRune(r)
}

// flush writes the pending break and prefix.
func (w *textWriter) flush() {
	if w.brk > 0 && w.b.Len() > 0 {
		w.b.WriteString("\n\n"[:w.brk])
		w.space = false
	}
	w.brk = 0
	if w.prefix != "" {
		if w.atLineStart() {
			w.b.WriteString(strings.TrimLeft(w.prefix, " "))
		} else {
			w.b.WriteString(w.prefix)
		}
		w.prefix = ""
		w.space = false
	}
}

func (w *textWriter) atLineStart() bool {
	s := w.b.String()
	return s == "" || s[len(s)-1] == '\n'
}

// String is the text with trailing spaces of every line removed.
func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// skip reports whether the element's subtree is left out.
func skip(n *html.Node, inContent bool) bool {
	if skipped[n.DataAtom] {
		return true
	}
	if n.DataAtom == atom.Header && !inContent {
		return true
	}
	if _, hidden := attrOK(n, "hidden"); hidden {
		return true
	}
	switch attr(n, "role") {
	case "navigation", "banner", "contentinfo", "complementary", "search", "dialog":
		return true
	}
	if strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	return (n.DataAtom == atom.Ul || n.DataAtom == atom.Ol) && isLanguageList(n)
}

// isLanguageList reports whether a list is a language switcher: most of
// its items link to a translation (an <a hreflang>), as on Wikipedia,
// where it sits inside <main> and would bury the article under a hundred
// language names.
func isLanguageList(list *html.Node) bool {
	items, translated := 0, 0
	for li := list.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || li.DataAtom != atom.Li {
			continue
		}
		items++
		if findFirst(li, func(n *html.Node) bool {
			_, ok := attrOK(n, "hreflang")
			return n.DataAtom == atom.A && ok
		}) != nil {
			translated++
		}
	}
	return items >= 3 && translated*5 >= items*4
}

// prevCell reports whether a table cell follows another in its row.
func prevCell(n *html.Node) bool {
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode && (s.DataAtom == atom.Td || s.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

// invisible are format characters that only disturb the text.
func invisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
		return true
	}
	return r < 0x20 || r == 0x7f
}

// inForeign reports whether n is inside an SVG or MathML subtree.
func inForeign(n *html.Node) bool {
	return n.Namespace == "svg" || n.Namespace == "math"
}

func textContent(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}

// walk visits n and its descendants depth first; visit returns false to
// skip a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// findFirst returns the first element, in document order, that match
// accepts, outside skipped subtrees other than <head>.
func findFirst(n *html.Node, match func(*html.Node) bool) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if c.Type != html.ElementNode {
			return true
		}
		if match(c) {
			found = c
			return false
		}
		return c.DataAtom == atom.Head || !skipped[c.DataAtom]
	})
	return found
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// collapse trims s and collapses its whitespace runs to single spaces.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || invisible(r) }), " ")
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimSpace(s[:i])
}
