package events_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// platformSamples are registrations of the platforms added after
// post.version_registered.v1 was released: their metadata objects are new
// optional fields of the same version, so each shape gets its own golden
// file (testdata/<type>.<platform>.json) next to the released one, which
// never changes.
func platformSamples() map[string]events.Payload {
	const (
		did         = "did:plc:z72i7hdynmk6r22z27h6tvur"
		rkey        = "3lbg6v5ctk22w"
		versionHash = "fc765a2ff2adde4761f06f372b0a037664ff88e5402ad76e906d918319fbda9e"
	)
	bskyID := events.BlueskyPostURI(did, rkey)
	bskyPost := events.PostID(events.PlatformBluesky, bskyID)
	threadsPost := events.PostID(events.PlatformThreads, "DBxK2mYsQpL")
	return map[string]events.Payload{
		"bluesky": &events.PostVersionRegisteredV1{
			PostID:           bskyPost,
			PostVersionID:    events.PostVersionID(bskyPost, versionHash),
			Platform:         events.PlatformBluesky,
			ExternalID:       bskyID,
			URL:              "https://bsky.app/profile/bsky.app/post/" + rkey,
			VersionHash:      versionHash,
			ContentHash:      "d671528d115dd3c72486923d278decd01512a0135c0f4bf179c13c32bf6a2ae9",
			OccurrencesHash:  "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
			ContentText:      "The Eiffel Tower was completed in 1889 for the Exposition Universelle.",
			WordCount:        11,
			Provenance:       events.ProvenanceServerVerified,
			ImageURLs:        []string{"https://cdn.bsky.app/img/feed_fullsize/plain/" + did + "/bafkreia3tjh6vqzvi5jpkzjfyqdvb6djxtjvfnyx7xmpmvpk7f2zqnsmta@jpeg"},
			ImageOccurrences: []events.ImageOccurrenceV1{},
			Author:           &events.AuthorV1{PlatformUserID: did, DisplayName: "Bluesky"},
			Bluesky: &events.BlueskyMetaV1{
				DID: did, RKey: rkey, Handle: "bsky.app", DisplayName: "Bluesky",
				CID:         "bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu",
				CreatedAt:   ptr(time.Date(2024, 11, 22, 17, 4, 5, 123000000, time.UTC)),
				LikeCount:   ptr(1204),
				RepostCount: ptr(87),
				ReplyCount:  ptr(31),
			},
		},
		"threads": &events.PostVersionRegisteredV1{
			PostID:           threadsPost,
			PostVersionID:    events.PostVersionID(threadsPost, versionHash),
			Platform:         events.PlatformThreads,
			ExternalID:       "DBxK2mYsQpL",
			URL:              "https://www.threads.com/@some.user/post/DBxK2mYsQpL",
			VersionHash:      versionHash,
			ContentHash:      "d671528d115dd3c72486923d278decd01512a0135c0f4bf179c13c32bf6a2ae9",
			OccurrencesHash:  "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
			ContentText:      "The Eiffel Tower was completed in 1889 for the Exposition Universelle.",
			WordCount:        11,
			Provenance:       events.ProvenanceClientFallback,
			ServerFetchError: "Threads has no public API to read a post from: platform content cannot be verified server-side",
			ImageURLs:        []string{},
			ImageOccurrences: []events.ImageOccurrenceV1{},
			Author:           &events.AuthorV1{PlatformUserID: "some.user", DisplayName: "Some User"},
			Threads: &events.ThreadsMetaV1{
				Code: "DBxK2mYsQpL", Username: "some.user", DisplayName: "Some User",
				PostedAt:  ptr(time.Date(2024, 11, 22, 17, 4, 5, 0, time.UTC)),
				LikeCount: ptr(12), ReplyCount: ptr(3), RepostCount: ptr(1),
			},
		},
	}
}

func TestGoldenPlatformShapes(t *testing.T) {
	reg := events.NewCatalogRegistry()
	for platform, p := range platformSamples() {
		t.Run(platform, func(t *testing.T) {
			ev, err := reg.New(p, events.Meta{
				ID:            "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70",
				Time:          time.Date(2026, 11, 22, 10, 30, 0, 123456000, time.UTC),
				CorrelationID: "corr-1",
			})
			require.NoError(t, err)
			msg, err := reg.Encode(ev)
			require.NoError(t, err)
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, msg.Value, "", "  "))
			pretty.WriteByte('\n')
			golden := filepath.Join("testdata", p.EventType()+"."+platform+".json")
			if *update {
				if _, err := os.Stat(golden); err == nil {
					t.Fatalf("%s exists: released golden files never change", golden)
				}
				require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file; run go test ./events -run TestGoldenPlatformShapes -update once")
			require.Equal(t, string(want), pretty.String(), "encoding of the %s shape changed: history would no longer match", platform)
			decoded, err := reg.Decode(msg.Value)
			require.NoError(t, err)
			require.Equal(t, p, decoded.Payload)
		})
	}
}

// TestPlatformMetadataRules: each new platform needs its own metadata, and
// the external id is bound to it.
func TestPlatformMetadataRules(t *testing.T) {
	samples := platformSamples()
	bsky := *samples["bluesky"].(*events.PostVersionRegisteredV1)
	threads := *samples["threads"].(*events.PostVersionRegisteredV1)
	require.NoError(t, bsky.Validate())
	require.NoError(t, threads.Validate())

	rebind := func(p events.PostVersionRegisteredV1, externalID string) events.PostVersionRegisteredV1 {
		p.ExternalID = externalID
		p.PostID = events.PostID(p.Platform, externalID)
		p.PostVersionID = events.PostVersionID(p.PostID, p.VersionHash)
		return p
	}
	tests := []struct {
		name    string
		p       events.PostVersionRegisteredV1
		wantErr string
	}{
		{"bluesky without its metadata", func() events.PostVersionRegisteredV1 { p := bsky; p.Bluesky = nil; return p }(), "exactly the BLUESKY metadata"},
		{"bluesky with threads metadata too", func() events.PostVersionRegisteredV1 { p := bsky; p.Threads = threads.Threads; return p }(), "exactly the BLUESKY metadata"},
		{"bluesky external id under a handle", rebind(bsky, "at://bsky.app/app.bsky.feed.post/3lbg6v5ctk22w"), "external_id must be at://"},
		{"bluesky external id of another collection", rebind(bsky, "at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.like/3lbg6v5ctk22w"), "external_id must be at://"},
		{"bluesky without handle", func() events.PostVersionRegisteredV1 {
			p := bsky
			m := *p.Bluesky
			m.Handle = ""
			p.Bluesky = &m
			return p
		}(), "bluesky needs did, rkey and handle"},
		{"threads external id not the code", rebind(threads, "DBxK2mYsQpM"), "external_id must be the code"},
		{"threads with X metadata", func() events.PostVersionRegisteredV1 {
			p := threads
			p.Threads = nil
			p.X = &events.XMetaV1{TweetID: "1"}
			return p
		}(), "exactly the THREADS metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, tc.p.Validate(), tc.wantErr)
		})
	}
	require.Equal(t, []string{"LESSWRONG", "X", "SUBSTACK", "WIKIPEDIA", "BLUESKY", "THREADS"}, events.Platforms)
	require.Equal(t, "at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.post/3lbg6v5ctk22w",
		events.BlueskyPostURI("did:plc:z72i7hdynmk6r22z27h6tvur", "3lbg6v5ctk22w"))
}
