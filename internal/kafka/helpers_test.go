package kafka_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

// guard bounds every test that waits on the in-process cluster, so a bug
// shows up as a failed assertion instead of a hung test binary. It is never
// what a test asserts on.
const guard = 20 * time.Second

// newCluster starts an in-process kfake cluster with topics of partitions
// partitions and returns its seed addresses.
func newCluster(t *testing.T, partitions int32, topics ...string) []string {
	t.Helper()
	return newFakeCluster(t, partitions, topics...).ListenAddrs()
}

// newFakeCluster is newCluster returning the cluster itself (for faults).
func newFakeCluster(t *testing.T, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(partitions, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kafka.NewClient(addrs, opts...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// produce appends records (Partition set by the caller) with the production
// producer options and returns them with their offsets filled in.
func produce(t *testing.T, addrs []string, recs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	opts := append(kafka.ProducerOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cl := newClient(t, addrs, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	return recs
}

// rec builds a record for topic/partition whose key and value name i.
func rec(topic string, partition int32, i int) *kgo.Record {
	return &kgo.Record{
		Topic:     topic,
		Partition: partition,
		Key:       []byte(fmt.Sprintf("key-%d", i)),
		Value:     []byte(fmt.Sprintf("value-%d", i)),
		Headers:   []kgo.RecordHeader{{Key: "errata-type", Value: []byte("test.record.v1")}},
	}
}

// produceN appends n records to every partition of topic, in partition order.
func produceN(t *testing.T, addrs []string, topic string, partitions int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			recs = append(recs, rec(topic, p, int(p)*1000+i))
		}
	}
	produce(t, addrs, recs...)
}

// committed returns the group's committed offsets of topic; partitions
// without a commit are absent.
func committed(t *testing.T, adm *kadm.Client, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}

// endOffsets returns the end offset of every partition of topic: how many
// records were ever appended to it.
func endOffsets(t *testing.T, addrs []string, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	ends, err := newAdmin(t, addrs).ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	require.NoError(t, ends.Error())
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

func newAdmin(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(newClient(t, addrs))
}

// runnerConfig is a fast-retrying runner configuration for tests.
func runnerConfig(addrs []string, group string, topics ...string) kafka.RunnerConfig {
	return kafka.RunnerConfig{
		Brokers:    addrs,
		Group:      group,
		Topics:     topics,
		Backoff:    time.Millisecond,
		MaxBackoff: 2 * time.Millisecond,
	}
}

// run builds a runner and runs it until ctx is done or it fails.
func run(t *testing.T, ctx context.Context, cfg kafka.RunnerConfig, h kafka.Handler) error {
	t.Helper()
	r, err := kafka.NewRunner(cfg, h, logging.Discard())
	require.NoError(t, err)
	return r.Run(ctx)
}

// delivery is one Handle call as the handler saw it.
type delivery struct {
	Partition int32
	Offsets   []int64
	Keys      []string
}

// recorder is a Handler that records every call and delegates the decision
// to fn (nil: succeed).
type recorder struct {
	mu    sync.Mutex
	calls []delivery
	fn    func(call int, b kafka.Batch) error
}

func (r *recorder) Handle(_ context.Context, b kafka.Batch) error {
	d := delivery{Partition: b.Partition}
	for _, rec := range b.Records {
		d.Offsets = append(d.Offsets, rec.Offset)
		d.Keys = append(d.Keys, string(rec.Key))
	}
	r.mu.Lock()
	r.calls = append(r.calls, d)
	call := len(r.calls)
	r.mu.Unlock()
	if r.fn == nil {
		return nil
	}
	return r.fn(call, b)
}

func (r *recorder) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.calls...)
}

// offsetsByPartition concatenates the offsets of the given deliveries per partition.
func offsetsByPartition(ds []delivery) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, d := range ds {
		out[d.Partition] = append(out[d.Partition], d.Offsets...)
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
