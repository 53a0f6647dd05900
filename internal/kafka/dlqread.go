package kafka

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DeadLetterKey identifies one parked record: who parked it and where it
// sits in its source topic. A crash between a dead-letter append and the
// position that covers it appends the same copy again; the key is the same.
type DeadLetterKey struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// String is "<topic>/<partition>/<offset>", the form `errata deadletters
// show` takes.
func (k DeadLetterKey) String() string {
	return fmt.Sprintf("%s/%d/%d", k.Topic, k.Partition, k.Offset)
}

// ParkedRecord is one record of the dead-letter topic, its copies merged.
// Every field comes from the record and may be anything a producer wrote:
// print it escaped.
type ParkedRecord struct {
	DeadLetterKey
	// EventType and EventID are the source record's errata-type and
	// errata-id headers, else its envelope's type and id, else empty.
	EventType, EventID string
	// Class is HeaderDLQClass (ClassDecode, ClassDeterministic, ...),
	// empty when the copy has none.
	Class string
	// Reason is HeaderDLQError: why the record was parked.
	Reason string
	// Time is HeaderDLQTime, else the first copy's timestamp.
	Time time.Time
	// Copies counts the copies of this key on the dead-letter topic.
	Copies int
	// Labelled is false for a record without valid source headers (not
	// written by DeadLetter.Send): its key is then its own position on
	// the dead-letter topic, and Group whatever its group header says.
	Labelled bool
	// DLQPartition and DLQOffset locate the first copy.
	DLQPartition int32
	DLQOffset    int64
	// Key, Value and Headers are the first copy's, as stored.
	Key, Value []byte
	Headers    []kgo.RecordHeader
}

// ErrNoDeadLetterTopic means the dead-letter topic does not exist.
var ErrNoDeadLetterTopic = errors.New("dead-letter topic does not exist")

// ReadDeadLetters reads topic from its start to its end offsets at the
// call and returns its records deduplicated by DeadLetterKey, sorted by
// group, source topic, partition and offset. The dead-letter topic is
// written without transactions, so its end offsets are those of its last
// records. ctx bounds the read.
func ReadDeadLetters(ctx context.Context, brokers []string, topic string) ([]ParkedRecord, error) {
	cl, err := NewClient(brokers,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20),
		kgo.FetchMaxPartitionBytes(MaxRecordBytes*2),
		kgo.BrokerMaxReadBytes(128<<20),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	if ends.Error() != nil || len(ends[topic]) == 0 {
		return nil, fmt.Errorf("%w: %s (%v)", ErrNoDeadLetterTopic, topic, ends.Error())
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	got := map[int32]int64{}
	byKey := map[DeadLetterKey]*ParkedRecord{}
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %d of %d partitions read to their end: %w", topic, len(got), len(got)+len(want), err)
		}
		var fetchErr error
		fs.EachError(func(t string, p int32, err error) {
			fetchErr = errors.Join(fetchErr, fmt.Errorf("fetch %s/%d: %w", t, p, err))
		})
		if fetchErr != nil {
			return nil, fetchErr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				return // appended after the call
			}
			got[r.Partition] = r.Offset + 1
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
			pr := parse(topic, r)
			if have, ok := byKey[pr.DeadLetterKey]; ok {
				have.Copies++
				return
			}
			byKey[pr.DeadLetterKey] = &pr
		})
	}
	out := make([]ParkedRecord, 0, len(byKey))
	for _, pr := range byKey {
		out = append(out, *pr)
	}
	slices.SortFunc(out, func(a, b ParkedRecord) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic),
			cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	return out, nil
}

// parse reads one dead-letter copy. DeadLetter.Send appends its headers
// after the source record's, so a dead-letter header is taken from the
// last occurrence (a source record may carry forged ones); the source's
// own errata-type and errata-id from the first, as projectors read them.
func parse(topic string, r *kgo.Record) ParkedRecord {
	pr := ParkedRecord{
		Class: lastHeader(r, HeaderDLQClass), Reason: lastHeader(r, HeaderDLQError),
		Copies: 1, DLQPartition: r.Partition, DLQOffset: r.Offset,
		Key: r.Key, Value: r.Value, Headers: r.Headers, Time: r.Timestamp.UTC(),
	}
	pr.Group = lastHeader(r, HeaderDLQGroup)
	src := lastHeader(r, HeaderDLQTopic)
	part, perr := strconv.ParseInt(lastHeader(r, HeaderDLQPartition), 10, 32)
	off, oerr := strconv.ParseInt(lastHeader(r, HeaderDLQOffset), 10, 64)
	if src != "" && perr == nil && oerr == nil && part >= 0 && off >= 0 {
		pr.Topic, pr.Partition, pr.Offset, pr.Labelled = src, int32(part), off, true
	} else {
		pr.Topic, pr.Partition, pr.Offset = topic, r.Partition, r.Offset
	}
	if t, err := time.Parse(time.RFC3339Nano, lastHeader(r, HeaderDLQTime)); err == nil {
		pr.Time = t.UTC()
	}
	pr.EventType, pr.EventID = firstHeader(r, HeaderEventType), firstHeader(r, HeaderEventID)
	if pr.EventType == "" || pr.EventID == "" {
		var env struct {
			ID   any `json:"id"`
			Type any `json:"type"`
		}
		if json.Unmarshal(r.Value, &env) == nil {
			if s, ok := env.Type.(string); ok && pr.EventType == "" {
				pr.EventType = s
			}
			if s, ok := env.ID.(string); ok && pr.EventID == "" {
				pr.EventID = s
			}
		}
	}
	return pr
}

func firstHeader(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func lastHeader(r *kgo.Record, key string) string {
	for i := len(r.Headers) - 1; i >= 0; i-- {
		if r.Headers[i].Key == key {
			return string(r.Headers[i].Value)
		}
	}
	return ""
}
