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
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
	// OnProgress is called about every ProgressEvery and once at the end.
	OnProgress    func(Progress)
	ProgressEvery time.Duration
	// ClientOpts are extra franz-go options (tests).
	ClientOpts []kgo.Opt
}

// CatchUp applies every record from the target's stored positions up to
// cfg.Until and returns how many records it read. It stops with an error if
// the handler fails (after its own retries) or ctx ends; applied effects
// and positions stay, so running it again resumes.
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
	var done int64
	report := func() {
		if cfg.OnProgress == nil {
			return
		}
		el := time.Since(started)
		pr := Progress{Done: done, Total: total, Elapsed: el}
		if s := el.Seconds(); s > 0 {
			pr.Rate = float64(done) / s
		}
		if pr.Rate > 0 && total > done {
			pr.ETA = time.Duration(float64(total-done) / pr.Rate * float64(time.Second))
		}
		cfg.OnProgress(pr)
	}
	if len(assign) == 0 {
		report()
		return 0, nil
	}

	opts := append(kafka.ConsumerOpts(), kgo.ConsumePartitions(assign))
	opts = append(opts, cfg.ClientOpts...)
	cl, err := kafka.NewClient(cfg.Brokers, opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()

	remaining := map[string]map[int32]bool{}
	for topic, parts := range assign {
		remaining[topic] = map[int32]bool{}
		for p := range parts {
			remaining[topic][p] = true
		}
	}
	left := 0
	for _, parts := range remaining {
		left += len(parts)
	}
	lastReport := time.Now()
	for left > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		var fetchErr error
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fetchErr = errors.Join(fetchErr, fmt.Errorf("fetch %s/%d: %w", topic, p, err))
			}
		})
		if fetchErr != nil {
			return done, fetchErr
		}
		var handleErr error
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if handleErr != nil || !remaining[fp.Topic][fp.Partition] {
				return
			}
			end := cfg.Until[fp.Topic][fp.Partition]
			recs := fp.Records
			n := 0
			for n < len(recs) && recs[n].Offset < end {
				n++
			}
			if n > 0 {
				if err := handleWithRetry(ctx, cfg.Handler, kafka.Batch{Topic: fp.Topic, Partition: fp.Partition, Records: recs[:n]}, log); err != nil {
					handleErr = err
					return
				}
				done += int64(n)
			}
			if n < len(recs) || (n > 0 && recs[n-1].Offset+1 >= end) {
				delete(remaining[fp.Topic], fp.Partition)
				left--
				cl.PauseFetchPartitions(map[string][]int32{fp.Topic: {fp.Partition}})
			}
		})
		if handleErr != nil {
			return done, handleErr
		}
		if time.Since(lastReport) >= every {
			report()
			lastReport = time.Now()
		}
	}
	report()
	return done, nil
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
