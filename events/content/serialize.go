package content

import (
	"strings"

	"golang.org/x/net/html"
)

// serializeNode writes n as HTML the way parse5's serializer does. It exists
// because html.Render differs in ways that survive a re-parse (for example it
// adds a newline after <pre>), and the Wikipedia Markdown path must re-parse
// exactly what the reference re-parses.
func serializeNode(b *strings.Builder, n *html.Node) {
	switch n.Type {
	case html.ElementNode:
		b.WriteByte('<')
		b.WriteString(n.Data)
		for _, a := range n.Attr {
			b.WriteByte(' ')
			b.WriteString(serializedAttrName(a))
			b.WriteString(`="`)
			writeEscaped(b, a.Val, true)
			b.WriteByte('"')
		}
		b.WriteByte('>')
		if n.Namespace == "" && serializerVoidElements[n.Data] {
			return
		}
		// A template's contents are serialized even though the DOM hides
		// them from traversal.
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			serializeNode(b, c)
		}
		b.WriteString("</")
		b.WriteString(n.Data)
		b.WriteByte('>')
	case html.TextNode:
		if p := n.Parent; p != nil && p.Type == html.ElementNode && p.Namespace == "" && rawTextParents[p.Data] {
			b.WriteString(n.Data)
			return
		}
		writeEscaped(b, n.Data, false)
	case html.CommentNode:
		// The Go parser stores comment text with character references
		// decoded, so it is re-escaped here to keep "--&gt;" from closing
		// the comment early on the re-parse. Comment text never reaches the
		// output, only the comment's extent matters.
		b.WriteString("<!--")
		writeEscaped(b, n.Data, false)
		b.WriteString("-->")
	case html.DoctypeNode:
		b.WriteString("<!DOCTYPE ")
		b.WriteString(n.Data)
		b.WriteByte('>')
	}
}

// serializerVoidElements have no end tag and no children when serialized.
var serializerVoidElements = map[string]bool{
	"area": true, "base": true, "basefont": true, "bgsound": true, "br": true,
	"col": true, "embed": true, "frame": true, "hr": true, "img": true,
	"input": true, "keygen": true, "link": true, "meta": true, "param": true,
	"source": true, "track": true, "wbr": true,
}

// rawTextParents hold text that is written without escaping (noscript too,
// since the parser runs with scripting enabled).
var rawTextParents = map[string]bool{
	"style": true, "script": true, "xmp": true, "iframe": true, "noembed": true,
	"noframes": true, "plaintext": true, "noscript": true,
}

func serializedAttrName(a html.Attribute) string {
	switch a.Namespace {
	case "":
		return a.Key
	case "xmlns":
		if a.Key == "xmlns" {
			return a.Key
		}
		return "xmlns:" + a.Key
	default: // "xml", "xlink"
		return a.Namespace + ":" + a.Key
	}
}

// writeEscaped escapes &, U+00A0 and either " (attribute values) or < and >
// (text), as the HTML serialization algorithm specifies.
func writeEscaped(b *strings.Builder, s string, attribute bool) {
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == 0x00A0:
			b.WriteString("&nbsp;")
		case attribute && r == '"':
			b.WriteString("&quot;")
		case !attribute && r == '<':
			b.WriteString("&lt;")
		case !attribute && r == '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
}
