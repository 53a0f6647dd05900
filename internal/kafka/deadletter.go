package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Dead-letter headers added to a copy of the failed record.
const (
	HeaderDLQTopic     = "errata-dlq-source-topic"
	HeaderDLQPartition = "errata-dlq-source-partition"
	HeaderDLQOffset    = "errata-dlq-source-offset"
	HeaderDLQGroup     = "errata-dlq-group"
	HeaderDLQError     = "errata-dlq-error"
	HeaderDLQTime      = "errata-dlq-time"
)

// DeadLetter parks records a consumer cannot process on the dead-letter topic,
// unchanged, with headers naming their source position and the error.
type DeadLetter struct {
	client *kgo.Client
	topic  string
	group  string
	log    *slog.Logger
}

// NewDeadLetter returns a dead-letter publisher writing through a producing client.
func NewDeadLetter(cl *kgo.Client, topic, group string, log *slog.Logger) *DeadLetter {
	return &DeadLetter{client: cl, topic: topic, group: group, log: log}
}

// Send appends a copy of rec to the dead-letter topic and waits for the ack.
func (d *DeadLetter) Send(ctx context.Context, rec *kgo.Record, cause error, now time.Time) error {
	msg := cause.Error()
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	headers := append([]kgo.RecordHeader{}, rec.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: HeaderDLQTopic, Value: []byte(rec.Topic)},
		kgo.RecordHeader{Key: HeaderDLQPartition, Value: []byte(strconv.Itoa(int(rec.Partition)))},
		kgo.RecordHeader{Key: HeaderDLQOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
		kgo.RecordHeader{Key: HeaderDLQGroup, Value: []byte(d.group)},
		kgo.RecordHeader{Key: HeaderDLQError, Value: []byte(msg)},
		kgo.RecordHeader{Key: HeaderDLQTime, Value: []byte(now.UTC().Format(time.RFC3339Nano))},
	)
	out := &kgo.Record{Topic: d.topic, Key: rec.Key, Value: rec.Value, Headers: headers}
	if err := d.client.ProduceSync(ctx, out).FirstErr(); err != nil {
		return fmt.Errorf("dead-letter %s/%d@%d: %w", rec.Topic, rec.Partition, rec.Offset, err)
	}
	d.log.Error("record sent to dead-letter topic", "topic", rec.Topic, "partition", rec.Partition,
		"offset", rec.Offset, "dead_letter_topic", d.topic, "err", cause)
	return nil
}

// RecordOptions configure EachRecord.
type RecordOptions struct {
	// Timeout bounds one call for one record.
	Timeout     time.Duration
	MaxAttempts int
	Backoff     time.Duration
	MaxBackoff  time.Duration
	// Now supplies the dead-letter timestamp.
	Now func() time.Time
}

// EachRecord adapts a per-record function into a Handler for workers: every
// record gets its own timeout and bounded retries; a record that is poison
// (Permanent) or keeps failing goes to the dead-letter topic, so one bad
// record never blocks its partition. fn must be idempotent: a crash between
// its effect and the offset commit redelivers the record.
func EachRecord(fn func(ctx context.Context, rec *kgo.Record) error, dl *DeadLetter, o RecordOptions) Handler {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return HandlerFunc(func(ctx context.Context, b Batch) error {
		for _, rec := range b.Records {
			var err error
			for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
				rctx, cancel := context.WithTimeout(ctx, o.Timeout)
				err = fn(rctx, rec)
				cancel()
				if err == nil || IsPermanent(err) {
					break
				}
				if attempt < o.MaxAttempts {
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(Backoff(o.Backoff, o.MaxBackoff, attempt)):
					}
				}
			}
			if err != nil {
				if dlErr := dl.Send(ctx, rec, err, o.Now()); dlErr != nil {
					return dlErr
				}
			}
		}
		return nil
	})
}
