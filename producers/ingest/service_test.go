package ingest_test

import (
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers/ingest"
)

func parse(t testing.TB, o obj) *ingest.RegisterInput {
	t.Helper()
	in, err := ingest.ParseRegisterInput(marshal(t, o))
	require.NoError(t, err)
	return in
}

func TestBuildRegistrationIdentity(t *testing.T) {
	lw := validLessWrong()
	lwText, err := content.LessWrongHTMLToText(lw["metadata"].(obj)["htmlContent"].(string))
	require.NoError(t, err)
	require.Equal(t, "Hello world Second paragraph.", lwText)

	for _, tc := range []struct {
		name       string
		in         obj
		text       string // expected canonical text
		externalID string
	}{
		{"LESSWRONG from htmlContent", lw, lwText, "ioZxrP7BhS5ArK59w"},
		{"X normalized observed text", validX(), `The "quick" fox... jumps`, "1790000000000000000"},
		{"SUBSTACK normalized observed text", validSubstack(), "A Substack post body.", "144000000"},
		{"WIKIPEDIA externalId from metadata", validWikipedia(), "Albert Einstein was a German-born theoretical physicist.", "en:736"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ingest.BuildRegistration(parse(t, tc.in))
			require.NoError(t, err)
			id, err := content.ComputeVersionIdentity(tc.text, nil)
			require.NoError(t, err)

			require.Equal(t, tc.in["platform"], p.Platform)
			require.Equal(t, tc.externalID, p.ExternalID)
			require.Equal(t, tc.text, p.ContentText)
			require.Equal(t, content.ContentHash(tc.text), p.ContentHash)
			require.Equal(t, id.ContentHash, p.ContentHash)
			require.Equal(t, id.OccurrencesHash, p.OccurrencesHash)
			require.Equal(t, id.VersionHash, p.VersionHash)
			require.Equal(t, content.WordCount(tc.text), p.WordCount)
			require.Equal(t, events.PostID(p.Platform, tc.externalID), p.PostID)
			require.Equal(t, events.PostVersionID(p.PostID, id.VersionHash), p.PostVersionID)
			require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
			require.Equal(t, tc.in["url"], p.URL)
			require.NotNil(t, p.ImageURLs)
			require.NotNil(t, p.ImageOccurrences)
			require.NoError(t, p.Validate())
		})
	}
}

func TestBuildRegistrationIsDeterministic(t *testing.T) {
	a, err := ingest.BuildRegistration(parse(t, validX()))
	require.NoError(t, err)
	// Different whitespace and typography, same canonical text.
	b, err := ingest.BuildRegistration(parse(t, with(validX(), "observedContentText", "The \"quick\" fox...\u00a0jumps")))
	require.NoError(t, err)
	require.Equal(t, a.VersionHash, b.VersionHash)
	require.Equal(t, a.PostVersionID, b.PostVersionID)
	// Different text, different version of the same post.
	c, err := ingest.BuildRegistration(parse(t, with(validX(), "observedContentText", "Edited")))
	require.NoError(t, err)
	require.Equal(t, a.PostID, c.PostID)
	require.NotEqual(t, a.VersionHash, c.VersionHash)
	require.NotEqual(t, a.PostVersionID, c.PostVersionID)
}

func TestBuildRegistrationWithOccurrences(t *testing.T) {
	caption := "  A caption  "
	occs := []any{
		obj{"originalIndex": 1, "normalizedTextOffset": 9, "sourceUrl": "https://img.example/b.png"},
		obj{"originalIndex": 0, "normalizedTextOffset": 4, "sourceUrl": "https://img.example/a.png", "captionText": caption},
	}
	p, err := ingest.BuildRegistration(parse(t, with(validX(), "observedImageOccurrences", occs)))
	require.NoError(t, err)
	text := `The "quick" fox... jumps`
	id, err := content.ComputeVersionIdentity(text, []content.ImageOccurrence{
		{OriginalIndex: 0, NormalizedTextOffset: 4, SourceURL: "https://img.example/a.png", CaptionText: &caption},
		{OriginalIndex: 1, NormalizedTextOffset: 9, SourceURL: "https://img.example/b.png"},
	})
	require.NoError(t, err)
	require.Equal(t, id.VersionHash, p.VersionHash)
	require.Equal(t, id.OccurrencesHash, p.OccurrencesHash)
	require.Equal(t, []events.ImageOccurrenceV1{
		{OriginalIndex: 0, NormalizedTextOffset: 4, SourceURL: "https://img.example/a.png", CaptionText: "A caption"},
		{OriginalIndex: 1, NormalizedTextOffset: 9, SourceURL: "https://img.example/b.png"},
	}, p.ImageOccurrences)
}

