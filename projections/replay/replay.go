// Package replay rebuilds read models from the log.
//
// CatchUp feeds every record of a projection's topics, from the
// projection's own stored positions (0 for a fresh target) up to fixed end
// offsets, to the projection's handler, without a consumer group, and
// reports progress. The handler is the same one the live projector uses, so
// a replay applies exactly what live projection would, and stores positions
// the same way; it never calls an LLM or any outside service because
// projections only read events.
//
// A Rebuilder runs `errata replay`, `verify` and `projections` on top of
// it: it builds a new generation of a read model beside the live one and
// switches readers to it (blue-green, see package targets), checks the
// live generation against a rebuild by canonical checksums, reports how far
// each generation is, and drops one no reader uses. It reaches each read
// model's stores through Rebuildable: Postgres (pgproj projections),
// Search (its Postgres fold and Elasticsearch indices) and Analytics
// (ClickHouse).
package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/semaphore"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/retry"
)

// Offsets are positions per topic and partition.
type Offsets map[string]map[int32]int64

// Total sums the records between from and to (to exclusive) over to's partitions.
func Total(from, to Offsets) int64 {
	var n int64
	for topic, parts := range to {
		for p, end := range parts {
			if d := end - from[topic][p]; d > 0 {
				n += d
			}
		}
	}
	return n
}

// EndOffsets returns the current end offset of every partition of topics.
func EndOffsets(ctx context.Context, admin *kadm.Client, topics []string) (Offsets, error) {
	ends, err := admin.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	out := Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	for _, t := range topics {
		if len(out[t]) == 0 {
			return nil, fmt.Errorf("topic %s has no partitions (does it exist?)", t)
		}
	}
	return out, nil
}

// Progress is a snapshot of a running replay.
type Progress struct {
	Done, Total int64
	Elapsed     time.Duration
	// Rate is records per second since the start.
	Rate float64
	// ETA is the remaining time at the current rate (0 when unknown).
	ETA time.Duration
}

// Config describes one catch-up run.
type Config struct {
	Brokers []string
	// Until holds the end offset (exclusive) to reach on each partition;
	// every partition of every topic to read must be present.
	Until Offsets
	// Handler applies records; Positions tells where the target stands.
	Handler   kafka.Handler
	Positions kafka.PositionStore
	// Partitions is how many partitions are applied at once (0 or 1: one
	// at a time). Each partition's batches are still applied one after
	// another in offset order, each with its checkpoint; more than one
	// requires a Handler safe for concurrent calls on different partitions
	// whose effects of different partitions commute (see
	// ParallelProjector).
	Partitions int
	// OnProgress is called about every ProgressEvery and once at the end.
	OnProgress    func(Progress)
	ProgressEvery time.Duration
	// ClientOpts are extra franz-go options (tests).
	ClientOpts []kgo.Opt
}

// Catch-up memory, constant in the log's length: a fetch is applied in
// batches of at most batchBytes of keys and values (a fetch's compressed
// size says little of what it holds once decompressed and decoded, which
// costs several times its bytes), at most queuedBatches wait per
// partition, and the records fetched and not yet applied (queued or in a
// handler) hold at most heldBytes. A single record larger than a batch is
// let through alone.
const (
	batchBytes    = 2 << 20
	queuedBatches = 2
	heldBytes     = 8 << 20
	// fetchBytes bounds one fetch (compressed; a record batch larger than
	// it still comes whole): a poll's records stay in memory until its
	// last batch is queued.
	fetchBytes = 1 << 20
)

