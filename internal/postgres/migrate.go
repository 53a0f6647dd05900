package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/migrate"
)

// Schema is what Migrate brings up to date.
type Schema struct {
	// Name is the schema, a lowercase SQL identifier.
	Name string
	// Setup is idempotent SQL (CREATE TABLE IF NOT EXISTS ...) run under the
	// lock before the migrations on every run: tables a family of schemas
	// shares (pgproj's checkpoints), so one added later reaches existing
	// schemas. Empty for none.
	Setup string
	// Migrations are the schema's NNNN_name.sql files (migrate.Load).
	Migrations fs.FS
}

// bookkeeping records the applied migrations of a schema: version is the
// file name without .sql as it was when applied (older ones may be spelled
// 001_name), checksum its sha256, NULL for one applied before checksums
// were kept (internal/migrate records it on the next run).
const bookkeeping = `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    text PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text;`

// Migrate creates the schema if needed and applies its migrations
// (internal/migrate.Run): each file once, in version order, each in its own
// transaction with search_path set to the schema, refusing an applied file
// that was edited. A session advisory lock per schema serializes
// concurrent migrators, whatever binary version they run.
func Migrate(ctx context.Context, pool *pgxpool.Pool, s Schema, log *slog.Logger) error {
	if err := ValidSchema(s.Name); err != nil {
		return err
	}
	migrations, err := migrate.Load(s.Migrations)
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer conn.Release()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return migrate.Run(ctx, &store{conn: conn.Conn(), schema: s, ident: pgx.Identifier{s.Name}.Sanitize()},
		migrations, log.With("schema", s.Name))
}

// store is one schema's side of migrate.Run, on one connection (the
// advisory lock is the session's).
type store struct {
	conn   *pgx.Conn
	schema Schema
	ident  string
}

func (s *store) lockKey() string { return "errata-migrate:" + s.schema.Name }

func (s *store) Lock(ctx context.Context) (func(), error) {
	if _, err := s.conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, s.lockKey()); err != nil {
		return nil, err
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		if _, err := s.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, s.lockKey()); err != nil {
			// Ending the session is what releases the lock then.
			_ = s.conn.Close(ctx)
		}
	}, nil
}

func (s *store) Prepare(ctx context.Context) error {
	if _, err := s.conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+s.ident); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return s.inSchema(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, bookkeeping); err != nil {
			return err
		}
		if s.schema.Setup == "" {
			return nil
		}
		if _, err := tx.Exec(ctx, s.schema.Setup); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		return nil
	})
}

func (s *store) Applied(ctx context.Context) ([]migrate.Applied, error) {
	var out []migrate.Applied
	err := s.inSchema(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT version, coalesce(checksum, '') FROM schema_migrations ORDER BY version`)
		if err != nil {
			return err
		}
		var name, sum string
		_, err = pgx.ForEachRow(rows, []any{&name, &sum}, func() error {
			// A name without a number is no migration of this runner.
			if v, ok := migrate.ParseVersion(name); ok {
				out = append(out, migrate.Applied{Version: v, Name: name, Checksum: sum})
			}
			return nil
		})
		return err
	})
	return out, err
}

func (s *store) Apply(ctx context.Context, m migrate.Migration) error {
	return s.inSchema(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)`, m.ID(), m.Checksum)
		return err
	})
}

func (s *store) RecordChecksum(ctx context.Context, a migrate.Applied, m migrate.Migration) error {
	return s.inSchema(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL`, a.Name, m.Checksum)
		return err
	})
}

// inSchema runs fn in a transaction whose search_path is the schema.
func (s *store) inSchema(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+s.ident); err != nil {
			return err
		}
		return fn(tx)
	})
}
