package testenv

import (
	"context"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// The template's database name keys its migrations' names and contents:
// an edited, added or renamed file makes another template.
func TestTemplateDatabaseKeysTheMigrations(t *testing.T) {
	t.Parallel()
	base := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x int);")}}
	name := func(tmpl Template) string {
		t.Helper()
		n, err := tmpl.database()
		require.NoError(t, err)
		return n
	}
	first := name(Template{Name: "probe", Migrations: []fs.FS{base}})
	require.Regexp(t, `^errata_tmpl_probe_[0-9a-f]{16}$`, first)
	require.LessOrEqual(t, len(first), 63, "a Postgres identifier")
	require.Equal(t, first, name(Template{Name: "probe", Migrations: []fs.FS{base}}))
	for _, other := range []Template{
		{Name: "probe", Migrations: []fs.FS{fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (x bigint);")}}}},
		{Name: "probe", Migrations: []fs.FS{fstest.MapFS{"0001_b.sql": {Data: []byte("CREATE TABLE a (x int);")}}}},
		{Name: "probe", Migrations: []fs.FS{fstest.MapFS{
			"0001_a.sql": {Data: []byte("CREATE TABLE a (x int);")}, "0002_b.sql": {Data: []byte("SELECT 1;")}}}},
		{Name: "probe", Migrations: []fs.FS{base, fstest.MapFS{}}},
		{Name: "probe2", Migrations: []fs.FS{base}},
	} {
		require.NotEqual(t, first, name(other), "%+v", other)
	}
	for _, bad := range []string{"", "Probe", "probe-x", "9probe", strings.Repeat("p", 31), "p; DROP"} {
		_, err := Template{Name: bad}.database()
		require.Error(t, err, bad)
	}
}

// Each test gets its own copy of the migrated template, prepared once;
// the copy is dropped when the test ends, the template stays. A template
// of the same name with other migrations replaces it.
func TestPostgresFromCopiesAPreparedTemplate(t *testing.T) {
	var prepared atomic.Int32
	prepare := func(ctx context.Context, databaseURL string) error {
		prepared.Add(1)
		conn, err := pgx.Connect(ctx, databaseURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE SCHEMA probe; CREATE TABLE probe.rows (id text PRIMARY KEY); INSERT INTO probe.rows VALUES ('prepared')")
		return err
	}
	// A name of this run's own: concurrent runs never share it.
	name := "probe_" + Suffix()
	v1 := Template{Name: name, Prepare: prepare,
		Migrations: []fs.FS{fstest.MapFS{"0001.sql": {Data: []byte("v1")}}}}
	v2 := Template{Name: name, Prepare: prepare,
		Migrations: []fs.FS{fstest.MapFS{"0001.sql": {Data: []byte("v2")}}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows := func(t *testing.T, url string) []string {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		r, err := conn.Query(ctx, "SELECT id FROM probe.rows ORDER BY id")
		require.NoError(t, err)
		ids, err := pgx.CollectRows(r, pgx.RowTo[string])
		require.NoError(t, err)
		return ids
	}
	var copied string
	t.Run("copies", func(t *testing.T) {
		a, b := PostgresFrom(t, v1), PostgresFrom(t, v1)
		require.NotEqual(t, a, b)
		conn, err := pgx.Connect(ctx, a)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "INSERT INTO probe.rows VALUES ('only in a')")
		require.NoError(t, err)
		require.NoError(t, conn.Close(ctx))
		require.Equal(t, []string{"only in a", "prepared"}, rows(t, a))
		require.Equal(t, []string{"prepared"}, rows(t, b))
		copied = a[strings.LastIndex(a, "/")+1 : strings.Index(a, "?")]
	})
	if copied == "" {
		return // skipped without the services, or failed
	}
	require.Equal(t, int32(1), prepared.Load(), "the template is prepared once")
	admin, err := pgx.Connect(ctx, Config(t).DatabaseURL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	databases := func() map[string]bool {
		r, err := admin.Query(ctx, "SELECT datname, datallowconn FROM pg_database WHERE datname LIKE '%' || $1 || '%'", name)
		require.NoError(t, err)
		out := map[string]bool{}
		for r.Next() {
			var n string
			var allow bool
			require.NoError(t, r.Scan(&n, &allow))
			out[n] = allow
		}
		require.NoError(t, r.Err())
		return out
	}
	var n int
	require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", copied).Scan(&n))
	require.Zero(t, n, "the copy is dropped when its test ends")
	first, err := v1.database()
	require.NoError(t, err)
	require.Equal(t, map[string]bool{first: false}, databases(), "the template stays, refusing connections")

	require.Equal(t, []string{"prepared"}, rows(t, PostgresFrom(t, v2)))
	second, err := v2.database()
	require.NoError(t, err)
	require.Equal(t, int32(2), prepared.Load())
	require.Equal(t, map[string]bool{second: false}, databases(), "the new migrations' template replaced the old")
	_, err = admin.Exec(ctx, "DROP DATABASE "+second)
	require.NoError(t, err)
}
