package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

func connect(t *testing.T, url, schema string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Connect(ctx, url, schema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// texts runs a query returning one text column per row ("NULL" for NULL).
func texts(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s *string
		require.NoError(t, rows.Scan(&s))
		if s == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, *s)
		}
	}
	require.NoError(t, rows.Err())
	return out
}

func TestSchemaNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		schema string
		ok     bool
	}{
		{"serving", true},
		{"_private", true},
		{"s2_v10", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Serving", false},
		{"2serving", false},
		{"serving-b", false},
		{"serving; DROP SCHEMA public", false},
		{`"serving"`, false},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			t.Parallel()
			cfg, err := postgres.PoolConfig("postgres://u:p@127.0.0.1:1/db?sslmode=disable", tc.schema)
			if tc.ok {
				require.NoError(t, err)
				require.NoError(t, postgres.ValidSchema(tc.schema))
				require.Equal(t, tc.schema, cfg.ConnConfig.RuntimeParams["search_path"])
				require.Equal(t, "UTC", cfg.ConnConfig.RuntimeParams["timezone"])
				return
			}
			want := fmt.Sprintf("schema %q is not a lowercase SQL identifier", tc.schema)
			require.EqualError(t, err, want)
			require.EqualError(t, postgres.ValidSchema(tc.schema), want)
			// Migrate rejects it before touching the database.
			err = postgres.Migrate(context.Background(), nil, postgres.Schema{Name: tc.schema, Migrations: fstest.MapFS{}}, logging.Discard())
			require.EqualError(t, err, want)
		})
	}
}

func TestPoolConfigRejectsBadURL(t *testing.T) {
	t.Parallel()
	_, err := postgres.PoolConfig("postgres://%zz", "serving")
	require.ErrorContains(t, err, "database url")
}

// TestMigrateRejectsBadFileNamesFirst: a badly named file fails before the
// database is touched (the pool is nil).
func TestMigrateRejectsBadFileNamesFirst(t *testing.T) {
	t.Parallel()
	err := postgres.Migrate(context.Background(), nil, postgres.Schema{Name: "s", Migrations: fstest.MapFS{"001_a.sql": {}}}, nil)
	require.EqualError(t, err, "migration 001_a.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)")
}

// TestConnectSessionSettings checks that pooled connections use the schema
// and UTC, and that only a derived store's commits skip the WAL flush wait.
func TestConnectSessionSettings(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	const settings = `SELECT current_setting('search_path') || ' ' || current_setting('TimeZone') || ' ' || current_setting('synchronous_commit')`
	pool := connect(t, url, "some_schema")
	require.Equal(t, []string{"some_schema UTC on"}, texts(t, pool, settings))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	derived, err := postgres.ConnectDerived(ctx, url, "a_projection")
	require.NoError(t, err)
	t.Cleanup(derived.Close)
	require.Equal(t, []string{"a_projection UTC off"}, texts(t, derived, settings))
	_, err = postgres.ConnectDerived(ctx, url, "Bad-Schema")
	require.ErrorContains(t, err, "is not a lowercase SQL identifier")
}

func TestConnectFailsOnAnUnreachableServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := postgres.Connect(ctx, "postgres://u:p@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "serving")
	require.ErrorContains(t, err, "postgres ping: ")
}
