package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

func TestNewRunnerRequiresGroupAndTopics(t *testing.T) {
	t.Parallel()
	h := kafka.HandlerFunc(func(context.Context, kafka.Batch) error { return nil })
	for _, tc := range []struct {
		name string
		cfg  kafka.RunnerConfig
	}{
		{"no group", kafka.RunnerConfig{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"t"}}},
		{"no topics", kafka.RunnerConfig{Brokers: []string{"127.0.0.1:1"}, Group: "g"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := kafka.NewRunner(tc.cfg, h, logging.Discard())
			require.EqualError(t, err, "runner needs a group and topics")
			require.Nil(t, r)
		})
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	base := errors.New("poison")
	require.NoError(t, kafka.Permanent(nil))
	require.NoError(t, kafka.Undecodable(nil))
	p := kafka.Permanent(base)
	require.True(t, kafka.IsPermanent(p))
	require.ErrorIs(t, p, base)
	require.Equal(t, "poison", p.Error())
	require.True(t, kafka.IsPermanent(fmt.Errorf("wrapped: %w", p)))
	require.False(t, kafka.IsPermanent(base))
	require.False(t, kafka.IsPermanent(nil))

	for _, tc := range []struct {
		err  error
		want string
	}{
		{kafka.Permanent(base), kafka.ClassDeterministic},
		{fmt.Errorf("wrapped: %w", kafka.Permanent(base)), kafka.ClassDeterministic},
		{kafka.Undecodable(base), kafka.ClassDecode},
		{fmt.Errorf("wrapped: %w", kafka.Undecodable(base)), kafka.ClassDecode},
		{base, ""},
		{nil, ""},
	} {
		require.Equal(t, tc.want, kafka.PermanentClass(tc.err), "%v", tc.err)
	}
	u := kafka.Undecodable(base)
	require.True(t, kafka.IsPermanent(u))
	require.ErrorIs(t, u, base)
	require.Equal(t, "poison", u.Error())
	require.Equal(t, []string{"deterministic", "decode"}, []string{kafka.ClassDeterministic, kafka.ClassDecode})
}

// TestRunnerDeliversOnceInOrderAndCommitsAfterHandle checks that every record
// reaches the handler exactly once, in offset order per partition, and that
// when a batch is handed over nothing of it (or later) is committed yet: the
// committed offset is exactly the end of the partition's previous batch.
func TestRunnerDeliversOnceInOrderAndCommitsAfterHandle(t *testing.T) {
	t.Parallel()
	const topic, group, perPartition = "events", "g-order", 7
	addrs := newCluster(t, 2, topic)
	produceN(t, addrs, topic, 2, perPartition)
	adm := newAdmin(t, addrs)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	// committedAtHandle[i] is the committed offset of the partition of call i
	// when the handler ran (-1: none).
	var committedAtHandle []int64
	seen := 0
	h := &recorder{}
	h.fn = func(_ int, b kafka.Batch) error {
		at, ok := committed(t, adm, group, topic)[b.Partition]
		if !ok {
			at = -1
		}
		committedAtHandle = append(committedAtHandle, at)
		seen += len(b.Records)
		if seen == 2*perPartition {
			cancel()
		}
		return nil
	}
	cfg := runnerConfig(addrs, group, topic)
	cfg.MaxPollRecords = 3 // several batches per partition
	require.NoError(t, run(t, ctx, cfg, h))

	calls := h.deliveries()
	require.Equal(t, map[int32][]int64{0: seq(0, 6), 1: seq(0, 6)}, offsetsByPartition(calls))
	var keys []string
	for _, d := range calls {
		if d.Partition == 1 {
			keys = append(keys, d.Keys...)
		}
	}
	require.Equal(t, []string{"key-1000", "key-1001", "key-1002", "key-1003", "key-1004", "key-1005", "key-1006"}, keys)
	require.Greater(t, len(calls), 2, "MaxPollRecords=3 must split the 14 records")

	prevEnd := map[int32]int64{0: -1, 1: -1}
	for i, d := range calls {
		require.LessOrEqual(t, len(d.Offsets), 3)
		require.Equal(t, prevEnd[d.Partition], committedAtHandle[i],
			"call %d (partition %d, offsets %v): committed offset when handled", i, d.Partition, d.Offsets)
		prevEnd[d.Partition] = d.Offsets[len(d.Offsets)-1] + 1
	}
	require.Equal(t, map[int32]int64{0: perPartition, 1: perPartition}, committed(t, adm, group, topic))
}

