package content

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

func TestNormalizeFollowsJavaScriptSemantics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"every JS whitespace collapses", "a\t\n\v\f\r \u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000b", "a b"},
		{"U+0085 is not JS whitespace", "a\u0085b", "a\u0085b"},
		{"U+180E is not JS whitespace", "a\u180eb", "a\u180eb"},
		{"BOM is deleted, not a separator", "a\ufeffb", "ab"},
		{"zero-width deletion joins whitespace runs", "a \u200b \u200c b", "a b"},
		{"zero-width characters alone give nothing", "\u200b\u200c\u200d\ufeff", ""},
		{"typographic folding", "\u201cx\u201d \u2018y\u2019 \u2010\u2011\u2012\u2013\u2014\u2015 \u2026", "\"x\" 'y' ------ ..."},
		{"other dashes and quotes untouched", "\u2212 \u00ab\u00bb \u201e", "\u2212 \u00ab\u00bb \u201e"},
		{"NFC composes", "e\u0301", "\u00e9"},
		{"NFC applies compatibility-free only", "\ufb01", "\ufb01"},
		{"trim both ends", "\u3000 x \u2028", "x"},
		{"invalid UTF-8 becomes U+FFFD per byte", "a\xff\xfeb", "a\ufffd\ufffdb"},
		// The reference removes zero-width characters after NFC, so a base
		// and a combining mark they separated stay decomposed.
		{"deletion after NFC leaves marks uncomposed", "e\u200b\u0301", "e\u0301"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Normalize(tc.in))
		})
	}
}

func TestNormalizeIdempotentUnlessDeletionExposedMarks(t *testing.T) {
	t.Parallel()
	quirk := Normalize("e\u200b\u0301")
	require.False(t, norm.NFC.IsNormalString(quirk))
	require.Equal(t, "\u00e9", Normalize(quirk), "a second pass composes, as the reference's would")
	for _, s := range []string{"  “Smart”\u200b quotes—and… dashes  ", "a\u00a0b", "\u0130stanbul"} {
		once := Normalize(s)
		require.Equal(t, once, Normalize(once))
	}
}

func TestWordCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   ", 0},
		{"one", 1},
		{" one  two\tthree\u3000four\u00a0five ", 5},
		{"a\u0085b", 1},
		{"a\u180eb", 1},
		{"a\ufeffb", 2}, // BOM is JS whitespace when counting raw text
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, WordCount(tc.in), "%q", tc.in)
	}
	require.Equal(t, 10001, WordCount(strings.Repeat("w ", WordCountLimit+1)))
}

func TestJSHelpers(t *testing.T) {
	t.Parallel()
	require.Equal(t, "i\u0307stanbul", jsToLower("\u0130stanbul"))
	require.Equal(t, "references", jsToLower("REFERENCES"))
	require.Equal(t, []string{"a", "b"}, jsFields("\u00a0a\u2028b\ufeff"))
	require.Equal(t, "x\u0085", jsTrim("\u3000x\u0085\u00a0"))
}
