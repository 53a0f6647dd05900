package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

func TestReader(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	fallback := registration(events.PlatformLessWrong, "readme", "Text to read back, five words.")
	fallback.Provenance = events.ProvenanceClientFallback
	verified := registration(events.PlatformLessWrong, "readme", "Text to read back, five words.")
	other := registration(events.PlatformLessWrong, "readme", "A second version of it.")
	other.Provenance = events.ProvenanceClientFallback
	require.Equal(t, fallback.PostVersionID, verified.PostVersionID)

	p.handle(t, records(t, 0, 0,
		timed{fallback, base},
		timed{other, base.Add(time.Minute)},
		timed{viewOf(fallback, "u1", "r1"), base.Add(2 * time.Minute)},
		timed{viewOf(fallback, "u1", "r1"), base.Add(3 * time.Minute)},
		timed{viewOf(other, "u2", "r1"), base.Add(4 * time.Minute)},
	)...)

	want := serving.Version{
		ID: fallback.PostVersionID, PostID: fallback.PostID, Platform: events.PlatformLessWrong, ExternalID: "readme",
		VersionHash: fallback.VersionHash, ContentHash: fallback.ContentHash, WordCount: 6,
	}
	got, err := rd.VersionByID(ctx, fallback.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, want, got, "a client-fallback version is not verified")

	got, err = rd.VersionByID(ctx, other.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, serving.Version{
		ID: other.PostVersionID, PostID: other.PostID, Platform: events.PlatformLessWrong, ExternalID: "readme",
		VersionHash: other.VersionHash, ContentHash: other.ContentHash, WordCount: 5,
	}, got)

	stats, err := rd.PostStats(ctx, fallback.PostID)
	require.NoError(t, err)
	require.Equal(t, int64(3), stats.ViewCount)
	require.Equal(t, int64(2), stats.UniqueViewScore)
	require.NotNil(t, stats.LastViewedAt)
	require.True(t, base.Add(4*time.Minute).Equal(*stats.LastViewedAt), "last viewed at %s", stats.LastViewedAt)

	// The verified observation latches the version's verification time.
	p.handle(t, records(t, 0, 5, timed{verified, base.Add(5 * time.Minute)})...)
	got, err = rd.VersionByID(ctx, fallback.PostVersionID)
	require.NoError(t, err)
	require.NotNil(t, got.ServerVerifiedAt)
	require.True(t, base.Add(5*time.Minute).Equal(*got.ServerVerifiedAt), "verified at %s", got.ServerVerifiedAt)
	got.ServerVerifiedAt = nil
	require.Equal(t, want, got)

	// Unknown ids.
	unknownPost := events.PostID(events.PlatformLessWrong, "never-registered")
	_, err = rd.VersionByID(ctx, events.PostVersionID(unknownPost, hex64("x")))
	require.ErrorIs(t, err, serving.ErrNotFound)
	_, err = rd.VersionByID(ctx, fallback.PostID) // a post id is not a version id
	require.ErrorIs(t, err, serving.ErrNotFound)
	_, err = rd.PostStats(ctx, unknownPost)
	require.ErrorIs(t, err, serving.ErrNotFound)
	_, err = rd.PostStats(ctx, fallback.PostVersionID) // a version id is not a post id
	require.ErrorIs(t, err, serving.ErrNotFound)
}

// TestReaderWithoutViews: a registered post nobody viewed has zero counters
// and no last view.
func TestReaderWithoutViews(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	r := registration(events.PlatformWikipedia, "en:Unviewed", "Nobody looked at this.")
	p.handle(t, records(t, 0, 0, timed{r, base})...)
	stats, err := serving.NewReader(p.pool).PostStats(context.Background(), r.PostID)
	require.NoError(t, err)
	require.Equal(t, serving.PostStats{}, stats)
}
