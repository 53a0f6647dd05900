package kafka_test

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

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

var dlqNow = time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.FixedZone("CET", 3600))

const dlqNowHeader = "2026-03-04T04:06:07.890123Z"

// readAll consumes topic from the start until n records arrived.
func readAll(t *testing.T, addrs []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "only %d of %d records arrived on %s", len(out), n, topic)
		require.NoError(t, fs.Err())
		out = append(out, fs.Records()...)
	}
	require.Len(t, out, n)
	return out
}

func dlqHeaders(orig []kgo.RecordHeader, topic string, partition int32, offset int64, group, msg string) []kgo.RecordHeader {
	return append(append([]kgo.RecordHeader(nil), orig...),
		kgo.RecordHeader{Key: kafka.HeaderDLQTopic, Value: []byte(topic)},
		kgo.RecordHeader{Key: kafka.HeaderDLQPartition, Value: []byte(fmt.Sprint(partition))},
		kgo.RecordHeader{Key: kafka.HeaderDLQOffset, Value: []byte(fmt.Sprint(offset))},
		kgo.RecordHeader{Key: kafka.HeaderDLQGroup, Value: []byte(group)},
		kgo.RecordHeader{Key: kafka.HeaderDLQError, Value: []byte(msg)},
		kgo.RecordHeader{Key: "errata-dlq-time", Value: []byte(dlqNowHeader)},
	)
}

func TestDeadLetterHeaderNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{
		"errata-dlq-source-topic", "errata-dlq-source-partition", "errata-dlq-source-offset",
		"errata-dlq-group", "errata-dlq-error", "errata-dlq-time",
	}, []string{
		kafka.HeaderDLQTopic, kafka.HeaderDLQPartition, kafka.HeaderDLQOffset,
		kafka.HeaderDLQGroup, kafka.HeaderDLQError, kafka.HeaderDLQTime,
	})
}

// TestEachRecordDeadLetters runs EachRecord under a Runner: a poison record
// and a record that keeps failing go to the dead-letter topic unchanged with
// their source position, a record failing once is retried, the records after
// them are processed, and the offset is committed past all of them.
func TestEachRecordDeadLetters(t *testing.T) {
	t.Parallel()
	const src, dlq, group = "src", "dlq", "g-worker"
	addrs := newCluster(t, 2, src, dlq)
	// Partition 1 of src so the source partition header is not trivially 0.
	var recs []*kgo.Record
	for i := 0; i < 6; i++ {
		recs = append(recs, rec(src, 1, i))
	}
	produce(t, addrs, recs...)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var mu sync.Mutex
	calls := map[int64]int{}
	var deadlines []bool
	fn := func(ctx context.Context, r *kgo.Record) error {
		mu.Lock()
		defer mu.Unlock()
		calls[r.Offset]++
		_, has := ctx.Deadline()
		deadlines = append(deadlines, has)
		switch r.Offset {
		case 1:
			return kafka.Permanent(errors.New("bad json"))
		case 3:
			if calls[3] == 1 {
				return errors.New("flaky")
			}
		case 4:
			return fmt.Errorf("db down (attempt %d)", calls[4])
		case 5:
			cancel() // the last record: stop after this batch
		}
		return nil
	}
	prod := newClient(t, addrs, kafka.ProducerOpts()...)
	dl := kafka.NewDeadLetter(prod, dlq, group, logging.Discard())
	h := kafka.EachRecord(fn, dl, kafka.RecordOptions{
		Timeout: 10 * time.Second, MaxAttempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Now: func() time.Time { return dlqNow },
	})
	require.NoError(t, run(t, ctx, runnerConfig(addrs, group, src), h))

	require.Equal(t, map[int64]int{0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 1}, calls)
	for _, has := range deadlines {
		require.True(t, has, "every call gets a per-record timeout")
	}
	require.Equal(t, map[int32]int64{1: 6}, committed(t, newAdmin(t, addrs), group, src))

	got := readAll(t, addrs, dlq, 2)
	want := []struct {
		src *kgo.Record
		msg string
	}{{recs[1], "bad json"}, {recs[4], "db down (attempt 3)"}}
	for i, w := range want {
		require.Equal(t, w.src.Key, got[i].Key)
		require.Equal(t, w.src.Value, got[i].Value)
		require.Equal(t, dlqHeaders(w.src.Headers, src, 1, w.src.Offset, group, w.msg), got[i].Headers)
	}
}

