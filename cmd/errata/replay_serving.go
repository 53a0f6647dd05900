package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/targets"
)

func init() { rebuildables[serving.ProjectorName] = servingRebuild{} }

// servingRebuild rebuilds the Postgres serving projection: generation N
// lives in schema targets.Name(ERRATA_SERVING_SCHEMA, N).
type servingRebuild struct{}

func (servingRebuild) topics(e *env) []string { return servingTopics(e) }

func (servingRebuild) schema(e *env, gen int64) string { return targets.Name(e.cfg.ServingSchema, gen) }

func (r servingRebuild) open(ctx context.Context, e *env, gen int64) (kafka.Handler, kafka.PositionStore, func(), error) {
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, r.schema(e, gen))
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pgproj.Migrate(ctx, pool, r.schema(e, gen), serving.Migrations(), e.log); err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	proj := pgproj.NewProjector(serving.ProjectorName, pool, e.registry,
		serving.NewApplier(e.cfg.ViewIPRangeDailyCap), noDeadLetters{e.log}, e.log)
	return proj, proj, pool.Close, nil
}

func (r servingRebuild) generations(ctx context.Context, e *env) ([]int64, error) {
	return schemaGenerations(ctx, e, e.cfg.ServingSchema)
}

func (servingRebuild) activate(context.Context, *env, int64) error { return nil }

func (r servingRebuild) drop(ctx context.Context, e *env, gen int64) error {
	return dropSchema(ctx, e, r.schema(e, gen))
}

func (r servingRebuild) positions(ctx context.Context, e *env, gen int64) (replay.Offsets, error) {
	return postgresPositions(ctx, e, r.schema(e, gen), serving.ProjectorName)
}

// checksum dumps the schema inside one REPEATABLE READ transaction, so the
// rows and the checkpoints it reports are one consistent state even while
// the live projector keeps writing.
func (r servingRebuild) checksum(ctx context.Context, e *env, gen int64, w io.Writer) ([]tableSum, replay.Offsets, error) {
	return dumpPostgresSchema(ctx, e, r.schema(e, gen), serving.ProjectorName, w)
}

// dumpPostgresSchema is checksum for any pgproj projection.
func dumpPostgresSchema(ctx context.Context, e *env, schema, projector string, w io.Writer) ([]tableSum, replay.Offsets, error) {
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	at, err := checkpointsIn(ctx, tx, projector)
	if err != nil {
		return nil, nil, err
	}
	sums, err := pgproj.Dump(ctx, tx, schema, w, pgproj.DumpOptions{SkipUnlogged: true})
	if err != nil {
		return nil, nil, err
	}
	out := make([]tableSum, len(sums))
	for i, s := range sums {
		out[i] = tableSum(s)
	}
	return out, at, nil
}

// postgresPositions reads a pgproj projection's checkpoints in schema.
func postgresPositions(ctx context.Context, e *env, schema, projector string) (replay.Offsets, error) {
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	return checkpointsIn(ctx, tx, projector)
}

func checkpointsIn(ctx context.Context, tx pgx.Tx, projector string) (replay.Offsets, error) {
	rows, err := tx.Query(ctx, `SELECT topic, partition, next_offset FROM projection_checkpoints WHERE projector = $1`, projector)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	at := replay.Offsets{}
	for rows.Next() {
		var topic string
		var p int32
		var next int64
		if err := rows.Scan(&topic, &p, &next); err != nil {
			return nil, err
		}
		if at[topic] == nil {
			at[topic] = map[int32]int64{}
		}
		at[topic][p] = next
	}
	return at, rows.Err()
}

// schemaGenerations lists the generations of a Postgres projection whose
// generation-1 schema is base.
func schemaGenerations(ctx context.Context, e *env, base string) ([]int64, error) {
	pool, err := pgxpool.New(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT nspname::text FROM pg_namespace WHERE nspname = $1 OR nspname LIKE $1 || '\_g%'`, base)
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	defer rows.Close()
	return generationsIn(rows, base)
}

// nameRows is what generationsIn needs of pgx's and clickhouse-go's rows.
type nameRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// generationsIn reads store names (one column) and keeps the generations
// of the store whose generation-1 name is base.
func generationsIn(rows nameRows, base string) ([]int64, error) {
	var gens []int64
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if g, ok := targets.GenerationOf(base, name); ok {
			gens = append(gens, g)
		}
	}
	return gens, rows.Err()
}

// dropSchema drops a projection schema and everything in it.
func dropSchema(ctx context.Context, e *env, schema string) error {
	if schema == "" || schema == "public" || schema == targets.Schema {
		return errors.New("refusing to drop " + schema)
	}
	pool, err := pgxpool.New(ctx, e.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	return nil
}
