package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/elastic/go-elasticsearch/v8"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/analytics/analyticsbench"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/search/searchbench"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// SearchResult is the search projector against a raw _bulk of the same
// documents (searchbench, which BenchmarkSearchProjector runs too).
type SearchResult struct {
	Docs         int     `json:"docs"`
	DocsPerSec   float64 `json:"docs_per_sec"`
	RawPerSec    float64 `json:"raw_bulk_docs_per_sec"`
	ProjectorSec float64 `json:"projector_seconds"`
	RawSec       float64 `json:"raw_bulk_seconds"`
}

// runSearch: the search projector over opt.SearchRounds rounds of
// registrations and completions, in a state schema of the bench's database
// and indices under the bench's own prefix (deleted at the end).
func runSearch(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) (err error) {
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{opt.ElasticsearchURL}})
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	pool, err := postgres.Connect(ctx, rs.DatabaseURL, search.StateSchema)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, search.StateSchema, search.Migrations(), opt.Log); err != nil {
		return err
	}
	prefix := "errata-" + rs.Prefix
	defer func() {
		infos, lerr := search.Indices(context.WithoutCancel(ctx), es, prefix)
		if lerr != nil {
			err = errors.Join(err, lerr)
			return
		}
		for _, in := range infos {
			err = errors.Join(err, search.DropIndex(context.WithoutCancel(ctx), es, prefix, in.Name))
		}
	}()
	progress("search projection: %d rounds of %d registrations and completions, each beside a raw _bulk of its documents",
		opt.SearchRounds, searchbench.DefaultBatch)
	var prof windows
	r, err := searchbench.Run(ctx, searchbench.Config{ES: es, Pool: pool, Prefix: prefix, Rounds: opt.SearchRounds, Measured: prof.run})
	if err != nil {
		return fmt.Errorf("search projection: %w", err)
	}
	res.addProfile("search projection (its rounds only, not the raw _bulk)", &prof)
	res.Search = &SearchResult{Docs: r.Docs, DocsPerSec: r.ProjectorPerSec(), RawPerSec: r.RawPerSec(),
		ProjectorSec: r.Projector.Seconds(), RawSec: r.Raw.Seconds()}
	res.check("search projector and raw _bulk hold the same documents", r.Docs == opt.SearchRounds*searchbench.DefaultBatch,
		"%d documents each", r.Docs)
	return nil
}

// MetricsResult is the metrics projector against raw clickhouse-go batch
// inserts of the same rows (analyticsbench, which
// BenchmarkMetricsProjector runs too, on its own workload).
type MetricsResult struct {
	Events       int     `json:"events"`
	Rows         int     `json:"rows"`
	Rounds       int     `json:"rounds"`
	RowsPerSec   float64 `json:"rows_per_sec"`
	RawPerSec    float64 `json:"raw_insert_rows_per_sec"`
	ProjectorSec float64 `json:"projector_seconds"`
	RawSec       float64 `json:"raw_insert_seconds"`
}

// metricsBatch is the records per batch of the metrics phase, as in
// BenchmarkMetricsProjector.
const metricsBatch = 5000

// runMetrics: the metrics projector over the serving workload
// (registrations and views) and searchbench's registrations and
// completions (investigations and claims), in batches of metricsBatch
// records, beside raw inserts of its rows, in two ClickHouse databases of
// the bench's own (dropped at the end).
func runMetrics(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) (err error) {
	base := "errata_bench_" + strings.Trim(strings.TrimPrefix(rs.Prefix, "bench"), ".")
	var conns []*metricsDB
	defer func() {
		for _, c := range conns {
			err = errors.Join(err, c.drop(context.WithoutCancel(ctx)))
		}
	}()
	for _, name := range []string{base + "_metrics", base + "_metrics_raw"} {
		conn, err := analytics.Open(ctx, opt.ClickHouseURL, name)
		if err != nil {
			return err
		}
		conns = append(conns, &metricsDB{conn: conn, name: name})
		if err := analytics.Migrate(ctx, conn, opt.Log); err != nil {
			return err
		}
	}
	reg := events.NewCatalogRegistry()
	evs := workload.Generate(workload.Spec{
		Seed: 7, Posts: opt.ProjectionPosts, ViewsPerPost: opt.ViewsPerPost, Viewers: 500, IPRanges: 50, Days: 2,
		IPRangeDailyCap: opt.IPRangeDailyCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	}).Events
	for round := range opt.MetricsRounds {
		posts, completions, _ := searchbench.Workload(reg, round, searchbench.DefaultBatch)
		evs = append(append(evs, posts...), completions...)
	}
	topics := events.Topics{Prefix: rs.Prefix + "metrics."}
	batches, err := analyticsbench.Batches(reg, topics, evs, metricsBatch)
	if err != nil {
		return err
	}
	progress("metrics projection: %d events in %d batches, projected and then inserted raw %d times", len(evs), len(batches), opt.MetricsRounds)
	proj := analytics.NewProjector(conns[0].conn, reg, topics, refuseDeadLetters{}, 0, opt.Log)
	var prof windows
	r, err := analyticsbench.Run(ctx, analyticsbench.Config{Projector: proj, ProjectorConn: conns[0].conn, Raw: conns[1].conn,
		Batches: batches, Rounds: opt.MetricsRounds, Measured: prof.run})
	if err != nil {
		return fmt.Errorf("metrics projection: %w", err)
	}
	res.addProfile("metrics projection (its rounds only, not the raw inserts)", &prof)
	res.Metrics = &MetricsResult{Events: r.Events, Rows: r.Rows, Rounds: r.Rounds, RowsPerSec: r.ProjectorPerSec(),
		RawPerSec: r.RawPerSec(), ProjectorSec: r.Projector.Seconds(), RawSec: r.Raw.Seconds()}
	res.check("metrics projector read every workload event", r.Events == len(evs), "%d of %d", r.Events, len(evs))
	return nil
}

// metricsDB is a ClickHouse database of the bench's own.
type metricsDB struct {
	conn driver.Conn
	name string
}

func (d *metricsDB) drop(ctx context.Context) error {
	err := d.conn.Exec(ctx, "DROP DATABASE IF EXISTS "+d.name+" SYNC")
	return errors.Join(err, d.conn.Close())
}

// refuseDeadLetters fails the batch instead of parking: nothing of the
// bench's workloads may be parked.
type refuseDeadLetters struct{}

func (refuseDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	return fmt.Errorf("bench: %s@%d would be parked: %w", rec.Topic, rec.Offset, cause)
}
