package serving_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// dumpSchema renders every table of the pool's schema (its search_path) as
// text: one "table: (row)" line per row, tables by name, rows by primary key
// (then by their text, for tables without one). Two projections hold the
// same state exactly when their dumps are equal. schema_migrations is left
// out (its applied_at is the wall clock), and so is every table in skip.
// The pool must render timestamps in one time zone (pgproj.Connect: UTC).
func dumpSchema(t testing.TB, pool *pgxpool.Pool, skip ...string) string {
	t.Helper()
	ctx := context.Background()
	type table struct {
		name string
		pk   []string
	}
	rows, err := pool.Query(ctx, `
		SELECT c.relname::text,
		       COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
		                 FROM pg_index i
		                 CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		                 WHERE i.indrelid = c.oid AND i.indisprimary), '{}')
		FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY c.relname`)
	require.NoError(t, err)
	var tables []table
	for rows.Next() {
		var tb table
		require.NoError(t, rows.Scan(&tb.name, &tb.pk))
		if tb.name == "schema_migrations" || slices.Contains(skip, tb.name) {
			continue
		}
		tables = append(tables, tb)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.NotEmpty(t, tables, "no tables in the pool's schema")

	var b strings.Builder
	for _, tb := range tables {
		order := make([]string, 0, len(tb.pk)+1)
		for _, c := range tb.pk {
			order = append(order, "t."+pgx.Identifier{c}.Sanitize())
		}
		order = append(order, `t::text COLLATE "C"`)
		rows, err := pool.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{tb.name}.Sanitize()+` t ORDER BY `+strings.Join(order, ", "))
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			b.WriteString(tb.name + ": " + line + "\n")
			n++
		}
		require.NoError(t, rows.Err())
		rows.Close()
		if n == 0 {
			b.WriteString(tb.name + ": (empty)\n")
		}
	}
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
		require.Contains(t, d, tb+": (empty)\n")
	}
	require.NotContains(t, d, "schema_migrations")
	require.NotContains(t, dumpSchema(t, p.pool, "projection_checkpoints"), "projection_checkpoints")
}
