package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func tablesIn(t *testing.T, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	return texts(t, pool, `SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
}

// records lists schema_migrations as "version checksum" lines.
func records(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	return texts(t, pool, `SELECT version || ' ' || coalesce(checksum, 'NULL') FROM schema_migrations ORDER BY version`)
}

func run(t *testing.T, pool *pgxpool.Pool, s postgres.Schema, log *slog.Logger) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return postgres.Migrate(ctx, pool, s, log)
}

// messages returns a logger and the "msg key=value" lines it writes.
func messages() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
			return slog.Attr{}
		}
		return a
	}})), b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMigrateOrderOnceRollbackAndChecksums uses migrations written for the
// test: they run in version order, each exactly once, each recorded with
// its sha256, and a failing one leaves no trace and is retried next run.
func TestMigrateOrderOnceRollbackAndChecksums(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "custom")
	a := `CREATE TABLE a (x int); INSERT INTO a VALUES (1);` // a second run would fail
	c := `ALTER TABLE b ADD COLUMN z int; INSERT INTO b VALUES (10, 11);`
	migs := fstest.MapFS{
		"0001_a.sql":  {Data: []byte(a)},
		"0010_c.sql":  {Data: []byte(c)},
		"0002_b.sql":  {Data: []byte(`CREATE TABLE b (y int); SELECT 1/0;`)},
		"README.md":   {Data: []byte(`not a migration`)},
		"0003.sql.gz": {Data: []byte(`not a migration either`)},
	}
	s := postgres.Schema{Name: "custom", Migrations: migs}

	err := run(t, pool, s, nil)
	require.ErrorContains(t, err, "migration 0002_b.sql: ")
	require.ErrorContains(t, err, "division by zero")
	require.Equal(t, []string{"0001_a " + sum(a)}, records(t, pool))
	require.Equal(t, []string{"a", "schema_migrations"}, tablesIn(t, pool, "custom"),
		"the failed migration is rolled back, later ones do not run, and no Setup means no other table")

	b := `CREATE TABLE b (y int);`
	migs["0002_b.sql"] = &fstest.MapFile{Data: []byte(b)}
	log, out := messages()
	require.NoError(t, run(t, pool, s, log))
	require.Equal(t, []string{"0001_a " + sum(a), "0002_b " + sum(b), "0010_c " + sum(c)}, records(t, pool))
	require.Equal(t, []string{"1"}, texts(t, pool, `SELECT count(*)::text FROM a`), "0001 ran once")
	require.Equal(t, []string{"10 11"}, texts(t, pool, `SELECT y || ' ' || z FROM b`))
	require.Equal(t, "msg=\"migration applied\" schema=custom migration=0002_b.sql\n"+
		"msg=\"migration applied\" schema=custom migration=0010_c.sql\n", out.String())

	applied := texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`)
	require.NoError(t, run(t, pool, s, nil))
	require.Equal(t, applied, texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`),
		"a third run applies nothing")
}

// TestMigrateRefusesAnEditedMigration: once applied, a file may not change;
// the run fails before applying anything, even a new file.
func TestMigrateRefusesAnEditedMigration(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "edited")
	a := `CREATE TABLE a (x int);`
	migs := fstest.MapFS{"0001_a.sql": {Data: []byte(a)}}
	s := postgres.Schema{Name: "edited", Migrations: migs}
	require.NoError(t, run(t, pool, s, nil))

	edited := `CREATE TABLE a (x bigint);`
	migs["0001_a.sql"] = &fstest.MapFile{Data: []byte(edited)}
	migs["0002_b.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE b (y int);`)}
	err := run(t, pool, s, nil)
	require.ErrorIs(t, err, migrate.ErrEdited)
	require.EqualError(t, err, "an applied migration was edited: 0001_a.sql was applied (as 0001_a) with sha256 "+sum(a)+
		", but the file now has "+sum(edited)+"; restore it and add a new migration instead")
	require.Equal(t, []string{"0001_a " + sum(a)}, records(t, pool))
	require.Equal(t, []string{"a", "schema_migrations"}, tablesIn(t, pool, "edited"), "0002 did not run")
}

