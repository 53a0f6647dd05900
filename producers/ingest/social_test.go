package ingest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers/ingest"
)

const (
	harborURI = "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w"
	// harborObserved is the post's text as the page shows it (the record's
	// text: canonical/testdata/bluesky-getPostThread-3lbg6v5ctk22w.json).
	harborObserved = "Sea level along the Dutch coast rose about 20 cm over the last century, per the \u201cZeespiegelmonitor 2022\u201d.\n\n" +
		"The Afsluitdijk was finished in 1932 \u2014 and it\u2019s 32 km long \U0001F30A\nipcc.ch/report/ar6/syr/\u2026 #climate"
)

// validBluesky is a registration as the extension sends it for a post on
// bsky.app: the AT URI under the author's DID, the text as displayed.
func validBluesky() obj {
	return obj{
		"platform":                 "BLUESKY",
		"externalId":               harborURI,
		"url":                      "https://bsky.app/profile/harbor-notes.bsky.social/post/3lbg6v5ctk22w",
		"observedImageUrls":        []any{"https://cdn.bsky.app/img/feed_fullsize/plain/did:plc:ewvi7nxzyoun6zhxrhs64oiz/bafkreia3tjh6vqzvi5jpkzjfyqdvb6djxtjvfnyx7xmpmvpk7f2zqnsmta@jpeg"},
		"observedImageOccurrences": []any{},
		"observedContentText":      harborObserved,
		"metadata": obj{
			"handle":      "@harbor-notes.bsky.social",
			"displayName": "Harbor Notes \U0001F30A",
			"createdAt":   "2024-11-22T17:04:05.123Z",
			"likeCount":   231,
			"repostCount": 52,
			"replyCount":  14,
		},
	}
}

// validThreads is a registration of a post on threads.com.
func validThreads() obj {
	return obj{
		"platform":                 "THREADS",
		"externalId":               "DBxK2mYsQpL",
		"url":                      "https://www.threads.com/@some.user/post/DBxK2mYsQpL",
		"observedImageUrls":        []any{},
		"observedImageOccurrences": []any{},
		"observedContentText":      "The Great Wall of China is visible from the Moon with the naked eye.",
		"metadata": obj{
			"username":    "@Some.User",
			"displayName": "Some User",
			"postedAt":    "2024-11-22T17:04:05.000Z",
			"likeCount":   12,
			"replyCount":  3,
			"repostCount": 1,
		},
	}
}

