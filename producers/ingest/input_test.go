package ingest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers/ingest"
)

// obj is a JSON object under construction; tests copy and patch the valid
// inputs below to build each rejection.
type obj = map[string]any

func validLessWrong() obj {
	return obj{
		"platform":                 "LESSWRONG",
		"externalId":               "ioZxrP7BhS5ArK59w",
		"url":                      "https://www.lesswrong.com/posts/ioZxrP7BhS5ArK59w/some-post",
		"observedImageUrls":        []any{},
		"observedImageOccurrences": []any{},
		"metadata": obj{
			"slug":        "some-post",
			"title":       "Some post",
			"htmlContent": "<p>Hello&nbsp;<em>world</em></p><p>Second paragraph.</p>",
			"authorName":  "Jane Doe",
			"authorSlug":  "jane-doe",
			"tags":        []any{"AI"},
			"publishedAt": "2024-05-01T12:00:00.000Z",
		},
	}
}

func validX() obj {
	return obj{
		"platform":            "X",
		"externalId":          "1790000000000000000",
		"url":                 "https://x.com/SomeUser/status/1790000000000000000",
		"observedImageUrls":   []any{"https://pbs.twimg.com/media/abc.jpg"},
		"observedContentText": "  The \u201cquick\u201d fox\u2026  jumps ",
		"metadata": obj{
			"authorHandle":      "@SomeUser",
			"authorDisplayName": "Some User",
			"text":              "The \u201cquick\u201d fox\u2026 jumps",
			"mediaUrls":         []any{"https://pbs.twimg.com/media/abc.jpg"},
			"likeCount":         12,
			"retweetCount":      3,
			"postedAt":          "2024-05-01T12:00:00Z",
		},
	}
}

func validSubstack() obj {
	return obj{
		"platform":            "SUBSTACK",
		"externalId":          "144000000",
		"url":                 "https://example.substack.com/p/a-post",
		"observedContentText": "A Substack post body.",
		"metadata": obj{
			"substackPostId":       "144000000",
			"publicationSubdomain": "example",
			"slug":                 "a-post",
			"title":                "A post",
			"subtitle":             nil,
			"authorName":           " Jane Q. Writer ",
			"publishedAt":          "2024-05-01T12:00:00Z",
			"likeCount":            5,
			"commentCount":         0,
		},
	}
}

func validWikipedia() obj {
	return obj{
		"platform":            "WIKIPEDIA",
		"url":                 "https://en.wikipedia.org/wiki/Albert_Einstein",
		"observedContentText": "Albert Einstein was a German-born theoretical physicist.",
		"metadata": obj{
			"language":       "en",
			"title":          "Albert_Einstein",
			"pageId":         "736",
			"revisionId":     "1339833339",
			"displayTitle":   "Albert Einstein",
			"lastModifiedAt": "2026-02-20T10:00:00Z",
		},
	}
}

// with returns a deep copy of o with path ("a.b") set to v, or deleted when v
// is the del sentinel.
func with(o obj, path string, v any) obj {
	c := clone(o)
	parts := strings.Split(path, ".")
	m := c
	for _, p := range parts[:len(parts)-1] {
		m = m[p].(obj)
	}
	if v == del {
		delete(m, parts[len(parts)-1])
	} else {
		m[parts[len(parts)-1]] = v
	}
	return c
}

type deleteMarker struct{}

var del = deleteMarker{}

func clone(o obj) obj {
	c := obj{}
	for k, v := range o {
		if m, ok := v.(obj); ok {
			v = clone(m)
		}
		c[k] = v
	}
	return c
}

func marshal(t testing.TB, o obj) []byte {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	return b
}

func repeatStrings(n int, f func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestParseRegisterInputAcceptsEveryPlatform(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         obj
		externalID string
	}{
		{"LESSWRONG", validLessWrong(), "ioZxrP7BhS5ArK59w"},
		{"X", validX(), "1790000000000000000"},
		{"SUBSTACK", validSubstack(), "144000000"},
		{"WIKIPEDIA", validWikipedia(), "en:736"},
		{"BLUESKY", validBluesky(), "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w"},
		{"THREADS", validThreads(), "DBxK2mYsQpL"},
		// Optional fields the extension sends as null.
		{"LESSWRONG null authorSlug", with(validLessWrong(), "metadata.authorSlug", nil), "ioZxrP7BhS5ArK59w"},
		{"X null authorDisplayName", with(validX(), "metadata.authorDisplayName", nil), "1790000000000000000"},
		{"X without counts", with(with(validX(), "metadata.likeCount", del), "metadata.retweetCount", del), "1790000000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ingest.ParseRegisterInput(marshal(t, tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.in["platform"], in.Platform)
			require.NotNil(t, in.ExternalID)
			require.Equal(t, tc.externalID, *in.ExternalID)
			require.NotNil(t, in.ObservedImageURLs, "absent image URLs become an empty list")
		})
	}
}

