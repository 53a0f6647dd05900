package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
)

// produceKeyed appends records with the default partitioner, as
// producers.Appender does (without its delivery timeout, which would count
// from the records' past timestamps).
func produceKeyed(t *testing.T, addrs []string, recs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	return recs
}

func keyed(topic, key, value string, at time.Time) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value), Timestamp: at}
}

// follow collects the values FollowKey hands over until it returns.
func follow(t *testing.T, r *kafka.KeyReader, f kafka.KeyFollow, stopAfter int) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var got []string
	err := r.Follow(ctx, f, func(rec *kgo.Record) (bool, error) {
		got = append(got, string(rec.Value))
		return stopAfter > 0 && len(got) >= stopAfter, nil
	})
	return got, err
}

// Every key's records are where the default partitioner put them, and a
// read returns exactly that key's records in order: from its time, past
// an offset, to the end or live.
func TestFollowKey(t *testing.T) {
	const topic = "t.analyses"
	addrs := newCluster(t, 4, topic)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for i := range 40 {
		recs = append(recs, keyed(topic, fmt.Sprintf("key-%d", i%8), fmt.Sprintf("v%d", i), t0.Add(time.Duration(i)*time.Minute)))
	}
	produceKeyed(t, addrs, recs...)
	partitions := map[int32]bool{}
	for _, rec := range recs {
		require.Equal(t, rec.Partition, kafka.PartitionOf(topic, rec.Key, 4), "key %s", rec.Key)
		partitions[rec.Partition] = true
	}
	require.Greater(t, len(partitions), 1, "the keys must span partitions for the test to mean anything")

	r, err := kafka.NewKeyReader(addrs)
	require.NoError(t, err)
	t.Cleanup(r.Close)

	got, err := follow(t, r, kafka.KeyFollow{Topic: topic, Key: []byte("key-3"), After: -1, ToEnd: true}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"v3", "v11", "v19", "v27", "v35"}, got)

	// From a time: the records stamped before it are not read.
	got, err = follow(t, r, kafka.KeyFollow{Topic: topic, Key: []byte("key-3"), Since: t0.Add(15 * time.Minute), After: -1, ToEnd: true}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"v19", "v27", "v35"}, got)

	// Past an offset (a resumed read).
	var v19 *kgo.Record
	for _, rec := range recs {
		if string(rec.Value) == "v19" {
			v19 = rec
		}
	}
	got, err = follow(t, r, kafka.KeyFollow{Topic: topic, Key: []byte("key-3"), After: v19.Offset, ToEnd: true}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"v27", "v35"}, got)

	// Nothing after the end: the read ends at once.
	got, err = follow(t, r, kafka.KeyFollow{Topic: topic, Key: []byte("key-3"), Since: t0.Add(time.Hour), After: -1, ToEnd: true}, 0)
	require.NoError(t, err)
	require.Empty(t, got)

	// A key with no records yet.
	got, err = follow(t, r, kafka.KeyFollow{Topic: topic, Key: []byte("nobody"), After: -1, ToEnd: true}, 0)
	require.NoError(t, err)
	require.Empty(t, got)
}

// Live: records appended after the read started arrive, and the read ends
// when the callback says so.
func TestFollowKeyLive(t *testing.T) {
	const topic = "t.analyses"
	addrs := newCluster(t, 3, topic)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	produceKeyed(t, addrs, keyed(topic, "k", "first", t0), keyed(topic, "other", "x", t0))
	r, err := kafka.NewKeyReader(addrs)
	require.NoError(t, err)
	t.Cleanup(r.Close)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	seen := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(ctx, kafka.KeyFollow{Topic: topic, Key: []byte("k"), Since: t0, After: -1}, func(rec *kgo.Record) (bool, error) {
			seen <- string(rec.Value)
			return string(rec.Value) == "last", nil
		})
	}()
	require.Equal(t, "first", <-seen)
	produceKeyed(t, addrs, keyed(topic, "other", "y", t0), keyed(topic, "k", "second", t0), keyed(topic, "k", "last", t0), keyed(topic, "k", "never", t0))
	require.Equal(t, "second", <-seen)
	require.Equal(t, "last", <-seen)
	require.NoError(t, <-done)
	require.Empty(t, seen)

	// A follow whose context ends returns its error.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	err = r.Follow(ctx2, kafka.KeyFollow{Topic: topic, Key: []byte("k"), After: -1}, func(*kgo.Record) (bool, error) { return false, nil })
	require.ErrorIs(t, err, context.Canceled)

	// A missing topic.
	_, err = follow(t, r, kafka.KeyFollow{Topic: "t.missing", Key: []byte("k"), After: -1, ToEnd: true}, 0)
	require.ErrorIs(t, err, kafka.ErrNoTopic)
}
