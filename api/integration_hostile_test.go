package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// hostileBase is the registration input of each platform that the
// hostile cases patch.
func hostileBase(platform string) map[string]any {
	switch platform {
	case "X":
		return map[string]any{
			"platform": "X", "externalId": "1790000000000000077", "url": "https://x.com/h/status/1790000000000000077",
			"observedContentText": "A hostile post.", "observedImageUrls": []any{}, "observedImageOccurrences": []any{},
			"metadata": map[string]any{"authorHandle": "@h", "authorDisplayName": "H", "text": "A hostile post.", "mediaUrls": []any{}},
		}
	case "LESSWRONG":
		return map[string]any{
			"platform": "LESSWRONG", "externalId": "hostileLW0000001", "url": "https://www.lesswrong.com/posts/hostileLW0000001/x",
			"metadata": map[string]any{"slug": "x", "title": "T", "htmlContent": "<p>A hostile post.</p>", "authorName": "A",
				"authorSlug": "a", "tags": []any{"AI"}},
		}
	case "SUBSTACK":
		return map[string]any{
			"platform": "SUBSTACK", "externalId": "144000077", "url": "https://example.substack.com/p/x",
			"observedContentText": "A hostile post.",
			"metadata": map[string]any{"substackPostId": "144000077", "publicationSubdomain": "example", "slug": "x",
				"title": "T", "subtitle": "S", "authorName": "A"},
		}
	default:
		return map[string]any{
			"platform": "WIKIPEDIA", "url": "https://en.wikipedia.org/wiki/X", "observedContentText": "A hostile post.",
			"metadata": map[string]any{"language": "en", "title": "X", "pageId": "77", "revisionId": "7", "displayTitle": "X"},
		}
	}
}

// patched returns platform's base body with path ("metadata.title") set to v.
func patched(platform, path string, v any) map[string]any {
	m := hostileBase(platform)
	parts := strings.Split(path, ".")
	target := m
	for _, p := range parts[:len(parts)-1] {
		target = target[p].(map[string]any)
	}
	target[parts[len(parts)-1]] = v
	return m
}

// wide returns n different 4-byte characters starting at from: the widest
// string of n characters, which nothing compresses.
func wide(from rune, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(from + rune(i))
	}
	return b.String()
}

