package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/replay"
)

// memTarget is a handler that stores its positions beside its effects in
// memory, as an exactly-once projection does in its store.
type memTarget struct {
	mu      sync.Mutex
	next    map[int32]int64
	applied map[int32][]int64 // offsets in the order applied
	// failAt fails, permanently, the batch holding this offset of
	// partition 1 (-1: never).
	failAt int64
	// inFlight and maxInFlight count Handle calls running at once;
	// maxBatch is the largest batch's bytes.
	inFlight, maxInFlight, maxBatch int
}

func newMemTarget() *memTarget {
	return &memTarget{next: map[int32]int64{}, applied: map[int32][]int64{}, failAt: -1}
}

func (m *memTarget) Positions(_ context.Context, topics []string) (map[string]map[int32]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[int32]int64{}
	for _, t := range topics {
		out[t] = map[int32]int64{}
		for p, n := range m.next {
			out[t][p] = n
		}
	}
	return out, nil
}

func (m *memTarget) Handle(_ context.Context, b kafka.Batch) error {
	size := 0
	for _, r := range b.Records {
		size += len(r.Value)
	}
	m.mu.Lock()
	m.inFlight++
	m.maxInFlight = max(m.maxInFlight, m.inFlight)
	m.maxBatch = max(m.maxBatch, size)
	m.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // a transaction's round trips: lets other partitions overlap
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	if b.Partition == 1 && m.failAt >= b.Records[0].Offset && m.failAt <= b.Records[len(b.Records)-1].Offset {
		return kafka.Permanent(errors.New("refused"))
	}
	for _, r := range b.Records {
		if r.Offset < m.next[b.Partition] {
			continue
		}
		if r.Offset != m.next[b.Partition] {
			return fmt.Errorf("partition %d: offset %d applied after %d", b.Partition, r.Offset, m.next[b.Partition])
		}
		m.applied[b.Partition] = append(m.applied[b.Partition], r.Offset)
		m.next[b.Partition] = r.Offset + 1
	}
	return nil
}

// appendRecords writes perPartition records of size bytes to each of
// partitions partitions of topic.
func appendRecords(t *testing.T, brokers []string, topic string, partitions int32, perPartition, size int) {
	t.Helper()
	cl, err := kafka.NewClient(brokers, append(kafka.ProducerOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	require.NoError(t, err)
	defer cl.Close()
	value := []byte(strings.Repeat("x", size))
	var recs []*kgo.Record
	for p := range partitions {
		for range perPartition {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: value})
		}
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// CatchUp applies every partition's records once, in offset order, several
// partitions at once when asked, in batches that fit its memory bounds;
// a second run applies nothing; a handler's failure stops the run with
// the partition's position kept, and the next run resumes from there.
func TestCatchUpAppliesEveryPartitionInOrder(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 3)
	topic := topics.Name(events.TopicPosts)
	// 3 x 600 records of 20 KiB: 12 MB per partition, beyond one batch.
	const perPartition, size = 600, 20 << 10
	appendRecords(t, brokers, topic, 3, perPartition, size)
	ctx := context.Background()
	until := replay.Offsets{topic: {0: perPartition, 1: perPartition, 2: perPartition}}

	for _, partitions := range []int{1, 2} {
		t.Run(fmt.Sprint("partitions=", partitions), func(t *testing.T) {
			target := newMemTarget()
			var last replay.Progress
			n, err := replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: until, Handler: target, Positions: target,
				Partitions: partitions, OnProgress: func(p replay.Progress) { last = p }}, logging.Discard())
			require.NoError(t, err)
			require.EqualValues(t, 3*perPartition, n)
			require.Equal(t, replay.Progress{Done: n, Total: n}, replay.Progress{Done: last.Done, Total: last.Total})
			for p := range int32(3) {
				require.Len(t, target.applied[p], perPartition, "partition %d", p)
				require.EqualValues(t, perPartition, target.next[p])
			}
			require.LessOrEqual(t, target.maxInFlight, partitions)
			require.Less(t, target.maxBatch, perPartition*size/2, "a partition's records come in several batches")

			n, err = replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: until, Handler: target, Positions: target,
				Partitions: partitions}, logging.Discard())
			require.NoError(t, err)
			require.Zero(t, n)
		})
	}

	t.Run("failure", func(t *testing.T) {
		target := newMemTarget()
		target.failAt = perPartition / 2
		_, err := replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: until, Handler: target, Positions: target,
			Partitions: 2}, logging.Discard())
		require.ErrorContains(t, err, "refused")
		require.LessOrEqual(t, target.next[1], int64(perPartition/2), "nothing from the failed batch on")
		var left int64
		for p := range int32(3) {
			left += perPartition - target.next[p]
		}

		target.failAt = -1
		n, err := replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: until, Handler: target, Positions: target,
			Partitions: 2}, logging.Discard())
		require.NoError(t, err)
		require.Equal(t, left, n, "the next run resumes where each partition stopped")
		for p := range int32(3) {
			require.Len(t, target.applied[p], perPartition, "partition %d", p)
		}
	})
}
