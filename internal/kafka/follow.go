package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KeyFollow says which records of one key FollowKey reads.
type KeyFollow struct {
	Topic string
	Key   []byte
	// Since: the read starts at the partition's first record stamped at or
	// after it (zero: the partition's start).
	Since time.Time
	// After skips the records at offsets up to it (a resumed read); -1
	// skips none.
	After int64
	// ToEnd stops the read at the partition's end offset when the read
	// started, instead of following the partition live.
	ToEnd bool
}

// ErrNoTopic means the followed topic does not exist.
var ErrNoTopic = errors.New("topic does not exist")

// KeyReader reads the records of one key, the way an aggregate's history
// is read: every Errata producer partitions keyed records with franz-go's
// default partitioner (Kafka's murmur2 hash of the key), so all records of
// a key are in one partition, in order. A reader shares one admin
// connection; each read has its own consuming client.
type KeyReader struct {
	brokers []string
	admin   *kgo.Client
	adm     *kadm.Client
}

// NewKeyReader returns a reader of brokers; Close releases it.
func NewKeyReader(brokers []string) (*KeyReader, error) {
	admin, err := NewClient(brokers)
	if err != nil {
		return nil, err
	}
	return &KeyReader{brokers: brokers, admin: admin, adm: kadm.NewClient(admin)}, nil
}

// Close closes the admin connection.
func (r *KeyReader) Close() { r.admin.Close() }

// PartitionOf is the partition of a topic with n partitions that records
// keyed key are produced to by franz-go's default partitioner.
func PartitionOf(topic string, key []byte, n int) int32 {
	p := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	return int32(p.Partition(&kgo.Record{Topic: topic, Key: key}, n)) //nolint:gosec // G115: below n, a partition count, which Kafka keeps in int32
}

// Follow calls fn with each record of f.Key, in log order, from f.Since
// (and past f.After), then live as they are appended, until fn returns
// done, f.ToEnd reaches the end offset the read started with, or ctx ends
// (then ctx's error is returned).
func (r *KeyReader) Follow(ctx context.Context, f KeyFollow, fn func(*kgo.Record) (done bool, err error)) error {
	topics, err := r.adm.ListTopics(ctx, f.Topic)
	if err != nil {
		return fmt.Errorf("follow %s: metadata: %w", f.Topic, err)
	}
	detail, ok := topics[f.Topic]
	if !ok || errors.Is(detail.Err, kerr.UnknownTopicOrPartition) || len(detail.Partitions) == 0 {
		return fmt.Errorf("follow %s: %w", f.Topic, ErrNoTopic)
	}
	if detail.Err != nil {
		return fmt.Errorf("follow %s: metadata: %w", f.Topic, detail.Err)
	}
	partition := PartitionOf(f.Topic, f.Key, len(detail.Partitions))

	var listed kadm.ListedOffsets
	if f.Since.IsZero() {
		listed, err = r.adm.ListStartOffsets(ctx, f.Topic)
	} else {
		listed, err = r.adm.ListOffsetsAfterMilli(ctx, f.Since.UnixMilli(), f.Topic)
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return fmt.Errorf("follow %s/%d: start offset: %w", f.Topic, partition, err)
	}
	from, ok := listed.Lookup(f.Topic, partition)
	if !ok {
		return fmt.Errorf("follow %s/%d: no start offset listed", f.Topic, partition)
	}
	start := max(from.Offset, f.After+1)
	end := int64(-1)
	if f.ToEnd {
		ends, err := r.adm.ListEndOffsets(ctx, f.Topic)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return fmt.Errorf("follow %s/%d: end offset: %w", f.Topic, partition, err)
		}
		e, ok := ends.Lookup(f.Topic, partition)
		if !ok {
			return fmt.Errorf("follow %s/%d: no end offset listed", f.Topic, partition)
		}
		if end = e.Offset; start >= end {
			return nil
		}
	}

	opts := append(readOpts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{f.Topic: {partition: kgo.NewOffset().At(start)}}))
	cl, err := NewClient(r.brokers, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) {
			// The client retries what is retriable (a leader moving, metadata
			// not loaded yet); only what it cannot get past ends the read.
			if fetchErr == nil && !errors.Is(err, context.Canceled) && !kerr.IsRetriable(err) {
				fetchErr = err
			}
		})
		if fetchErr != nil {
			return fmt.Errorf("follow %s/%d: %w", f.Topic, partition, fetchErr)
		}
		var done bool
		var next int64 = -1
		iter := fs.RecordIter()
		for !done && !iter.Done() {
			rec := iter.Next()
			next = rec.Offset + 1
			if rec.Offset <= f.After || !bytes.Equal(rec.Key, f.Key) {
				continue
			}
			if done, err = fn(rec); err != nil {
				return err
			}
		}
		if done || (end >= 0 && next >= end) {
			return nil
		}
	}
}

// readOpts are ConsumerOpts for a reader outside any group that starts
// where it is told.
func readOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxBytes(16 << 20),
		kgo.FetchMaxPartitionBytes(MaxRecordBytes * 2),
		kgo.BrokerMaxReadBytes(64 << 20),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(time.Second),
	}
}
