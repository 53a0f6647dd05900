package content

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Expectations computed with the reference parseWikipediaIdentity.
func TestParseWikipediaURL(t *testing.T) {
	t.Parallel()
	title := func(lang, title string) WikipediaURLIdentity {
		return WikipediaURLIdentity{Language: lang, Title: ptr(title), IdentityKind: WikipediaIdentityTitle, ExternalID: lang + ":" + title}
	}
	tests := []struct {
		url  string
		want *WikipediaURLIdentity
	}{
		{"https://en.wikipedia.org/wiki/Albert_Einstein", ptr(title("en", "Albert_Einstein"))},
		{"https://de.m.wikipedia.org/wiki/Caf%C3%A9_M%C3%BCller", ptr(title("de", "Café_Müller"))},
		{"https://EN.Wikipedia.org/wiki/AC%2FDC", ptr(title("en", "AC/DC"))},
		{"https://en.wikipedia.org/w/index.php?title=Climate__change&oldid=1", ptr(title("en", "Climate_change"))},
		{"https://en.wikipedia.org/wiki/Mission:_Impossible", ptr(title("en", "Mission:_Impossible"))},
		{"https://en.wikipedia.org/wiki/_Foo__bar_", ptr(title("en", "Foo_bar"))},
		{"https://en.wikipedia.org/w/index.php?curid=736", &WikipediaURLIdentity{Language: "en", PageID: ptr("736"), IdentityKind: WikipediaIdentityPageID, ExternalID: "en:736"}},
		{"https://en.wikipedia.org/wiki/Albert_Einstein?curid=%20736%20", &WikipediaURLIdentity{Language: "en", Title: ptr("Albert_Einstein"), PageID: ptr("736"), IdentityKind: WikipediaIdentityPageID, ExternalID: "en:736"}},
		{"https://en.wikipedia.org/w/index.php?pageid=12&curid=x", &WikipediaURLIdentity{Language: "en", PageID: ptr("12"), IdentityKind: WikipediaIdentityPageID, ExternalID: "en:12"}},
		{"https://en.wikipedia.org/wiki/Talk:Albert_Einstein", nil},
		{"https://en.wikipedia.org/wiki/Category_talk:X", nil},
		{"https://en.wikipedia.org/wiki/", nil},
		{"https://en.wikipedia.org/wiki/%E0%A4", nil},
		{"https://example.org/wiki/X", nil},
		{"not a url", nil},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			got, err := ParseWikipediaURL(tc.url)
			if tc.want == nil {
				require.ErrorIs(t, err, ErrNotWikipediaArticleURL)
				return
			}
			require.NoError(t, err)
			require.Equal(t, *tc.want, got)
		})
	}
	require.Equal(t, "en:736", WikipediaExternalID("en", "736"))
}
