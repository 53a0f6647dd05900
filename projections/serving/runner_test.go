package serving_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
)

// untilApplied wraps the projector: it records the offsets handed to it and
// cancels when every wanted position has been handled successfully.
type untilApplied struct {
	h      kafka.Handler
	cancel context.CancelFunc
	mu     sync.Mutex
	want   map[int32]int64 // partition -> last offset to reach
	got    map[int32][]int64
}

func (u *untilApplied) Handle(ctx context.Context, b kafka.Batch) error {
	if err := u.h.Handle(ctx, b); err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, r := range b.Records {
		u.got[b.Partition] = append(u.got[b.Partition], r.Offset)
	}
	for p, last := range u.want {
		if got := u.got[p]; len(got) == 0 || got[len(got)-1] < last {
			return nil
		}
	}
	u.cancel()
	return nil
}

// TestServingThroughRunner runs the serving projector under the consumer
// group runner against an in-process Kafka (kfake): the result equals the
// directly applied log, and a new group member resumes at the projection's
// stored positions rather than at Kafka's (absent) committed offsets.
func TestServingThroughRunner(t *testing.T) {
	t.Parallel()
	topics := events.Topics{Prefix: "e2e."}
	postsName := topics.Name(events.TopicPosts)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, postsName, topics.Name(events.TopicDeadLetter)))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	brokers := cluster.ListenAddrs()

	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	appender := producers.NewAppender(producer, events.NewCatalogRegistry(), topics, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := scenario()
	evs := make([]events.Event, len(log))
	for i, e := range log {
		evs[i] = newEvent(t, e.p, e.at)
	}
	positions, err := appender.Append(ctx, evs...)
	require.NoError(t, err)

	url := testenv.Postgres(t)
	reference := newProjection(t, url, "reference", 2)
	reference.handle(t, records(t, 0, 0, payloads(log)...)...)
	p := newProjection(t, url, "serving", 2)

	run := func(group string, want map[int32]int64) map[int32][]int64 {
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		u := &untilApplied{h: p.proj, cancel: stop, want: want, got: map[int32][]int64{}}
		r, err := kafka.NewRunner(kafka.RunnerConfig{
			Brokers: brokers, Group: group, Topics: []string{postsName}, Positions: p.proj,
			Backoff: time.Millisecond, MaxBackoff: time.Millisecond,
		}, u, logging.Discard())
		require.NoError(t, err)
		require.NoError(t, r.Run(rctx))
		require.NoError(t, ctx.Err(), "the runner did not reach %v (got %v)", want, u.got)
		return u.got
	}

	// Every record once, in offset order per partition.
	want := map[int32]int64{}
	wantOffsets := map[int32][]int64{}
	for _, pos := range positions {
		want[pos.Partition] = pos.Offset
		wantOffsets[pos.Partition] = append(wantOffsets[pos.Partition], pos.Offset)
	}
	require.Greater(t, len(want), 1, "the scenario's posts spread over partitions")
	require.Equal(t, wantOffsets, run("group-1", want))
	require.Equal(t, dumpSchema(t, reference.pool, "projection_checkpoints"), dumpSchema(t, p.pool, "projection_checkpoints"))
	var wantCheckpoints []string
	for part := int32(0); part < 3; part++ {
		if last, ok := want[part]; ok {
			wantCheckpoints = append(wantCheckpoints, fmt.Sprintf("%s %d %d", postsName, part, last+1))
		}
	}
	require.Equal(t, wantCheckpoints, p.texts(t, `SELECT topic || ' ' || partition || ' ' || next_offset FROM projection_checkpoints ORDER BY partition`))

	// Two more views; a new group has no committed offsets, so without the
	// stored positions it would start at the log start.
	a := log[0].p.(*events.PostVersionRegisteredV1)
	more, err := appender.Append(ctx,
		newEvent(t, viewOf(a, "late1", "r7"), base.AddDate(0, 0, 3)),
		newEvent(t, viewOf(a, "late2", "r7"), base.AddDate(0, 0, 3).Add(time.Second)))
	require.NoError(t, err)
	require.Equal(t, more[0].Partition, more[1].Partition)
	got := run("group-2", map[int32]int64{more[1].Partition: more[1].Offset})
	require.Equal(t, map[int32][]int64{more[1].Partition: {more[0].Offset, more[1].Offset}}, got)
	require.Equal(t, []string{"7 6"}, p.texts(t, `SELECT view_count || ' ' || unique_view_score FROM posts WHERE id = $1`, a.PostID))
}
