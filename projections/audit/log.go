package audit

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
	t, err := Build(investigationID, invRecs, post)
	if err != nil {
		return nil, err
	}
	if versionID != "" {
		if t.SupersededBy, err = supersededByFromLog(ctx, cl, src, investigationID, versionID); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// ReadAnalysisLog reads the trail of one verdict analysis straight from
// Kafka: the partition of the analyses topic its id maps to, from its
// start to its end offset at the time of the call (see ReadLog).
func ReadAnalysisLog(ctx context.Context, src LogSource, analysisID string) (*AnalysisTrail, error) {
	if !isUUID(analysisID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidAnalysisID, analysisID)
	}
	topic := src.Topics.Name(events.TopicAnalyses)
	recs, err := readAggregate(ctx, src, topic, analysisID, IsAnalysisType)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: %s is not on %s", ErrAnalysisNotFound, analysisID, topic)
	}
	return BuildAnalysis(analysisID, recs)
}

// readAggregate reads the records of one aggregate (key) of the given
// types from topic straight from Kafka, within src's timeout (a minute by
// default).
func readAggregate(ctx context.Context, src LogSource, topic, key string, is func(string) bool) ([]Record, error) {
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
	return readKey(ctx, cl, src.Brokers, src.Registry, topic, key, is)
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
	return readKeys(ctx, cl, brokers, reg, topic, map[string]bool{key: true}, keep)
}

// readKeys is readKey for a set of keys: each partition one of them maps
// to is read once; records come partition by partition, in log order
// within each.
func readKeys(ctx context.Context, cl *kgo.Client, brokers []string, reg *events.Registry, topic string, keys map[string]bool, keep func(string) bool) ([]Record, error) {
	adm := kadm.NewClient(cl)
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return nil, fmt.Errorf("topic %s does not exist", topic)
	}
	parts := map[int32]bool{}
	for k := range keys {
		parts[PartitionOf(k, len(d.Partitions))] = true
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	// Committed (last stable) offsets: what a read_committed consumer can see.
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	var out []Record
	for part := range int32(len(d.Partitions)) { //nolint:gosec // G115: a partition count, which Kafka keeps in int32
		if !parts[part] {
			continue
		}
		start, okS := starts.Lookup(topic, part)
		end, okE := ends.Lookup(topic, part)
		if !okS || !okE || start.Err != nil || end.Err != nil {
			return nil, fmt.Errorf("offsets of %s[%d] unavailable", topic, part)
		}
		if end.Offset <= start.Offset {
			continue
		}
		recs, err := readPartition(ctx, brokers, reg, topic, part, start.Offset, end.Offset, keys, keep)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// readPartition reads [start, end) of one partition.
func readPartition(ctx context.Context, brokers []string, reg *events.Registry, topic string, part int32, start, end int64,
	keys map[string]bool, keep func(string) bool) ([]Record, error) {
	opts := append(kafka.ConsumerOpts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {part: kgo.NewOffset().At(start)},
	}))
	reader, err := kafka.NewClient(brokers, opts...)
	if err != nil {
		return nil, err
	}
	defer reader.Close()

	var out []Record
	next := start
	for next < end {
		fs := reader.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s[%d]: at offset %d of %d: %w", topic, part, next, end, err)
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
			if rec.Offset >= end {
				next = end
				break
			}
			next = rec.Offset + 1
			if !keys[string(rec.Key)] || !keep(reg.CurrentType(header(rec, events.HeaderType))) {
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

// supersededByFromLog finds the investigations that re-do investigationID
// of versionID. Their ids derive from (version, configuration), and every
// configuration an investigation runs under is declared first (the
// commands refuse anything else), so the candidates are the version's
// investigation under each declared configuration and under the default;
// a candidate re-does this one when a request of it names it as superseded.
func supersededByFromLog(ctx context.Context, cl *kgo.Client, src LogSource, investigationID, versionID string) ([]string, error) {
	topic := src.Topics.Name(events.TopicInvestigations)
	control, err := readKey(ctx, cl, src.Brokers, src.Registry, topic, events.ControlSubject,
		func(t string) bool { return t == events.TypeConfigurationDeclaredV1 })
	if err != nil {
		return nil, err
	}
	candidates := map[string]bool{events.InvestigationID(versionID): true}
	for _, r := range control {
		if p, ok := r.Event.Payload.(*events.ConfigurationDeclaredV1); ok {
			candidates[events.InvestigationIDFor(versionID, p.ConfigurationID)] = true
		}
	}
	delete(candidates, investigationID)
	recs, err := readKeys(ctx, cl, src.Brokers, src.Registry, topic, candidates,
		func(t string) bool { return t == events.TypeInvestigationRequestedV1 })
	if err != nil {
		return nil, err
	}
	return supersedingOf(investigationID, recs), nil
}

// supersedingOf lists, oldest first request first, the investigations
// whose requests among recs name investigationID as superseded.
func supersedingOf(investigationID string, recs []Record) []string {
	first := map[string]Record{}
	for _, r := range recs {
		p, ok := r.Event.Payload.(*events.InvestigationRequestedV1)
		if !ok || p.Supersedes != investigationID || p.InvestigationID == investigationID {
			continue
		}
		if seen, ok := first[p.InvestigationID]; !ok || r.Event.Time.Before(seen.Event.Time) {
			first[p.InvestigationID] = r
		}
	}
	out := make([]string, 0, len(first))
	for id := range first {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := first[out[i]].Event.Time, first[out[j]].Event.Time
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i] < out[j]
	})
	return out
}

func header(rec *kgo.Record, k string) string {
	for _, h := range rec.Headers {
		if h.Key == k {
			return string(h.Value)
		}
	}
	return ""
}