// CatchUp applies every record from the target's stored positions up to
// cfg.Until and returns how many records it read. It stops with an error if
// the handler fails (after its own retries) or ctx ends; applied effects
// and positions stay, so running it again resumes.
//
// Fetching runs ahead of applying: while a partition's batch is in the
// handler, its next records are fetched (and, with cfg.Partitions > 1,
// other partitions are applied at the same time).
func CatchUp(ctx context.Context, cfg Config, log *slog.Logger) (int64, error) {
	topics := make([]string, 0, len(cfg.Until))
	for t := range cfg.Until {
		topics = append(topics, t)
	}
	stored, err := cfg.Positions.Positions(ctx, topics)
	if err != nil {
		return 0, fmt.Errorf("stored positions: %w", err)
	}
	from := Offsets{}
	assign := map[string]map[int32]kgo.Offset{}
	for topic, parts := range cfg.Until {
		from[topic] = map[int32]int64{}
		for p, end := range parts {
			start := stored[topic][p] // 0 when absent: a fresh target
			from[topic][p] = start
			if start >= end {
				continue
			}
			if assign[topic] == nil {
				assign[topic] = map[int32]kgo.Offset{}
			}
			assign[topic][p] = kgo.NewOffset().At(start)
		}
	}
	total := Total(from, cfg.Until)
	every := cfg.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	started := time.Now()
	var done atomic.Int64
	report := func() {
		if cfg.OnProgress == nil {
			return
		}
		el := time.Since(started)
		pr := Progress{Done: done.Load(), Total: total, Elapsed: el}
		if s := el.Seconds(); s > 0 {
			pr.Rate = float64(pr.Done) / s
		}
		if pr.Rate > 0 && total > pr.Done {
			pr.ETA = time.Duration(float64(total-pr.Done) / pr.Rate * float64(time.Second))
		}
		cfg.OnProgress(pr)
	}
	if len(assign) == 0 {
		report()
		return 0, nil
	}

	opts := append(kafka.ConsumerOpts(), kgo.ConsumePartitions(assign),
		kgo.FetchMaxBytes(fetchBytes), kgo.FetchMaxPartitionBytes(fetchBytes))
	opts = append(opts, cfg.ClientOpts...)
	cl, err := kafka.NewClient(cfg.Brokers, opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()

	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ap := newAppliers(actx, cancel, cfg.Handler, max(1, cfg.Partitions), &done, log)
	stopReports := make(chan struct{})
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stopReports:
				return
			case <-t.C:
				report()
			}
		}
	}()
	pollErr := ap.feed(actx, cl, assign, cfg.Until)
	if pollErr != nil {
		cancel(pollErr)
	}
	applyErr := ap.wait()
	close(stopReports)
	<-reported
	report()
	switch {
	case ctx.Err() != nil:
		return done.Load(), ctx.Err()
	case applyErr != nil:
		return done.Load(), applyErr
	default:
		return done.Load(), pollErr
	}
}

// appliers apply each partition's batches in its own goroutine, in offset
// order, at most slots partitions at a time.
type appliers struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	handler kafka.Handler
	slots   chan struct{}
	held    *semaphore.Weighted
	done    *atomic.Int64
	log     *slog.Logger
	queues  map[string]map[int32]chan kafka.Batch
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
}

func newAppliers(ctx context.Context, cancel context.CancelCauseFunc, h kafka.Handler, slots int, done *atomic.Int64, log *slog.Logger) *appliers {
	return &appliers{ctx: ctx, cancel: cancel, handler: h, slots: make(chan struct{}, slots), held: semaphore.NewWeighted(heldBytes),
		done: done, log: log, queues: map[string]map[int32]chan kafka.Batch{}}
}

// feed polls until every assigned partition has reached until, queueing
// each partition's records to its applier, and closes the queues. It
// returns a fetch error, or nil (also when ctx ends: wait says why).
func (a *appliers) feed(ctx context.Context, cl *kgo.Client, assign map[string]map[int32]kgo.Offset, until Offsets) error {
	defer a.closeQueues()
	remaining := map[string]map[int32]bool{}
	left := 0
	for topic, parts := range assign {
		remaining[topic] = map[int32]bool{}
		for p := range parts {
			remaining[topic][p] = true
			left++
		}
	}
	for left > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fetchErr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fetchErr = errors.Join(fetchErr, fmt.Errorf("fetch %s/%d: %w", topic, p, err))
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if ctx.Err() != nil || !remaining[fp.Topic][fp.Partition] {
				return
			}
			end := until[fp.Topic][fp.Partition]
			recs := fp.Records
			n := 0
			for n < len(recs) && recs[n].Offset < end {
				n++
			}
			for _, part := range split(recs[:n]) {
				a.queue(ctx, kafka.Batch{Topic: fp.Topic, Partition: fp.Partition, Records: part})
			}
			if n < len(recs) || (n > 0 && recs[n-1].Offset+1 >= end) {
				delete(remaining[fp.Topic], fp.Partition)
				left--
				cl.PauseFetchPartitions(map[string][]int32{fp.Topic: {fp.Partition}})
				a.closeQueue(fp.Topic, fp.Partition)
			}
		})
	}
	return nil
}

