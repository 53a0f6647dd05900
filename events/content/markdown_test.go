package content

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The expectations below were produced by the reference pipeline (parse5,
// Turndown 7.2.2 with the reference rules) and pin down its less obvious
// behaviour.

func TestMarkdownRendering(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		html         string
		markdown     string
		placeholders []string
		text         string
	}{
		{"empty link renders as its content", "<p>see <a href=\"/x\"></a> here</p>", "see here", nil, "see here"},
		{"image-only link keeps just the placeholder", "<p><a href=\"/wiki/File:x.png\"><img src=\"//up/x.png\"></a> caption</p>", "[IMAGE:0] caption", []string{"//up/x.png"}, "caption"},
		{"link with text and parentheses", "<a href=\"/wiki/X_(y)\" title=\"Say &quot;hi&quot;\">X</a>", "[X](/wiki/X_\\(y\\) \"Say \\\"hi\\\"\")", nil, "X"},
		{"noscript image consumes a placeholder number", "<noscript><img src=\"a.png\"></noscript><p><img src=\"b.png\"></p>", " [IMAGE:1]", []string{"a.png", "b.png"}, ""},
		{"ordered list start and nesting", "<ol start=\"3\"><li>a</li><li>b<ul><li>c</li></ul></li></ol>", "3.  a\n4.  b\n    -   c", nil, "a b c"},
		{"ordered list odd starts", "<ol start=\"1e3\"><li>a</li></ol><ol start=\"x\"><li>b</li></ol><ol start=\"2.5\"><li>c</li><li>d</li></ol>", "1000.  a\n\nNaN.  b\n\n2.5.  c\n3.5.  d", nil, "a b c d"},
		{"list item paragraphs", "<ul><li><p>one</p><p>two</p></li><li>three</li></ul>", "-   one\n    \n    two\n    \n-   three", nil, "one two three"},
		{"fenced code keeps text and grows fence", "<pre><code class=\"language-go\">x := 1\n```\n**y**\n</code></pre>", "````go\nx := 1\n```\n**y**\n````", nil, "x := 1 ``` **y**"},
		{"pre without code", "<pre>a  *b*\n  c</pre>", "a  \\*b\\*\n  c", nil, "a *b* c"},
		{"code span inside pre", "<pre>x <code>a`b</code> y</pre>", "x ``a`b`` y", nil, "x a`b y"},
		{"inline code is plain text", "<p>call <code>f(*x)</code> now</p>", "call f(*x) now", nil, "call f(*x) now"},
		{"emphasis is plain text", "<p><strong>bold</strong> <em>it</em> <del>gone</del> <s>s</s> <b>b</b> <i>i</i></p>", "bold it gone s b i", nil, "bold it gone s b i"},
		{"escapes at line start and inline", "<p>- item</p><p>+ plus</p><p>## head</p><p>1. one</p><p>> quote</p><p>a*b_c [d] `e` \\f</p><p>=== x</p><p>~~~ y</p>", "\\- item\n\n\\+ plus\n\n\\## head\n\n1\\. one\n\n\\> quote\n\na\\*b\\_c \\[d\\] \\`e\\` \\\\f\n\n\\=== x\n\n\\~~~ y", nil, "- item + plus ## head 1. one > quote a*b_c [d] `e` \\f === x ~~~ y"},
		{"blockquote with paragraphs", "<blockquote><p>a</p><p>b</p></blockquote>", "> a\n> \n> b", nil, "a b"},
		{"headings and rule", "<h1>One</h1><h3>Three</h3><hr><h6>Six</h6>", "# One\n\n### Three\n\n* * *\n\n###### Six", nil, "One Three Six"},
		{"line breaks", "a<br>b<br><br>c", "a  \nb  \n  \nc", nil, "abc"},
		{"flanking whitespace moves outside emphasis", "<p>a<em> b </em>c</p><p>a <strong> b</strong> c</p>", "a b c\n\na b c", nil, "a b c a b c"},
		{"non-breaking space is kept", "<p>a&nbsp;<em>&nbsp;b</em></p>", "a  b", nil, "a b"},
		{"table cells become paragraphs", "<table><tr><th>H</th><td>D</td></tr></table>", "H\n\nD", nil, "H D"},
		{"template contents are ignored", "<template><p>hidden</p></template><p>shown</p>", "shown", nil, "shown"},
		{"comments and scripts vanish", "<p>a<!-- c -->b</p><script>x</script><style>y</style>", "ab", nil, "ab"},
		{"whitespace-only blocks", "<div> </div><p>\n</p>x", "x", nil, "x"},
		{"typographic characters stay in markdown", "<p>“Quote” — it’s…</p>", "“Quote” — it’s…", nil, "\"Quote\" - it's..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md, err := LessWrongHTMLToMarkdown(tc.html)
			require.NoError(t, err)
			require.Equal(t, tc.markdown, md.Text)
			var sources []string
			for i, p := range md.ImagePlaceholders {
				require.Equal(t, ImagePlaceholder{Index: i, MatchBy: MatchBySourceURL, SourceURL: p.SourceURL}, p)
				sources = append(sources, p.SourceURL)
			}
			require.Equal(t, tc.placeholders, sources)

			sub, err := SubstackHTMLToMarkdown(tc.html)
			require.NoError(t, err)
			require.Equal(t, md, sub, "Substack renders like LessWrong")

			text, err := LessWrongHTMLToText(tc.html)
			require.NoError(t, err)
			require.Equal(t, tc.text, text)
			subText, err := SubstackHTMLToText(tc.html)
			require.NoError(t, err)
			require.Equal(t, text, subText)
		})
	}
}

func TestWikipediaPruning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		html     string
		markdown string
		text     string
	}{
		{"legacy headline heading", "<h2><span class=\"mw-headline\" id=\"References\">References</span></h2><p>gone</p><h2>Life</h2><p>kept</p>", "## Life\n\nkept", "Life kept"},
		{"section skip ends at same level", "<div class=\"mw-heading mw-heading2\"><h2>External links</h2></div><p>x</p><div class=\"mw-heading mw-heading3\"><h3>Sub</h3></div><p>y</p><div class=\"mw-heading mw-heading2\"><h2>Legacy</h2></div><p>z</p>", "## Legacy\n\nz", "Legacy z"},
		{"excluded classes", "<p>a<sup class=\"reference\">[1]</sup> b<span class=\"mw-editsection\">[edit]</span></p><div class=\"navbox\">nav</div><table class=\"NoPrint\"><tr><td>np</td></tr></table><div class=\"printfooter\">pf</div><p>c</p>", "a b\n\nc", "a b c"},
		{"h1 never starts a section", "<h2>Notes</h2><p>n</p><h1>Top</h1><p>still skipped</p><h2>Back</h2>", "## Back", "Back"},
		{"title normalization", "<h2>  Further&nbsp;READING </h2><p>x</p><h2>See also</h2><p>y</p>", "## See also\n\ny", "See also y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := WikipediaHTMLToText(tc.html)
			require.NoError(t, err)
			require.Equal(t, tc.text, text)
			md, err := WikipediaHTMLToMarkdown(tc.html)
			require.NoError(t, err)
			require.Equal(t, tc.markdown, md.Text)
		})
	}
}
