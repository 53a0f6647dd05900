// Package targets records which physical copy of each read model readers
// use, so a projection can be rebuilt from offset 0 beside the live one and
// then switched to atomically (blue-green).
//
// A projection's copies are numbered by generation. Generation 1 keeps the
// configured names (schema "serving", index alias target, ClickHouse
// database), so an existing deployment needs no migration; a rebuild builds
// generation N+1 under names suffixed "_gN+1", and a switch is one UPDATE of
// a row in the control schema. Readers and projectors poll that row and move
// to the new copy; the old one stays until it is dropped explicitly.
package targets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

// Schema is the Postgres schema of the control table.
const Schema = "errata_control"

// Target is the copy of one projection that readers use.
type Target struct {
	Projection string
	Generation int64
	// SwitchedAt is when this generation became active (zero for the
	// implicit generation 1 of a projection never switched).
	SwitchedAt time.Time
	// Previous is the generation this one replaced (0: none).
	Previous int64
}

// Name returns the physical name of generation gen of a store whose
// generation-1 name is base: base itself, or base + "_g<gen>".
func Name(base string, gen int64) string {
	if gen <= 1 {
		return base
	}
	return base + "_g" + strconv.FormatInt(gen, 10)
}

// GenerationOf parses a name made by Name back into its generation; ok is
// false for names that are not base or base_g<N>.
func GenerationOf(base, name string) (gen int64, ok bool) {
	if name == base {
		return 1, true
	}
	rest, found := strings.CutPrefix(name, base+"_g")
	if !found {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 2 {
		return 0, false
	}
	return n, true
}

// ErrConflict is returned by Switch when the active generation is not the
// one the caller rebuilt against (another switch happened meanwhile).
var ErrConflict = errors.New("the active generation changed meanwhile")

// Store reads and switches targets in the control schema.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store over pool (any search_path: names are qualified).
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Migrate creates the control table if needed.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `
		CREATE SCHEMA IF NOT EXISTS errata_control;
		CREATE TABLE IF NOT EXISTS errata_control.projection_targets (
			projection  text PRIMARY KEY,
			generation  bigint NOT NULL CHECK (generation >= 1),
			previous    bigint NOT NULL DEFAULT 0,
			switched_at timestamptz NOT NULL
		)`)
	if err != nil {
		return fmt.Errorf("control schema: %w", err)
	}
	return nil
}

// Active returns the active target of projection (generation 1 if it was
// never switched, or if the control table does not exist yet).
func (s *Store) Active(ctx context.Context, projection string) (Target, error) {
	t := Target{Projection: projection, Generation: 1}
	err := s.pool.QueryRow(ctx, `SELECT generation, previous, switched_at
		FROM errata_control.projection_targets WHERE projection = $1`, projection).
		Scan(&t.Generation, &t.Previous, &t.SwitchedAt)
	switch {
	case err == nil, errors.Is(err, pgx.ErrNoRows):
		return t, nil
	case isUndefinedTable(err):
		return t, nil
	default:
		return Target{}, fmt.Errorf("read target of %s: %w", projection, err)
	}
}

// Next returns the generation a rebuild should build: one above both the
// active generation and every generation whose stores exist (so an
// abandoned rebuild's leftovers are never reused).
func Next(active Target, existing []int64) int64 {
	next := active.Generation + 1
	for _, g := range existing {
		if g >= next {
			next = g + 1
		}
	}
	return next
}

// Switch makes generation to active for projection, provided from is still
// the active one. It is one statement, so every reader sees either the old
// or the new generation.
func (s *Store) Switch(ctx context.Context, projection string, from, to int64, at time.Time) (Target, error) {
	if to == from {
		return Target{}, fmt.Errorf("switch %s: generation %d is already active", projection, to)
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO errata_control.projection_targets AS t (projection, generation, previous, switched_at)
		SELECT $1, $3, $2, $4
		WHERE $2 = COALESCE((SELECT generation FROM errata_control.projection_targets WHERE projection = $1), 1)
		ON CONFLICT (projection) DO UPDATE SET generation = EXCLUDED.generation, previous = EXCLUDED.previous,
			switched_at = EXCLUDED.switched_at
		WHERE t.generation = $2`, projection, from, to, at)
	if err != nil {
		return Target{}, fmt.Errorf("switch %s: %w", projection, err)
	}
	if tag.RowsAffected() != 1 {
		return Target{}, fmt.Errorf("switch %s from generation %d: %w", projection, from, ErrConflict)
	}
	return Target{Projection: projection, Generation: to, Previous: from, SwitchedAt: at}, nil
}

// Watch calls fn with the active target of projection now and whenever it
// changes, polling every interval until ctx ends or the store's pool is
// closed (its readers are gone). Other read errors are logged and retried;
// fn is never called twice for the same generation in a row.
func (s *Store) Watch(ctx context.Context, projection string, interval time.Duration, log *slog.Logger, fn func(Target)) {
	var last int64
	for {
		t, err := s.Active(ctx, projection)
		switch {
		case errors.Is(err, puddle.ErrClosedPool):
			return
		case err != nil && ctx.Err() == nil:
			log.Warn("read projection target", "projection", projection, "err", err)
		case err == nil && t.Generation != last:
			last = t.Generation
			fn(t)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func isUndefinedTable(err error) bool {
	var pgErr interface{ SQLState() string }
	return errors.As(err, &pgErr) && (pgErr.SQLState() == "42P01" || pgErr.SQLState() == "3F000")
}
