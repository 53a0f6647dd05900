package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/targets"
)

// PostgresConfig describes a pgproj projection.
type PostgresConfig struct {
	DatabaseURL string
	// Schema is generation 1's schema; generation N lives in
	// targets.Name(Schema, N).
	Schema string
	// Projector is the projector's name (its checkpoints' key).
	Projector string
	// Topics are the Kafka topics it reads (real names).
	Topics     []string
	Migrations fs.FS
	// Applier returns the projection's applier for a new projector.
	Applier  func() pgproj.Applier
	Registry *events.Registry
	Log      *slog.Logger
}

// Postgres is a pgproj projection's storage by generation (the serving
// and audit projections).
type Postgres struct {
	cfg PostgresConfig
}

// NewPostgres returns the storage of the projection cfg describes.
func NewPostgres(cfg PostgresConfig) *Postgres { return &Postgres{cfg: cfg} }

// Schema is generation gen's schema.
func (s *Postgres) Schema(gen int64) string { return targets.Name(s.cfg.Schema, gen) }

// Connect opens a projector's pool on generation gen's schema (commits do
// not wait for the WAL flush: postgres.ConnectDerived); the caller closes
// it.
func (s *Postgres) Connect(ctx context.Context, gen int64) (*pgxpool.Pool, error) {
	return postgres.ConnectDerived(ctx, s.cfg.DatabaseURL, s.Schema(gen))
}

// Migrate applies the projection's migrations to generation gen's schema
// through pool.
func (s *Postgres) Migrate(ctx context.Context, pool *pgxpool.Pool, gen int64) error {
	return pgproj.Migrate(ctx, pool, s.Schema(gen), s.cfg.Migrations, s.cfg.Log)
}

// Projector is the projection's projector on pool, parking what it cannot
// apply with dl.
func (s *Postgres) Projector(pool *pgxpool.Pool, dl pgproj.DeadLetterer) *pgproj.Projector {
	return pgproj.NewProjector(s.cfg.Projector, pool, s.cfg.Registry, s.cfg.Applier(), dl, s.cfg.Log)
}

// Topics implements Rebuildable.
func (s *Postgres) Topics() []string { return s.cfg.Topics }

// Open implements Rebuildable: it migrates generation gen's schema.
func (s *Postgres) Open(ctx context.Context, gen int64) (Projector, func(), error) {
	pool, err := s.Connect(ctx, gen)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Migrate(ctx, pool, gen); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return parallel{Projector: s.Projector(pool, skipDeadLetters{s.cfg.Log}), n: PostgresPartitions}, pool.Close, nil
}

// PostgresPartitions is how many partitions a pgproj projection's catch-up
// applies at once, each in its own transaction on its own connection, so
// that one partition's events are decoded while another's transaction runs
// (BenchmarkServingReplay: about 1.2x one at a time). Not more: the serving
// applier's transactions all upsert a few shared rows (authors, the empty
// image occurrence set) first and hold them to their commit, so their
// Postgres work runs one after another anyway, and three or more at once
// deadlock on those rows often enough (a lost second each) to lose. A
// pgproj projector holds no state between batches, and the serving and
// audit appliers write other partitions' aggregates, or shared rows by
// commutative upserts, as live projectors on several workers already do.
const PostgresPartitions = 2

// Generations implements Rebuildable: the generations whose schema exists.
func (s *Postgres) Generations(ctx context.Context) ([]int64, error) {
	return schemaGenerations(ctx, s.cfg.DatabaseURL, s.cfg.Schema)
}

// Activate implements Rebuildable: readers follow the control row alone.
func (s *Postgres) Activate(context.Context, int64) error { return nil }

// Drop implements Rebuildable.
func (s *Postgres) Drop(ctx context.Context, gen int64) error {
	return dropSchema(ctx, s.cfg.DatabaseURL, s.Schema(gen))
}

// Positions implements Rebuildable.
func (s *Postgres) Positions(ctx context.Context, gen int64) (Offsets, error) {
	return postgresPositions(ctx, s.cfg.DatabaseURL, s.Schema(gen), s.cfg.Projector)
}

// Checksum implements Rebuildable: it dumps the schema inside one
// REPEATABLE READ transaction, so the rows and the checkpoints it reports
// are one consistent state even while the live projector keeps writing.
// UNLOGGED tables (runtime state) are left out.
func (s *Postgres) Checksum(ctx context.Context, gen int64, w io.Writer) ([]TableSum, Offsets, error) {
	pool, err := postgres.Connect(ctx, s.cfg.DatabaseURL, s.Schema(gen))
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // reads only: a failed rollback closes the connection, which ends the transaction
	at, err := checkpointsIn(ctx, tx, s.cfg.Projector)
	if err != nil {
		return nil, nil, err
	}
	sums, err := pgproj.Dump(ctx, tx, s.Schema(gen), w, pgproj.DumpOptions{SkipUnlogged: true})
	if err != nil {
		return nil, nil, err
	}
	return tableSums(sums), at, nil
}

// tableSums converts pgproj's checksums.
func tableSums(sums []pgproj.TableSum) []TableSum {
	out := make([]TableSum, len(sums))
	for i, s := range sums {
		out[i] = TableSum(s)
	}
	return out
}

// postgresPositions reads a pgproj projection's checkpoints in schema.
func postgresPositions(ctx context.Context, databaseURL, schema, projector string) (Offsets, error) {
	pool, err := postgres.Connect(ctx, databaseURL, schema)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // reads only: a failed rollback closes the connection, which ends the transaction
	return checkpointsIn(ctx, tx, projector)
}

// checkpointsIn reads projector's checkpoints through tx.
func checkpointsIn(ctx context.Context, tx pgx.Tx, projector string) (Offsets, error) {
	rows, err := tx.Query(ctx, `SELECT topic, partition, next_offset FROM projection_checkpoints WHERE projector = $1`, projector)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	at := Offsets{}
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
func schemaGenerations(ctx context.Context, databaseURL, base string) ([]int64, error) {
	pool, err := pgxpool.New(ctx, databaseURL)
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
func dropSchema(ctx context.Context, databaseURL, schema string) error {
	if schema == "" || schema == "public" || schema == targets.Schema {
		return errors.New("refusing to drop " + schema)
	}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	return nil
}
