package content

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// excludedWikipediaSections are appendix sections (compared after Normalize
// and lower-casing) that list citations and links rather than carry article
// prose. "See also" is deliberately absent: it describes related topics.
var excludedWikipediaSections = map[string]bool{
	"references":      true,
	"notes":           true,
	"further reading": true,
	"external links":  true,
	"bibliography":    true,
	"sources":         true,
	"citations":       true,
}

// excludedWikipediaClasses mark non-article elements: edit links, reference
// lists, navigation boxes, category links, and UI that Wikipedia's scripts
// inject into the live page (collapsible toggles, media players). Matching is
// per class token, case-insensitively.
var excludedWikipediaClasses = map[string]bool{
	"mw-editsection":        true,
	"catlinks":              true,
	"printfooter":           true,
	"references":            true,
	"mw-references-wrap":    true,
	"reflist":               true,
	"noprint":               true,
	"navbox":                true,
	"vertical-navbox":       true,
	"mw-collapsible-toggle": true,
	"mw-tmh-player":         true,
}

// classTokens splits the element's first class attribute on whitespace.
func classTokens(n *html.Node) []string {
	v, _ := attr(n, "class")
	return jsFields(v)
}

func hasClassToken(tokens []string, want string) bool {
	for _, t := range tokens {
		if jsToLower(t) == want {
			return true
		}
	}
	return false
}

// headingLevel returns 2..6 for an h2..h6 tag name (any case), else 0. An h1
// is the page title, never a section boundary.
func headingLevel(n *html.Node) int {
	if n.Type != html.ElementNode || len(n.Data) != 2 {
		return 0
	}
	if n.Data[0] != 'h' && n.Data[0] != 'H' {
		return 0
	}
	if d := n.Data[1]; d >= '2' && d <= '6' {
		return int(d - '0')
	}
	return 0
}

// sectionHeading recognises the two heading shapes MediaWiki emits: a bare
// <h2>..<h6>, and the newer <div class="mw-heading"> wrapper whose first
// heading child carries the level and title (the wrapper also holds the
// [edit] link, which must not be part of the title). It returns the level
// (0 if n is not a heading) and the element whose text is the title.
func sectionHeading(n *html.Node, tokens []string) (int, *html.Node) {
	if level := headingLevel(n); level > 0 {
		return level, n
	}
	if lowerName(n) != "div" || !hasClassToken(tokens, "mw-heading") {
		return 0, nil
	}
	for c := firstChild(n); c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			if level := headingLevel(c); level > 0 {
				return level, c
			}
		}
	}
	return 0, nil
}

// isExcludedWikipediaSection reports whether a heading's raw text names an
// excluded section. The reference normalizes and lower-cases twice (once to
// build the title, once to compare it); repeating that keeps edge cases equal.
func isExcludedWikipediaSection(rawTitle string) bool {
	title := jsToLower(Normalize(rawTitle))
	return excludedWikipediaSections[jsToLower(Normalize(title))]
}

// isExcludedWikipediaElement reports elements that are never article prose,
// wherever they appear.
func isExcludedWikipediaElement(n *html.Node, tokens []string) bool {
	name := lowerName(n)
	if nonContentTags[name] {
		return true
	}
	if name == "sup" && hasClassToken(tokens, "reference") {
		return true // citation markers such as [1]
	}
	for _, t := range tokens {
		if excludedWikipediaClasses[jsToLower(t)] {
			return true
		}
	}
	return false
}

// wikipediaFilter is the stateful document-order filter shared by the text
// extractor and the Markdown pre-filter. Once an excluded section heading is
// seen, everything is skipped until a heading of the same or a higher level
// (a smaller number) starts the next section.
type wikipediaFilter struct {
	skipLevel int // level of the excluded section being skipped; 0 if none
}

func (f *wikipediaFilter) skip(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return f.skipLevel > 0
	}
	tokens := classTokens(n)
	if level, titleNode := sectionHeading(n, tokens); level > 0 {
		if f.skipLevel > 0 && level <= f.skipLevel {
			f.skipLevel = 0
		}
		if isExcludedWikipediaSection(textContent(titleNode)) {
			f.skipLevel = level
			return true
		}
	}
	return f.skipLevel > 0 || isExcludedWikipediaElement(n, tokens)
}

// WikipediaHTMLToText returns the canonical text of a Wikipedia article from
// the MediaWiki Parse API HTML (action=parse, pinned to the observed
// revision), with appendix sections and non-article elements pruned.
func WikipediaHTMLToText(src string) (string, error) {
	f := &wikipediaFilter{}
	text, err := htmlToText(src, f.skip)
	if err != nil {
		return "", fmt.Errorf("wikipedia text: %w", err)
	}
	return text, nil
}

// prefilterWikipediaHTML removes what WikipediaHTMLToText would skip and
// serializes the rest, so the Markdown renderer sees the same article body as
// the text extractor. The round trip through serialization is deliberate: the
// reference re-parses the pruned HTML, which merges text nodes that pruning
// made adjacent, and Turndown's whitespace handling depends on that.
func prefilterWikipediaHTML(src string) (string, error) {
	nodes, err := parseFragment(src)
	if err != nil {
		return "", err
	}
	f := &wikipediaFilter{}
	kept := nodes[:0]
	for _, n := range nodes {
		if f.skip(n) {
			continue
		}
		pruneWikipediaChildren(n, f)
		kept = append(kept, n)
	}
	var b strings.Builder
	for _, n := range kept {
		serializeNode(&b, n)
	}
	return b.String(), nil
}

// pruneWikipediaChildren removes skipped descendants of n in document order.
func pruneWikipediaChildren(n *html.Node, f *wikipediaFilter) {
	if n.Type != html.ElementNode {
		return
	}
	for c := firstChild(n); c != nil; {
		next := c.NextSibling
		if f.skip(c) {
			n.RemoveChild(c)
		} else {
			pruneWikipediaChildren(c, f)
		}
		c = next
	}
}
