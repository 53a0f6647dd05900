// Package kafka is the plumbing between Errata and Kafka (franz-go): client
// options, topic administration, the consumer-group runner and the
// dead-letter publisher.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxRecordBytes bounds one encoded event. The largest event is a post
// version with up to 500,000 characters of text plus server and client HTML;
// topics and the broker are configured to accept this size.
const MaxRecordBytes = 16 << 20

// ProducerOpts are the options of every producing client: idempotent (the
// franz-go default, kept explicit by not disabling it), acks from all in-sync
// replicas, compressed batches, records up to MaxRecordBytes.
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// zstd's fastest level: the view path spent about 10% of its CPU in
		// the default level's encoder (errata bench), for batches of a few
		// small records.
		kgo.ProducerBatchCompression(kgo.ZstdCompression().WithLevel(int(zstd.SpeedFastest)), kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(MaxRecordBytes),
		kgo.MaxBufferedBytes(256 << 20),
		kgo.ProducerLinger(0),
		kgo.ProduceRequestTimeout(30 * time.Second),
		kgo.RecordDeliveryTimeout(60 * time.Second),
		kgo.BrokerMaxWriteBytes(MaxRecordBytes * 2),
	}
}

// ConsumerOpts are the fetch options of every consuming client. A group
// without committed offsets starts at the beginning of the log; an offset
// out of range is fatal instead of a silent reset, because with infinite
// retention it can only mean lost data.
//
// A fetch is buffered whole, decompressed, until polled, so FetchMaxBytes
// (compressed bytes) is what bounds a catch-up's memory: at 64 MB one fetch
// held a whole 300,000-event log (a serving catch-up peaked at 125 MB of
// live heap for 100,000 events, 360 MB for 300,000); at 2 MB it peaks at
// 37 and 46 MB, and one fetch still carries more events than a poll takes.
// A larger record is still fetched, alone (KIP-74).
func ConsumerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxBytes(2 << 20),
		kgo.FetchMaxPartitionBytes(MaxRecordBytes * 2),
		kgo.BrokerMaxReadBytes(128 << 20),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	}
}

// NewClient builds a franz-go client for brokers with extra options.
func NewClient(brokers []string, opts ...kgo.Opt) (*kgo.Client, error) {
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}

// Ping checks that a broker answers a metadata request.
func Ping(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("kafka ping: %w", err)
	}
	return nil
}

// TopicSpec describes an event topic.
type TopicSpec struct {
	Name       string
	Partitions int32
	// ReplicationFactor is the number of replicas of a created topic; 0
	// means the brokers' default.replication.factor. An existing topic keeps
	// its replicas (changing them is a reassignment, not a setting).
	ReplicationFactor int16
	// MinInsyncReplicas is the topic's min.insync.replicas: how many replicas
	// must hold an append before an acks=all producer gets its
	// acknowledgement. 0 means 1.
	MinInsyncReplicas int
}

// Replicated returns specs with rf replicas each (0: the brokers' default)
// and minISR in-sync replicas required for an acknowledged append. A
// cluster of three brokers runs rf 3 and minISR 2: one broker may be down
// without failing an append, and an acknowledged append survives losing any
// one broker.
func Replicated(specs []TopicSpec, rf, minISR int) ([]TopicSpec, error) {
	switch {
	case rf < 0 || rf > math.MaxInt16:
		return nil, fmt.Errorf("replication factor %d: must be between 0 (the brokers' default) and %d", rf, math.MaxInt16)
	case minISR < 1:
		return nil, fmt.Errorf("min.insync.replicas %d: must be at least 1", minISR)
	case rf > 0 && minISR > rf:
		return nil, fmt.Errorf("min.insync.replicas %d exceeds the replication factor %d: every append would fail", minISR, rf)
	}
	out := make([]TopicSpec, len(specs))
	for i, s := range specs {
		s.ReplicationFactor, s.MinInsyncReplicas = int16(rf), minISR
		out[i] = s
	}
	return out, nil
}

// TopicSpecs gives each named topic the same partition count (the event
// topics: events.Topics.Names).
func TopicSpecs(names []string, partitions int32) []TopicSpec {
	specs := make([]TopicSpec, len(names))
	for i, n := range names {
		specs[i] = TopicSpec{Name: n, Partitions: partitions}
	}
	return specs
}

// eventTopicConfig keeps events forever, never compacts them, accepts the
// largest event and requires minISR in-sync replicas for an append.
func eventTopicConfig(minISR int) map[string]*string {
	s := func(v string) *string { return &v }
	return map[string]*string{
		"retention.ms":        s("-1"),
		"retention.bytes":     s("-1"),
		"cleanup.policy":      s("delete"),
		"max.message.bytes":   s(fmt.Sprint(MaxRecordBytes)),
		"min.insync.replicas": s(fmt.Sprint(max(minISR, 1))),
	}
}

// EnsureTopics creates missing topics and sets the event-topic configuration
// on existing ones. Partition counts only grow: shrinking is impossible and
// growing reshuffles keys, so a difference is reported, never applied. A
// replication factor that differs is reported too; an existing topic with
// fewer replicas than its min.insync.replicas is an error (no append could
// ever be acknowledged).
func EnsureTopics(ctx context.Context, cl *kgo.Client, log *slog.Logger, specs []TopicSpec) error {
	adm := kadm.NewClient(cl)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	existing, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	for _, s := range specs {
		conf := eventTopicConfig(s.MinInsyncReplicas)
		if d, ok := existing[s.Name]; ok && d.Err == nil {
			if got := int32(len(d.Partitions)); got != s.Partitions { //nolint:gosec // G115: Kafka numbers partitions in int32; a topic has no more
				log.Warn("topic partition count differs from configuration; leaving it", "topic", s.Name, "partitions", got, "configured", s.Partitions)
			}
			if rf := d.Partitions.NumReplicas(); rf > 0 && rf < max(s.MinInsyncReplicas, 1) {
				return fmt.Errorf("topic %s has %d replicas, fewer than min.insync.replicas %d: no append could be acknowledged", s.Name, rf, s.MinInsyncReplicas)
			} else if s.ReplicationFactor > 0 && rf != int(s.ReplicationFactor) {
				log.Warn("topic replication factor differs from configuration; leaving it (reassign its partitions to change it)",
					"topic", s.Name, "replicas", rf, "configured", s.ReplicationFactor)
			}
			var alters []kadm.AlterConfig
			for k, v := range conf {
				alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
			}
			res, err := adm.AlterTopicConfigs(ctx, alters, s.Name)
			if err != nil {
				return fmt.Errorf("configure topic %s: %w", s.Name, err)
			}
			for _, r := range res {
				if r.Err != nil {
					return fmt.Errorf("configure topic %s: %w", s.Name, r.Err)
				}
			}
			log.Info("topic exists", "topic", s.Name, "partitions", len(d.Partitions))
			continue
		}
		rf := s.ReplicationFactor
		if rf == 0 {
			rf = -1 // the brokers' default.replication.factor
		}
		res, err := adm.CreateTopic(ctx, s.Partitions, rf, conf, s.Name)
		if err != nil {
			return fmt.Errorf("create topic %s: %w", s.Name, err)
		}
		// A concurrent `errata topics` may have created it first.
		if res.Err != nil && !errors.Is(res.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", s.Name, res.Err)
		}
		log.Info("topic created", "topic", s.Name, "partitions", s.Partitions, "replication_factor", s.ReplicationFactor,
			"min_insync_replicas", max(s.MinInsyncReplicas, 1))
	}
	return nil
}
