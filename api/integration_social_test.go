package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

const socialURI = "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w"

// socialBase is a registration of a Bluesky or Threads post as the
// extension sends it.
func socialBase(platform string) map[string]any {
	if platform == events.PlatformBluesky {
		return map[string]any{
			"platform": "BLUESKY", "externalId": socialURI,
			"url":                      "https://bsky.app/profile/harbor-notes.bsky.social/post/3lbg6v5ctk22w",
			"observedContentText":      "Sea level along the Dutch coast rose about 20 cm\nover the last century.",
			"observedImageUrls":        []any{},
			"observedImageOccurrences": []any{},
			"metadata": map[string]any{"handle": "@harbor-notes.bsky.social", "displayName": "Harbor Notes",
				"createdAt": "2024-11-22T17:04:05.123Z", "likeCount": 231, "repostCount": 52, "replyCount": 14},
		}
	}
	return map[string]any{
		"platform": "THREADS", "externalId": "DBxK2mYsQpL", "url": "https://www.threads.com/@some.user/post/DBxK2mYsQpL",
		"observedContentText": "The Great Wall of China is visible from the Moon.",
		"observedImageUrls":   []any{}, "observedImageOccurrences": []any{},
		"metadata": map[string]any{"username": "some.user", "displayName": "Some User", "postedAt": "2024-11-22T17:04:05Z"},
	}
}

func socialPatched(platform, path string, v any) map[string]any {
	m := socialBase(platform)
	parts := strings.Split(path, ".")
	target := m
	for _, p := range parts[:len(parts)-1] {
		target = target[p].(map[string]any)
	}
	target[parts[len(parts)-1]] = v
	return m
}

