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

func dlqHeaders(orig []kgo.RecordHeader, topic string, partition int32, offset int64, group, msg, class string) []kgo.RecordHeader {
	return append(append([]kgo.RecordHeader(nil), orig...),
		kgo.RecordHeader{Key: kafka.HeaderDLQTopic, Value: []byte(topic)},
		kgo.RecordHeader{Key: kafka.HeaderDLQPartition, Value: []byte(fmt.Sprint(partition))},
		kgo.RecordHeader{Key: kafka.HeaderDLQOffset, Value: []byte(fmt.Sprint(offset))},
		kgo.RecordHeader{Key: kafka.HeaderDLQGroup, Value: []byte(group)},
		kgo.RecordHeader{Key: kafka.HeaderDLQError, Value: []byte(msg)},
		kgo.RecordHeader{Key: "errata-dlq-class", Value: []byte(class)},
		kgo.RecordHeader{Key: "errata-dlq-time", Value: []byte(dlqNowHeader)},
	)
}

func TestDeadLetterHeaderNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{
		"errata-dlq-source-topic", "errata-dlq-source-partition", "errata-dlq-source-offset",
		"errata-dlq-group", "errata-dlq-error", "errata-dlq-class", "errata-dlq-time",
	}, []string{
		kafka.HeaderDLQTopic, kafka.HeaderDLQPartition, kafka.HeaderDLQOffset,
		kafka.HeaderDLQGroup, kafka.HeaderDLQError, kafka.HeaderDLQClass, kafka.HeaderDLQTime,
	})
	require.Equal(t, "unclassified", kafka.ClassUnclassified)
}

// TestEachRecordDeadLetters runs EachRecord under a Runner: only the poison
// record goes to the dead-letter topic, unchanged with its source position;
// records failing transiently (once, and six times, more than any retry
// budget) are retried until they succeed and are never dead-lettered; the
// records after them are processed, and the offset is committed past all
// of them.
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
			if calls[4] <= 6 {
				return fmt.Errorf("db down (attempt %d)", calls[4])
			}
		case 5:
			cancel() // the last record: stop after this batch
		}
		return nil
	}
	prod := newClient(t, addrs, kafka.ProducerOpts()...)
	dl := kafka.NewDeadLetter(prod, dlq, group, logging.Discard())
	h := kafka.EachRecord(fn, dl, kafka.RecordOptions{
		Timeout: 10 * time.Second, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Now: func() time.Time { return dlqNow },
	})
	require.NoError(t, run(t, ctx, runnerConfig(addrs, group, src), h))

	require.Equal(t, map[int64]int{0: 1, 1: 1, 2: 1, 3: 2, 4: 7, 5: 1}, calls)
	for _, has := range deadlines {
		require.True(t, has, "every call gets a per-record timeout")
	}
	require.Equal(t, map[int32]int64{1: 6}, committed(t, newAdmin(t, addrs), group, src))

	require.Equal(t, map[int32]int64{0: 1, 1: 0}, endOffsets(t, addrs, dlq), "exactly one dead letter")
	got := readAll(t, addrs, dlq, 1)
	require.Equal(t, recs[1].Key, got[0].Key)
	require.Equal(t, recs[1].Value, got[0].Value)
	require.Equal(t, dlqHeaders(recs[1].Headers, src, 1, recs[1].Offset, group, "bad json", "deterministic"), got[0].Headers)
}