// TestEachRecordTimeoutAndDeadLetterFailure calls the handler directly.
func TestEachRecordTimeoutAndDeadLetterFailure(t *testing.T) {
	t.Parallel()
	const src, dlq = "src", "dlq"
	addrs := newCluster(t, 1, src, dlq)
	prod := newClient(t, addrs, kafka.ProducerOpts()...)
	r := produce(t, addrs, rec(src, 0, 7))[0]
	opts := kafka.RecordOptions{
		Timeout: 5 * time.Millisecond, MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond,
		Now: func() time.Time { return dlqNow },
	}

	t.Run("a record that times out is retried and dead-lettered", func(t *testing.T) {
		attempts := 0
		block := func(ctx context.Context, _ *kgo.Record) error {
			attempts++
			<-ctx.Done() // never finishes on its own
			return ctx.Err()
		}
		h := kafka.EachRecord(block, kafka.NewDeadLetter(prod, dlq, "g", logging.Discard()), opts)
		require.NoError(t, h.Handle(context.Background(), kafka.Batch{Topic: src, Partition: 0, Records: []*kgo.Record{r}}))
		require.Equal(t, 2, attempts)
		got := readAll(t, addrs, dlq, 1)
		require.Equal(t, dlqHeaders(r.Headers, src, 0, r.Offset, "g", "context deadline exceeded"), got[0].Headers)
	})

	t.Run("a failed dead-letter append fails the batch", func(t *testing.T) {
		noTopic := newClient(t, addrs, kgo.UnknownTopicRetries(0))
		h := kafka.EachRecord(func(context.Context, *kgo.Record) error { return kafka.Permanent(errors.New("poison")) },
			kafka.NewDeadLetter(noTopic, "no-such-topic", "g", logging.Discard()), opts)
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		err := h.Handle(ctx, kafka.Batch{Topic: src, Partition: 0, Records: []*kgo.Record{r}})
		require.Error(t, err)
		require.ErrorContains(t, err, "dead-letter src/0@0")
	})
}

// TestDeadLetterSend checks the copy Send appends, including the bounded
// error header.
func TestDeadLetterSend(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name    string
		cause   error
		wantMsg string
	}{
		{"short error", errors.New("decode envelope: unexpected EOF"), "decode envelope: unexpected EOF"},
		{"permanent error keeps its message", kafka.Permanent(errors.New("poison")), "poison"},
		{"long error is cut to 4096 bytes", errors.New(long), long[:4096]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addrs := newCluster(t, 1, "dlq")
			dl := kafka.NewDeadLetter(newClient(t, addrs, kafka.ProducerOpts()...), "dlq", "projector-x", logging.Discard())
			src := &kgo.Record{
				Topic: "errata.posts", Partition: 4, Offset: 12345, Key: []byte("post-1"), Value: []byte(`{"not":"an envelope"`),
				Headers: []kgo.RecordHeader{{Key: "errata-type", Value: []byte("post.view_recorded.v1")}, {Key: "errata-id", Value: []byte("ev-1")}},
			}
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			require.NoError(t, dl.Send(ctx, src, tc.cause, dlqNow))
			got := readAll(t, addrs, "dlq", 1)[0]
			require.Equal(t, "dlq", got.Topic)
			require.Equal(t, src.Key, got.Key)
			require.Equal(t, src.Value, got.Value)
			require.Equal(t, dlqHeaders(src.Headers, "errata.posts", 4, 12345, "projector-x", tc.wantMsg), got.Headers)
			require.Len(t, src.Headers, 2, "the source record is not modified")
		})
	}
}
