package serving_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/errata-dev/errata/cmd/errata/bench"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// BenchmarkServingProjector measures the serving projector end to end (real
// Kafka -> runner -> exactly-once Postgres transaction) and, in the same run
// on the same machine, two raw baselines: pgx CopyFrom of the same number of
// rows of the view-credit row shape, and a bare Kafka consume of the same
// records. Figures are reported per second and as ratios, since absolute
// numbers on shared machines are noisy. The measuring code is
// cmd/errata/bench's, which `errata bench` also runs.
//
//	make bench   (or: ERRATA_INTEGRATION=1 go test -run '^$' -bench ServingProjector -benchtime 3x ./projections/serving/)
func BenchmarkServingProjector(b *testing.B) {
	brokers, topics := testenv.Kafka(b, 3)
	dbURL := testenv.Postgres(b)
	ctx := context.Background()
	const ipCap = 10
	w := workload.Generate(workload.Spec{
		Seed: 7, Posts: 200, ViewsPerPost: 99, Viewers: 500, IPRanges: 50, Days: 2,
		IPRangeDailyCap: ipCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	total := len(w.Events)
	if err := bench.AppendWorkload(ctx, brokers, topics, w.Events); err != nil {
		b.Fatal(err)
	}
	postsTopic := topics.Name(events.TopicPosts)
	until, err := bench.EndOffsets(ctx, brokers, []string{postsTopic})
	if err != nil {
		b.Fatal(err)
	}

	var projectorSecs, copySecs, consumeSecs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		schema := fmt.Sprintf("bench_%d", i)
		st, err := bench.ProjectorRun{Brokers: brokers, DatabaseURL: dbURL, Schema: schema, Group: topics.Prefix + "bench." + schema,
			Topics: []string{postsTopic}, Until: until, IPRangeDailyCap: ipCap, Log: logging.Discard()}.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if st.Applied != total || st.DeadLetters != 0 {
			b.Fatalf("applied %d of %d events, %d dead letters", st.Applied, total, st.DeadLetters)
		}
		verifyProjection(b, ctx, dbURL, schema, w.Expect)
		projectorSecs += st.Seconds
		took, err := bench.CopyFromBaseline(ctx, dbURL, schema, total)
		if err != nil {
			b.Fatal(err)
		}
		copySecs += took.Seconds()
		took, got, err := bench.ConsumeBaseline(ctx, brokers, until)
		if err != nil {
			b.Fatal(err)
		}
		if got != total {
			b.Fatalf("consumed %d of %d records", got, total)
		}
		consumeSecs += took.Seconds()
	}
	b.StopTimer()
	n := float64(b.N * total)
	b.ReportMetric(n/projectorSecs, "projector_events/s")
	b.ReportMetric(n/copySecs, "copyfrom_rows/s")
	b.ReportMetric(n/consumeSecs, "kafka_consume_records/s")
	b.ReportMetric((n/projectorSecs)/(n/copySecs), "projector/copyfrom")
	b.ReportMetric((n/projectorSecs)/(n/consumeSecs), "projector/consume")
}

func verifyProjection(b *testing.B, ctx context.Context, dbURL, schema string, exp workload.Expectation) {
	b.Helper()
	pool, err := postgres.Connect(ctx, dbURL, schema)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := workload.Verify(ctx, pool, exp); err != nil {
		b.Fatal(err)
	}
}
