package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

type blueskyRow struct {
	DID, RKey, Handle                  string
	DisplayName, CID                   *string
	ImageURLs                          []string
	LikeCount, RepostCount, ReplyCount *int32
	PostedAt                           *string
	CreatedAt                          string
}

type threadsRow struct {
	Code, Username                     string
	DisplayName                        *string
	ImageURLs                          []string
	LikeCount, ReplyCount, RepostCount *int32
	PostedAt                           *string
	CreatedAt                          string
}

const (
	qBluesky = `SELECT did, rkey, handle, display_name, cid, image_urls, like_count, repost_count, reply_count,
		posted_at::text, created_at::text FROM bluesky_version_meta`
	qThreads = `SELECT code, username, display_name, image_urls, like_count, reply_count, repost_count,
		posted_at::text, created_at::text FROM threads_version_meta`
)

// blueskyObservation i of one Bluesky version: client fallback, verified
// by the AppView (CID, its handle and name), client fallback again with an
// old handle. Only a verification knows the CID, and it stays.
func blueskyObservation(i int) *events.PostVersionRegisteredV1 {
	const did, rkey = "did:plc:ewvi7nxzyoun6zhxrhs64oiz", "3lbg6v5ctk22w"
	uri := events.BlueskyPostURI(did, rkey)
	p := registration(events.PlatformBluesky, uri, "Sea level along the Dutch coast rose about 20 cm over the last century.")
	p.URL = "https://bsky.app/profile/harbor-notes.bsky.social/post/" + rkey
	p.ImageURLs = []string{"https://cdn.bsky.app/img/feed_fullsize/plain/" + did + "/bafkreia3tjh6vqzvi5jpkzjfyqdvb6djxtjvfnyx7xmpmvpk7f2zqnsmta@jpeg"}
	m := &events.BlueskyMetaV1{DID: did, RKey: rkey, Handle: []string{"harbor.example.com", "harbor-notes.bsky.social", "harbor.example.com"}[i],
		DisplayName: []string{"", "Harbor Notes", "Harbor"}[i], LikeCount: ptr(230 + i), ReplyCount: []*int{nil, ptr(14), ptr(15)}[i]}
	if i == 1 {
		m.CID = "bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu"
		m.CreatedAt = ptr(published)
	} else {
		p.Provenance, p.ServerFetchError = events.ProvenanceClientFallback, "bluesky canonical fetch: HTTP 503 Service Unavailable"
	}
	p.Bluesky = m
	name := m.DisplayName
	if name == "" {
		name = m.Handle
	}
	p.Author = &events.AuthorV1{PlatformUserID: did, DisplayName: name}
	return p
}

func TestRegistrationBlueskyAndThreads(t *testing.T) {
	t.Parallel()
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Hour) }
	p := newServing(t, 2)
	bsky := []*events.PostVersionRegisteredV1{blueskyObservation(0), blueskyObservation(1), blueskyObservation(2)}
	th := registration(events.PlatformThreads, "DBxK2mYsQpL", "The Great Wall of China is visible from the Moon.")
	th.Provenance, th.ServerFetchError = events.ProvenanceClientFallback, "Threads has no public API to read a post from: platform content cannot be verified server-side"
	th.Threads = &events.ThreadsMetaV1{Code: "DBxK2mYsQpL", Username: "some.user", PostedAt: ptr(published), LikeCount: ptr(12)}
	th.Author = &events.AuthorV1{PlatformUserID: "some.user", DisplayName: "some.user"}
	p.handle(t, records(t, 0, 0, timed{bsky[0], at(0)}, timed{bsky[1], at(1)}, timed{bsky[2], at(2)}, timed{th, at(3)})...)

	require.Equal(t, []blueskyRow{{
		DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", RKey: "3lbg6v5ctk22w", Handle: "harbor.example.com", DisplayName: ptr("Harbor"),
		CID: ptr("bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu"), ImageURLs: bsky[2].ImageURLs,
		LikeCount: ptr(int32(232)), ReplyCount: ptr(int32(15)), PostedAt: nil, CreatedAt: pgTime(at(0)),
	}}, rowsOf[blueskyRow](t, p, qBluesky), "the latest observation wins, except the CID only a verification knows")
	require.Equal(t, []threadsRow{{
		Code: "DBxK2mYsQpL", Username: "some.user", ImageURLs: []string{}, LikeCount: ptr(int32(12)),
		PostedAt: ptr("2026-01-02 03:04:05+00"), CreatedAt: pgTime(at(3)),
	}}, rowsOf[threadsRow](t, p, qThreads))
	require.Equal(t, []authorRow{
		{events.AuthorID(events.PlatformBluesky, "did:plc:ewvi7nxzyoun6zhxrhs64oiz"), events.PlatformBluesky, "did:plc:ewvi7nxzyoun6zhxrhs64oiz", "Harbor", pgTime(at(0)), pgTime(at(2))},
		{events.AuthorID(events.PlatformThreads, "some.user"), events.PlatformThreads, "some.user", "some.user", pgTime(at(3)), pgTime(at(3))},
	}, sortedAuthors(rowsOf[authorRow](t, p, qAuthors)))

	ctx := context.Background()
	r := serving.NewReader(p.pool)
	v, err := r.VersionByID(ctx, bsky[2].PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.PlatformBluesky, v.Platform)
	require.Equal(t, "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w", v.ExternalID)
	require.NotNil(t, v.ServerVerifiedAt, "latched by the verified observation")
	src, err := r.Source(ctx, bsky[2].PostVersionID)
	require.NoError(t, err)
	require.Equal(t, bsky[2].ImageURLs, src.ImageURLs, "an investigation or analysis of the post sees its images")
	require.Equal(t, "Sea level along the Dutch coast rose about 20 cm over the last century.", src.Text)
	require.Empty(t, src.ServerHTML)
	require.Equal(t, events.ProvenanceServerVerified, src.Provenance())
	src, err = r.Source(ctx, th.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, []string{}, src.ImageURLs)
	require.Equal(t, events.ProvenanceClientFallback, src.Provenance())
}

func sortedAuthors(rows []authorRow) []authorRow {
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			if rows[j].Platform < rows[i].Platform {
				rows[i], rows[j] = rows[j], rows[i]
			}
		}
	}
	return rows
}