func TestParseRegisterInputRejections(t *testing.T) {
	ascii := func(n int) string { return strings.Repeat("a", n) }
	occurrence := func(i int) any {
		return obj{"originalIndex": i, "normalizedTextOffset": 0, "sourceUrl": fmt.Sprintf("https://img.example/%d.png", i)}
	}
	for _, tc := range []struct {
		name  string
		in    obj
		field string
		msg   string // substring of the message
	}{
		{"unknown platform", with(validX(), "platform", "MASTODON"), "platform", "must be one of LESSWRONG, X, SUBSTACK, WIKIPEDIA, BLUESKY, THREADS"},
		{"lowercase platform", with(validX(), "platform", "x"), "platform", "must be one of"},
		{"missing url", with(validX(), "url", del), "url", "absolute http(s) URL"},
		{"relative url", with(validX(), "url", "/status/1"), "url", "absolute http(s) URL"},
		{"javascript url", with(validX(), "url", "javascript:alert(1)"), "url", "absolute http(s) URL"},
		{"ftp url", with(validX(), "url", "ftp://x.com/a"), "url", "absolute http(s) URL"},
		{"unknown top-level field", with(validX(), "extra", true), "", `unknown field "extra"`},
		{"unknown metadata field", with(validX(), "metadata.extra", 1), "metadata", `unknown field "extra"`},
		{"number for url", with(validX(), "url", 42), "url", "expected string, got JSON number"},
		{"string for likeCount", with(validX(), "metadata.likeCount", "12"), "metadata.likeCount", "expected int, got JSON string"},
		{"negative likeCount", with(validX(), "metadata.likeCount", -1), "metadata.likeCount", "must not be negative"},
		{"bad postedAt", with(validX(), "metadata.postedAt", "yesterday"), "metadata.postedAt", "ISO-8601"},
		{"missing metadata", with(validX(), "metadata", del), "metadata", "is required"},
		{"LESSWRONG with observedContentText", with(validLessWrong(), "observedContentText", "text"), "observedContentText", "must be omitted for LESSWRONG"},
		{"LESSWRONG without htmlContent", with(validLessWrong(), "metadata.htmlContent", del), "metadata.htmlContent", "is required for LESSWRONG"},
		{"LESSWRONG without externalId", with(validLessWrong(), "externalId", del), "externalId", "is required for LESSWRONG"},
		{"LESSWRONG without slug", with(validLessWrong(), "metadata.slug", del), "metadata.slug", "is required"},
		{"WIKIPEDIA with externalId", with(validWikipedia(), "externalId", "en:736"), "externalId", "must be omitted for WIKIPEDIA"},
		{"WIKIPEDIA non-numeric pageId", with(validWikipedia(), "metadata.pageId", "Albert_Einstein"), "metadata.pageId", "positive integer string"},
		{"WIKIPEDIA zero-padded pageId", with(validWikipedia(), "metadata.pageId", "0736"), "metadata.pageId", "positive integer string"},
		{"WIKIPEDIA numeric pageId", with(validWikipedia(), "metadata.pageId", 736), "metadata.pageId", "expected string, got JSON number"},
		{"WIKIPEDIA bad language", with(validWikipedia(), "metadata.language", "EN"), "metadata.language", "language code"},
		{"X without observedContentText", with(validX(), "observedContentText", del), "observedContentText", "is required for X"},
		{"SUBSTACK without observedContentText", with(validSubstack(), "observedContentText", del), "observedContentText", "is required for SUBSTACK"},
		{"SUBSTACK without authorName", with(validSubstack(), "metadata.authorName", " "), "metadata.authorName", "is required"},
		{"X without authorHandle", with(validX(), "metadata.authorHandle", ""), "metadata.authorHandle", "is required"},
		// The byte limit and the UTF-16 limit are both 500,000, and every
		// UTF-16 code unit takes at least one UTF-8 byte (BMP: 1 unit, 1-3
		// bytes; astral: 2 units, 4 bytes), so no text exceeds the UTF-16
		// limit without exceeding the byte limit first: the UTF-16 check can
		// never be the one that fires. Each limit is tested at its boundary.
		{"observedContentText 500,001 ASCII bytes", with(validX(), "observedContentText", ascii(500_001)), "observedContentText", "exceeds 500000 UTF-8 bytes"},
		{"observedContentText 250,001 emoji", with(validX(), "observedContentText", strings.Repeat("\U0001F600", 250_001)), "observedContentText", "exceeds 500000 UTF-8 bytes"},
		{"observedContentText 166,667 three-byte runes", with(validX(), "observedContentText", strings.Repeat("\u20AC", 166_667)), "observedContentText", "exceeds 500000 UTF-8 bytes"},
		{"257 image occurrences", with(validX(), "observedImageOccurrences", repeatStrings(257, occurrence)), "observedImageOccurrences", "at most 256"},
		{"257 image URLs", with(validX(), "observedImageUrls", repeatStrings(257, func(i int) any { return fmt.Sprintf("https://img.example/%d.png", i) })), "observedImageUrls", "at most 256"},
		{"relative image URL", with(validX(), "observedImageUrls", []any{"/a.png"}), "observedImageUrls[0]", "absolute http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ingest.ParseRegisterInput(marshal(t, tc.in))
			require.Nil(t, in)
			var ie *ingest.InputError
			require.ErrorAs(t, err, &ie, "got %T: %v", err, err)
			require.Equal(t, tc.field, ie.Field, "message: %s", ie.Message)
			require.Contains(t, ie.Message, tc.msg)
		})
	}
}

func TestParseRegisterInputTextLimitBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		ok   bool
	}{
		{"500,000 ASCII", strings.Repeat("a", 500_000), true},
		{"500,001 ASCII", strings.Repeat("a", 500_001), false},
		// 125,000 astral runes: 250,000 UTF-16 units and exactly 500,000 bytes.
		{"125,000 emoji = 500,000 bytes", strings.Repeat("\U0001F600", 125_000), true},
		{"125,000 emoji + 1 byte", strings.Repeat("\U0001F600", 125_000) + "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ingest.ParseRegisterInput(marshal(t, with(validX(), "observedContentText", tc.text)))
			if tc.ok {
				require.NoError(t, err)
				return
			}
			var ie *ingest.InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, "observedContentText", ie.Field)
		})
	}
	// 256 image occurrences and URLs are the most accepted.
	occ := repeatStrings(256, func(i int) any {
		return obj{"originalIndex": i, "normalizedTextOffset": 0, "sourceUrl": "https://img.example/a.png"}
	})
	urls := repeatStrings(256, func(int) any { return "https://img.example/a.png" })
	_, err := ingest.ParseRegisterInput(marshal(t, with(with(validX(), "observedImageOccurrences", occ), "observedImageUrls", urls)))
	require.NoError(t, err)
}

func TestParseRegisterInputSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
	}{
		{"malformed", `{"platform":"X",`},
		{"not JSON", `platform=X`},
		{"empty", ``},
		{"trailing garbage", `{"platform":"X"} x`},
		{"two values", `{"platform":"X"}{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := ingest.ParseRegisterInput([]byte(tc.body))
			require.Nil(t, in)
			var se *ingest.SyntaxError
			require.ErrorAs(t, err, &se, "got %T: %v", err, err)
			var ie *ingest.InputError
			require.False(t, errors.As(err, &ie), "a syntax error is not an input error")
		})
	}
	// Trailing whitespace is not garbage.
	_, err := ingest.ParseRegisterInput(append(marshal(t, validX()), " \n\t"...))
	require.NoError(t, err)
}

func TestDecodeStrictNamesNestedFields(t *testing.T) {
	var v struct {
		N int `json:"n"`
	}
	err := ingest.DecodeStrict([]byte(`{"n":"1"}`), &v, "metadata")
	var ie *ingest.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "metadata.n", ie.Field)
	require.Equal(t, "metadata.n: expected int, got JSON string", ie.Error())

	err = ingest.DecodeStrict([]byte(`{"m":1}`), &v, "")
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "", ie.Field)
	require.Equal(t, `unknown field "m"`, ie.Error())

	require.NoError(t, ingest.DecodeStrict([]byte(`{"n":1}`), &v, ""))
	require.Equal(t, 1, v.N)
}

func TestParseRegisterInputPlatformsAreTheEventPlatforms(t *testing.T) {
	require.Equal(t, []string{"LESSWRONG", "X", "SUBSTACK", "WIKIPEDIA", "BLUESKY", "THREADS"}, events.Platforms)
}