// TestMigrateConcurrently runs two migrators at once, each on its own pool:
// the advisory lock serializes them, so exactly one applies each migration
// and neither fails.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	pools := []*pgxpool.Pool{connect(t, url, "concurrent"), connect(t, url, "concurrent")}
	t1 := `CREATE TABLE t (x int); INSERT INTO t VALUES (1); SELECT pg_sleep(0.2);`
	u := `CREATE TABLE u (x int);`
	s := postgres.Schema{Name: "concurrent", Setup: `CREATE TABLE IF NOT EXISTS shared (x int);`,
		Migrations: fstest.MapFS{"0001_t.sql": {Data: []byte(t1)}, "0002_u.sql": {Data: []byte(u)}}}
	log, out := messages()
	var wg sync.WaitGroup
	errs := make([]error, len(pools))
	for i, p := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = postgres.Migrate(context.Background(), p, s, log)
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, []string{"0001_t " + sum(t1), "0002_u " + sum(u)}, records(t, pools[0]))
	require.Equal(t, []string{"1"}, texts(t, pools[0], `SELECT count(*)::text FROM t`))
	require.Equal(t, "msg=\"migration applied\" schema=concurrent migration=0001_t.sql\n"+
		"msg=\"migration applied\" schema=concurrent migration=0002_u.sql\n", out.String(), "one migrator applied both, the other none")
	require.Equal(t, []string{"schema_migrations", "shared", "t", "u"}, tablesIn(t, pools[0], "concurrent"))
}

// TestMigrateUpgradesOldBookkeeping: a schema migrated by the runner before
// checksums (schema_migrations without a checksum column, a migration
// recorded as 001_a when files had three digits) is recognised: nothing
// runs again, each record keeps its name and gets its file's checksum, and
// from then on an edit is refused.
func TestMigrateUpgradesOldBookkeeping(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "old")
	a := `CREATE TABLE a (x int); INSERT INTO a VALUES (1);`
	b := `CREATE TABLE b (y int);`
	ctx := context.Background()
	// What the runner before this one left behind.
	_, err := pool.Exec(ctx, `CREATE SCHEMA old;
		CREATE TABLE old.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
		CREATE TABLE old.a (x int); INSERT INTO old.a VALUES (1); INSERT INTO old.schema_migrations (version) VALUES ('001_a');
		CREATE TABLE old.b (y int); INSERT INTO old.schema_migrations (version) VALUES ('0002_b');`)
	require.NoError(t, err)
	applied := texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations ORDER BY version`)

	c := `CREATE TABLE c (z int);`
	migs := fstest.MapFS{"0001_a.sql": {Data: []byte(a)}, "0002_b.sql": {Data: []byte(b)}, "0003_c.sql": {Data: []byte(c)}}
	s := postgres.Schema{Name: "old", Migrations: migs}
	log, out := messages()
	require.NoError(t, run(t, pool, s, log))
	require.Equal(t, []string{"0002_b " + sum(b), "0003_c " + sum(c), "001_a " + sum(a)}, records(t, pool))
	require.Equal(t, []string{"1"}, texts(t, pool, `SELECT count(*)::text FROM a`), "0001 did not run again")
	require.Equal(t, applied, texts(t, pool, `SELECT version || ' ' || applied_at::text FROM schema_migrations WHERE version <> '0003_c' ORDER BY version`))
	require.Equal(t, "msg=\"migration checksum recorded\" schema=old migration=0001_a.sql applied_as=001_a\n"+
		"msg=\"migration checksum recorded\" schema=old migration=0002_b.sql applied_as=0002_b\n"+
		"msg=\"migration applied\" schema=old migration=0003_c.sql\n", out.String())

	migs["0001_a.sql"] = &fstest.MapFile{Data: []byte(strings.Replace(a, "int", "bigint", 1))}
	require.ErrorIs(t, run(t, pool, s, nil), migrate.ErrEdited)
}
