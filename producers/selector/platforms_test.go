package selector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers/selector"
)

// TestSelectorSkipsVerdictOnlyPlatforms: the most viewed posts are on
// Bluesky and Threads, but only the X post is investigated inline.
func TestSelectorSkipsVerdictOnlyPlatforms(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	xVersion, _, all := post(t, s, 0, 20, 1, now.Add(-time.Hour))

	social := func(platform, ext string, views int, meta func(*events.PostVersionRegisteredV1)) {
		text := "The Afsluitdijk was finished in 1932 and is 32 km long on " + platform + "."
		id, err := content.ComputeVersionIdentity(text, nil)
		require.NoError(t, err)
		postID := events.PostID(platform, ext)
		versionID := events.PostVersionID(postID, id.VersionHash)
		reg := &events.PostVersionRegisteredV1{
			PostID: postID, PostVersionID: versionID, Platform: platform, ExternalID: ext,
			URL: "https://example.com/" + platform, VersionHash: id.VersionHash, ContentHash: id.ContentHash,
			OccurrencesHash: id.OccurrencesHash, ContentText: text, WordCount: content.WordCount(text),
			Provenance: events.ProvenanceClientFallback, ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
		}
		meta(reg)
		payloads := []events.Payload{reg}
		for v := 0; v < views; v++ {
			payloads = append(payloads, &events.PostViewRecordedV2{
				PostID: postID, PostVersionID: versionID, Platform: platform, ExternalID: ext,
				ViewerKey: fmt.Sprintf("%064x", v+1), ViewerKind: events.ViewerAnonymousSession, IPRangeKey: fmt.Sprintf("%064x", 1000+v),
			})
		}
		for i, p := range payloads {
			ev, err := s.Registry.New(p, events.Meta{ID: uuid.NewString(), Time: now.Add(-time.Hour).Add(time.Duration(i) * time.Second)})
			require.NoError(t, err)
			all = append(all, ev)
		}
	}
	uri := events.BlueskyPostURI("did:plc:ewvi7nxzyoun6zhxrhs64oiz", "3lbg6v5ctk22w")
	social(events.PlatformBluesky, uri, 5, func(p *events.PostVersionRegisteredV1) {
		p.Bluesky = &events.BlueskyMetaV1{DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", RKey: "3lbg6v5ctk22w", Handle: "harbor-notes.bsky.social"}
	})
	social(events.PlatformThreads, "DBxK2mYsQpL", 4, func(p *events.PostVersionRegisteredV1) {
		p.Threads = &events.ThreadsMetaV1{Code: "DBxK2mYsQpL", Username: "some.user"}
	})
	s.AppendAndWait(t, all...)

	sel := selector.New(selector.Config{DailyBudget: 3, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
		s.Pool, s.Appender, s.Watermark, nil, func() time.Time { return now }, logging.Discard())
	res, err := sel.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, res.Requested, 1)
	require.Equal(t, xVersion, res.Requested[0].PostVersionID)
	require.Equal(t, 3, res.Remaining)
	var scores []string
	rows, err := s.Pool.Query(context.Background(), `SELECT platform || '=' || unique_view_score FROM posts ORDER BY platform`)
	require.NoError(t, err)
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		scores = append(scores, v)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"BLUESKY=5", "THREADS=4", "X=1"}, scores, "their views count; they are just not picked")
	require.Equal(t, []string{"LESSWRONG", "X", "SUBSTACK", "WIKIPEDIA"}, selector.InlinePlatforms)
}