func TestBuildRegistrationRejectsBadOccurrences(t *testing.T) {
	text := `The "quick" fox... jumps` // 24 UTF-16 units
	for _, tc := range []struct {
		name string
		occs []any
	}{
		{"offset past the end", []any{obj{"originalIndex": 0, "normalizedTextOffset": 25, "sourceUrl": "https://img.example/a.png"}}},
		{"gap in originalIndex", []any{obj{"originalIndex": 1, "normalizedTextOffset": 0, "sourceUrl": "https://img.example/a.png"}}},
		{"negative offset", []any{obj{"originalIndex": 0, "normalizedTextOffset": -1, "sourceUrl": "https://img.example/a.png"}}},
		{"decreasing offsets", []any{
			obj{"originalIndex": 0, "normalizedTextOffset": 5, "sourceUrl": "https://img.example/a.png"},
			obj{"originalIndex": 1, "normalizedTextOffset": 4, "sourceUrl": "https://img.example/b.png"},
		}},
		// A relative sourceUrl is refused earlier, by ParseRegisterInput
		// (TestParseRegisterInputRejectsHostileStrings).
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ingest.BuildRegistration(parse(t, with(validX(), "observedImageOccurrences", tc.occs)))
			require.Nil(t, p)
			var ie *ingest.InputError
			require.ErrorAs(t, err, &ie, "got %T: %v", err, err)
			require.Equal(t, "observedImageOccurrences", ie.Field)
		})
	}
	// The offset equal to the text length (an image at the very end) is valid.
	require.Equal(t, 24, content.UTF16Length(text))
	_, err := ingest.BuildRegistration(parse(t, with(validX(), "observedImageOccurrences",
		[]any{obj{"originalIndex": 0, "normalizedTextOffset": 24, "sourceUrl": "https://img.example/a.png"}})))
	require.NoError(t, err)
}

func TestBuildRegistrationRejectsEmptyText(t *testing.T) {
	p, err := ingest.BuildRegistration(parse(t, with(validX(), "observedContentText", " \u200b\u00a0 ")))
	require.Nil(t, p)
	var ie *ingest.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "observedContentText", ie.Field)
}

func TestBuildRegistrationNeedsValidatedInput(t *testing.T) {
	ext := "1"
	text := "hello"
	_, err := ingest.BuildRegistration(&ingest.RegisterInput{Platform: "X", ExternalID: &ext, URL: "https://x.com/a", ObservedContentText: &text})
	require.EqualError(t, err, "input was not validated")
}

func TestBuildRegistrationAuthor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     obj
		author *events.AuthorV1
	}{
		{"X handle lowercased without @", validX(), &events.AuthorV1{PlatformUserID: "someuser", DisplayName: "Some User"}},
		{"X without display name uses the handle", with(validX(), "metadata.authorDisplayName", nil),
			&events.AuthorV1{PlatformUserID: "someuser", DisplayName: "SomeUser"}},
		{"SUBSTACK without handle: subdomain and lowercased name", validSubstack(),
			&events.AuthorV1{PlatformUserID: "example:jane q. writer", DisplayName: " Jane Q. Writer "}},
		{"SUBSTACK with handle", with(validSubstack(), "metadata.authorSubstackHandle", "janeq"),
			&events.AuthorV1{PlatformUserID: "janeq", DisplayName: " Jane Q. Writer "}},
		{"LESSWRONG with authorSlug", validLessWrong(), &events.AuthorV1{PlatformUserID: "jane-doe", DisplayName: "Jane Doe"}},
		{"LESSWRONG slug without name", with(validLessWrong(), "metadata.authorName", del),
			&events.AuthorV1{PlatformUserID: "jane-doe", DisplayName: "jane-doe"}},
		{"LESSWRONG null authorSlug", with(validLessWrong(), "metadata.authorSlug", nil), nil},
		{"LESSWRONG without authorSlug", with(validLessWrong(), "metadata.authorSlug", del), nil},
		{"WIKIPEDIA has no author", validWikipedia(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ingest.BuildRegistration(parse(t, tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.author, p.Author)
		})
	}
}

