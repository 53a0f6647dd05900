package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/migrate"
)

// sha256 of the three test files' contents.
const (
	sumA = "758c379cb82b3ab99156d1ac177bba218413f86302ed93d0019a7aeb5c5c5e7c" // CREATE TABLE a;
	sumB = "a52d21026a89851d393887f9ae849b7553afa14bfaa6bb41699add4860a2ac04" // CREATE TABLE b;
	sumC = "1e88617898caf7d47aa6406b530dc4df791d7c06c057933c814db533a63583d4" // CREATE TABLE c;
)

// memStore keeps its records in memory and notes every call Run makes.
type memStore struct {
	applied  []migrate.Applied
	calls    []string
	failOn   string
	lockFail error
}

func (s *memStore) Lock(context.Context) (func(), error) {
	if s.lockFail != nil {
		return nil, s.lockFail
	}
	s.calls = append(s.calls, "lock")
	return func() { s.calls = append(s.calls, "unlock") }, nil
}

func (s *memStore) Prepare(context.Context) error {
	s.calls = append(s.calls, "prepare")
	return nil
}

func (s *memStore) Applied(context.Context) ([]migrate.Applied, error) {
	s.calls = append(s.calls, "applied")
	return append([]migrate.Applied{}, s.applied...), nil
}

func (s *memStore) Apply(_ context.Context, m migrate.Migration) error {
	s.calls = append(s.calls, "apply "+m.SQL)
	if m.Name == s.failOn {
		return errors.New("division by zero")
	}
	s.applied = append(s.applied, migrate.Applied{Version: m.Version, Name: m.ID(), Checksum: m.Checksum})
	return nil
}

func (s *memStore) RecordChecksum(_ context.Context, a migrate.Applied, m migrate.Migration) error {
	s.calls = append(s.calls, "checksum "+a.Name)
	for i := range s.applied {
		if s.applied[i] == a {
			s.applied[i].Checksum = m.Checksum
		}
	}
	return nil
}

func rec(version int, name, checksum string) migrate.Applied {
	return migrate.Applied{Version: version, Name: name, Checksum: checksum}
}

func files(kv ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i < len(kv); i += 2 {
		fsys[kv[i]] = &fstest.MapFile{Data: []byte(kv[i+1])}
	}
	return fsys
}

// abc are three migrations, given out of order among files that are not.
func abc(t *testing.T) []migrate.Migration {
	t.Helper()
	migs, err := migrate.Load(files(
		"0010_c.sql", "CREATE TABLE c;",
		"0001_a.sql", "CREATE TABLE a;",
		"0002_b_two.sql", "CREATE TABLE b;",
		"README.md", "not a migration",
		"0003.sql.gz", "not a migration either",
	))
	require.NoError(t, err)
	return migs
}

// logged returns a logger writing "msg key=value" lines into the buffer.
func logged() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
			return slog.Attr{}
		}
		return a
	}})), &b
}

func TestLoad(t *testing.T) {
	t.Parallel()
	require.Equal(t, []migrate.Migration{
		{Version: 1, Name: "0001_a.sql", SQL: "CREATE TABLE a;", Checksum: sumA},
		{Version: 2, Name: "0002_b_two.sql", SQL: "CREATE TABLE b;", Checksum: sumB},
		{Version: 10, Name: "0010_c.sql", SQL: "CREATE TABLE c;", Checksum: sumC},
	}, abc(t))
	require.Equal(t, "0002_b_two", abc(t)[1].ID())

	empty, err := migrate.Load(fstest.MapFS{})
	require.NoError(t, err)
	require.Empty(t, empty)
}

func TestLoadRejectsBadNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fsys  fstest.MapFS
		error string
	}{
		{"three digits", files("001_a.sql", ""),
			"migration 001_a.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"five digits", files("00001_a.sql", ""),
			"migration 00001_a.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"no name", files("0001.sql", ""),
			"migration 0001.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"dash", files("0001-a.sql", ""),
			"migration 0001-a.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"uppercase", files("0001_A.sql", ""),
			"migration 0001_A.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"no number", files("a.sql", ""),
			"migration a.sql: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)"},
		{"zero", files("0000_a.sql", ""), "migration 0000_a.sql: versions start at 0001"},
		{"same version", files("0001_a.sql", "", "0001_b.sql", ""), "migrations 0001_a.sql and 0001_b.sql have the same version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := migrate.Load(tc.fsys)
			require.EqualError(t, err, tc.error)
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version int
		ok      bool
	}{
		{"0001_posts", 1, true},
		{"001_audit", 1, true},
		{"001_tables.sql", 1, true},
		{"0010_c", 10, true},
		{"7", 7, true},
		{"0042.sql", 42, true},
		{"0000_zero", 0, false},
		{"", 0, false},
		{"_a", 0, false},
		{"init", 0, false},
		{"1a_x", 0, false},
		{"-1_x", 0, false},
		{"1234567890_too_big", 0, false},
	} {
		v, ok := migrate.ParseVersion(tc.name)
		require.Equal(t, tc.ok, ok, tc.name)
		require.Equal(t, tc.version, v, tc.name)
	}
}

