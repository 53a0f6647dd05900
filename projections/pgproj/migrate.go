// Package pgproj is the machinery of Postgres projections: schema
// migrations, the exactly-once projector (writes and Kafka position in one
// transaction) and read-your-writes watermarks.
package pgproj

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// frameworkMigration creates the tables every projection schema has. It runs
// on every Migrate, so a table added here reaches existing schemas.
const frameworkMigration = `
CREATE TABLE IF NOT EXISTS schema_migrations (
	version    text PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS projection_checkpoints (
	projector   text   NOT NULL,
	topic       text   NOT NULL,
	partition   int    NOT NULL,
	next_offset bigint NOT NULL,
	-- time of the last applied event (never the wall clock)
	event_time  timestamptz,
	PRIMARY KEY (projector, topic, partition)
);
-- Records the projection can never apply (see Projector): written in the
-- transaction that moves the checkpoint past them, with values taken from
-- the record only (never the wall clock), so a rebuild parks the same rows.
CREATE TABLE IF NOT EXISTS projection_parked (
	projector   text        NOT NULL,
	topic       text        NOT NULL,
	partition   int         NOT NULL,
	log_offset  bigint      NOT NULL,
	-- from the decoded event, else the record's errata-id header
	event_id    text,
	-- the record's errata-type header (the type as stored)
	event_type  text,
	-- 'deterministic' (applying it fails every time) or 'decode'
	class       text        NOT NULL,
	reason      text        NOT NULL,
	-- the record's timestamp in the log
	record_time timestamptz NOT NULL,
	-- the event's time, when it decodes
	event_time  timestamptz,
	PRIMARY KEY (projector, topic, partition, log_offset)
);`

// Migrate creates schema if needed and applies the *.sql files of migrations
// in name order, each once, each in its own transaction with search_path set
// to the schema. An advisory lock serializes concurrent migrators.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, migrations fs.FS, log *slog.Logger) error {
	if !schemaName.MatchString(schema) {
		return fmt.Errorf("schema %q is not a lowercase SQL identifier", schema)
	}
	names, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer conn.Release()
	lockKey := "errata-migrate:" + schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, lockKey); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey) //nolint:errcheck

	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if err := inSchema(ctx, conn.Conn(), ident, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, frameworkMigration)
		return err
	}); err != nil {
		return fmt.Errorf("framework tables: %w", err)
	}
	for _, name := range names {
		version := strings.TrimSuffix(name, ".sql")
		body, err := fs.ReadFile(migrations, name)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		applied := false
		err = inSchema(ctx, conn.Conn(), ident, func(tx pgx.Tx) error {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, version).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return nil
			}
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			applied = true
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if applied {
			log.Info("migration applied", "schema", schema, "version", version)
		}
	}
	return nil
}

func inSchema(ctx context.Context, conn *pgx.Conn, ident string, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+ident); err != nil {
			return err
		}
		return fn(tx)
	})
}

// PoolConfig parses a database URL into a pool config whose connections use
// schema as their search_path, so queries name tables unqualified.
func PoolConfig(databaseURL, schema string) (*pgxpool.Config, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("schema %q is not a lowercase SQL identifier", schema)
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	return cfg, nil
}

// Connect opens a pool for schema and checks it answers.
func Connect(ctx context.Context, databaseURL, schema string) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(databaseURL, schema)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres ping: %w", err)
	}
	return pool, nil
}
