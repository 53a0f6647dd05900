package replay_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/cmd/errata/bench"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/memstat"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// replayScale multiplies BenchmarkServingReplay's log (posts and their
// views): replay's memory must not grow with it.
var replayScale = flag.Int("replay.scale", 1, "BenchmarkServingReplay: log size as a multiple of the default 4,000 posts")

// replayPartitions lists the Config.Partitions BenchmarkServingReplay
// compares (0: replay.PostgresPartitions, what `errata replay` uses).
var replayPartitions = flag.String("replay.partitions", "1,0", "BenchmarkServingReplay: comma-separated partitions applied at once")

// BenchmarkServingReplay rebuilds the serving projection from offset 0 with
// replay.CatchUp (`errata replay`'s path: no consumer group) over a log
// shaped like the API load's (each post registered with a 300-word text,
// then viewed), one partition at a time and replay.PostgresPartitions at
// once (what `errata replay` does), and measures in the same run the raw
// Kafka consume of the same records and pgx CopyFrom of as many rows. It
// also reports the peak live heap above the start (the workload itself
// stays live) while replaying. Ratios, not absolute figures, are what
// compare across runs of a shared machine.
//
//	ERRATA_INTEGRATION=1 go test -run '^$' -bench ServingReplay -benchtime 3x ./projections/replay/ [-args -replay.scale 10]
func BenchmarkServingReplay(b *testing.B) {
	brokers, topics := testenv.Kafka(b, 3)
	dbURL := testenv.Postgres(b)
	ctx := context.Background()
	const ipCap = 10
	w := workload.Generate(workload.Spec{
		Seed: 11, Posts: 4000 * max(1, *replayScale), ViewsPerPost: 1, Viewers: 500, IPRanges: 50, Days: 2,
		IPRangeDailyCap: ipCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	words := strings.Repeat("water boils at ninety degrees at sea level ", 38)
	for _, ev := range w.Events {
		if p, ok := ev.Payload.(*events.PostVersionRegisteredV1); ok && !strings.HasSuffix(p.ContentText, words) {
			p.ContentText += " " + words
			p.X.Text = p.ContentText
		}
	}
	total := len(w.Events)
	if err := bench.AppendWorkload(ctx, brokers, topics, w.Events); err != nil {
		b.Fatal(err)
	}
	w.Events = nil // the log holds them: only the expected state stays, so the heap measures replay
	postsTopic := topics.Name(events.TopicPosts)
	until, err := bench.EndOffsets(ctx, brokers, []string{postsTopic})
	if err != nil {
		b.Fatal(err)
	}
	reg := events.NewCatalogRegistry()
	run := 0
	for _, field := range strings.Split(*replayPartitions, ",") {
		partitions, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			b.Fatalf("-replay.partitions: %v", err)
		}
		if partitions == 0 {
			partitions = replay.PostgresPartitions
		}
		b.Run(fmt.Sprintf("partitions=%d", partitions), func(b *testing.B) {
			var replaySecs, copySecs, consumeSecs float64
			var peakHeap uint64
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				run++
				schema := fmt.Sprintf("replay_bench_%d", run)
				pool, err := postgres.ConnectDerived(ctx, dbURL, schema)
				if err != nil {
					b.Fatal(err)
				}
				if err := pgproj.Migrate(ctx, pool, schema, serving.Migrations(), logging.Discard()); err != nil {
					b.Fatal(err)
				}
				proj := pgproj.NewProjector(serving.ProjectorName, pool, reg, serving.NewApplier(ipCap), failDeadLetters{b}, logging.Discard())
				var mu sync.Mutex
				var batches, records int
				var handling time.Duration
				h := kafka.HandlerFunc(func(ctx context.Context, bt kafka.Batch) error {
					s := time.Now()
					err := proj.Handle(ctx, bt)
					mu.Lock()
					handling += time.Since(s)
					batches++
					records += len(bt.Records)
					mu.Unlock()
					return err
				})
				runtime.GC()
				startHeap := memstat.LiveHeap()
				stop := make(chan struct{})
				peak := memstat.SamplePeak(10*time.Millisecond, stop)
				b.StartTimer()
				start := time.Now()
				n, err := replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: replay.Offsets(until), Handler: h, Positions: proj,
					Partitions: partitions}, logging.Discard())
				took := time.Since(start)
				b.StopTimer()
				close(stop)
				peakHeap = max(peakHeap, peak()-min(peak(), startHeap))
				b.Logf("%d batches, %d records, handling %s (summed over partitions) of %s", batches, records, handling, took)
				replaySecs += took.Seconds()
				if err != nil || int(n) != total {
					b.Fatalf("replayed %d of %d: %v", n, total, err)
				}
				if err := workload.Verify(ctx, pool, w.Expect); err != nil {
					b.Fatal(err)
				}
				pool.Close()
				copyTook, err := bench.CopyFromBaseline(ctx, dbURL, schema, total)
				if err != nil {
					b.Fatal(err)
				}
				copySecs += copyTook.Seconds()
				consumeTook, got, err := bench.ConsumeBaseline(ctx, brokers, until)
				if err != nil || got != total {
					b.Fatalf("consumed %d of %d: %v", got, total, err)
				}
				consumeSecs += consumeTook.Seconds()
			}
			n := float64(b.N * total)
			b.ReportMetric(n/replaySecs, "replay_events/s")
			b.ReportMetric(n/copySecs, "copyfrom_rows/s")
			b.ReportMetric(n/consumeSecs, "kafka_consume_records/s")
			b.ReportMetric(copySecs/replaySecs, "replay/copyfrom")
			b.ReportMetric(consumeSecs/replaySecs, "replay/consume")
			b.ReportMetric(float64(peakHeap)/(1<<20), "replay_peak_heap_MB")
		})
	}
}

// failDeadLetters fails the benchmark on a dead letter: every event of the
// workload is valid.
type failDeadLetters struct{ b *testing.B }

func (d failDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.b.Errorf("dead letter at %d: %v", rec.Offset, cause)
	return nil
}
