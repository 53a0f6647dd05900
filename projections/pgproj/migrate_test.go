package pgproj_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
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

func tablesIn(t *testing.T, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	return texts(t, pool, `SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
}

func versions(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	return texts(t, pool, `SELECT version FROM schema_migrations ORDER BY version`)
}

func migrate(t *testing.T, pool *pgxpool.Pool, schema string, migrations fs.FS) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return pgproj.Migrate(ctx, pool, schema, migrations, logging.Discard())
}

// TestMigrateServingIsIdempotentAndSchemaLocal migrates the serving model
// twice into "serving" and once into "serving_b" of the same database: the
// second run is a no-op, each schema has its own tables, and nothing lands
// in public.
func TestMigrateServingIsIdempotentAndSchemaLocal(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	a := connect(t, url, "serving")
	b := connect(t, url, "serving_b")

	names, err := fs.Glob(serving.Migrations(), "*.sql")
	require.NoError(t, err)
	require.Contains(t, names, "0001_posts.sql")
	var wantVersions []string
	for _, n := range names {
		wantVersions = append(wantVersions, strings.TrimSuffix(n, ".sql"))
	}

	require.NoError(t, migrate(t, a, "serving", serving.Migrations()))
	tables := tablesIn(t, a, "serving")
	applied := texts(t, a, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`)
	require.NoError(t, migrate(t, a, "serving", serving.Migrations()))
	require.Equal(t, tables, tablesIn(t, a, "serving"))
	require.Equal(t, applied, texts(t, a, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`),
		"a second run applies nothing")
	require.Equal(t, wantVersions, versions(t, a))
	var wantChecksums []string
	for _, n := range names {
		body, err := fs.ReadFile(serving.Migrations(), n)
		require.NoError(t, err)
		sum := sha256.Sum256(body)
		wantChecksums = append(wantChecksums, strings.TrimSuffix(n, ".sql")+" "+hex.EncodeToString(sum[:]))
	}
	require.Equal(t, wantChecksums, texts(t, a, `SELECT version || ' ' || checksum FROM schema_migrations ORDER BY version`),
		"each migration is recorded with its file's sha256")
	for _, want := range []string{
		"authors", "content_blobs", "html_blobs", "image_occurrence_sets", "image_occurrences",
		"lesswrong_version_meta", "post_versions", "post_view_credits", "posts",
		"projection_checkpoints", "projection_parked", "schema_migrations", "substack_version_meta",
		"wikipedia_version_meta", "x_version_meta",
	} {
		require.Contains(t, tables, want)
	}

	require.NoError(t, migrate(t, b, "serving_b", serving.Migrations()))
	require.Equal(t, tables, tablesIn(t, b, "serving_b"))
	require.Empty(t, tablesIn(t, a, "public"), "nothing is created in public")

	// Writes through one schema's pool are invisible in the other's.
	_, err = a.Exec(context.Background(), `INSERT INTO projection_checkpoints (projector, topic, partition, next_offset) VALUES ('p', 't', 0, 7)`)
	require.NoError(t, err)
	require.Equal(t, []string{"7"}, texts(t, a, `SELECT next_offset::text FROM projection_checkpoints`))
	require.Empty(t, texts(t, b, `SELECT next_offset::text FROM projection_checkpoints`))
	require.Equal(t, []string{"7"}, texts(t, b, `SELECT next_offset::text FROM serving.projection_checkpoints`))
}

// TestMigrateOrderOnceAndRollback uses migrations written for the test: they
// run in name order, each exactly once, and a failing one leaves no trace
// and is retried by the next run.
func TestMigrateOrderOnceAndRollback(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "custom")
	migs := fstest.MapFS{
		// Not plain CREATE TABLE IF NOT EXISTS: a second run would fail.
		"0001_a.sql":  {Data: []byte(`CREATE TABLE a (x int); INSERT INTO a VALUES (1);`)},
		"0010_c.sql":  {Data: []byte(`ALTER TABLE b ADD COLUMN z int; INSERT INTO b VALUES (10, 11);`)},
		"0002_b.sql":  {Data: []byte(`CREATE TABLE b (y int); SELECT 1/0;`)},
		"README.md":   {Data: []byte(`not a migration`)},
		"0003.sql.gz": {Data: []byte(`not a migration either`)},
	}

	err := migrate(t, pool, "custom", migs)
	require.ErrorContains(t, err, "migration 0002_b.sql")
	require.ErrorContains(t, err, "division by zero")
	require.Equal(t, []string{"0001_a"}, versions(t, pool))
	require.Equal(t, []string{"a", "projection_checkpoints", "projection_parked", "schema_migrations"}, tablesIn(t, pool, "custom"),
		"the failed migration is rolled back and later ones do not run")

	migs["0002_b.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE b (y int);`)}
	require.NoError(t, migrate(t, pool, "custom", migs))
	require.Equal(t, []string{"0001_a", "0002_b", "0010_c"}, versions(t, pool))
	require.Equal(t, []string{"1"}, texts(t, pool, `SELECT count(*)::text FROM a`), "0001 ran once")
	require.Equal(t, []string{"10 11"}, texts(t, pool, `SELECT y || ' ' || z FROM b`))

	require.NoError(t, migrate(t, pool, "custom", migs))
	require.Equal(t, []string{"0001_a", "0002_b", "0010_c"}, versions(t, pool))
}

// TestMigrateConcurrently runs several migrators at once: the advisory lock
// serializes them, so each migration runs once and none fails.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "concurrent")
	migs := fstest.MapFS{
		"0001_t.sql": {Data: []byte(`CREATE TABLE t (x int); INSERT INTO t VALUES (1);`)},
		"0002_u.sql": {Data: []byte(`CREATE TABLE u (x int);`)},
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = pgproj.Migrate(context.Background(), pool, "concurrent", migs, logging.Discard())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, []string{"0001_t", "0002_u"}, versions(t, pool))
	require.Equal(t, []string{"1"}, texts(t, pool, `SELECT count(*)::text FROM t`))
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
				require.Equal(t, tc.schema, cfg.ConnConfig.RuntimeParams["search_path"])
				require.Equal(t, "UTC", cfg.ConnConfig.RuntimeParams["timezone"])
				return
			}
			require.EqualError(t, err, fmt.Sprintf("schema %q is not a lowercase SQL identifier", tc.schema))
			// Migrate rejects it before touching the database.
			err = pgproj.Migrate(context.Background(), nil, tc.schema, fstest.MapFS{}, logging.Discard())
			require.EqualError(t, err, fmt.Sprintf("schema %q is not a lowercase SQL identifier", tc.schema))
		})
	}
}