// TestEachRecordTransientFailures calls the handler directly.
func TestEachRecordTransientFailures(t *testing.T) {
	t.Parallel()
	const src, dlq = "src", "dlq"
	addrs := newCluster(t, 1, src, dlq)
	prod := newClient(t, addrs, kafka.ProducerOpts()...)
	r := produce(t, addrs, rec(src, 0, 7))[0]
	opts := kafka.RecordOptions{
		Timeout: 5 * time.Millisecond, Backoff: time.Millisecond, MaxBackoff: time.Millisecond,
		Now: func() time.Time { return dlqNow },
	}
	batch := kafka.Batch{Topic: src, Partition: 0, Records: []*kgo.Record{r}}

	t.Run("a record that times out is retried until it succeeds", func(t *testing.T) {
		attempts := 0
		block := func(ctx context.Context, _ *kgo.Record) error {
			attempts++
			if attempts <= 4 {
				<-ctx.Done() // does not finish in time
				return ctx.Err()
			}
			return nil
		}
		h := kafka.EachRecord(block, kafka.NewDeadLetter(prod, dlq, "g", logging.Discard()), opts)
		require.NoError(t, h.Handle(context.Background(), batch))
		require.Equal(t, 5, attempts)
		require.Equal(t, map[int32]int64{0: 0}, endOffsets(t, addrs, dlq), "nothing is dead-lettered")
	})

	t.Run("a record failing until the batch's context ends fails the batch", func(t *testing.T) {
		attempts := 0
		down := func(context.Context, *kgo.Record) error {
			attempts++
			return errors.New("connection refused")
		}
		h := kafka.EachRecord(down, kafka.NewDeadLetter(prod, dlq, "g", logging.Discard()), opts)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := h.Handle(ctx, batch)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "src/0@0 after")
		require.ErrorContains(t, err, "connection refused")
		require.Greater(t, attempts, 5)
		require.Equal(t, map[int32]int64{0: 0}, endOffsets(t, addrs, dlq), "nothing is dead-lettered")
	})

	t.Run("a failed dead-letter append fails the batch", func(t *testing.T) {
		noTopic := newClient(t, addrs, kgo.UnknownTopicRetries(0))
		h := kafka.EachRecord(func(context.Context, *kgo.Record) error { return kafka.Permanent(errors.New("poison")) },
			kafka.NewDeadLetter(noTopic, "no-such-topic", "g", logging.Discard()), opts)
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		err := h.Handle(ctx, batch)
		require.Error(t, err)
		require.ErrorContains(t, err, "dead-letter src/0@0")
	})
}

// TestEachRecordStopsRetryingOnShutdown: a record failing transiently
// under a runner is retried (its partition blocked, nothing committed)
// until the runner is cancelled, which ends the retries at once although
// Handle's context outlives the cancel.
func TestEachRecordStopsRetryingOnShutdown(t *testing.T) {
	t.Parallel()
	const src, dlq, group = "src", "dlq", "g-worker-stop"
	addrs := newCluster(t, 1, src, dlq)
	produce(t, addrs, rec(src, 0, 0))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	calls := map[int64]int{}
	fn := func(_ context.Context, r *kgo.Record) error {
		mu.Lock()
		defer mu.Unlock()
		calls[r.Offset]++
		if calls[r.Offset] == 20 {
			stop()
		}
		return errors.New("store away")
	}
	h := kafka.EachRecord(fn, kafka.NewDeadLetter(newClient(t, addrs, kafka.ProducerOpts()...), dlq, group, logging.Discard()),
		kafka.RecordOptions{Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	cfg := runnerConfig(addrs, group, src)
	cfg.BatchTimeout = time.Hour // only the shutdown signal can end the retries in time
	start := time.Now()
	require.NoError(t, run(t, runCtx, cfg, h))
	require.NoError(t, ctx.Err(), "Run must return because of the cancel, not the guard")
	require.Less(t, time.Since(start), guard/2)
	require.Equal(t, map[int64]int{0: 20}, calls)
	require.Empty(t, committed(t, newAdmin(t, addrs), group, src))
	require.Equal(t, map[int32]int64{0: 0}, endOffsets(t, addrs, dlq))
}

// TestDeadLetterSend checks the copy Send appends, including the class
// and the bounded error header.
func TestDeadLetterSend(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	euros := strings.Repeat("€", 2000) // 3 bytes each: 4096 would split one
	for _, tc := range []struct {
		name      string
		cause     error
		wantMsg   string
		wantClass string
	}{
		{"unmarked error", errors.New("decode envelope: unexpected EOF"), "decode envelope: unexpected EOF", "unclassified"},
		{"permanent error keeps its message", kafka.Permanent(errors.New("poison")), "poison", "deterministic"},
		{"undecodable error", fmt.Errorf("park: %w", kafka.Undecodable(errors.New("decode envelope: unexpected EOF"))),
			"park: decode envelope: unexpected EOF", "decode"},
		{"long error is cut to 4096 bytes", kafka.Permanent(errors.New(long)), long[:4096], "deterministic"},
		{"a cut never splits a character", kafka.Permanent(errors.New(euros)), euros[:4095], "deterministic"},
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
			require.Equal(t, dlqHeaders(src.Headers, "errata.posts", 4, 12345, "projector-x", tc.wantMsg, tc.wantClass), got.Headers)
			require.Len(t, src.Headers, 2, "the source record is not modified")
		})
	}
}

func TestTruncateUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"a€b", 2, "a"},
		{"a€b", 3, "a"},
		{"a€b", 4, "a€"},
		{"€", 0, ""},
	} {
		require.Equal(t, tc.want, kafka.TruncateUTF8(tc.in, tc.n), "%q %d", tc.in, tc.n)
	}
}
