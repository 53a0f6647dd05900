package serving_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// BenchmarkServingProjector measures the serving projector end to end (real
// Kafka -> runner -> exactly-once Postgres transaction) and, in the same run
// on the same machine, two raw baselines: pgx CopyFrom of the same number of
// rows of the view-credit row shape, and a bare Kafka consume of the same
// records. Figures are reported per second and as ratios, since absolute
// numbers on shared machines are noisy.
//
//	make bench   (or: ERRATA_INTEGRATION=1 go test -run '^$' -bench ServingProjector -benchtime 3x ./projections/serving/)
func BenchmarkServingProjector(b *testing.B) {
	brokers, topics := testenv.Kafka(b, 3)
	dbURL := testenv.Postgres(b)
	ctx := context.Background()
	const ipCap = 10
	w := testenv.PostWorkload(testenv.WorkloadSpec{
		Seed: 7, Posts: 200, ViewsPerPost: 99, Viewers: 500, IPRanges: 50, Days: 2,
		IPRangeDailyCap: ipCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	total := len(w.Events)
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	if err != nil {
		b.Fatal(err)
	}
	defer producer.Close()
	appender := producers.NewAppender(producer, events.NewCatalogRegistry(), topics, nil)
	for start := 0; start < total; start += 2000 {
		if _, err := appender.Append(ctx, w.Events[start:min(start+2000, total)]...); err != nil {
			b.Fatal(err)
		}
	}

	var projectorSecs, copySecs, consumeSecs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		schema := fmt.Sprintf("bench_%d", i)
		projectorSecs += runProjectorOnce(b, ctx, brokers, topics, dbURL, schema, total, ipCap, w.Expect)
		copySecs += copyBaselineOnce(b, ctx, dbURL, schema, total)
		consumeSecs += consumeBaselineOnce(b, ctx, brokers, topics, total)
	}
	b.StopTimer()
	n := float64(b.N * total)
	b.ReportMetric(n/projectorSecs, "projector_events/s")
	b.ReportMetric(n/copySecs, "copyfrom_rows/s")
	b.ReportMetric(n/consumeSecs, "kafka_consume_records/s")
	b.ReportMetric((n/projectorSecs)/(n/copySecs), "projector/copyfrom")
	b.ReportMetric((n/projectorSecs)/(n/consumeSecs), "projector/consume")
}

func runProjectorOnce(b *testing.B, ctx context.Context, brokers []string, topics events.Topics, dbURL, schema string, total, ipCap int, exp testenv.Expectation) float64 {
	b.Helper()
	pool, err := pgproj.Connect(ctx, dbURL, schema)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, schema, serving.Migrations(), logging.Discard()); err != nil {
		b.Fatal(err)
	}
	proj := pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(), serving.NewApplier(ipCap), failingDeadLetter{b}, logging.Discard())
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers: brokers, Group: topics.Prefix + "bench." + schema, Topics: []string{topics.Name(events.TopicPosts)},
		Positions: proj,
	}, proj, logging.Discard())
	if err != nil {
		b.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	// The clock starts at the first applied batch, so joining the consumer
	// group (a fixed start-up cost) is not counted as throughput.
	var start time.Time
	startApplied := 0
	for {
		var applied int
		if err := pool.QueryRow(ctx, `SELECT COALESCE(sum(next_offset), 0)::int FROM projection_checkpoints`).Scan(&applied); err != nil {
			b.Fatal(err)
		}
		if applied > 0 && start.IsZero() {
			start, startApplied = time.Now(), applied
		}
		if applied >= total {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// Scale to the whole workload for comparison with the baselines.
	elapsed := time.Since(start).Seconds() * float64(total) / float64(max(1, total-startApplied))
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if err := testenv.VerifyServing(ctx, pool, exp); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// copyBaselineOnce copies total rows shaped like post_view_credits (same
// columns, types and primary key) with pgx CopyFrom.
func copyBaselineOnce(b *testing.B, ctx context.Context, dbURL, schema string, total int) float64 {
	b.Helper()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	table := pgx.Identifier{schema, "copy_baseline"}
	if _, err := conn.Exec(ctx, `CREATE TABLE `+table.Sanitize()+` (LIKE `+pgx.Identifier{schema, "post_view_credits"}.Sanitize()+` INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
	rows := make([][]any, total)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		rows[i] = []any{events.PostID("X", fmt.Sprint(i%200)), fmt.Sprintf("%064d", i), strings.Repeat("a", 64), day, day.Add(time.Duration(i) * time.Millisecond)}
	}
	start := time.Now()
	n, err := conn.CopyFrom(ctx, table, []string{"post_id", "viewer_key", "ip_range_key", "bucket_day", "created_at"}, pgx.CopyFromRows(rows))
	if err != nil {
		b.Fatal(err)
	}
	if int(n) != total {
		b.Fatalf("copied %d rows, want %d", n, total)
	}
	return time.Since(start).Seconds()
}

// consumeBaselineOnce reads every record of the posts topic with a bare
// client: no group, no decoding, no writes.
func consumeBaselineOnce(b *testing.B, ctx context.Context, brokers []string, topics events.Topics, total int) float64 {
	b.Helper()
	cl, err := kafka.NewClient(brokers, append(kafka.ConsumerOpts(), kgo.ConsumeTopics(topics.Name(events.TopicPosts)))...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	got := 0
	for got < total {
		f := cl.PollFetches(ctx)
		if err := f.Err0(); err != nil {
			b.Fatal(err)
		}
		got += f.NumRecords()
	}
	return time.Since(start).Seconds()
}

type failingDeadLetter struct{ b *testing.B }

func (d failingDeadLetter) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.b.Fatalf("unexpected dead letter at offset %d: %v", rec.Offset, cause)
	return nil
}