func TestRunAppliesEachOnceInOrder(t *testing.T) {
	t.Parallel()
	s := &memStore{}
	log, out := logged()
	require.NoError(t, migrate.Run(context.Background(), s, abc(t), log))
	require.Equal(t, []string{"lock", "prepare", "applied",
		"apply CREATE TABLE a;", "apply CREATE TABLE b;", "apply CREATE TABLE c;", "unlock"}, s.calls)
	require.Equal(t, []migrate.Applied{rec(1, "0001_a", sumA), rec(2, "0002_b_two", sumB), rec(10, "0010_c", sumC)}, s.applied)
	require.Equal(t, "msg=\"migration applied\" migration=0001_a.sql\n"+
		"msg=\"migration applied\" migration=0002_b_two.sql\n"+
		"msg=\"migration applied\" migration=0010_c.sql\n", out.String())

	s.calls = nil
	out.Reset()
	require.NoError(t, migrate.Run(context.Background(), s, abc(t), log))
	require.Equal(t, []string{"lock", "prepare", "applied", "unlock"}, s.calls, "a second run applies nothing")
	require.Empty(t, out.String())
}

func TestRunStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	s := &memStore{failOn: "0002_b_two.sql"}
	err := migrate.Run(context.Background(), s, abc(t), nil)
	require.EqualError(t, err, "migration 0002_b_two.sql: division by zero")
	require.Equal(t, []string{"lock", "prepare", "applied", "apply CREATE TABLE a;", "apply CREATE TABLE b;", "unlock"}, s.calls)
	require.Equal(t, []migrate.Applied{rec(1, "0001_a", sumA)}, s.applied)

	s.failOn, s.calls = "", nil
	require.NoError(t, migrate.Run(context.Background(), s, abc(t), nil))
	require.Equal(t, []string{"lock", "prepare", "applied", "apply CREATE TABLE b;", "apply CREATE TABLE c;", "unlock"}, s.calls,
		"the next run takes up from the failed one")
}

// TestRunRefusesAnEditedMigration: a recorded checksum that differs from
// the file's is an error before anything is written, even a pending
// migration or a missing checksum.
func TestRunRefusesAnEditedMigration(t *testing.T) {
	t.Parallel()
	edited := "0000000000000000000000000000000000000000000000000000000000000000"
	s := &memStore{applied: []migrate.Applied{rec(1, "0001_a", ""), rec(2, "0002_b_two", edited)}}
	err := migrate.Run(context.Background(), s, abc(t), nil)
	require.ErrorIs(t, err, migrate.ErrEdited)
	require.EqualError(t, err, "an applied migration was edited: 0002_b_two.sql was applied (as 0002_b_two) with sha256 "+edited+
		", but the file now has "+sumB+"; restore it and add a new migration instead")
	require.Equal(t, []string{"lock", "prepare", "applied", "unlock"}, s.calls)
	require.Equal(t, []migrate.Applied{rec(1, "0001_a", ""), rec(2, "0002_b_two", edited)}, s.applied)
}

// TestRunRecordsChecksumsOfOldRecords: migrations recorded without a
// checksum, under today's name or an older spelling of it, get the file's
// checksum and keep their name; they do not run again.
func TestRunRecordsChecksumsOfOldRecords(t *testing.T) {
	t.Parallel()
	s := &memStore{applied: []migrate.Applied{rec(1, "001_a", ""), rec(2, "0002_b_two", ""), rec(99, "0099_newer", "abc")}}
	log, out := logged()
	require.NoError(t, migrate.Run(context.Background(), s, abc(t), log))
	require.Equal(t, []string{"lock", "prepare", "applied", "checksum 001_a", "checksum 0002_b_two", "apply CREATE TABLE c;", "unlock"}, s.calls)
	require.Equal(t, []migrate.Applied{rec(1, "001_a", sumA), rec(2, "0002_b_two", sumB), rec(99, "0099_newer", "abc"), rec(10, "0010_c", sumC)}, s.applied,
		"a version recorded by a newer binary is left alone")
	require.Equal(t, "msg=\"migration checksum recorded\" migration=0001_a.sql applied_as=001_a\n"+
		"msg=\"migration checksum recorded\" migration=0002_b_two.sql applied_as=0002_b_two\n"+
		"msg=\"migration applied\" migration=0010_c.sql\n", out.String())

	s.calls = nil
	require.NoError(t, migrate.Run(context.Background(), s, abc(t), nil))
	require.Equal(t, []string{"lock", "prepare", "applied", "unlock"}, s.calls)
}

func TestRunWithoutTheLockDoesNothing(t *testing.T) {
	t.Parallel()
	s := &memStore{lockFail: errors.New("connection refused")}
	require.EqualError(t, migrate.Run(context.Background(), s, abc(t), nil), "migration lock: connection refused")
	require.Empty(t, s.calls)
}

// Dir is the embedded migrations directory; Load reads it as the root.
func TestDir(t *testing.T) {
	files := fstest.MapFS{"migrations/0001_a.sql": {Data: []byte("CREATE TABLE a;")}, "other.txt": {Data: []byte("x")}}
	ms, err := migrate.Load(migrate.Dir(files, "migrations"))
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, 1, ms[0].Version)
	require.Panics(t, func() { migrate.Dir(files, "../migrations") })
}
