package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/analytics"
)

// TestMetricsWiring: `errata migrate`'s metrics step creates the configured
// database and its schema (twice is fine), the reader answers from it, and
// the worker's factory builds a runner on it.
func TestMetricsWiring(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	cfg.ClickHouseDatabase = testenv.ClickHouseDatabaseName(t)
	brokers, topics := testenv.Kafka(t, 1)
	cfg.KafkaBrokers, cfg.TopicPrefix = brokers, topics.Prefix
	e := newEnv(cfg, logging.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	require.NoError(t, migrateMetrics(ctx, e))
	require.NoError(t, migrateMetrics(ctx, e))
	reader, closeFn, err := e.metricsReader(ctx)
	require.NoError(t, err)
	defer closeFn()
	inc, err := reader.Incidence(ctx, analytics.Filter{Platform: events.PlatformX})
	require.NoError(t, err)
	require.Equal(t, analytics.Incidence{}, inc)
	_, err = reader.Incidence(ctx, analytics.Filter{Platform: "x"})
	require.ErrorIs(t, err, analytics.ErrInvalidFilter)

	require.Equal(t, cfg.ClickHouseDatabase+"_g2", e.analyticsStore().Database(2))
	r, release, err := analyticsProjection(e).start(ctx, 1)
	require.NoError(t, err)
	stopped, stop := context.WithCancel(ctx)
	stop()
	require.NoError(t, r.Run(stopped)) // closes its client at once
	release()
}

// The reader behind publicMetrics opens without reaching ClickHouse, so
// `errata serve` starts while ClickHouse is down; its queries fail until
// ClickHouse answers (and /readyz says so meanwhile).
func TestMetricsReaderStartsWithoutClickHouse(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	cfg.DatabaseURL = testenv.Postgres(t)
	cfg.ClickHouseURL = "http://" + freeAddr(t) // nothing listens there
	e := newEnv(cfg, logging.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reader, closeFn, err := e.metricsReader(ctx)
	require.NoError(t, err)
	defer closeFn()
	_, err = reader.Incidence(ctx, analytics.Filter{})
	require.Error(t, err)
}
