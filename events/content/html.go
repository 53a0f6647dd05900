package content

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// blockSeparatorTags are the elements whose start and end each contribute one
// space to extracted text, so compact markup such as <p>a</p><p>b</p> still
// yields separate words. The set must match the extension's, or client and
// server text (and therefore hashes) diverge.
var blockSeparatorTags = map[string]bool{
	"p": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"h5": true, "h6": true, "figcaption": true, "blockquote": true,
	"tr": true, "td": true, "th": true, "div": true,
}

// nonContentTags never contain prose; their subtrees are ignored by both the
// text extractor and the Markdown renderer.
var nonContentTags = map[string]bool{"script": true, "style": true, "noscript": true}

// parseFragment parses src as the reference does: an HTML5 fragment whose
// context is a <template> element (parse5's default), so that top-level table
// parts such as <tr> keep their elements instead of being dropped.
func parseFragment(src string) ([]*html.Node, error) {
	ctx := &html.Node{Type: html.ElementNode, DataAtom: atom.Template, Data: "template"}
	nodes, err := html.ParseFragment(strings.NewReader(validUTF8(src)), ctx)
	if err != nil {
		return nil, fmt.Errorf("parse HTML fragment: %w", err)
	}
	return nodes, nil
}

// lowerName is the element's tag name in lower case, the form the reference
// compares against (tagName.toLowerCase()), whatever the namespace.
func lowerName(n *html.Node) string {
	return strings.ToLower(n.Data)
}

// isHTMLElement reports whether n is an HTML-namespace element with the given
// lower-case local name (what a DOM nodeName of "P", "PRE", ... denotes).
func isHTMLElement(n *html.Node, name string) bool {
	return n != nil && n.Type == html.ElementNode && n.Namespace == "" && n.Data == name
}

// firstChild returns n's first child as a DOM (and parse5) sees it. The Go
// parser stores a <template>'s contents as ordinary children, but in the DOM
// they live in a separate fragment: the template itself has no children, so
// neither the reference extractor nor Turndown ever sees them.
func firstChild(n *html.Node) *html.Node {
	if isHTMLElement(n, "template") {
		return nil
	}
	return n.FirstChild
}

// lastChild is the counterpart of firstChild.
func lastChild(n *html.Node) *html.Node {
	if isHTMLElement(n, "template") {
		return nil
	}
	return n.LastChild
}

// attr returns the value of the first no-namespace attribute named key, and
// whether it exists (DOM getAttribute returning null or a string).
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// textContent is the DOM textContent of n: the data of its descendant text
// nodes in document order.
func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	appendTextContent(&b, n)
	return b.String()
}

func appendTextContent(b *strings.Builder, n *html.Node) {
	for c := firstChild(n); c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			appendTextContent(b, c)
		}
	}
}

// skipFunc decides, in document order, whether a node and its subtree are left
// out of extracted text. It may keep state (the Wikipedia filter does).
type skipFunc func(n *html.Node) bool

// extractText concatenates the text of nodes the way the reference extractor
// does: decoded text nodes as they are, one space on entering and on leaving
// each block separator element, nothing for any other element, and nothing at
// all from non-content elements or from nodes skip rejects. The result still
// needs Normalize.
func extractText(nodes []*html.Node, skip skipFunc) string {
	var b strings.Builder
	for _, n := range nodes {
		appendExtractedText(&b, n, skip)
	}
	return b.String()
}

func appendExtractedText(b *strings.Builder, n *html.Node, skip skipFunc) {
	switch n.Type {
	case html.ElementNode:
		name := lowerName(n)
		if nonContentTags[name] {
			return
		}
		if skip != nil && skip(n) {
			return
		}
		separator := blockSeparatorTags[name]
		if separator {
			b.WriteByte(' ')
		}
		for c := firstChild(n); c != nil; c = c.NextSibling {
			appendExtractedText(b, c, skip)
		}
		if separator {
			b.WriteByte(' ')
		}
	case html.TextNode:
		if skip != nil && skip(n) {
			return
		}
		b.WriteString(n.Data)
	default:
		// Comments carry no text.
	}
}

// htmlToText parses src and returns its normalized text.
func htmlToText(src string, skip skipFunc) (string, error) {
	nodes, err := parseFragment(src)
	if err != nil {
		return "", err
	}
	return Normalize(extractText(nodes, skip)), nil
}

// LessWrongHTMLToText returns the canonical text of a LessWrong post body
// (GraphQL contents.html, or the extension's htmlContent when the server
// cannot fetch its own copy).
func LessWrongHTMLToText(src string) (string, error) {
	text, err := htmlToText(src, nil)
	if err != nil {
		return "", fmt.Errorf("lesswrong text: %w", err)
	}
	return text, nil
}

// SubstackHTMLToText returns the canonical text of a Substack post body. The
// rules are the generic ones, the same as LessWrong's; the separate entry
// point keeps call sites explicit about which platform's text they produce.
func SubstackHTMLToText(src string) (string, error) {
	text, err := htmlToText(src, nil)
	if err != nil {
		return "", fmt.Errorf("substack text: %w", err)
	}
	return text, nil
}