func TestBuildRegistrationSocial(t *testing.T) {
	in, err := ingest.ParseRegisterInput(marshal(t, validBluesky()))
	require.NoError(t, err)
	p, err := ingest.BuildRegistration(in)
	require.NoError(t, err)
	wantText := `Sea level along the Dutch coast rose about 20 cm over the last century, per the "Zeespiegelmonitor 2022". ` +
		"The Afsluitdijk was finished in 1932 - and it's 32 km long \U0001F30A ipcc.ch/report/ar6/syr/... #climate"
	require.Equal(t, wantText, p.ContentText, "plain text, normalized like X")
	id, err := content.ComputeVersionIdentity(wantText, nil)
	require.NoError(t, err)
	require.Equal(t, id.VersionHash, p.VersionHash)
	require.Equal(t, harborURI, p.ExternalID)
	require.Equal(t, events.PostID("BLUESKY", harborURI), p.PostID)
	require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
	created := time.Date(2024, 11, 22, 17, 4, 5, 123_000_000, time.UTC)
	require.Equal(t, &events.BlueskyMetaV1{
		DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", RKey: "3lbg6v5ctk22w", Handle: "harbor-notes.bsky.social",
		DisplayName: "Harbor Notes \U0001F30A", CreatedAt: &created, LikeCount: ptr(231), RepostCount: ptr(52), ReplyCount: ptr(14),
	}, p.Bluesky)
	require.Equal(t, &events.AuthorV1{PlatformUserID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", DisplayName: "Harbor Notes \U0001F30A"}, p.Author,
		"the author is the DID: handles move")
	require.Len(t, p.ImageURLs, 1)
	require.Empty(t, p.ClientHTML)
	require.Equal(t, events.BlueskyPostURI(p.Bluesky.DID, p.Bluesky.RKey), content.BlueskyPostURI(p.Bluesky.DID, p.Bluesky.RKey))

	// Without a display name the handle names the author.
	in, err = ingest.ParseRegisterInput(marshal(t, with(with(validBluesky(), "metadata.displayName", nil), "metadata.handle", "Harbor-Notes.BSKY.social")))
	require.NoError(t, err)
	p, err = ingest.BuildRegistration(in)
	require.NoError(t, err)
	require.Equal(t, "harbor-notes.bsky.social", p.Bluesky.Handle, "handles are case-insensitive")
	require.Equal(t, "harbor-notes.bsky.social", p.Author.DisplayName)

	in, err = ingest.ParseRegisterInput(marshal(t, validThreads()))
	require.NoError(t, err)
	p, err = ingest.BuildRegistration(in)
	require.NoError(t, err)
	require.Equal(t, "The Great Wall of China is visible from the Moon with the naked eye.", p.ContentText)
	posted := time.Date(2024, 11, 22, 17, 4, 5, 0, time.UTC)
	require.Equal(t, &events.ThreadsMetaV1{
		Code: "DBxK2mYsQpL", Username: "some.user", DisplayName: "Some User", PostedAt: &posted,
		LikeCount: ptr(12), ReplyCount: ptr(3), RepostCount: ptr(1),
	}, p.Threads)
	require.Equal(t, &events.AuthorV1{PlatformUserID: "some.user", DisplayName: "Some User"}, p.Author)

	in, err = ingest.ParseRegisterInput(marshal(t, with(with(with(with(validThreads(), "metadata.displayName", del), "metadata.postedAt", del), "metadata.likeCount", del), "metadata.username", "zuck")))
	require.NoError(t, err)
	p, err = ingest.BuildRegistration(in)
	require.NoError(t, err)
	require.Equal(t, &events.ThreadsMetaV1{Code: "DBxK2mYsQpL", Username: "zuck", ReplyCount: ptr(3), RepostCount: ptr(1)}, p.Threads)
	require.Equal(t, &events.AuthorV1{PlatformUserID: "zuck", DisplayName: "zuck"}, p.Author)
}

// TestParseRegisterInputSocialIdentity: hostile or malformed Bluesky and
// Threads input is refused naming the field, before anything is built.
func TestParseRegisterInputSocialIdentity(t *testing.T) {
	const did = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
	for _, tc := range []struct {
		name  string
		in    obj
		field string
		msg   string
	}{
		{"BLUESKY without externalId", with(validBluesky(), "externalId", del), "externalId", "is required for BLUESKY"},
		{"BLUESKY handle as authority", with(validBluesky(), "externalId", "at://harbor-notes.bsky.social/app.bsky.feed.post/3lbg6v5ctk22w"), "externalId", "the author's DID"},
		{"BLUESKY did/rkey", with(validBluesky(), "externalId", did+"/3lbg6v5ctk22w"), "externalId", `must start with "at://"`},
		{"BLUESKY web URL as id", with(validBluesky(), "externalId", "https://bsky.app/profile/harbor-notes.bsky.social/post/3lbg6v5ctk22w"), "externalId", `must start with "at://"`},
		{"BLUESKY another collection", with(validBluesky(), "externalId", "at://"+did+"/app.bsky.feed.repost/3lbg6v5ctk22w"), "externalId", "collection must be app.bsky.feed.post"},
		{"BLUESKY rkey not a TID", with(validBluesky(), "externalId", "at://"+did+"/app.bsky.feed.post/../../x"), "externalId", "must be at://{did}/app.bsky.feed.post/{rkey}"},
		{"BLUESKY rkey with query", with(validBluesky(), "externalId", "at://"+did+"/app.bsky.feed.post/3lbg6v5ctk22w?depth=99"), "externalId", "TID"},
		{"BLUESKY uppercase DID", with(validBluesky(), "externalId", "at://"+strings.ToUpper(did)+"/app.bsky.feed.post/3lbg6v5ctk22w"), "externalId", "the author's DID"},
		{"BLUESKY externalId NUL", with(validBluesky(), "externalId", "at://"+did+"\x00/app.bsky.feed.post/3lbg6v5ctk22w"), "externalId", "must not contain NUL"},
		{"BLUESKY externalId 10 KB", with(validBluesky(), "externalId", "at://did:web:"+strings.Repeat("a", 10_000)+"/app.bsky.feed.post/3lbg6v5ctk22w"), "externalId", "longer than 256 characters"},
		{"BLUESKY handle NUL", with(validBluesky(), "metadata.handle", "harbor\x00.bsky.social"), "metadata.handle", "must not contain NUL (U+0000)"},
		{"BLUESKY handle 10 KB", with(validBluesky(), "metadata.handle", strings.Repeat("h", 10_240)+".bsky.social"), "metadata.handle", "longer than 253 characters (got 10252)"},
		{"BLUESKY handle javascript", with(validBluesky(), "metadata.handle", "javascript:alert(1)"), "metadata.handle", "a handle is a domain name"},
		{"BLUESKY handle IDN", with(validBluesky(), "metadata.handle", "bücher.example"), "metadata.handle", "a handle is a domain name"},
		{"BLUESKY handle one label", with(validBluesky(), "metadata.handle", "harbor"), "metadata.handle", "a handle is a domain name"},
		{"BLUESKY handle only @", with(validBluesky(), "metadata.handle", " @ "), "metadata.handle", "is required"},
		{"BLUESKY handle absent", with(validBluesky(), "metadata.handle", del), "metadata.handle", "is required"},
		{"BLUESKY handle a number", with(validBluesky(), "metadata.handle", 7), "metadata.handle", "expected string"},
		{"BLUESKY DID in metadata", with(validBluesky(), "metadata.did", did), "metadata", `unknown field "did"`},
		{"BLUESKY X metadata", with(validBluesky(), "metadata", validX()["metadata"]), "metadata", "unknown field"},
		{"BLUESKY javascript url", with(validBluesky(), "url", "javascript:alert(document.domain)"), "url", "absolute http(s) URL"},
		{"BLUESKY at-uri as url", with(validBluesky(), "url", harborURI), "url", "absolute http(s) URL"},
		{"BLUESKY javascript image", with(validBluesky(), "observedImageUrls", []any{"javascript:alert(1)"}), "observedImageUrls[0]", "absolute http(s) URL"},
		{"BLUESKY without text", with(validBluesky(), "observedContentText", del), "observedContentText", "is required for BLUESKY"},
		{"BLUESKY text NUL", with(validBluesky(), "observedContentText", "a\x00b"), "observedContentText", "must not contain NUL"},
		{"BLUESKY bad createdAt", with(validBluesky(), "metadata.createdAt", "2h"), "metadata.createdAt", "ISO-8601"},
		{"BLUESKY negative likeCount", with(validBluesky(), "metadata.likeCount", -1), "metadata.likeCount", "must not be negative"},
		{"BLUESKY replyCount over 32 bits", with(validBluesky(), "metadata.replyCount", 1<<31), "metadata.replyCount", "must be at most 2147483647"},
		{"THREADS without externalId", with(validThreads(), "externalId", del), "externalId", "is required for THREADS"},
		{"THREADS path as code", with(validThreads(), "externalId", "@some.user/post/DBxK2mYsQpL"), "externalId", "must be the Threads post code"},
		{"THREADS URL as code", with(validThreads(), "externalId", "https://www.threads.com/@some.user/post/DBxK2mYsQpL"), "externalId", "must be the Threads post code"},
		{"THREADS code traversal", with(validThreads(), "externalId", "../../DBxK2mYsQpL"), "externalId", "must be the Threads post code"},
		{"THREADS code NUL", with(validThreads(), "externalId", "DBxK2\x00mYsQpL"), "externalId", "must not contain NUL"},
		{"THREADS code 10 KB", with(validThreads(), "externalId", strings.Repeat("A", 10_240)), "externalId", "longer than 256 characters"},
		{"THREADS code too long", with(validThreads(), "externalId", strings.Repeat("A", 65)), "externalId", "must be the Threads post code"},
		{"THREADS username NUL", with(validThreads(), "metadata.username", "some\x00user"), "metadata.username", "must not contain NUL"},
		{"THREADS username 10 KB", with(validThreads(), "metadata.username", strings.Repeat("u", 10_240)), "metadata.username", "longer than 64 characters (got 10240)"},
		{"THREADS username 31", with(validThreads(), "metadata.username", strings.Repeat("u", 31)), "metadata.username", "1 to 30 letters"},
		{"THREADS username hyphen", with(validThreads(), "metadata.username", "some-user"), "metadata.username", "1 to 30 letters"},
		{"THREADS username absent", with(validThreads(), "metadata.username", del), "metadata.username", "is required"},
		{"THREADS javascript url", with(validThreads(), "url", "javascript:alert(1)"), "url", "absolute http(s) URL"},
		{"THREADS without text", with(validThreads(), "observedContentText", del), "observedContentText", "is required for THREADS"},
		{"THREADS bad postedAt", with(validThreads(), "metadata.postedAt", "yesterday"), "metadata.postedAt", "ISO-8601"},
		{"THREADS unknown metadata", with(validThreads(), "metadata.code", "DBxK2mYsQpL"), "metadata", `unknown field "code"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireInputError(t, marshal(t, tc.in), tc.field, tc.msg)
		})
	}
	// The longest handle the AT Protocol allows fits.
	longest := strings.Repeat("abcdefghi.", 25) + "com"
	_, err := ingest.ParseRegisterInput(marshal(t, with(validBluesky(), "metadata.handle", "@"+longest)))
	require.NoError(t, err)
	// An empty text is refused when the registration is built, as for X.
	in, err := ingest.ParseRegisterInput(marshal(t, with(validBluesky(), "observedContentText", " \u200b\n")))
	require.NoError(t, err)
	_, err = ingest.BuildRegistration(in)
	var ie *ingest.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "observedContentText", ie.Field)
}

func ptr[T any](v T) *T { return &v }

// BenchmarkParseRegisterInputBluesky measures validating a Bluesky
// registration (AT URI, handle syntax, limits) before anything is built.
func BenchmarkParseRegisterInputBluesky(b *testing.B) {
	body, err := json.Marshal(validBluesky())
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ingest.ParseRegisterInput(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRegisterInputX is the same for X, for comparison.
func BenchmarkParseRegisterInputX(b *testing.B) {
	body, err := json.Marshal(validX())
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ingest.ParseRegisterInput(body); err != nil {
			b.Fatal(err)
		}
	}
}