func TestBuildRegistrationPlatformMetadata(t *testing.T) {
	p, err := ingest.BuildRegistration(parse(t, validX()))
	require.NoError(t, err)
	require.NotNil(t, p.X)
	require.Nil(t, p.LessWrong)
	require.Equal(t, "SomeUser", p.X.AuthorHandle)
	require.Equal(t, "1790000000000000000", p.X.TweetID)
	require.Equal(t, 12, *p.X.LikeCount)
	require.Equal(t, "2024-05-01T12:00:00Z", p.X.PostedAt.Format("2006-01-02T15:04:05Z07:00"))

	p, err = ingest.BuildRegistration(parse(t, validWikipedia()))
	require.NoError(t, err)
	require.Equal(t, &events.WikipediaMetaV1{
		Language: "en", Title: "Albert_Einstein", PageID: "736", RevisionID: "1339833339",
		DisplayTitle: "Albert Einstein", LastModifiedAt: p.Wikipedia.LastModifiedAt,
	}, p.Wikipedia)
	require.Equal(t, "", p.ClientHTML)

	lw := validLessWrong()
	p, err = ingest.BuildRegistration(parse(t, lw))
	require.NoError(t, err)
	require.Equal(t, lw["metadata"].(obj)["htmlContent"], p.ClientHTML)
	require.Equal(t, []string{"AI"}, p.LessWrong.Tags)
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestHasherIPRangeKey(t *testing.T) {
	h := ingest.NewHasher("test-secret-0123456789")
	key := func(s string) string { return h.IPRangeKey(netip.MustParseAddr(s)) }

	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"same IPv4 /24", "1.2.3.4", "1.2.3.99", true},
		{"IPv4 /24 edges", "1.2.3.0", "1.2.3.255", true},
		{"different IPv4 /24", "1.2.3.4", "1.2.4.1", false},
		{"same IPv6 /48", "2001:db8:1::1", "2001:db8:1:ffff::2", true},
		{"different IPv6 /48", "2001:db8:1::1", "2001:db8:2::1", false},
		{"IPv4-mapped IPv6 is IPv4", "::ffff:1.2.3.4", "1.2.3.77", true},
		{"IPv4 is not its IPv6 neighbour", "1.2.3.4", "::1.2.3.4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := key(tc.a), key(tc.b)
			require.Regexp(t, hex64, a)
			require.Regexp(t, hex64, b)
			if tc.same {
				require.Equal(t, a, b)
			} else {
				require.NotEqual(t, a, b)
			}
			for _, raw := range []string{tc.a, tc.b, "1.2.3", "2001:db8"} {
				require.NotContains(t, a, raw)
			}
		})
	}

	other := ingest.NewHasher("another-secret-0123456789")
	require.NotEqual(t, key("1.2.3.4"), other.IPRangeKey(netip.MustParseAddr("1.2.3.4")), "keys depend on the secret")
	require.Equal(t, key("1.2.3.4"), ingest.NewHasher("test-secret-0123456789").IPRangeKey(netip.MustParseAddr("1.2.3.4")), "keys are stable")
	require.Regexp(t, hex64, h.IPRangeKey(netip.Addr{}), "an invalid address still yields a key")
}

func TestHasherViewerKeys(t *testing.T) {
	h := ingest.NewHasher("test-secret-0123456789")
	ip := netip.MustParseAddr("1.2.3.4")
	k := h.AnonymousViewerKey(ip, "UA/1")
	require.Regexp(t, hex64, k)
	require.Equal(t, k, h.AnonymousViewerKey(netip.MustParseAddr("::ffff:1.2.3.4"), "UA/1"))
	require.NotEqual(t, k, h.AnonymousViewerKey(netip.MustParseAddr("1.2.3.5"), "UA/1"), "a viewer is one address")
	require.NotEqual(t, k, h.AnonymousViewerKey(ip, "UA/2"), "and one user agent")
	require.NotEqual(t, k, ingest.NewHasher("another-secret-0123456789").AnonymousViewerKey(ip, "UA/1"))
	require.NotContains(t, k, "1.2.3.4")
	// Kinds are separated: an account key never equals a range or session key.
	require.NotEqual(t, h.AccountViewerKey("x"), h.AnonymousViewerKey(ip, "x"))
	require.Regexp(t, hex64, h.AccountViewerKey(strings.Repeat("a", 64)))
}