// TestIntegrationBlueskyAndThreads: hostile Bluesky and Threads input gets
// a 400 naming the field and appends nothing; valid posts (the widest
// values included) are registered over the same tRPC procedures, with the
// contract's exact output, served back, and counted by views.
func TestIntegrationBlueskyAndThreads(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	const register = "post.registerObservedVersion"
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		msg   string
	}{
		{"BLUESKY handle NUL", socialPatched("BLUESKY", "metadata.handle", "harbor\x00.bsky.social"), "metadata.handle", "must not contain NUL (U+0000)"},
		{"BLUESKY handle 10 KB", socialPatched("BLUESKY", "metadata.handle", strings.Repeat("h", 10_240)+".bsky.social"), "metadata.handle", "longer than 253 characters"},
		{"BLUESKY handle javascript", socialPatched("BLUESKY", "metadata.handle", "javascript:alert(1)"), "metadata.handle", "a handle is a domain name"},
		{"BLUESKY displayName NUL", socialPatched("BLUESKY", "metadata.displayName", "Harbor\x00"), "metadata.displayName", "must not contain NUL (U+0000)"},
		{"BLUESKY at-uri under a handle", socialPatched("BLUESKY", "externalId", "at://harbor-notes.bsky.social/app.bsky.feed.post/3lbg6v5ctk22w"), "externalId", "the author's DID"},
		{"BLUESKY at-uri of a like", socialPatched("BLUESKY", "externalId", "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.like/3lbg6v5ctk22w"), "externalId", "collection"},
		{"BLUESKY at-uri NUL", socialPatched("BLUESKY", "externalId", socialURI+"\x00"), "externalId", "must not contain NUL (U+0000)"},
		{"BLUESKY javascript url", socialPatched("BLUESKY", "url", "javascript:alert(1)"), "url", "must be an absolute http(s) URL"},
		{"BLUESKY javascript image", socialPatched("BLUESKY", "observedImageUrls", []any{"javascript:alert(1)"}), "observedImageUrls[0]", "must be an absolute http(s) URL"},
		{"BLUESKY text NUL", socialPatched("BLUESKY", "observedContentText", "a\x00b"), "observedContentText", "must not contain NUL (U+0000)"},
		{"THREADS username NUL", socialPatched("THREADS", "metadata.username", "some\x00user"), "metadata.username", "must not contain NUL (U+0000)"},
		{"THREADS username 10 KB", socialPatched("THREADS", "metadata.username", strings.Repeat("u", 10_240)), "metadata.username", "longer than 64 characters"},
		{"THREADS code a URL", socialPatched("THREADS", "externalId", "https://www.threads.com/@some.user/post/DBxK2mYsQpL"), "externalId", "must be the Threads post code"},
		{"THREADS javascript url", socialPatched("THREADS", "url", "javascript:alert(1)"), "url", "must be an absolute http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, b.server, register, mustRaw(t, tc.body))
			expectError(t, r, "BAD_REQUEST", register)
			msg, _, _ := errorEnvelopeOf(t, r)
			require.True(t, strings.HasPrefix(msg, tc.field+": "), "message %q names %s", msg, tc.field)
			require.Contains(t, msg, tc.msg)
		})
	}
	require.Equal(t, map[int32]int64{0: 0, 1: 0, 2: 0}, b.endOffsets(t), "nothing appended")
	b.runnerAlive(t)

	// Valid registrations; the widest Bluesky handle and display name fit
	// the stores.
	widest := socialBase("BLUESKY")
	widest["externalId"] = "at://did:plc:4rbd5d3qpcnwjxcqf6tzbhkw/app.bsky.feed.post/3lc2mxq7ynp2c"
	widest["metadata"] = map[string]any{"handle": strings.Repeat("abcdefghi.", 25) + "com", "displayName": wide(0x10100, 256)}
	for _, tc := range []struct {
		body       map[string]any
		externalID string
		authorID   string
		author     string
	}{
		{socialBase("BLUESKY"), socialURI, "did:plc:ewvi7nxzyoun6zhxrhs64oiz", "Harbor Notes"},
		{socialBase("THREADS"), "DBxK2mYsQpL", "some.user", "Some User"},
		{widest, "at://did:plc:4rbd5d3qpcnwjxcqf6tzbhkw/app.bsky.feed.post/3lc2mxq7ynp2c", "did:plc:4rbd5d3qpcnwjxcqf6tzbhkw", wide(0x10100, 256)},
	} {
		platform := tc.body["platform"].(string)
		r := post(t, b.server, register, mustRaw(t, tc.body))
		var out map[string]any
		require.NoError(t, json.Unmarshal(resultOf(t, r), &out), "body: %s", r.body)
		text := content.Normalize(tc.body["observedContentText"].(string))
		id, err := content.ComputeVersionIdentity(text, nil)
		require.NoError(t, err)
		postID := events.PostID(platform, tc.externalID)
		require.Equal(t, map[string]any{
			"platform": platform, "externalId": tc.externalID, "versionHash": id.VersionHash,
			"postVersionId": events.PostVersionID(postID, id.VersionHash), "provenance": "CLIENT_FALLBACK",
		}, out, "the contract's five keys, nothing more")
		require.Equal(t, 1, b.seenCount(t, out["postVersionId"].(string)), "read-your-writes")
		var authorID, name string
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT a.platform_user_id, a.display_name FROM posts p
			JOIN authors a ON a.id = p.author_id WHERE p.id = $1`, postID).Scan(&authorID, &name))
		require.Equal(t, tc.authorID, authorID)
		require.Equal(t, tc.author, name)

		r = post(t, b.server, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": out["postVersionId"]}))
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, notInvestigatedBody, string(r.body))
		require.Equal(t, postCounters{ViewCount: 1, UniqueViewScore: 1}, b.waitViews(t, postID, 1))
	}
	var handle, cid string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT handle, COALESCE(cid, 'none') FROM bluesky_version_meta
		WHERE did = 'did:plc:ewvi7nxzyoun6zhxrhs64oiz'`).Scan(&handle, &cid))
	require.Equal(t, "harbor-notes.bsky.social", handle)
	require.Equal(t, "none", cid, "only a verification knows the CID")
	var username string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT username FROM threads_version_meta WHERE code = 'DBxK2mYsQpL'`).Scan(&username))
	require.Equal(t, "some.user", username)

	// batchStatus takes the new platforms too.
	input := `{"posts":[{"platform":"BLUESKY","externalId":"` + socialURI + `","versionHash":"` + hash64('a') + `"},` +
		`{"platform":"THREADS","externalId":"DBxK2mYsQpL","versionHash":"` + hash64('b') + `"}]}`
	r := get(t, b.server, queryPath("post.batchStatus", input), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	b.runnerAlive(t)
}