// TestIntegrationHostileStringsAppendNothing: the inputs that stopped the
// serving projector for good (a NUL in any stored string, a handle too long
// for the authors index) and the ones that answered 500 (an X handle of
// "@", a NUL in batchStatus' externalId) each get a 400 naming the field,
// and nothing is appended. The widest values the limits allow are
// accepted and applied by the real projector, so the limits fit the stores.
func TestIntegrationHostileStringsAppendNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	const register = "post.registerObservedVersion"
	nul := "a\x00b"
	caption := func(c string) []any {
		return []any{map[string]any{"originalIndex": 0, "normalizedTextOffset": 0, "sourceUrl": "https://img.example/a.png", "captionText": c}}
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string // the message starts with it
		msg   string
	}{
		{"X observedContentText NUL", patched("X", "observedContentText", "A hostile\x00 post."), "observedContentText", "must not contain NUL (U+0000)"},
		{"X text NUL", patched("X", "metadata.text", nul), "metadata.text", "must not contain NUL (U+0000)"},
		{"X authorHandle NUL", patched("X", "metadata.authorHandle", nul), "metadata.authorHandle", "must not contain NUL (U+0000)"},
		{"X authorDisplayName NUL", patched("X", "metadata.authorDisplayName", nul), "metadata.authorDisplayName", "must not contain NUL (U+0000)"},
		{"X authorHandle 4,000 characters", patched("X", "metadata.authorHandle", strings.Repeat("h", 4000)), "metadata.authorHandle", "longer than 64 characters (got 4000)"},
		{"X authorHandle @", patched("X", "metadata.authorHandle", "@"), "metadata.authorHandle", `must name the author (got only "@")`},
		{"X authorHandle spaced @", patched("X", "metadata.authorHandle", " @ "), "metadata.authorHandle", `must name the author (got only "@")`},
		{"X mediaUrls javascript", patched("X", "metadata.mediaUrls", []any{"javascript:alert(1)"}), "metadata.mediaUrls[0]", "must be an absolute http(s) URL"},
		{"X mediaUrls data", patched("X", "metadata.mediaUrls", []any{"https://pbs.twimg.com/a.jpg", "data:image/png;base64,AAAA"}), "metadata.mediaUrls[1]", "must be an absolute http(s) URL"},
		{"X mediaUrls relative", patched("X", "metadata.mediaUrls", []any{"/media/a.jpg"}), "metadata.mediaUrls[0]", "must be an absolute http(s) URL"},
		{"X image caption NUL", patched("X", "observedImageOccurrences", caption(nul)), "observedImageOccurrences[0].captionText", "must not contain NUL (U+0000)"},
		{"X image caption 4,001 characters", patched("X", "observedImageOccurrences", caption(strings.Repeat("c", 4001))), "observedImageOccurrences[0].captionText", "longer than 4000 characters"},
		{"X likeCount over 32 bits", patched("X", "metadata.likeCount", 1<<31), "metadata.likeCount", "must be at most 2147483647"},
		{"LESSWRONG htmlContent NUL", patched("LESSWRONG", "metadata.htmlContent", "<p>a\x00b</p>"), "metadata.htmlContent", "must not contain NUL (U+0000)"},
		{"LESSWRONG title NUL", patched("LESSWRONG", "metadata.title", nul), "metadata.title", "must not contain NUL (U+0000)"},
		{"LESSWRONG authorSlug NUL", patched("LESSWRONG", "metadata.authorSlug", nul), "metadata.authorSlug", "must not contain NUL (U+0000)"},
		{"LESSWRONG authorSlug 4,000 characters", patched("LESSWRONG", "metadata.authorSlug", strings.Repeat("s", 4000)), "metadata.authorSlug", "longer than 512 characters"},
		{"LESSWRONG tag NUL", patched("LESSWRONG", "metadata.tags", []any{"AI", nul}), "metadata.tags[1]", "must not contain NUL (U+0000)"},
		{"SUBSTACK subtitle NUL", patched("SUBSTACK", "metadata.subtitle", nul), "metadata.subtitle", "must not contain NUL (U+0000)"},
		{"SUBSTACK authorName 4,000 characters", patched("SUBSTACK", "metadata.authorName", strings.Repeat("n", 4000)), "metadata.authorName", "longer than 256 characters"},
		{"WIKIPEDIA title NUL", patched("WIKIPEDIA", "metadata.title", nul), "metadata.title", "must not contain NUL (U+0000)"},
		{"WIKIPEDIA displayTitle NUL", patched("WIKIPEDIA", "metadata.displayTitle", nul), "metadata.displayTitle", "must not contain NUL (U+0000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, b.server, register, mustRaw(t, tc.body))
			expectError(t, r, "BAD_REQUEST", register)
			msg, _, _ := errorEnvelopeOf(t, r)
			require.True(t, strings.HasPrefix(msg, tc.field+": "), "message %q names %s", msg, tc.field)
			require.Contains(t, msg, tc.msg)
		})
	}

	t.Run("batchStatus NUL externalId", func(t *testing.T) {
		for _, input := range []string{
			`{"posts":[{"platform":"X","externalId":"a\u0000b","versionHash":"` + hash64('a') + `"}]}`,
			`{"posts":[{"platform":"X","externalId":"1","versionHash":"` + hash64('a') + `"},{"platform":"LESSWRONG","externalId":"\u0000","versionHash":"` + hash64('b') + `"}]}`,
		} {
			r := get(t, b.server, queryPath("post.batchStatus", input), nil)
			expectError(t, r, "BAD_REQUEST", "post.batchStatus")
			msg, _, _ := errorEnvelopeOf(t, r)
			require.Contains(t, msg, "].externalId: must not contain NUL (U+0000)")
		}
	})

	// Nothing was appended, and the projector runs.
	require.Equal(t, map[int32]int64{0: 0, 1: 0, 2: 0}, b.endOffsets(t))
	b.runnerAlive(t)

	// The widest values the limits allow, in characters of 4 bytes, are
	// registered and applied: they fit the unique indexes on authors and
	// posts, and the index on LessWrong slugs.
	tags := make([]any, 100)
	for i := range tags {
		tags[i] = wide(0x20000+rune(i*256), 256)
	}
	widest := []map[string]any{
		patched("X", "metadata", map[string]any{
			"authorHandle": "@" + wide(0x10000, 64), "authorDisplayName": wide(0x10100, 256),
			"text": "A hostile post.", "mediaUrls": []any{"https://pbs.twimg.com/" + strings.Repeat("m", 4096-len("https://pbs.twimg.com/"))},
		}),
		patched("LESSWRONG", "metadata", map[string]any{
			"slug": wide(0x10000, 512), "title": wide(0x10400, 1000), "htmlContent": "<p>A hostile post.</p>",
			"authorName": wide(0x10800, 256), "authorSlug": wide(0x10A00, 512), "tags": tags,
		}),
		// No handle: the author is "{publicationSubdomain}:{authorName}".
		patched("SUBSTACK", "metadata", map[string]any{
			"substackPostId": "144000077", "publicationSubdomain": wide(0x10000, 253), "slug": wide(0x10200, 512),
			"title": wide(0x10400, 1000), "subtitle": wide(0x10800, 2000), "authorName": wide(0x11000, 256),
		}),
	}
	widest[0]["externalId"] = wide(0x12000, 256)
	for _, body := range widest {
		raw := mustRaw(t, body)
		require.Less(t, len(raw), MaxBodyBytes)
		r := post(t, b.server, register, raw)
		var out struct{ PostVersionID string }
		require.NoError(t, json.Unmarshal(resultOf(t, r), &out), "body: %s", r.body)
		b.runnerAlive(t)
		require.Equal(t, 1, b.seenCount(t, out.PostVersionID), "applied by the projector")
	}
	var handles []string
	rows, err := b.pool.Query(context.Background(), `SELECT platform_user_id FROM authors ORDER BY platform`)
	require.NoError(t, err)
	for rows.Next() {
		var h string
		require.NoError(t, rows.Scan(&h))
		handles = append(handles, h)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{wide(0x10A00, 512), strings.ToLower(wide(0x10000, 253) + ":" + wide(0x11000, 256)), wide(0x10000, 64)}, handles)

	// A lone surrogate decodes to U+FFFD (as the reference server's UTF-8
	// encoding has it) and is stored as such.
	body := strings.Replace(string(mustRaw(t, patched("X", "metadata.authorDisplayName", "LONE"))), "LONE", `Lone\ud800name`, 1)
	body = strings.Replace(body, `"1790000000000000077"`, `"1790000000000000078"`, 1)
	r := post(t, b.server, register, []byte(body))
	resultOf(t, r)
	var name string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT display_name FROM authors a JOIN posts p ON p.author_id = a.id
		WHERE p.id = $1`, events.PostID("X", "1790000000000000078")).Scan(&name))
	require.Equal(t, "Lone\uFFFDname", name)
	b.runnerAlive(t)
}
