package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// ErrInvalidID is returned for an investigation id that is not a UUID.
var ErrInvalidID = errors.New("investigation id must be a UUID")

// LogSource is where ReadLog finds the log.
type LogSource struct {
	Brokers  []string
	Topics   events.Topics
	Registry *events.Registry
	// Timeout bounds the whole read (default 60s).
	Timeout time.Duration
}

// ReadLog reads the trail of one investigation straight from Kafka. An
// investigation's events are keyed by its id, so they all sit on one
// partition of the investigations topic: ReadLog computes that partition
// exactly as the producers' default partitioner does (Kafka's murmur2 of
// the key, sign bit masked, modulo the partition count) and reads it from
// its start to its end offset at the time of the call, keeping the
// investigation's records. It then reads the post's partition of the posts
// topic the same way for the version's registrations and anomalies.
func ReadLog(ctx context.Context, src LogSource, investigationID string) (*Trail, error) {
	if !isUUID(investigationID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidID, investigationID)
	}
	timeout := src.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kafka.NewClient(src.Brokers)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	invTopic := src.Topics.Name(events.TopicInvestigations)
	invRecs, err := readKey(ctx, cl, src.Brokers, src.Registry, invTopic, investigationID, IsInvestigationType)
	if err != nil {
		return nil, err
	}
	if len(invRecs) == 0 {
		return nil, fmt.Errorf("%w: %s is not on %s", ErrNotFound, investigationID, invTopic)
	}
	postID, versionID := postOf(invRecs)
	var post *PostVersion
	if postID != "" {
		postRecs, err := readKey(ctx, cl, src.Brokers, src.Registry, src.Topics.Name(events.TopicPosts), postID, IsPostType)
		if err != nil {
			return nil, err
		}
		post = FoldPostVersion(versionID, postRecs)
	}
	return Build(investigationID, invRecs, post)
}

// ReadAnalysisLog reads the trail of one verdict analysis straight from
// Kafka: the partition of the analyses topic its id maps to, from its
// start to its end offset at the time of the call (see ReadLog).
func ReadAnalysisLog(ctx context.Context, src LogSource, analysisID string) (*AnalysisTrail, error) {
	if !isUUID(analysisID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidAnalysisID, analysisID)
	}
	timeout := src.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kafka.NewClient(src.Brokers)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topic := src.Topics.Name(events.TopicAnalyses)
	recs, err := readKey(ctx, cl, src.Brokers, src.Registry, topic, analysisID, IsAnalysisType)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: %s is not on %s", ErrAnalysisNotFound, analysisID, topic)
	}
	return BuildAnalysis(analysisID, recs)
}

// ErrInvalidAnalysisID is returned for an analysis id that is not a UUID.
var ErrInvalidAnalysisID = errors.New("analysis id must be a UUID")

func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// postOf names the post and version an investigation's records refer to.
func postOf(recs []Record) (postID, versionID string) {
	for _, r := range recs {
		switch p := r.Event.Payload.(type) {
		case *events.InvestigationRequestedV1:
			return p.PostID, p.PostVersionID
		case *events.InvestigationInputSnapshottedV1:
			return p.PostID, p.PostVersionID
		case *events.InvestigationCompletedV1:
			return p.PostID, p.PostVersionID
		case *events.InvestigationFailedV1:
			return p.PostID, p.PostVersionID
		}
	}
	return "", ""
}

// PartitionOf is the partition the producers write key to on a topic of n
// partitions (franz-go's default partitioner hashes keys like Kafka's Java
// client: murmur2, sign bit masked, modulo n).
func PartitionOf(key string, n int) int32 {
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic("").Partition(&kgo.Record{Key: []byte(key)}, n)) //nolint:gosec // G115: below n, a partition count, which Kafka keeps in int32
}

// readKey reads the partition of topic that key maps to, from its start to
// its last stable offset now, and decodes the records keyed key whose
// (current) type keep accepts.
func readKey(ctx context.Context, cl *kgo.Client, brokers []string, reg *events.Registry, topic, key string, keep func(string) bool) ([]Record, error) {
	adm := kadm.NewClient(cl)
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return nil, fmt.Errorf("topic %s does not exist", topic)
	}
	part := PartitionOf(key, len(d.Partitions))
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	// Committed (last stable) offsets: what a read_committed consumer can see.
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	start, okS := starts.Lookup(topic, part)
	end, okE := ends.Lookup(topic, part)
	if !okS || !okE || start.Err != nil || end.Err != nil {
		return nil, fmt.Errorf("offsets of %s[%d] unavailable", topic, part)
	}
	if end.Offset <= start.Offset {
		return nil, nil
	}
	opts := append(kafka.ConsumerOpts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {part: kgo.NewOffset().At(start.Offset)},
	}))
	reader, err := kafka.NewClient(brokers, opts...)
	if err != nil {
		return nil, err
	}
	defer reader.Close()

	var out []Record
	next := start.Offset
	for next < end.Offset {
		fs := reader.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s[%d]: at offset %d of %d: %w", topic, part, next, end.Offset, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil {
				ferr = err
			}
		})
		if ferr != nil {
			return nil, fmt.Errorf("reading %s[%d]: %w", topic, part, ferr)
		}
		for _, rec := range fs.Records() {
			if rec.Offset >= end.Offset {
				next = end.Offset
				break
			}
			next = rec.Offset + 1
			if string(rec.Key) != key || !keep(reg.CurrentType(header(rec, events.HeaderType))) {
				continue
			}
			ev, err := reg.Decode(rec.Value)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]@%d: %w", topic, part, rec.Offset, err)
			}
			out = append(out, Record{Event: ev, Position: Position{Topic: topic, Partition: part, Offset: rec.Offset}})
		}
	}
	return out, nil
}

func header(rec *kgo.Record, k string) string {
	for _, h := range rec.Headers {
		if h.Key == k {
			return string(h.Value)
		}
	}
	return ""
}
