package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/targets"
)

// SearchConfig describes the corpus-search projection.
type SearchConfig struct {
	DatabaseURL string
	ES          *elasticsearch.Client
	// IndexPrefix starts the names of its indices and aliases.
	IndexPrefix string
	// Topics are the Kafka topics it reads (real names).
	Topics   []string
	Registry *events.Registry
	Log      *slog.Logger
}

// Search is the corpus-search projection's storage by generation: the
// Postgres fold in schema targets.Name(search.StateSchema, N) and the
// Elasticsearch indices <prefix>investigations-vN and <prefix>analyses-vN.
// Switching moves both aliases.
type Search struct {
	cfg SearchConfig
}

// NewSearch returns the storage of the search projection cfg describes.
func NewSearch(cfg SearchConfig) *Search { return &Search{cfg: cfg} }

// StateSchema is the Postgres schema of generation gen's fold.
func (s *Search) StateSchema(gen int64) string { return targets.Name(search.StateSchema, gen) }

// Prepare migrates generation gen's state schema and creates its indices
// (investigations, analyses); with alias set, it also points each alias
// there when it does not exist yet (never moving an existing one).
// Idempotent.
func (s *Search) Prepare(ctx context.Context, gen int64, alias bool) error {
	pool, err := s.Connect(ctx, gen)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, s.StateSchema(gen), search.Migrations(), s.cfg.Log); err != nil {
		return err
	}
	if alias {
		return search.Ensure(ctx, s.cfg.ES, s.cfg.IndexPrefix, gen)
	}
	return search.CreateGeneration(ctx, s.cfg.ES, s.cfg.IndexPrefix, gen)
}

// Connect opens a projector's pool on generation gen's state schema
// (postgres.ConnectDerived); the caller closes it.
func (s *Search) Connect(ctx context.Context, gen int64) (*pgxpool.Pool, error) {
	return postgres.ConnectDerived(ctx, s.cfg.DatabaseURL, s.StateSchema(gen))
}

// Projector is generation gen's projector on pool (its state schema):
// investigations and verdict analyses, each into its own index. It parks
// what it cannot apply with dl.
func (s *Search) Projector(pool *pgxpool.Pool, gen int64, dl pgproj.DeadLetterer) *pgproj.Projector {
	applier := search.NewApplierFor(s.cfg.ES, search.IndexName(s.cfg.IndexPrefix, gen)).
		WithAnalyses(search.AnalysisIndexName(s.cfg.IndexPrefix, gen))
	return pgproj.NewProjector(search.ProjectorName, pool, s.cfg.Registry, applier, dl, s.cfg.Log)
}

// Topics implements Rebuildable.
func (s *Search) Topics() []string { return s.cfg.Topics }

// Open implements Rebuildable. A rebuilt generation gets its aliases only
// when switched to.
func (s *Search) Open(ctx context.Context, gen int64) (Projector, func(), error) {
	if err := s.Prepare(ctx, gen, gen == 1); err != nil {
		return nil, nil, err
	}
	pool, err := s.Connect(ctx, gen)
	if err != nil {
		return nil, nil, err
	}
	return s.Projector(pool, gen, skipDeadLetters{s.cfg.Log}), pool.Close, nil
}

// Generations implements Rebuildable: those whose state schema or index
// exists.
func (s *Search) Generations(ctx context.Context) ([]int64, error) {
	gens, err := schemaGenerations(ctx, s.cfg.DatabaseURL, search.StateSchema)
	if err != nil {
		return nil, err
	}
	infos, err := search.Indices(ctx, s.cfg.ES, s.cfg.IndexPrefix)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for _, g := range gens {
		seen[g] = true
	}
	for _, in := range infos {
		if !seen[in.Generation] {
			gens = append(gens, in.Generation)
			seen[in.Generation] = true
		}
	}
	return gens, nil
}

// Activate implements Rebuildable: it points both aliases at generation gen.
func (s *Search) Activate(ctx context.Context, gen int64) error {
	return search.PointGeneration(ctx, s.cfg.ES, s.cfg.IndexPrefix, gen)
}

// Drop implements Rebuildable. It refuses an index an alias points at.
func (s *Search) Drop(ctx context.Context, gen int64) error {
	for _, index := range []string{search.IndexName(s.cfg.IndexPrefix, gen), search.AnalysisIndexName(s.cfg.IndexPrefix, gen)} {
		if err := search.DropIndex(ctx, s.cfg.ES, s.cfg.IndexPrefix, index); err != nil {
			return err
		}
	}
	return dropSchema(ctx, s.cfg.DatabaseURL, s.StateSchema(gen))
}

// Positions implements Rebuildable: the fold's checkpoints.
func (s *Search) Positions(ctx context.Context, gen int64) (Offsets, error) {
	return postgresPositions(ctx, s.cfg.DatabaseURL, s.StateSchema(gen), search.ProjectorName)
}

// Checksum implements Rebuildable: it dumps the fold's tables and the
// indices' documents at one set of positions. It holds the checkpoint rows
// FOR SHARE, which waits for a batch in flight (whose documents may already
// be in Elasticsearch) to commit and keeps the next from starting until the
// dump is done.
func (s *Search) Checksum(ctx context.Context, gen int64, w io.Writer) ([]TableSum, Offsets, error) {
	schema := s.StateSchema(gen)
	pool, err := postgres.Connect(ctx, s.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // reads only: a failed rollback closes the connection, which ends the transaction
	if _, err := tx.Exec(ctx, `SELECT 1 FROM projection_checkpoints WHERE projector = $1 FOR SHARE`, search.ProjectorName); err != nil {
		return nil, nil, fmt.Errorf("lock checkpoints: %w", err)
	}
	at, err := checkpointsIn(ctx, tx, search.ProjectorName)
	if err != nil {
		return nil, nil, err
	}
	sums, err := pgproj.Dump(ctx, tx, schema, w, pgproj.DumpOptions{})
	if err != nil {
		return nil, nil, err
	}
	out := tableSums(sums)
	for _, idx := range []struct {
		name string
		dump func(context.Context, *elasticsearch.Client, string) ([]byte, error)
		of   string
	}{
		{"elasticsearch analyses", search.DumpAnalyses, search.AnalysisIndexName(s.cfg.IndexPrefix, gen)},
		{"elasticsearch investigations", search.Dump, search.IndexName(s.cfg.IndexPrefix, gen)},
	} {
		dump, err := idx.dump(ctx, s.cfg.ES, idx.of)
		if err != nil {
			return nil, nil, err
		}
		for line := range strings.Lines(string(dump)) {
			if _, err := io.WriteString(w, idx.name+": "+line); err != nil {
				return nil, nil, err
			}
		}
		h := sha256.Sum256(dump)
		out = append(out, TableSum{Table: idx.name, Rows: int64(strings.Count(string(dump), "\n")), SHA256: hex.EncodeToString(h[:])})
	}
	return out, at, nil
}
