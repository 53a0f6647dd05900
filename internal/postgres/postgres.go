// Package postgres is the plumbing every Postgres user shares: a pool bound
// to one schema (its search_path, UTC) and the schema's migrations (the
// runner of internal/migrate, under an advisory lock).
package postgres

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5/pgxpool"
)

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidSchema checks that schema is a lowercase SQL identifier, the only
// names this package puts into SQL text.
func ValidSchema(schema string) error {
	if !schemaName.MatchString(schema) {
		return fmt.Errorf("schema %q is not a lowercase SQL identifier", schema)
	}
	return nil
}

// PoolConfig parses a database URL into a pool config whose connections use
// schema as their search_path, so queries name tables unqualified.
func PoolConfig(databaseURL, schema string) (*pgxpool.Config, error) {
	if err := ValidSchema(schema); err != nil {
		return nil, err
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
	return open(ctx, cfg)
}

// ConnectDerived opens a pool for a read model that the log rebuilds (a
// projection's rows with its checkpoint), whose commits do not wait for
// the WAL flush (synchronous_commit=off). A Postgres crash can then undo
// the last commits (at most three times wal_writer_delay), but rows and
// checkpoint are undone together, since they commit in one transaction
// and the WAL is replayed in order: the projector applies those events
// again from the log, and the store ends as it would have. Data that only
// Postgres holds (run state, leases, keys in the key store) never uses
// this pool.
func ConnectDerived(ctx context.Context, databaseURL, schema string) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(databaseURL, schema)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	return open(ctx, cfg)
}

func open(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
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
