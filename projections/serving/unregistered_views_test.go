package serving_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// TestViewsOfUnregisteredVersionsCountNothing: a view counts only when its
// version is registered for its post. A view of a version never registered
// (of a known post, of an unknown post, or a version of another post) is
// ignored, however it is batched, without stopping the projector or touching
// any table; the valid views around it count as usual.
func TestViewsOfUnregisteredVersionsCountNothing(t *testing.T) {
	t.Parallel()
	p := newServing(t, 10)
	for mode, sizes := range map[string][]int{"one batch": {1 << 20}, "one event per batch": {1}, "batches of two": {2}} {
		known := registration(events.PlatformSubstack, "known-"+mode, "A registered post "+mode)
		other := registration(events.PlatformSubstack, "other-"+mode, "Another registered post "+mode)
		neverRegistered := registration(events.PlatformSubstack, "never-"+mode, "A post nobody registered "+mode)

		unknownVersion := viewOf(known, "mallory", "r9")
		unknownVersion.PostVersionID = events.PostVersionID(known.PostID, hex64("made up "+mode))
		unknownPost := viewOf(neverRegistered, "mallory", "r9")
		crossed := viewOf(known, "mallory", "r9")
		crossed.PostVersionID = other.PostVersionID // a version of another post

		partition := map[string]int32{"one batch": 0, "one event per batch": 1, "batches of two": 2}[mode]
		p.handleInBatches(t, records(t, partition, 0,
			timed{unknownPost, on(0, "08:00:00")},
			timed{known, on(0, "09:00:00")},
			timed{unknownVersion, on(0, "09:30:00")},
			timed{viewOf(known, "alice", "r1"), on(0, "10:00:00")},
			timed{crossed, on(0, "10:30:00")},
			timed{other, on(0, "11:00:00")},
			timed{viewOf(known, "bob", "r1"), on(0, "11:30:00")},
			timed{unknownVersion, on(0, "12:00:00")},
			timed{viewOf(other, "alice", "r1"), on(0, "12:30:00")},
		), sizes...)

		for _, c := range []struct {
			post          string
			views, credit int64
			last          string
		}{
			{known.PostID, 2, 2, pgTime(on(0, "11:30:00"))},
			{other.PostID, 1, 1, pgTime(on(0, "12:30:00"))},
		} {
			require.Equal(t, []statsRow{{ViewCount: c.views, UniqueViewScore: c.credit, LastViewedAt: &c.last, UpdatedAt: c.last}},
				rowsOf[statsRow](t, p, `SELECT view_count, unique_view_score, last_viewed_at::text, updated_at::text
					FROM posts WHERE id = $1`, c.post), "%s: %s", mode, c.post)
		}
		require.Equal(t, []string{"0"}, p.texts(t, `SELECT count(*)::text FROM posts WHERE id = $1`, neverRegistered.PostID), mode)
		require.Equal(t, []string{"0"}, p.texts(t, `SELECT count(*)::text FROM post_view_credits WHERE viewer_key = $1`,
			viewerKey("mallory")), mode)
		require.Equal(t, []string{fmt.Sprint(2)}, p.texts(t, `SELECT count(*)::text FROM post_versions WHERE post_id = ANY($1::uuid[])`,
			[]string{known.PostID, other.PostID, neverRegistered.PostID}), mode)
	}
}
