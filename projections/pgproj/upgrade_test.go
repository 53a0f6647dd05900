package pgproj_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	runner "github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
)

// migrateBeforeChecksums is the Postgres migrator as it was before
// internal/migrate: the framework tables and a schema_migrations without
// checksums, one row per file named by its name without ".sql", under the
// same advisory lock. It rebuilds the state existing databases are in.
func migrateBeforeChecksums(ctx context.Context, pool *pgxpool.Pool, schema string, migrations fs.FS, framework bool) error {
	names, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	lockKey := "errata-migrate:" + schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, lockKey); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey)
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident); err != nil {
		return err
	}
	inSchema := func(fn func(pgx.Tx) error) error {
		return pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+ident); err != nil {
				return err
			}
			return fn(tx)
		})
	}
	// Every schema got the framework tables then, the key store's too.
	bookkeeping := `CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());`
	if framework {
		bookkeeping += pgproj.FrameworkTables
	}
	if err := inSchema(func(tx pgx.Tx) error { _, err := tx.Exec(ctx, bookkeeping); return err }); err != nil {
		return err
	}
	for _, name := range names {
		body, err := fs.ReadFile(migrations, name)
		if err != nil {
			return err
		}
		if err := inSchema(func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, strings.TrimSuffix(name, ".sql"))
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// renamed gives the files of dir the names they had before: oldName maps
// today's name to that one.
func renamed(t *testing.T, dir fs.FS, oldName func(string) string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	names, err := fs.Glob(dir, "*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, n := range names {
		body, err := fs.ReadFile(dir, n)
		require.NoError(t, err)
		out[oldName(n)] = &fstest.MapFile{Data: body}
	}
	return out
}

// columns describes every column of the schema: table, name, type,
// nullability and default.
func columns(t *testing.T, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	return texts(t, pool, `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name`, schema)
}

// TestMigrateUpgradesOldBookkeeping migrates every Postgres schema of the
// repository with the migrator before checksums, under the file names of
// that time (the audit schema's were 001_audit.sql and 002_analyses.sql),
// then runs today's migrations over it: nothing is applied again, no table
// or column changes, each record keeps its name and gets its file's
// sha256, a second run changes nothing, and an edited file is refused.
func TestMigrateUpgradesOldBookkeeping(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	unchanged := func(n string) string { return n }
	threeDigits := func(n string) string { return strings.TrimPrefix(n, "0") }
	projection := func(schema string, files fs.FS) func(ctx context.Context, pool *pgxpool.Pool) error {
		return func(ctx context.Context, pool *pgxpool.Pool) error {
			return pgproj.Migrate(ctx, pool, schema, files, logging.Discard())
		}
	}
	for _, tc := range []struct {
		schema    string
		dir       string
		oldName   func(string) string
		framework bool
		migrate   func(files fs.FS) func(ctx context.Context, pool *pgxpool.Pool) error
	}{
		{"serving", "../serving/migrations", unchanged, true, func(f fs.FS) func(context.Context, *pgxpool.Pool) error { return projection("serving", f) }},
		{"audit", "../audit/migrations", threeDigits, true, func(f fs.FS) func(context.Context, *pgxpool.Pool) error { return projection("audit", f) }},
		{"search_state", "../search/migrations", unchanged, true, func(f fs.FS) func(context.Context, *pgxpool.Pool) error { return projection("search_state", f) }},
		{"investigator", "../../consumers/runstate/migrations", unchanged, true, func(f fs.FS) func(context.Context, *pgxpool.Pool) error { return projection("investigator", f) }},
		{"analyst", "../../consumers/analyst/migrations", unchanged, true, func(f fs.FS) func(context.Context, *pgxpool.Pool) error { return projection("analyst", f) }},
		{keystore.Schema, "../../internal/keystore/migrations", unchanged, true, func(fs.FS) func(context.Context, *pgxpool.Pool) error {
			return func(ctx context.Context, pool *pgxpool.Pool) error {
				return keystore.Migrate(ctx, pool, logging.Discard())
			}
		}},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pool := connect(t, url, tc.schema)
			dir := os.DirFS(tc.dir)
			old := renamed(t, dir, tc.oldName)
			require.NoError(t, migrateBeforeChecksums(ctx, pool, tc.schema, old, tc.framework))
			cols := columns(t, pool, tc.schema)
			applied := texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`)
			var oldVersions []string
			for n := range old {
				oldVersions = append(oldVersions, strings.TrimSuffix(n, ".sql"))
			}
			sort.Strings(oldVersions)
			require.Equal(t, oldVersions, versions(t, pool))

			require.NoError(t, tc.migrate(dir)(ctx, pool))
			wantCols := append(cols, "schema_migrations.checksum text YES ")
			sort.Strings(wantCols)
			gotCols := columns(t, pool, tc.schema)
			sort.Strings(gotCols)
			require.Equal(t, wantCols, gotCols, "only the checksum column is new")
			require.Equal(t, applied, texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`),
				"nothing was applied again and every record keeps its name")
			var want []string
			for _, n := range oldVersions {
				h := sha256.Sum256(old[n+".sql"].Data)
				want = append(want, n+" "+hex.EncodeToString(h[:]))
			}
			require.Equal(t, want, texts(t, pool, `SELECT version || ' ' || checksum FROM schema_migrations ORDER BY version`))

			require.NoError(t, tc.migrate(dir)(ctx, pool))
			require.Equal(t, want, texts(t, pool, `SELECT version || ' ' || checksum FROM schema_migrations ORDER BY version`))

			edited := renamed(t, dir, unchanged)
			names, err := fs.Glob(edited, "*.sql")
			require.NoError(t, err)
			edited[names[0]].Data = append(edited[names[0]].Data, []byte("\n-- an edit\n")...)
			require.ErrorIs(t, projection(tc.schema, edited)(ctx, pool), runner.ErrEdited)
		})
	}
}
