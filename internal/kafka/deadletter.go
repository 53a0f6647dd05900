package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Dead-letter headers added to a copy of the failed record.
//
// A reader must dedupe dead letters by (HeaderDLQGroup, HeaderDLQTopic,
// HeaderDLQPartition, HeaderDLQOffset): a projector sends the copy before
// it commits the transaction that parks the event and moves its
// checkpoint, so a crash in between sends it again on redelivery. The
// projection's parked row (pgproj) is the exactly-once record.
const (
	HeaderDLQTopic     = "errata-dlq-source-topic"
	HeaderDLQPartition = "errata-dlq-source-partition"
	HeaderDLQOffset    = "errata-dlq-source-offset"
	HeaderDLQGroup     = "errata-dlq-group"
	HeaderDLQError     = "errata-dlq-error"
	// HeaderDLQClass is ClassDeterministic or ClassDecode (see
	// PermanentClass), or ClassUnclassified for an unmarked cause.
	HeaderDLQClass = "errata-dlq-class"
	HeaderDLQTime  = "errata-dlq-time"
)

// The event envelope's own headers (events.HeaderID and events.HeaderType,
// which events' tests keep equal to these): a parked record names its event
// by them.
const (
	HeaderEventID   = "errata-id"
	HeaderEventType = "errata-type"
)

// ClassUnclassified is the HeaderDLQClass of a cause marked neither
// Permanent nor Undecodable.
const ClassUnclassified = "unclassified"

// MaxDLQErrorBytes bounds the HeaderDLQError value.
const MaxDLQErrorBytes = 4096

// DeadLetter parks records a consumer cannot process on the dead-letter topic,
// unchanged, with headers naming their source position, the error and its
// class.
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
	class := PermanentClass(cause)
	if class == "" {
		class = ClassUnclassified
	}
	headers := append([]kgo.RecordHeader{}, rec.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: HeaderDLQTopic, Value: []byte(rec.Topic)},
		kgo.RecordHeader{Key: HeaderDLQPartition, Value: []byte(strconv.Itoa(int(rec.Partition)))},
		kgo.RecordHeader{Key: HeaderDLQOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
		kgo.RecordHeader{Key: HeaderDLQGroup, Value: []byte(d.group)},
		kgo.RecordHeader{Key: HeaderDLQError, Value: []byte(TruncateUTF8(cause.Error(), MaxDLQErrorBytes))},
		kgo.RecordHeader{Key: HeaderDLQClass, Value: []byte(class)},
		kgo.RecordHeader{Key: HeaderDLQTime, Value: []byte(now.UTC().Format(time.RFC3339Nano))},
	)
	out := &kgo.Record{Topic: d.topic, Key: rec.Key, Value: rec.Value, Headers: headers}
	if err := d.client.ProduceSync(ctx, out).FirstErr(); err != nil {
		return fmt.Errorf("dead-letter %s/%d@%d: %w", rec.Topic, rec.Partition, rec.Offset, err)
	}
	d.log.Error("record sent to dead-letter topic", "topic", rec.Topic, "partition", rec.Partition,
		"offset", rec.Offset, "dead_letter_topic", d.topic, "class", class, "err", cause)
	return nil
}

// TruncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// RecordOptions configure EachRecord.
type RecordOptions struct {
	// Timeout bounds one call for one record.
	Timeout time.Duration
	// Backoff is the first delay before retrying a record that failed
	// transiently; it doubles up to MaxBackoff, jittered.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Now supplies the dead-letter timestamp.
	Now func() time.Time
	// Log receives the (throttled) retry warnings; nil logs nothing.
	Log *slog.Logger
}

// EachRecord adapts a per-record function into a Handler for workers: every
// record gets its own timeout. A record that is poison (fn returns a
// Permanent error) goes to the dead-letter topic, so it never blocks its
// partition. Any other failure is transient (a store away, a timeout): the
// record is retried with capped backoff until it succeeds, so an outage
// delays work and never loses it. When the batch's context ends first (the
// runner's batch timeout) Handle fails and the runner retries the batch;
// when the runner shuts down Handle stops waiting. fn must be idempotent:
// a crash or a retried batch redelivers records whose effects are done.
func EachRecord(fn func(ctx context.Context, rec *kgo.Record) error, dl *DeadLetter, o RecordOptions) Handler {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
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
		stop := stopSignal(ctx)
		for _, rec := range b.Records {
			var logged time.Time
			for attempt := 1; ; attempt++ {
				rctx, cancel := context.WithTimeout(ctx, o.Timeout)
				err := fn(rctx, rec)
				cancel()
				if err == nil {
					break
				}
				if IsPermanent(err) {
					if dlErr := dl.Send(ctx, rec, err, o.Now()); dlErr != nil {
						return dlErr
					}
					break
				}
				delay := backoff(o.Backoff, o.MaxBackoff, attempt)
				if o.Log != nil && (attempt <= retryLogFirst || time.Since(logged) >= retryLogEvery) {
					logged = time.Now()
					o.Log.Warn("record failed; retrying", "topic", rec.Topic, "partition", rec.Partition,
						"offset", rec.Offset, "attempt", attempt, "delay", delay, "err", err)
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("%s/%d@%d after %d attempts (last: %w): %w", rec.Topic, rec.Partition, rec.Offset, attempt, err, ctx.Err())
				case <-stop:
					return errStopping
				case <-time.After(delay):
				}
			}
		}
		return nil
	})
}
