package content

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func occ(index, offset int, url string, caption ...string) ImageOccurrence {
	o := ImageOccurrence{OriginalIndex: index, NormalizedTextOffset: offset, SourceURL: url}
	if len(caption) > 0 {
		o.CaptionText = ptr(caption[0])
	}
	return o
}

func TestCanonicalizeOccurrencesRejects(t *testing.T) {
	t.Parallel()
	const text = "Alpha 😀 gamma" // 14 UTF-16 units
	const u = "https://example.com/a.png"
	tooMany := make([]ImageOccurrence, MaxImageOccurrences+1)
	for i := range tooMany {
		tooMany[i] = occ(i, 0, u)
	}
	tests := []struct {
		name string
		in   []ImageOccurrence
		want error
	}{
		{"too many", tooMany, ErrTooManyImageOccurrences},
		{"negative index", []ImageOccurrence{occ(-1, 0, u)}, ErrNegativeImageOccurrence},
		{"negative offset", []ImageOccurrence{occ(0, -1, u)}, ErrNegativeImageOccurrence},
		{"relative URL", []ImageOccurrence{occ(0, 0, "/a.png")}, ErrInvalidImageSourceURL},
		{"protocol-relative URL", []ImageOccurrence{occ(0, 0, "//cdn/a.png")}, ErrInvalidImageSourceURL},
		{"data URL", []ImageOccurrence{occ(0, 0, "data:image/png;base64,AAAA")}, ErrInvalidImageSourceURL},
		{"ftp URL", []ImageOccurrence{occ(0, 0, "ftp://example.com/a.png")}, ErrInvalidImageSourceURL},
		{"empty caption", []ImageOccurrence{occ(0, 0, u, "")}, ErrEmptyImageCaption},
		{"not starting at zero", []ImageOccurrence{occ(1, 0, u)}, ErrNonContiguousOriginalIndex},
		{"gap", []ImageOccurrence{occ(0, 0, u), occ(2, 1, u)}, ErrNonContiguousOriginalIndex},
		{"duplicate", []ImageOccurrence{occ(0, 0, u), occ(0, 1, u)}, ErrNonContiguousOriginalIndex},
		{"offset past end", []ImageOccurrence{occ(0, 15, u)}, ErrOffsetExceedsContentLength},
		{"decreasing offsets", []ImageOccurrence{occ(1, 3, u), occ(0, 4, u)}, ErrDecreasingTextOffset},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CanonicalizeOccurrences(tc.in, text)
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, ErrInvalidImageOccurrences)
			_, err = OccurrencesHash(tc.in, text)
			require.ErrorIs(t, err, tc.want)
			_, err = ComputeVersionIdentity(text, tc.in)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestCanonicalizeOccurrences(t *testing.T) {
	t.Parallel()
	const text = "Alpha 😀 gamma"
	in := []ImageOccurrence{
		occ(2, 14, "HTTPS://example.com/c.png", "\u00a0 spaced \u3000"),
		occ(0, 0, "http://example.com/a.png", " \t "),
		occ(1, 14, "https://example.com/b.png"),
	}
	got, err := CanonicalizeOccurrences(in, text)
	require.NoError(t, err)
	require.Equal(t, []ImageOccurrence{
		occ(0, 0, "http://example.com/a.png"),
		occ(1, 14, "https://example.com/b.png"),
		occ(2, 14, "HTTPS://example.com/c.png", "spaced"),
	}, got)
	require.Equal(t, 2, in[0].OriginalIndex, "input left untouched")
	require.Equal(t, "\u00a0 spaced \u3000", *in[0].CaptionText)

	serialized, err := SerializeOccurrences(in, text)
	require.NoError(t, err)
	require.Equal(t, `[{"originalIndex":0,"normalizedTextOffset":0,"sourceUrl":"http://example.com/a.png"},`+
		`{"originalIndex":1,"normalizedTextOffset":14,"sourceUrl":"https://example.com/b.png"},`+
		`{"originalIndex":2,"normalizedTextOffset":14,"sourceUrl":"HTTPS://example.com/c.png","captionText":"spaced"}]`, serialized)
}

// JSON escaping must equal JSON.stringify's (checked with Node): only quotes,
// backslashes and C0 controls are escaped; DEL, U+2028/U+2029, '/', '<', '>'
// and '&' stay raw.
func TestSerializeOccurrencesEscapesLikeJSONStringify(t *testing.T) {
	t.Parallel()
	caption := "a\u0001\u001f\u007f\u2028\u2029\"\\/<>&\b\f\n\r\t\u00e9😀"
	got, err := SerializeOccurrences([]ImageOccurrence{occ(0, 1, `https://e.com/a?x=<1>&y="2"`, caption)}, "xy")
	require.NoError(t, err)
	require.Equal(t, `[{"originalIndex":0,"normalizedTextOffset":1,"sourceUrl":"https://e.com/a?x=<1>&y=\"2\"","captionText":"a\u0001\u001f`+
		"\u007f\u2028\u2029"+`\"\\/<>&\b\f\n\r\té😀"}]`, got)

	observed, err := SerializeObservedVersionIdentity("bad \xff byte", nil)
	require.NoError(t, err)
	require.Equal(t, `{"contentText":"bad `+"\ufffd"+` byte","imageOccurrences":[]}`, observed)
}

func TestVersionHashOfEmptyText(t *testing.T) {
	t.Parallel()
	id, err := ComputeVersionIdentity("", nil)
	require.NoError(t, err)
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id.ContentHash)
	require.Equal(t, EmptyOccurrencesHash, id.OccurrencesHash)
	require.Equal(t, "[]", id.OccurrencesSerialized)
	require.Equal(t, sha256Hex(id.ContentHash+"\n"+EmptyOccurrencesHash), id.VersionHash)
}
