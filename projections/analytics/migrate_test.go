package analytics_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/projections/analytics"
)

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// migrationRows lists _migrations as it is stored (no FINAL: a version
// recorded twice shows twice until a merge), "version name checksum".
func migrationRows(t *testing.T, conn driver.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT version, name, checksum, toString(applied_at) FROM _migrations ORDER BY version, applied_at")
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v uint32
		var name, sum, at string
		require.NoError(t, rows.Scan(&v, &name, &sum, &at))
		out = append(out, fmt.Sprintf("%d %s %s %s", v, name, sum, at))
	}
	require.NoError(t, rows.Err())
	return out
}

func count(t *testing.T, conn driver.Conn, query string) uint64 {
	t.Helper()
	var n uint64
	require.NoError(t, conn.QueryRow(context.Background(), query).Scan(&n))
	return n
}

// TestMigrateRefusesAnEditedMigration: a recorded migration whose file
// changed stops the run before anything else is applied.
func TestMigrateRefusesAnEditedMigration(t *testing.T) {
	conn, _, _ := clickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := "CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = MergeTree ORDER BY x;\n"
	files := fstest.MapFS{"0001_a.sql": {Data: []byte(a)}}
	require.NoError(t, analytics.MigrateFiles(ctx, conn, files, logging.Discard()))

	edited := "CREATE TABLE IF NOT EXISTS a (x UInt16) ENGINE = MergeTree ORDER BY x;\n"
	files["0001_a.sql"] = &fstest.MapFile{Data: []byte(edited)}
	files["0002_b.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE IF NOT EXISTS b (y UInt8) ENGINE = MergeTree ORDER BY y;\n")}
	err := analytics.MigrateFiles(ctx, conn, files, logging.Discard())
	require.ErrorIs(t, err, migrate.ErrEdited)
	require.EqualError(t, err, "metrics migrations: an applied migration was edited: 0001_a.sql was applied (as 0001_a.sql) with sha256 "+
		sha([]byte(a))+", but the file now has "+sha([]byte(edited))+"; restore it and add a new migration instead")
	require.EqualValues(t, 0, count(t, conn, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'b'"),
		"0002 did not run")
	rows := migrationRows(t, conn)
	require.Len(t, rows, 1)
	require.True(t, strings.HasPrefix(rows[0], "1 0001_a.sql "+sha([]byte(a))+" "), rows[0])
}

// TestMigrateUpgradesOldBookkeeping rebuilds what the runner before
// internal/migrate left in a database (files named 001_tables.sql ...,
// each recorded with its sha256) and runs today's migrations over it:
// nothing is applied or recorded again, and an edit is still refused.
func TestMigrateUpgradesOldBookkeeping(t *testing.T) {
	conn, _, _ := clickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := os.DirFS("migrations")
	names, err := fs.Glob(dir, "*.sql")
	require.NoError(t, err)
	require.Len(t, names, 6)
	// The runner of the time: its bookkeeping table, then each file's
	// statements and one row named by the three-digit file name.
	require.NoError(t, conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS _migrations (
		version    UInt32,
		name       String,
		checksum   String,
		applied_at DateTime64(3, 'UTC')
	) ENGINE = ReplacingMergeTree ORDER BY version COMMENT 'applied schema migrations of the metrics projection'`))
	applied := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, n := range names {
		body, err := fs.ReadFile(dir, n)
		require.NoError(t, err)
		for _, stmt := range analytics.SplitStatements(string(body)) {
			require.NoError(t, conn.Exec(ctx, stmt), n)
		}
		require.NoError(t, conn.Exec(ctx, "INSERT INTO _migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
			uint32(i+1), strings.TrimPrefix(n, "0"), sha(body), applied))
	}
	before := migrationRows(t, conn)
	require.Len(t, before, 6)
	require.True(t, strings.HasPrefix(before[0], "1 001_tables.sql "), before[0])

	require.NoError(t, analytics.Migrate(ctx, conn, logging.Discard()))
	require.NoError(t, analytics.Migrate(ctx, conn, logging.Discard()))
	require.Equal(t, before, migrationRows(t, conn), "no migration was applied or recorded again")
	require.EqualValues(t, 26, count(t, conn, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND engine = 'View'"))

	files := fstest.MapFS{}
	for _, n := range names {
		body, err := fs.ReadFile(dir, n)
		require.NoError(t, err)
		files[n] = &fstest.MapFile{Data: body}
	}
	files[names[1]].Data = append(files[names[1]].Data, []byte("-- an edit\n")...)
	require.ErrorIs(t, analytics.MigrateFiles(ctx, conn, files, logging.Discard()), migrate.ErrEdited)
}

// TestMigrateConcurrently: ClickHouse has no lock to take, so two
// migrators at once may both run a migration; its statements are
// idempotent and its record is replaced by version, so both succeed and
// the database ends as one run leaves it.
func TestMigrateConcurrently(t *testing.T) {
	conn, _, _ := clickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = analytics.Migrate(ctx, conn, logging.Discard())
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.EqualValues(t, 6, count(t, conn, "SELECT count() FROM _migrations FINAL"))
	require.EqualValues(t, 6, count(t, conn, "SELECT uniqExact(version, name, checksum) FROM _migrations"))
	require.EqualValues(t, 26, count(t, conn, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND engine = 'View'"))
}