// TestRunnerRetriesFailedBatch checks that a batch failing transiently more
// often than any retry budget (12 times) is retried with the same records,
// without the runner returning, and is then processed once and committed.
func TestRunnerRetriesFailedBatch(t *testing.T) {
	t.Parallel()
	const topic, group, failures = "events", "g-retry", 12
	addrs := newCluster(t, 1, topic)
	produceN(t, addrs, topic, 1, 5)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	succeeded := 0
	var r *kafka.Runner
	var statuses []kafka.RunnerStatus
	h := &recorder{fn: func(call int, b kafka.Batch) error {
		statuses = append(statuses, r.Status())
		if call <= failures {
			return fmt.Errorf("transient failure %d", call)
		}
		succeeded += len(b.Records)
		if succeeded == 5 {
			cancel()
		}
		return nil
	}}
	r, err := kafka.NewRunner(runnerConfig(addrs, group, topic), h, logging.Discard())
	require.NoError(t, err)
	require.Equal(t, kafka.RunnerStarting, r.Status().State)
	require.NoError(t, r.Run(ctx))

	calls := h.deliveries()
	require.Len(t, calls, failures+1)
	for i := range calls {
		require.Equal(t, calls[0], calls[i], "a retry gets the same batch")
	}
	require.Equal(t, seq(0, 4), calls[0].Offsets)
	require.Equal(t, map[int32]int64{0: 5}, committed(t, newAdmin(t, addrs), group, topic))

	// What Status said before each call: running, then retrying with the
	// attempts so far, the failing batch and the last error.
	require.Equal(t, kafka.RunnerRunning, statuses[0].State)
	since := statuses[1].Since
	require.False(t, since.IsZero())
	for i := 1; i <= failures; i++ {
		st := statuses[i]
		require.Equal(t, kafka.RunnerRetrying, st.State, "call %d", i+1)
		require.Equal(t, i, st.Attempts)
		require.Equal(t, group, st.Group)
		require.Equal(t, topic, st.Topic)
		require.Equal(t, int32(0), st.Partition)
		require.Equal(t, int64(0), st.Offset)
		require.EqualError(t, st.Err, fmt.Sprintf("transient failure %d", i))
		require.False(t, st.Permanent)
		require.True(t, since.Equal(st.Since), "the streak keeps its start")
	}
	st := r.Status()
	require.Equal(t, kafka.RunnerStopped, st.State)
	require.NoError(t, st.Err, "a shutdown is no failure")
}

