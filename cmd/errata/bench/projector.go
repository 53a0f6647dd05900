package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/memstat"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// Offsets are end offsets by topic and partition.
type Offsets map[string]map[int32]int64

// Total is the number of records below the offsets (event topics are
// written without transactions, so offsets are dense).
func (o Offsets) Total() int {
	n := 0
	for _, ps := range o {
		for _, off := range ps {
			n += int(off)
		}
	}
	return n
}

// EndOffsets lists the current end offsets of topics.
func EndOffsets(ctx context.Context, brokers []string, topics []string) (Offsets, error) {
	cl, err := kafka.NewClient(brokers)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	out := Offsets{}
	listed.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	return out, nil
}

// ProjectorRun is one serving projector catching up from offset 0.
type ProjectorRun struct {
	Brokers     []string
	DatabaseURL string
	Schema      string // fresh: migrated here
	Group       string // fresh consumer group
	Topics      []string
	// Until: the run ends when every partition's checkpoint reaches it.
	Until           Offsets
	IPRangeDailyCap int
	Log             *slog.Logger
}

// ProjectorStats is what a projector run measured.
type ProjectorStats struct {
	// Events this run applied: those below Until and beyond the
	// checkpoints it started from (all of them in a fresh schema).
	Events int `json:"events"`
	// Applied is the sum of the checkpoints at the end: every record below
	// Until, applied exactly once.
	Applied int `json:"applied"`
	// Seconds of applying, from the first durable batch, scaled to all
	// events (joining the group is a fixed start-up cost, reported apart).
	Seconds      float64 `json:"seconds"`
	StartSeconds float64 `json:"start_seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	DeadLetters  int     `json:"dead_letters"`
	// Memory: the live heap (after the last GC) of this process, at the
	// start and at its peak while the projector ran, sampled. Their
	// difference is what catching up costs in memory; it must not grow
	// with the log's length.
	StartHeapBytes uint64 `json:"start_heap_bytes"`
	PeakHeapBytes  uint64 `json:"peak_heap_bytes"`
}

// servingProjector connects to schema, migrates it and builds the serving
// projector on it as errata worker does, parking into a counter.
func servingProjector(ctx context.Context, databaseURL, schema string, ipRangeDailyCap int, log *slog.Logger) (*pgxpool.Pool, *pgproj.Projector, *countingDeadLetter, error) {
	pool, err := postgres.ConnectDerived(ctx, databaseURL, schema)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pgproj.Migrate(ctx, pool, schema, serving.Migrations(), log); err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	dl := &countingDeadLetter{}
	return pool, pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(), serving.NewApplier(ipRangeDailyCap), dl, log), dl, nil
}

// Run migrates the schema, runs the exactly-once serving projector (real
// Kafka consumer group, checkpoints in the same transaction as the rows)
// until it has applied everything below Until, and stops it.
func (p ProjectorRun) Run(ctx context.Context) (ProjectorStats, error) {
	pool, proj, dl, err := servingProjector(ctx, p.DatabaseURL, p.Schema, p.IPRangeDailyCap, p.Log)
	if err != nil {
		return ProjectorStats{}, err
	}
	defer pool.Close()
	r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: p.Brokers, Group: p.Group, Topics: p.Topics, Positions: proj}, proj, p.Log)
	if err != nil {
		return ProjectorStats{}, err
	}
	total := p.Until.Total()
	// A schema projected before resumes from its checkpoints: only what
	// lies beyond them is this run's work.
	initial, _, err := checkpointProgress(ctx, pool, p.Until)
	if err != nil {
		return ProjectorStats{}, err
	}
	runtime.GC() // the start figure is live data only
	startHeap := memstat.LiveHeap()
	stopSampling := make(chan struct{})
	peakHeap := memstat.SamplePeak(20*time.Millisecond, stopSampling)
	defer func() {
		select {
		case <-stopSampling:
		default:
			close(stopSampling)
		}
	}()
	begin := time.Now()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	stop := func() error {
		cancel()
		return <-done
	}
	var start time.Time
	startApplied := 0
	for {
		applied, caughtUp, err := checkpointProgress(ctx, pool, p.Until)
		if err != nil {
			return ProjectorStats{}, errors.Join(err, stop())
		}
		if applied > initial && start.IsZero() {
			start, startApplied = time.Now(), applied
		}
		if caughtUp {
			break
		}
		select {
		case err := <-done:
			return ProjectorStats{}, fmt.Errorf("projector stopped before catching up: %w", err)
		case <-ctx.Done():
			return ProjectorStats{}, errors.Join(ctx.Err(), stop())
		case <-time.After(2 * time.Millisecond):
		}
	}
	end := time.Now()
	close(stopSampling)
	if err := stop(); err != nil {
		return ProjectorStats{}, fmt.Errorf("projector: %w", err)
	}
	applied, _, err := checkpointProgress(ctx, pool, p.Until)
	if err != nil {
		return ProjectorStats{}, err
	}
	st := ProjectorStats{Events: total - initial, Applied: applied, DeadLetters: dl.count(), StartHeapBytes: startHeap, PeakHeapBytes: max(startHeap, peakHeap())}
	if st.Events > 0 {
		if start.IsZero() { // caught up at once: nothing to apply
			start = end
		}
		// Scale the applying time to the whole workload (the first batch
		// was applied before the clock started).
		st.Seconds = end.Sub(start).Seconds() * float64(st.Events) / float64(max(1, total-startApplied))
		st.StartSeconds = start.Sub(begin).Seconds()
		if st.Seconds > 0 {
			st.EventsPerSec = float64(st.Events) / st.Seconds
		}
	}
	return st, nil
}

// checkpointProgress sums the projector's checkpoints and says whether
// every partition has reached until.
func checkpointProgress(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, until Offsets) (applied int, caughtUp bool, err error) {
	rows, err := q.Query(ctx, `SELECT topic, partition, next_offset FROM projection_checkpoints WHERE projector = $1`, serving.ProjectorName)
	if err != nil {
		return 0, false, fmt.Errorf("read checkpoints: %w", err)
	}
	got := Offsets{}
	for rows.Next() {
		var topic string
		var partition int32
		var next int64
		if err := rows.Scan(&topic, &partition, &next); err != nil {
			rows.Close()
			return 0, false, err
		}
		if got[topic] == nil {
			got[topic] = map[int32]int64{}
		}
		got[topic][partition] = next
		applied += int(next)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	for topic, ps := range until {
		for partition, end := range ps {
			if end > 0 && got[topic][partition] < end {
				return applied, false, nil
			}
		}
	}
	return applied, true, nil
}

// countingDeadLetter parks nothing: in a bench every event is valid, so a
// dead letter is a failure the result reports.
type countingDeadLetter struct {
	mu sync.Mutex
	n  int
}

func (d *countingDeadLetter) Send(context.Context, *kgo.Record, error, time.Time) error {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	return nil
}

func (d *countingDeadLetter) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// CopyFromBaseline copies rows rows shaped like serving.post_view_credits
// (same columns, types and keys: LIKE ... INCLUDING ALL) into a new table
// of schema with pgx CopyFrom and returns how long the copy took. The
// schema must hold a migrated serving projection.
func CopyFromBaseline(ctx context.Context, databaseURL, schema string, rows int) (time.Duration, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return 0, fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	table := pgx.Identifier{schema, "copy_baseline"}
	if _, err := conn.Exec(ctx, `CREATE TABLE `+table.Sanitize()+` (LIKE `+pgx.Identifier{schema, "post_view_credits"}.Sanitize()+` INCLUDING ALL)`); err != nil {
		return 0, fmt.Errorf("create baseline table: %w", err)
	}
	data := make([][]any, rows)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range data {
		data[i] = []any{events.PostID(events.PlatformX, fmt.Sprint(i%200)), fmt.Sprintf("%064d", i), strings.Repeat("a", 64), day, day.Add(time.Duration(i) * time.Millisecond)}
	}
	start := time.Now()
	n, err := conn.CopyFrom(ctx, table, []string{"post_id", "viewer_key", "ip_range_key", "bucket_day", "created_at"}, pgx.CopyFromRows(data))
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("copy: %w", err)
	}
	if int(n) != rows {
		return 0, fmt.Errorf("copied %d rows, want %d", n, rows)
	}
	return took, nil
}

// ConsumeBaseline reads every record below until from offset 0 with a bare
// client (no group, no decoding, no writes) and returns how long it took
// and how many records it read.
func ConsumeBaseline(ctx context.Context, brokers []string, until Offsets) (time.Duration, int, error) {
	topics := make([]string, 0, len(until))
	for t := range until {
		topics = append(topics, t)
	}
	total := until.Total()
	cl, err := kafka.NewClient(brokers, append(kafka.ConsumerOpts(), kgo.ConsumeTopics(topics...))...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	start := time.Now()
	got := 0
	for got < total {
		f := cl.PollFetches(ctx)
		if err := f.Err0(); err != nil {
			return 0, got, fmt.Errorf("consume: %w", err)
		}
		f.EachRecord(func(r *kgo.Record) {
			if r.Offset < until[r.Topic][r.Partition] {
				got++
			}
		})
	}
	return time.Since(start), got, nil
}
