package producers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/producers"
)

// Positions come back in the order of the events given, even when the
// events span partitions and the broker acknowledges them in another order.
func TestAppendReturnsPositionsInEventOrder(t *testing.T) {
	topics := events.Topics{Prefix: "t."}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, topics.Name(events.TopicPosts)))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	cl, err := kafka.NewClient(cluster.ListenAddrs(), kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	reg := events.NewCatalogRegistry()
	app := producers.NewAppender(cl, reg, topics, func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) })

	var evs []events.Event
	for i := range 64 {
		ext := fmt.Sprint(1000 + i)
		postID := events.PostID(events.PlatformX, ext)
		ev, err := app.NewEvent(&events.PostViewRecordedV2{
			PostID: postID, PostVersionID: events.PostVersionID(postID, fmt.Sprintf("%064x", i)),
			Platform: events.PlatformX, ExternalID: ext,
			ViewerKey: fmt.Sprintf("%064x", i+1), IPRangeKey: fmt.Sprintf("%064x", i+2),
			ViewerKind: events.ViewerAnonymousSession,
		}, "", "")
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	pos, err := app.Append(context.Background(), evs...)
	require.NoError(t, err)
	require.Len(t, pos, len(evs))

	partitions := map[int32]bool{}
	for i, p := range pos {
		partitions[p.Partition] = true
		rec := fetchAt(t, cluster.ListenAddrs(), p)
		got, err := reg.Decode(rec.Value)
		require.NoError(t, err)
		require.Equal(t, evs[i].ID, got.ID, "position %d names another event", i)
	}
	require.Greater(t, len(partitions), 1, "the events must span partitions for the test to mean anything")
}

func fetchAt(t *testing.T, brokers []string, p producers.Position) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{p.Topic: {p.Partition: kgo.NewOffset().At(p.Offset)}}))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		var rec *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if rec == nil && r.Offset == p.Offset {
				rec = r
			}
		})
		if rec != nil {
			return rec
		}
	}
}
