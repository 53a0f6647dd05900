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
