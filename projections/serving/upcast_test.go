package serving_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/teststack"
)

// TestMixedViewVersionsReplayLikeV2Only appends the replay scenario twice to
// real Kafka: once with every other view stored as post.view_recorded.v1 (as
// a log written before v2 holds them), once with every view as v2, the same
// facts with the same ids and times. The serving projections built from the
// two logs are identical: consumers only ever see v2.
func TestMixedViewVersionsReplayLikeV2Only(t *testing.T) {
	t.Parallel()
	mixed := teststack.Serving(t, teststack.Options{Partitions: 2, IPRangeDailyCap: 2})
	v2only := teststack.Serving(t, teststack.Options{Partitions: 2, IPRangeDailyCap: 2})

	var mixedLog, v2Log []events.Event
	nViews := 0
	for i, e := range scenario() {
		ev := newEvent(t, e.p, e.at)
		v1, isView := e.p.(*events.PostViewRecordedV1)
		if !isView {
			mixedLog, v2Log = append(mixedLog, ev), append(v2Log, ev)
			continue
		}
		nViews++
		// Some viewers are accounts, so both viewer kinds occur.
		authenticated := i%3 == 0
		kind := events.ViewerAnonymousSession
		if authenticated {
			kind = events.ViewerInstanceAPIKey
		}
		asV2 := ev
		asV2.Payload = &events.PostViewRecordedV2{
			PostID: v1.PostID, PostVersionID: v1.PostVersionID, Platform: v1.Platform, ExternalID: v1.ExternalID,
			ViewerKey: v1.ViewerKey, ViewerKind: kind, IPRangeKey: v1.IPRangeKey,
		}
		asV1 := ev
		old := *v1
		old.Authenticated = authenticated
		asV1.Payload = &old
		v2Log = append(v2Log, asV2)
		if nViews%2 == 0 {
			mixedLog = append(mixedLog, asV1)
		} else {
			mixedLog = append(mixedLog, asV2)
		}
	}
	mixed.AppendAndWait(t, mixedLog...)
	v2only.AppendAndWait(t, v2Log...)

	require.Equal(t, map[string]int{events.TypePostViewRecordedV1: nViews / 2, events.TypePostViewRecordedV2: nViews - nViews/2},
		viewTypesOnLog(t, mixed), "the mixed log really holds both versions")
	require.Equal(t, map[string]int{events.TypePostViewRecordedV2: nViews}, viewTypesOnLog(t, v2only))

	// Checkpoints name each stack's own topics; everything else must match.
	want := dumpSchema(t, v2only.Pool, "projection_checkpoints")
	require.Equal(t, want, dumpSchema(t, mixed.Pool, "projection_checkpoints"))
	require.Contains(t, want, "post_view_credits: (", "views were projected")
	var views int64
	require.NoError(t, mixed.Pool.QueryRow(context.Background(), `SELECT sum(view_count) FROM posts`).Scan(&views))
	require.Equal(t, int64(nViews), views)
}

// viewTypesOnLog counts the errata-type headers of the view records on the
// stack's posts topic.
func viewTypesOnLog(t *testing.T, s *teststack.Stack) map[string]int {
	t.Helper()
	ctx := context.Background()
	topic := s.Topics.Name(events.TopicPosts)
	cl, err := kafka.NewClient(s.Brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	var committed int64
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT sum(next_offset) FROM projection_checkpoints WHERE topic = $1`, topic).Scan(&committed))
	out := map[string]int{}
	var seen int64
	for seen < committed {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			for _, h := range r.Headers {
				if h.Key == events.HeaderType && s.Registry.CurrentType(string(h.Value)) == events.TypePostViewRecordedV2 {
					out[string(h.Value)]++
				}
			}
		})
	}
	return out
}
