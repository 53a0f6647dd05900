package content

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHTMLToTextParsesLikeParse5(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html, want string
	}{
		// A <template> context keeps top-level table parts; a <body> context
		// would drop the <tr>/<td> tags and glue the cells together.
		{"top-level table row", "<tr><td>a</td><td>b</td></tr>", "a b"},
		{"entities decoded", "Tea&nbsp;&amp;&nbsp;Biscuits &#x2014; &lt;b&gt;", "Tea & Biscuits - <b>"},
		{"br adds nothing", "a<br>b", "ab"},
		{"inline elements add nothing", "foo<span>bar</span><em>baz</em>", "foobarbaz"},
		{"block separators on both sides", "<div>about</div><span>Ali</span>", "about Ali"},
		{"non-content elements dropped", "a<script>x</script><style>y</style><noscript>z</noscript>b", "ab"},
		{"template contents ignored", "a<template>hidden</template>b", "ab"},
		{"comments ignored", "a<!-- x -->b", "ab"},
		{"svg script dropped", "<svg><script>x</script><text>t</text></svg>", "t"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LessWrongHTMLToText(tc.html)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestHTMLTooDeepIsAnError(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("<div>", 600) + "x"
	_, err := LessWrongHTMLToText(deep)
	require.Error(t, err)
	_, err = WikipediaHTMLToText(deep)
	require.Error(t, err)
	_, err = LessWrongHTMLToMarkdown(deep)
	require.Error(t, err)
	_, err = WikipediaHTMLToMarkdown(deep)
	require.Error(t, err)

	ok := strings.Repeat("<div>", 400) + "x"
	text, err := WikipediaHTMLToText(ok)
	require.NoError(t, err)
	require.Equal(t, "x", text)
}

func TestSerializeNodeMatchesParse5(t *testing.T) {
	t.Parallel()
	nodes, err := parseFragment(`<p title="a&quot;b&amp;c&nbsp;">x &lt; y &amp; z&nbsp;</p><pre>` + "\n\nkeep" + `</pre><!--c&gt;--><svg xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="#x"/></svg><br><script>a<b</script>`)
	require.NoError(t, err)
	var b strings.Builder
	for _, n := range nodes {
		serializeNode(&b, n)
	}
	require.Equal(t, `<p title="a&quot;b&amp;c&nbsp;">x &lt; y &amp; z&nbsp;</p><pre>`+"\nkeep"+`</pre><!--c&gt;--><svg xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="#x"></a></svg><br><script>a<b</script>`, b.String())
}