// TestRunnerRetriesAcrossPolls: with a short retry hold, a failing batch
// is handed back to Kafka (the partition rewound, rebalances allowed) and
// consumed again on later polls, while the other partition keeps making
// progress. Every record is still processed exactly once, in order, and
// nothing is skipped or committed early.
func TestRunnerRetriesAcrossPolls(t *testing.T) {
	t.Parallel()
	const topic, group, perPartition = "events", "g-hold", 9
	addrs := newCluster(t, 2, topic)
	produceN(t, addrs, topic, 2, perPartition)
	adm := newAdmin(t, addrs)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var mu sync.Mutex
	failures := 7 // partition 0's batches holding offset 3 fail 7 times
	applied := map[int32][]int64{}
	var committedAtFailure [][2]int64 // partition 0's committed offset, the failing batch's first
	h := &recorder{fn: func(_ int, b kafka.Batch) error {
		mu.Lock()
		defer mu.Unlock()
		if b.Partition == 0 && holds(b, 3) && failures > 0 {
			failures--
			committedAtFailure = append(committedAtFailure, [2]int64{committed(t, adm, group, topic)[0], b.Records[0].Offset})
			return errors.New("store away")
		}
		for _, rec := range b.Records {
			applied[b.Partition] = append(applied[b.Partition], rec.Offset)
		}
		if len(applied[0]) == perPartition && len(applied[1]) == perPartition {
			cancel()
		}
		return nil
	}}
	cfg := runnerConfig(addrs, group, topic)
	cfg.MaxPollRecords = 3
	cfg.RetryHold = time.Nanosecond // every failure goes back to Kafka
	require.NoError(t, run(t, ctx, cfg, h))

	require.Equal(t, map[int32][]int64{0: seq(0, 8), 1: seq(0, 8)}, applied)
	require.Len(t, committedAtFailure, 7)
	for _, c := range committedAtFailure {
		require.LessOrEqual(t, c[0], c[1], "nothing of the failing batch is committed")
	}
	require.Equal(t, map[int32]int64{0: perPartition, 1: perPartition}, committed(t, adm, group, topic))
	deliveredAt3 := 0
	for _, d := range h.deliveries() {
		if d.Partition == 0 && slices.Contains(d.Offsets, 3) {
			deliveredAt3++
		}
	}
	require.Equal(t, 8, deliveredAt3, "offset 3 was delivered 7 times failing, once succeeding")
}

// holds reports whether b contains the record at offset.
func holds(b kafka.Batch, offset int64) bool {
	return b.Records[0].Offset <= offset && offset <= b.Records[len(b.Records)-1].Offset
}

// TestRunnerNeverGivesUpOnAFailingBatch covers batches that keep failing,
// transiently or marked Permanent: the runner keeps retrying (far past
// any old retry budget) without returning and without committing, Status
// reports the failure, a shutdown returns nil, and the next member of the
// group gets the same records again.
func TestRunnerNeverGivesUpOnAFailingBatch(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name          string
		err           error
		wantPermanent bool
	}{
		{"transient error", errBoom, false},
		{"permanent error", kafka.Permanent(errBoom), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const topic, group, attempts = "events", "g-fail", 15
			addrs := newCluster(t, 1, topic)
			produceN(t, addrs, topic, 1, 4)
			adm := newAdmin(t, addrs)

			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			var r *kafka.Runner
			var last kafka.RunnerStatus
			failing := &recorder{fn: func(call int, _ kafka.Batch) error {
				if call == attempts+1 {
					last = r.Status()
					stop()
				}
				return tc.err
			}}
			cfg := runnerConfig(addrs, group, topic)
			cfg.RetryHold = 3 * time.Millisecond // in place and across polls
			r, err := kafka.NewRunner(cfg, failing, logging.Discard())
			require.NoError(t, err)
			require.NoError(t, r.Run(runCtx))
			require.NoError(t, ctx.Err(), "Run must return because of the cancel, not the guard")

			require.Equal(t, kafka.RunnerRetrying, last.State)
			require.Equal(t, attempts, last.Attempts)
			require.ErrorIs(t, last.Err, errBoom)
			require.Equal(t, tc.wantPermanent, last.Permanent)
			require.Equal(t, "events", last.Topic)
			require.Equal(t, int32(0), last.Partition)
			require.Equal(t, int64(0), last.Offset)
			stopped := r.Status()
			require.Equal(t, kafka.RunnerStopped, stopped.State)
			require.NoError(t, stopped.Err)

			calls := failing.deliveries()
			require.Len(t, calls, attempts+1)
			for _, c := range calls {
				require.Equal(t, calls[0], c)
				require.Equal(t, int64(0), c.Offsets[0])
			}
			require.Empty(t, committed(t, adm, group, topic), "a failed batch must not be committed")

			// A second member of the group resumes at the failed batch.
			got := 0
			ok := &recorder{fn: func(_ int, b kafka.Batch) error {
				got += len(b.Records)
				if got == 4 {
					cancel()
				}
				return nil
			}}
			require.NoError(t, run(t, ctx, runnerConfig(addrs, group, topic), ok))
			require.Equal(t, map[int32][]int64{0: seq(0, 3)}, offsetsByPartition(ok.deliveries()))
			require.Equal(t, map[int32]int64{0: 4}, committed(t, adm, group, topic))
		})
	}
}

