package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/search"
)

// The projectors' pools, live and in a replay, commit without waiting for
// the WAL flush (postgres.ConnectDerived), on the generation's schema.
func TestProjectorPoolsSkipTheFlushWait(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name    string
		connect func() (*pgxpool.Pool, error)
		schema  string
	}{
		{"postgres store", func() (*pgxpool.Pool, error) {
			return replay.NewPostgres(replay.PostgresConfig{DatabaseURL: url, Schema: "connect_test"}).Connect(ctx, 2)
		}, "connect_test_g2"},
		{"search store", func() (*pgxpool.Pool, error) {
			return replay.NewSearch(replay.SearchConfig{DatabaseURL: url}).Connect(ctx, 1)
		}, search.StateSchema},
	} {
		pool, err := tc.connect()
		require.NoError(t, err, tc.name)
		var got string
		require.NoError(t, pool.QueryRow(ctx, `SELECT current_setting('search_path') || ' ' || current_setting('synchronous_commit')`).Scan(&got))
		pool.Close()
		require.Equal(t, tc.schema+" off", got, tc.name)
	}
}
