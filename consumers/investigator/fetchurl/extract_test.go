package fetchurl

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}

// TestExtractGolden renders every testdata/html/<name>.html as
// "title: ...", a blank line and the text, compared with <name>.golden.txt.
func TestExtractGolden(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("testdata", "html", "*.html"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".html")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(page)
			require.NoError(t, err)
			title, text := extractHTML(string(src))
			golden(t, filepath.Join("html", name+".golden.txt"), "title: "+title+"\n\n"+text+"\n")
		})
	}
}

func TestExtractSmall(t *testing.T) {
	tests := []struct {
		name, html, title, text string
	}{
		{"empty", "", "", ""},
		{"text only", "just text", "", "just text"},
		{"entities", "<p>a &lt;b&gt; &amp; &quot;c&quot; &eacute; &#x263A;</p>", "", `a <b> & "c" é ☺`},
		{"inline spacing", "<p>one<b>two</b> <i>three</i></p><p>four</p>", "", "onetwo three\n\nfour"},
		{"empty heading leaves no marker", "<h2></h2><p>text</p>", "", "text"},
		{"list item with paragraph", "<ul><li><p>a</p></li><li>b</li></ul>", "", "- a\n\n- b"},
		{"headings", "<h1>A</h1><h3>B</h3>", "A", "# A\n\n### B"},
		{"title in svg ignored", "<svg><title>icon</title></svg><title>Real</title>", "Real", ""},
		{"long title clipped", "<title>" + strings.Repeat("x", 400) + "</title>", strings.Repeat("x", maxTitleRunes), ""},
		{"role main", `<div role="main"><header><h1>T</h1></header><p>x</p></div><p>outside</p>`, "T", "# T\n\nx"},
		{"language switcher dropped", `<main><h1>T</h1><ul><li><a hreflang="de" href="//de">Deutsch</a></li>` +
			`<li><a hreflang="fr" href="//fr">Français</a></li><li><a hreflang="es" href="//es">Español</a></li></ul>` +
			`<p>Body.</p><ul><li><a href="/x">See also</a></li></ul></main>`, "T", "# T\n\nBody.\n\n- See also"},
		{"cells", "<table><tr><td>a</td><td>b</td><td>c</td></tr></table>", "", "a | b | c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			title, text := extractHTML(tc.html)
			require.Equal(t, tc.title, title)
			require.Equal(t, tc.text, text)
		})
	}
}