// TestRunnerShutdown checks that cancelling ctx makes Run return nil: while
// idle, after a batch (which is committed), and during a retry backoff
// (which is not committed).
func TestRunnerShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// records produced before the runner starts
		records int
		// handler result after cancelling (only called when records > 0)
		handlerErr    error
		wantCalls     int
		wantCommitted map[int32]int64
	}{
		{name: "idle", records: 0, wantCalls: 0, wantCommitted: map[int32]int64{}},
		{name: "during a batch", records: 3, wantCalls: 1, wantCommitted: map[int32]int64{0: 3}},
		{name: "during retry backoff", records: 3, handlerErr: errors.New("transient"), wantCalls: 1, wantCommitted: map[int32]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const topic, group = "events", "g-shutdown"
			addrs := newCluster(t, 1, topic)
			if tc.records > 0 {
				produceN(t, addrs, topic, 1, tc.records)
			}
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			// The user's cancel: a separate context so the guard cannot be
			// mistaken for it.
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			h := &recorder{fn: func(int, kafka.Batch) error {
				stop()
				return tc.handlerErr
			}}
			cfg := runnerConfig(addrs, group, topic)
			cfg.Backoff = time.Hour // a retry would outlive the guard
			cfg.MaxBackoff = time.Hour
			assigned := make(chan struct{})
			var once sync.Once
			cfg.ExtraOpts = []kgo.Opt{kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
				once.Do(func() { close(assigned) })
			})}
			if tc.records == 0 {
				go func() {
					select {
					case <-assigned:
					case <-ctx.Done():
					}
					stop()
				}()
			}
			require.NoError(t, run(t, runCtx, cfg, h))
			require.NoError(t, ctx.Err(), "Run must return because of the cancel, not the guard")
			require.Len(t, h.deliveries(), tc.wantCalls)
			require.Equal(t, tc.wantCommitted, committed(t, newAdmin(t, addrs), group, topic))
		})
	}
}

// positions is a PositionStore returning fixed positions.
type positions struct {
	mu     sync.Mutex
	stored map[string]map[int32]int64
	err    error
	asked  [][]string
	onAsk  func(n int) // called with the number of calls so far
}

func (p *positions) Positions(_ context.Context, topics []string) (map[string]map[int32]int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, append([]string(nil), topics...))
	if p.onAsk != nil {
		p.onAsk(len(p.asked))
	}
	return p.stored, p.err
}

