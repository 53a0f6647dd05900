package serving_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/projections/pgproj"
)

// dumpSchema renders every table of the pool's schema (its search_path)
// canonically with pgproj.Dump, the same dump `errata verify` compares: one
// "table: (row)" line per row, tables by name, rows by primary key then by
// their text. Two projections hold the same state exactly when their dumps
// are equal. Tables in skip are left out.
func dumpSchema(t testing.TB, pool *pgxpool.Pool, skip ...string) string {
	t.Helper()
	ctx := context.Background()
	var schema string
	require.NoError(t, pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema))
	var b strings.Builder
	_, err := pgproj.Dump(ctx, pool, schema, &b, pgproj.DumpOptions{Skip: skip})
	require.NoError(t, err)
	return b.String()
}

// TestDumpSchemaCoversEveryServingTable keeps the dump honest: every table
// of the serving migrations appears in it.
func TestDumpSchemaCoversEveryServingTable(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	d := dumpSchema(t, p.pool)
	tables := p.texts(t, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name <> 'schema_migrations' ORDER BY 1`)
	require.NotEmpty(t, tables)
	for _, tb := range tables {
		if tb == "analysis_configurations" {
			// seeded by its migration: the default configuration
			require.Contains(t, d, tb+`: ("",default,,system,"the worker's own settings","1970-01-01 00:00:00+00",0)`+"\n")
			continue
		}
		if tb == "configuration_visibility" {
			// seeded by its migration: the default configuration, rank 0
			require.Contains(t, d, tb+`: ("",,0)`+"\n")
			continue
		}
		require.Contains(t, d, tb+": (empty)\n")
	}
	require.NotContains(t, d, "schema_migrations")
	require.NotContains(t, dumpSchema(t, p.pool, "projection_checkpoints"), "projection_checkpoints")
}
