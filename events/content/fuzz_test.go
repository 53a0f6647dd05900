package content

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// checkNormalized fails unless out looks like Normalize output: valid UTF-8,
// no zero-width characters, only plain spaces as whitespace, never doubled
// or at the ends, and a fixed point of Normalize. The one exception to the
// fixed point is the reference's own: deleting a zero-width character after
// NFC can expose a base and combining mark that a second pass composes, and
// then the output is not NFC.
func checkNormalized(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 in %q", out)
	}
	prevSpace := false
	for i, r := range out {
		if r >= 0x200B && r <= 0x200D || r == 0xFEFF {
			t.Fatalf("zero-width character left in %q", out)
		}
		if isJSSpace(r) {
			if r != ' ' || prevSpace || i == 0 || i == len(out)-1 {
				t.Fatalf("whitespace not collapsed or trimmed in %q", out)
			}
			prevSpace = true
			continue
		}
		prevSpace = false
	}
	if !norm.NFC.IsNormalString(out) {
		return
	}
	if again := Normalize(out); again != out {
		t.Fatalf("not idempotent: %q -> %q", out, again)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		"", "  Café\u200b   is \n\t great\ufeff  ", "“Hello,” she said", "a—b–c", "wait… what",
		"x\u3000y\u00a0z", "x\u180ey", "x\u0085y", "e\u200b\u0301", "\u1100\u200b\u1161", "\xff\xfe",
		"Ångström vs A\u030angstro\u0308m", "😀 emoji  end", "\u0130I\u0131",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Normalize(s)
		checkNormalized(t, out)
		if norm.NFC.IsNormalString(out) {
			return
		}
		// Only a deleted zero-width character can leave output that is not NFC.
		if !strings.ContainsAny(s, "\u200b\u200c\u200d\ufeff") {
			t.Fatalf("non-NFC output %q from %q without zero-width characters", out, s)
		}
	})
}

func FuzzHTMLToText(f *testing.F) {
	for _, seed := range []string{
		"", "<p>Alpha</p><p>Beta</p>", "<table><tr><td>a</td></tr></table>", "<tr><td>x",
		"<div class=\"mw-heading mw-heading2\"><h2>Notes</h2></div><p>gone</p><h2>See also</h2>",
		"<sup class=\"reference\">[1]</sup><div class=\"navbox\">n</div>", "<svg><title><![CDATA[x]]>",
		"<template><p>x</p></template>", "<noscript><img src=a></noscript>", "<pre>\n\nx</pre>",
		"<ol start=\"1e3\"><li><p>a</p></li></ol>", "<a href=\"(x)\"></a><img src=\"\">", "\x00\xff<b>",
		"<caption>x<th>y", "<select><li>x", strings.Repeat("<div>", 520),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, convert := range []func(string) (string, error){LessWrongHTMLToText, SubstackHTMLToText, WikipediaHTMLToText} {
			out, err := convert(src)
			if err != nil {
				continue // only markup nested past the parser's limit
			}
			checkNormalized(t, out)
		}
		// The Markdown renderers share the parser; they must not panic
		// either, and every placeholder they report must appear in order.
		for _, render := range []func(string) (Markdown, error){LessWrongHTMLToMarkdown, WikipediaHTMLToMarkdown} {
			md, err := render(src)
			if err != nil {
				continue
			}
			for i, p := range md.ImagePlaceholders {
				if p.Index != i || p.MatchBy != MatchBySourceURL {
					t.Fatalf("placeholder %d is %+v", i, p)
				}
			}
		}
	})
}