// TestRunnerStartsAtStoredPositions checks that with a PositionStore the
// stored next offset wins over Kafka's committed offset, and a partition the
// store does not know starts at the log start (which here is past offset 0).
func TestRunnerStartsAtStoredPositions(t *testing.T) {
	t.Parallel()
	const topic, group = "events", "g-positions"
	addrs := newCluster(t, 2, topic)
	produceN(t, addrs, topic, 2, 5)
	adm := newAdmin(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	// Partition 1's log starts at offset 1.
	var del kadm.Offsets
	del.AddOffset(topic, 1, 1, -1)
	delResp, err := adm.DeleteRecords(ctx, del)
	require.NoError(t, err)
	require.NoError(t, delResp.Error())
	// Kafka's committed offsets disagree with the store on purpose.
	var commit kadm.Offsets
	commit.AddOffset(topic, 0, 1, -1)
	commit.AddOffset(topic, 1, 4, -1)
	commitResp, err := adm.CommitOffsets(ctx, group, commit)
	require.NoError(t, err)
	require.NoError(t, commitResp.Error())
	require.Equal(t, map[int32]int64{0: 1, 1: 4}, committed(t, adm, group, topic))

	store := &positions{stored: map[string]map[int32]int64{topic: {0: 3}}}
	got := map[int32]int64{}
	h := &recorder{fn: func(_ int, b kafka.Batch) error {
		got[b.Partition] = b.Records[len(b.Records)-1].Offset
		if got[0] == 4 && got[1] == 4 {
			cancel()
		}
		return nil
	}}
	cfg := runnerConfig(addrs, group, topic)
	cfg.Positions = store
	require.NoError(t, run(t, ctx, cfg, h))

	require.Equal(t, map[int32][]int64{0: seq(3, 4), 1: seq(1, 4)}, offsetsByPartition(h.deliveries()))
	require.Equal(t, [][]string{{topic}}, store.asked)
	require.Equal(t, map[int32]int64{0: 5, 1: 5}, committed(t, adm, group, topic))
}

// TestRunnerPositionStoreFailure checks that a failing store never lets
// the runner consume from Kafka's committed offsets (or the log start)
// instead: it keeps asking the store, consumes nothing, and stops cleanly.
func TestRunnerPositionStoreFailure(t *testing.T) {
	t.Parallel()
	const topic, group = "events", "g-positions-fail"
	addrs := newCluster(t, 1, topic)
	produceN(t, addrs, topic, 1, 3)
	adm := newAdmin(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var commit kadm.Offsets
	commit.AddOffset(topic, 0, 1, -1)
	resp, err := adm.CommitOffsets(ctx, group, commit)
	require.NoError(t, err)
	require.NoError(t, resp.Error())

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	store := &positions{err: errors.New("database down")}
	store.onAsk = func(n int) {
		if n == 2 { // asked again after the first failure
			stop()
		}
	}
	h := &recorder{}
	cfg := runnerConfig(addrs, group, topic)
	cfg.Positions = store
	require.NoError(t, run(t, runCtx, cfg, h))
	require.NoError(t, ctx.Err(), "Run must return because of the cancel, not the guard")
	require.Empty(t, h.deliveries())
	require.GreaterOrEqual(t, len(store.asked), 2)
	require.Equal(t, map[int32]int64{0: 1}, committed(t, adm, group, topic))
}

// TestRunnerFetchErrorDoesNotSkipRecords: a poll can carry records of one
// partition together with an error of another (here the broker answers
// partition 1's fetch once with UNKNOWN_SERVER_ERROR, which the client
// surfaces). Retrying the error must not drop the other partition's
// records: the client has already moved past them, so dropping them would
// skip them for good (and a later commit would confirm the gap).
func TestRunnerFetchErrorDoesNotSkipRecords(t *testing.T) {
	t.Parallel()
	const topic, group = "events", "g-fetch-error"
	c := newFakeCluster(t, 2, topic)
	addrs := c.ListenAddrs()
	produceN(t, addrs, topic, 2, 3)
	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Partitions: []int32{1}, Err: kerr.UnknownServerError, Count: 1})

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	last := map[int32]int64{}
	h := &recorder{fn: func(_ int, b kafka.Batch) error {
		last[b.Partition] = b.Records[len(b.Records)-1].Offset
		if last[0] == 2 && last[1] == 2 {
			stop()
		}
		return nil
	}}
	require.NoError(t, run(t, runCtx, runnerConfig(addrs, group, topic), h))
	require.Equal(t, 1, fault.Hits())
	require.NoError(t, ctx.Err(), "not every record arrived: %v", offsetsByPartition(h.deliveries()))
	require.Equal(t, map[int32][]int64{0: seq(0, 2), 1: seq(0, 2)}, offsetsByPartition(h.deliveries()))
	require.Equal(t, map[int32]int64{0: 3, 1: 3}, committed(t, newAdmin(t, addrs), group, topic))
}
