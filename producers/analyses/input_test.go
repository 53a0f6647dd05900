package analyses

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func codeOf(t *testing.T, err error) string {
	t.Helper()
	var ie *InputError
	require.True(t, errors.As(err, &ie), "error %v is not an *InputError", err)
	return ie.Code
}

func TestNormalizeText(t *testing.T) {
	tests := []struct {
		name, in, want, code string
	}{
		{name: "plain", in: "A claim.", want: "A claim."},
		{name: "whitespace collapsed", in: " a\r\n\tb\u00a0\u2003c\v\fd ", want: "a b c d"},
		{name: "typography folded", in: "“quoted” ‘single’ a—b wait…", want: `"quoted" 'single' a-b wait...`},
		{name: "NFC", in: "e\u0301", want: "\u00e9"},
		{name: "zero-width removed", in: "a\u200bb\ufeff", want: "ab"},
		{name: "markup kept as text", in: "<script>alert(1)</script>", want: "<script>alert(1)</script>"},
		{name: "empty", in: "", code: CodeTextEmpty},
		{name: "only whitespace", in: "\n \t\u3000", code: CodeTextEmpty},
		{name: "NUL", in: "a\x00", code: CodeTextControl},
		{name: "backspace", in: "a\bb", code: CodeTextControl},
		{name: "DEL", in: "a\x7fb", code: CodeTextControl},
		{name: "C1", in: "a\u009bb", code: CodeTextControl},
		{name: "too long", in: strings.Repeat("ab ", 10668), code: CodeTextTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeText(tc.in)
			if tc.code != "" {
				require.Equal(t, tc.code, codeOf(t, err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	// The limit counts characters after normalisation.
	got, err := NormalizeText(strings.Repeat("語", 32000) + "   \n")
	require.NoError(t, err)
	require.Equal(t, 32000, utf8.RuneCountInString(got))
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		in, want, code string
	}{
		{in: " https://example.org/a?b=c#frag ", want: "https://example.org/a?b=c"},
		{in: "HTTP://Example.ORG/", want: "http://example.org/"},
		{in: "https://bücher.example/straße", want: "https://xn--bcher-kva.example/stra%C3%9Fe"},
		{in: "https://example.org:8443/", want: "https://example.org:8443/"},
		{in: "https://example.org./", want: "https://example.org/"},
		{in: "http://192.0.2.1/", want: "http://192.0.2.1/"},
		{in: "http://[2001:db8::1]:80/", want: "http://[2001:db8::1]:80/"},
		{in: "", code: CodeURLInvalid},
		{in: "example.org", code: CodeURLInvalid},
		{in: "//example.org", code: CodeURLInvalid},
		{in: "mailto:a@example.org", code: CodeURLScheme},
		{in: "data:text/html,<script>", code: CodeURLScheme},
		{in: "ftp://example.org/", code: CodeURLScheme},
		{in: "http://u:p@example.org/", code: CodeURLInvalid},
		{in: "http://example.org:0/", code: CodeURLInvalid},
		{in: "http://example.org:65536/", code: CodeURLInvalid},
		{in: "http://exa\tmple.org/", code: CodeURLInvalid},
		{in: "http://example.org/a\u0085b", code: CodeURLInvalid},
		{in: "http://xn--/", code: CodeURLInvalid},
		{in: "http://" + strings.Repeat("a", 64) + ".org/", code: CodeURLInvalid},
		{in: "http:///path", code: CodeURLInvalid},
		{in: "https://example.org/" + strings.Repeat("é", 1981), code: CodeURLTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseURL(tc.in)
			if tc.code != "" {
				require.Equal(t, tc.code, codeOf(t, err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.String())
		})
	}
}

// A page longer than an analysis takes is cut at a word near the limit.
func TestCut(t *testing.T) {
	text, truncated := cut(strings.Repeat("word ", 7000), 32000)
	require.True(t, truncated)
	require.Equal(t, 31999, utf8.RuneCountInString(text), "cut before the space at 32,000")
	require.True(t, strings.HasSuffix(text, "word"))

	unbroken := strings.Repeat("x", 40000)
	text, truncated = cut(unbroken, 32000)
	require.True(t, truncated)
	require.Equal(t, 32000, utf8.RuneCountInString(text))

	text, truncated = cut("  short\n text ", 32000)
	require.False(t, truncated)
	require.Equal(t, "short text", text)
}