// split cuts recs into batches of at most batchBytes (a larger record
// alone).
func split(recs []*kgo.Record) [][]*kgo.Record {
	var out [][]*kgo.Record
	start, size := 0, 0
	for i, r := range recs {
		n := len(r.Key) + len(r.Value)
		if i > start && size+n > batchBytes {
			out = append(out, recs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(recs) {
		out = append(out, recs[start:])
	}
	return out
}

// queue hands b to its partition's applier, starting it on the first
// batch; it waits while queuedBatches batches of that partition wait, or
// while the records held would exceed heldBytes.
func (a *appliers) queue(ctx context.Context, b kafka.Batch) {
	if a.held.Acquire(ctx, weight(b.Records)) != nil {
		return
	}
	q := a.queues[b.Topic][b.Partition]
	if q == nil {
		q = make(chan kafka.Batch, queuedBatches)
		if a.queues[b.Topic] == nil {
			a.queues[b.Topic] = map[int32]chan kafka.Batch{}
		}
		a.queues[b.Topic][b.Partition] = q
		a.wg.Add(1)
		go a.run(q)
	}
	select {
	case q <- b:
	case <-ctx.Done():
		a.held.Release(weight(b.Records))
	}
}

// weight is what records count against heldBytes (a record larger than
// all of it takes all of it).
func weight(recs []*kgo.Record) int64 {
	var n int64
	for _, r := range recs {
		n += int64(len(r.Key) + len(r.Value))
	}
	return min(n, heldBytes)
}

func (a *appliers) closeQueue(topic string, partition int32) {
	if q := a.queues[topic][partition]; q != nil {
		close(q)
		delete(a.queues[topic], partition)
	}
}

func (a *appliers) closeQueues() {
	for topic, parts := range a.queues {
		for p := range parts {
			a.closeQueue(topic, p)
		}
	}
}

// run applies one partition's batches in order.
func (a *appliers) run(q <-chan kafka.Batch) {
	defer a.wg.Done()
	for b := range q {
		err := a.apply(b)
		a.held.Release(weight(b.Records))
		if err != nil {
			a.fail(err)
			continue
		}
		a.done.Add(int64(len(b.Records)))
	}
}

// apply applies b in one of the slots (ctx's error once the run is stopping).
func (a *appliers) apply(b kafka.Batch) error {
	select {
	case a.slots <- struct{}{}:
	case <-a.ctx.Done():
		return a.ctx.Err()
	}
	defer func() { <-a.slots }()
	if err := a.ctx.Err(); err != nil {
		return err
	}
	return handleWithRetry(a.ctx, a.handler, b, a.log)
}

// fail records the first handler error and stops every applier.
func (a *appliers) fail(err error) {
	a.mu.Lock()
	if a.err == nil && a.ctx.Err() == nil {
		a.err = err
	}
	a.mu.Unlock()
	a.cancel(err)
}

// wait waits for every applier and returns the first handler error.
func (a *appliers) wait() error {
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// handleWithRetry retries transient handler errors a few times with back-off,
// as the live runner does; a permanent error stops the replay at once.
func handleWithRetry(ctx context.Context, h kafka.Handler, b kafka.Batch, log *slog.Logger) error {
	const attempts = 6
	var err error
	for i := 1; i <= attempts; i++ {
		if err = h.Handle(ctx, b); err == nil {
			return nil
		}
		if kafka.IsPermanent(err) || ctx.Err() != nil || i == attempts {
			break
		}
		d := retry.Exponential{Base: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.1}.Delay(i)
		log.Warn("replay batch failed, retrying", "topic", b.Topic, "partition", b.Partition, "attempt", i, "in", d, "err", err)
		if err := retry.Sleep(ctx, d); err != nil {
			return err
		}
	}
	return fmt.Errorf("apply %s/%d from %d: %w", b.Topic, b.Partition, b.Records[0].Offset, err)
}
