package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestSearchPhase runs the search projection phase with one round and
// checks its counts, its row and that its indices are gone; speed is never
// asserted.
func TestSearchPhase(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.Postgres(t)                                         // skips (or fails under ERRATA_INTEGRATION=1) without Postgres
	if res, err := http.Get(cfg.ElasticsearchURL); err != nil { //nolint:noctx // a health probe of the configured local service
		if testenv.Integration() {
			t.Fatalf("elasticsearch unavailable (run deploy/local/up): %v", err)
		}
		t.Skipf("elasticsearch unavailable, skipping integration test: %v", err)
	} else {
		res.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := NewResources(ctx, cfg.KafkaBrokers, cfg.DatabaseURL)
	require.NoError(t, err)
	defer func() { require.NoError(t, rs.Close(context.Background())) }()
	opt := Options{ElasticsearchURL: cfg.ElasticsearchURL, SearchRounds: 1}
	opt.Defaults()
	var res Result
	require.NoError(t, runSearch(ctx, opt, rs, &res, func(string, ...any) {}))
	require.NotNil(t, res.Search)
	require.Equal(t, 500, res.Search.Docs)
	for _, c := range res.Checks {
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	rows := rows(&res, opt)
	require.Contains(t, rows[len(rows)-1].Measure, "search projection")
	require.NotNil(t, rows[len(rows)-1].Ratio)
	require.NoError(t, res.WriteMarkdown(io.Discard))
}

// TestMetricsPhase runs the metrics projection phase with tiny sizes and
// checks its counts, its row and that its databases are gone; speed is
// never asserted.
func TestMetricsPhase(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.Postgres(t)
	testenv.ClickHouse(t) // skips (or fails under ERRATA_INTEGRATION=1) without ClickHouse
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := NewResources(ctx, cfg.KafkaBrokers, cfg.DatabaseURL)
	require.NoError(t, err)
	defer func() { require.NoError(t, rs.Close(context.Background())) }()
	opt := Options{ClickHouseURL: cfg.ClickHouseURL, MetricsRounds: 1, ProjectionPosts: 10, ViewsPerPost: 9}
	opt.Defaults()
	var res Result
	require.NoError(t, runMetrics(ctx, opt, rs, &res, func(string, ...any) {}))
	require.NotNil(t, res.Metrics)
	// The serving workload (10 posts, every tenth registered twice, 9
	// views each) and one searchbench round (500 registrations and
	// completions).
	require.Equal(t, 10+1+90+2*500, res.Metrics.Events)
	// A row per registration and view, per completion and per claim (two each).
	require.Equal(t, 10+1+90+500+500+2*500, res.Metrics.Rows)
	for _, c := range res.Checks {
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	rows := rows(&res, opt)
	require.Contains(t, rows[len(rows)-1].Measure, "metrics projection")
	require.NotNil(t, rows[len(rows)-1].Ratio)

	conn, _ := testenv.ClickHouse(t)
	var left uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM system.databases WHERE name LIKE $1",
		"errata_bench_"+strings.Trim(strings.TrimPrefix(rs.Prefix, "bench"), ".")+"%").Scan(&left))
	require.Zero(t, left, "metrics databases left behind")
}
