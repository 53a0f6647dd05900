package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Template is a Postgres database prepared once and copied for every test
// that asks for it: a database whose schemas are already migrated costs
// one CREATE DATABASE instead of every migration of every schema.
//
// Templates outlive the test run (they are named errata_tmpl_<name>_<key>
// and refuse connections): the next run, and every package of this one,
// copies the same template. The key hashes the migrations' files, so an
// edited or added migration makes a new template, and the template of the
// same name with another key is dropped then.
type Template struct {
	// Name says what Prepare makes: lowercase letters, digits and
	// underscores, at most 30 characters. Two templates preparing
	// different databases must have different names.
	Name string
	// Migrations are the files Prepare applies.
	Migrations []fs.FS
	// Prepare migrates the empty database at databaseURL. It must close
	// every connection it opened before it returns.
	Prepare func(ctx context.Context, databaseURL string) error
}

var templateName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,29}$`)

// database is the template's database name: its name and the key of its
// migrations' file names and contents.
func (tmpl Template) database() (string, error) {
	if !templateName.MatchString(tmpl.Name) {
		return "", fmt.Errorf("template name %q: want lowercase letters, digits and _, at most 30", tmpl.Name)
	}
	h := sha256.New()
	for _, fsys := range tmpl.Migrations {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			body, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00", path, len(body))
			h.Write(body)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("template %s: %w", tmpl.Name, err)
		}
		h.Write([]byte{0xff})
	}
	return "errata_tmpl_" + tmpl.Name + "_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// templates remembers, per template database, that this process made sure
// it exists.
var templates sync.Map // database name -> *templateOnce

type templateOnce struct {
	once sync.Once
	err  error
}

// PostgresFrom is Postgres with the fresh database a copy of tmpl: its
// schemas are migrated already. The database is the test's alone and is
// dropped when the test ends.
func PostgresFrom(t testing.TB, tmpl Template) string {
	t.Helper()
	cfg := Config(t)
	source, err := tmpl.database()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		unavailable(t, "postgres", err)
	}
	defer admin.Close(ctx)
	// A template dropped meanwhile (by a run whose migrations differ) is
	// made again.
	for try := 0; ; try++ {
		v, _ := templates.LoadOrStore(source, &templateOnce{})
		once := v.(*templateOnce)
		once.once.Do(func() { once.err = ensureTemplate(ctx, admin, cfg.DatabaseURL, source, tmpl) })
		if once.err != nil {
			t.Fatalf("template database %s: %v", source, once.err)
		}
		name, err := createDatabase(ctx, t, admin, cfg.DatabaseURL, source)
		var pgErr *pgconn.PgError
		if try == 0 && errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			templates.CompareAndDelete(source, once)
			continue
		}
		if err != nil {
			t.Fatalf("create database from %s: %v", source, err)
		}
		return databaseURL(t, cfg.DatabaseURL, name)
	}
}

// ensureTemplate makes the template database unless it exists. Test
// processes of all packages run at once: an advisory lock makes one of
// them build it, under another name, renamed once it is complete.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, adminURL, source string, tmpl Template) error {
	lock := "errata-test-template:" + tmpl.Name
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, lock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lock) //nolint:errcheck // admin is a connection of its own, closed by the caller: the lock ends with its session
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, source).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if err := buildTemplate(ctx, admin, adminURL, source, tmpl); err != nil {
			return err
		}
	}
	// Older templates of the same name (other migrations) are dropped; one
	// that is being copied is dropped after the copy.
	rows, err := admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname ~ $1 AND datname <> $2`,
		`^errata_tmpl_`+tmpl.Name+`_[0-9a-f]{16}$`, source)
	if err != nil {
		return err
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range stale {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
	}
	return nil
}

func buildTemplate(ctx context.Context, admin *pgx.Conn, adminURL, source string, tmpl Template) error {
	build := "errata_tmpl_build_" + Suffix()
	ident := pgx.Identifier{build}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	drop := func() {
		_, _ = admin.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	}
	u, err := withDatabase(adminURL, build)
	if err != nil {
		drop()
		return err
	}
	if err := tmpl.Prepare(ctx, u); err != nil {
		drop()
		return fmt.Errorf("prepare: %w", err)
	}
	// A closed pool's server sessions may take a moment to end: a copy
	// (and the rename) needs the database to have none.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" WITH ALLOW_CONNECTIONS false"); err != nil {
		drop()
		return err
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, build); err != nil {
		drop()
		return err
	}
	for {
		_, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" RENAME TO "+pgx.Identifier{source}.Sanitize())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" { // object_in_use: a session is still ending
			select {
			case <-ctx.Done():
				drop()
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			drop()
			return fmt.Errorf("rename: %w", err)
		}
		return nil
	}
}
