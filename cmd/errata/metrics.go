package main

import (
	"context"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/metrics"
	"github.com/errata-dev/errata/projections/targets"
)

// The analysts' metrics projection in ClickHouse: its projector, its
// migration and the reader behind publicMetrics.
func init() {
	projectorFactories[metrics.ProjectorName] = newMetricsRunner
	migrators[metrics.ProjectorName] = func(ctx context.Context, e *env) error {
		conn, err := e.metricsConn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return metrics.Migrate(ctx, conn, e.log)
	}
}

// metricsDatabase is the ClickHouse database of the projection's current
// generation: ERRATA_CLICKHOUSE_DATABASE, or <it>_g<N> for a rebuild.
func (e *env) metricsDatabase(ctx context.Context) string {
	return targets.Name(e.cfg.ClickHouseDatabase, generationOf(ctx))
}

// metricsConn opens (creating if missing) the projection's database.
func (e *env) metricsConn(ctx context.Context) (driver.Conn, error) {
	return metrics.Open(ctx, e.cfg.ClickHouseURL, e.metricsDatabase(ctx))
}

// metricsReader opens the metrics reader (publicMetrics resolves through its
// Incidence method). The caller calls the release function.
func (e *env) metricsReader(ctx context.Context) (*metrics.Reader, func(), error) {
	conn, err := e.metricsConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	return metrics.NewReader(conn), func() { _ = conn.Close() }, nil
}

// newMetricsRunner migrates the projection's database and wires its
// projector to a consumer-group runner whose positions are the projector's
// _positions table. Fetches wait up to ERRATA_METRICS_LINGER for
// ERRATA_METRICS_FETCH_MIN_BYTES, so inserts carry many rows each.
func newMetricsRunner(ctx context.Context, e *env) (*kafka.Runner, func(), error) {
	conn, err := e.metricsConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := metrics.Migrate(ctx, conn, e.log); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	group := e.cfg.TopicPrefix + "projector." + metrics.ProjectorName
	dl := kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log)
	proj := metrics.NewProjector(conn, e.registry, dl, e.cfg.MetricsInsertRows, e.log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         []string{e.topics.Name(events.TopicPosts), e.topics.Name(events.TopicInvestigations)},
		Positions:      proj,
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
		Observer:       e.batchObserver(),
		ExtraOpts: []kgo.Opt{
			kgo.FetchMaxWait(max(e.cfg.MetricsLinger, 10*time.Millisecond)), // the broker needs a positive wait
			kgo.FetchMinBytes(int32(min(e.cfg.MetricsFetchMinBytes, 1<<30))),
		},
	}, proj, e.log)
	if err != nil {
		producer.Close()
		_ = conn.Close()
		return nil, nil, err
	}
	return r, func() { producer.Close(); _ = conn.Close() }, nil
}
