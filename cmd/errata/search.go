package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/targets"
)

// The corpus-search projection: its projector (Postgres fold + Elasticsearch
// documents), its store set-up, its rebuild for `errata replay`/`verify`,
// and the Searcher behind the public searchInvestigations.
func init() {
	projectorFactories[search.ProjectorName] = newSearchRunner
	migrators[search.ProjectorName] = func(ctx context.Context, e *env) error {
		es, err := e.elasticsearch()
		if err != nil {
			return err
		}
		return prepareSearch(ctx, e, es, 1, true)
	}
	rebuildables[search.ProjectorName] = searchRebuild{}
}

// elasticsearch returns a client for ERRATA_ELASTICSEARCH_URL.
func (e *env) elasticsearch() (*elasticsearch.Client, error) {
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{e.cfg.ElasticsearchURL}})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch client: %w", err)
	}
	return es, nil
}

// searcher is the corpus search for the public GraphQL API: it reads
// through the alias, so it follows `errata replay` switches by itself.
func (e *env) searcher(context.Context) (*search.Searcher, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	return search.NewSearcher(es, search.AliasName(e.cfg.SearchIndexPrefix)), nil
}

// analysisSearcher is the search of COMPLETE verdict analyses (public
// GraphQL searchAnalyses), through its alias.
func (e *env) analysisSearcher(context.Context) (*search.AnalysisSearcher, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	return search.NewAnalysisSearcher(es, search.AnalysisAliasName(e.cfg.SearchIndexPrefix)), nil
}

// searchApplier is the search applier of generation gen: investigations
// and verdict analyses, each into its own index.
func searchApplier(e *env, es *elasticsearch.Client, gen int64) *search.Applier {
	return search.NewApplierFor(es, search.IndexName(e.cfg.SearchIndexPrefix, gen)).
		WithAnalyses(search.AnalysisIndexName(e.cfg.SearchIndexPrefix, gen))
}

// searchStateSchema is the Postgres schema of generation gen's fold.
func searchStateSchema(gen int64) string { return targets.Name(search.StateSchema, gen) }

// prepareSearch migrates generation gen's state schema and creates its
// indices (investigations, analyses); with alias set, it also points each
// alias there when it does not exist yet (never moving an existing one).
// Idempotent.
func prepareSearch(ctx context.Context, e *env, es *elasticsearch.Client, gen int64, alias bool) error {
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, searchStateSchema(gen))
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, searchStateSchema(gen), search.Migrations(), e.log); err != nil {
		return err
	}
	if alias {
		return search.Ensure(ctx, es, e.cfg.SearchIndexPrefix, gen)
	}
	return search.CreateGeneration(ctx, es, e.cfg.SearchIndexPrefix, gen)
}

// newSearchRunner wires the search projector of generation generationOf(ctx)
// to a consumer-group runner whose positions are the fold's checkpoints.
func newSearchRunner(ctx context.Context, e *env) (*kafka.Runner, func(), error) {
	gen := generationOf(ctx)
	es, err := e.elasticsearch()
	if err != nil {
		return nil, nil, err
	}
	if err := prepareSearch(ctx, e, es, gen, true); err != nil {
		return nil, nil, err
	}
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, searchStateSchema(gen))
	if err != nil {
		return nil, nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	group := e.cfg.TopicPrefix + "projector." + search.ProjectorName
	dl := kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log)
	proj := pgproj.NewProjector(search.ProjectorName, pool, e.registry, searchApplier(e, es, gen), dl, e.log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         servingTopics(e),
		Positions:      proj,
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
		Observer:       e.batchObserver(),
	}, proj, e.log)
	if err != nil {
		producer.Close()
		pool.Close()
		return nil, nil, err
	}
	return r, func() { producer.Close(); pool.Close() }, nil
}

// searchRebuild rebuilds the search projection: generation N is the state
// schema targets.Name("search_state", N) and the indices
// <prefix>investigations-vN and <prefix>analyses-vN; switching moves both
// aliases.
type searchRebuild struct{}

func (searchRebuild) topics(e *env) []string { return servingTopics(e) }

func (searchRebuild) open(ctx context.Context, e *env, gen int64) (kafka.Handler, kafka.PositionStore, func(), error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, nil, nil, err
	}
	// A rebuilt generation gets its alias only when switched to.
	if err := prepareSearch(ctx, e, es, gen, gen == 1); err != nil {
		return nil, nil, nil, err
	}
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, searchStateSchema(gen))
	if err != nil {
		return nil, nil, nil, err
	}
	proj := pgproj.NewProjector(search.ProjectorName, pool, e.registry, searchApplier(e, es, gen), noDeadLetters{e.log}, e.log)
	return proj, proj, pool.Close, nil
}

// generations are those whose state schema or index exists.
func (searchRebuild) generations(ctx context.Context, e *env) ([]int64, error) {
	gens, err := schemaGenerations(ctx, e, search.StateSchema)
	if err != nil {
		return nil, err
	}
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	infos, err := search.Indices(ctx, es, e.cfg.SearchIndexPrefix)
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

func (searchRebuild) activate(ctx context.Context, e *env, gen int64) error {
	es, err := e.elasticsearch()
	if err != nil {
		return err
	}
	return search.PointGeneration(ctx, es, e.cfg.SearchIndexPrefix, gen)
}

func (searchRebuild) drop(ctx context.Context, e *env, gen int64) error {
	es, err := e.elasticsearch()
	if err != nil {
		return err
	}
	for _, index := range []string{search.IndexName(e.cfg.SearchIndexPrefix, gen), search.AnalysisIndexName(e.cfg.SearchIndexPrefix, gen)} {
		if err := search.DropIndex(ctx, es, e.cfg.SearchIndexPrefix, index); err != nil {
			return err
		}
	}
	return dropSchema(ctx, e, searchStateSchema(gen))
}

func (searchRebuild) positions(ctx context.Context, e *env, gen int64) (replay.Offsets, error) {
	return postgresPositions(ctx, e, searchStateSchema(gen), search.ProjectorName)
}

// checksum dumps the fold's tables and the index's documents at one set of
// positions: it holds the checkpoint rows FOR SHARE, which waits for a
// batch in flight (whose documents may already be in Elasticsearch) to
// commit and keeps the next from starting until the dump is done.
func (searchRebuild) checksum(ctx context.Context, e *env, gen int64, w io.Writer) ([]tableSum, replay.Offsets, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, nil, err
	}
	schema := searchStateSchema(gen)
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, nil, err
	}
	defer pool.Close()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
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
	out := make([]tableSum, len(sums), len(sums)+2)
	for i, s := range sums {
		out[i] = tableSum(s)
	}
	for _, idx := range []struct {
		name string
		dump func(context.Context, *elasticsearch.Client, string) ([]byte, error)
		of   string
	}{
		{"elasticsearch analyses", search.DumpAnalyses, search.AnalysisIndexName(e.cfg.SearchIndexPrefix, gen)},
		{"elasticsearch investigations", search.Dump, search.IndexName(e.cfg.SearchIndexPrefix, gen)},
	} {
		dump, err := idx.dump(ctx, es, idx.of)
		if err != nil {
			return nil, nil, err
		}
		for line := range strings.Lines(string(dump)) {
			if _, err := io.WriteString(w, idx.name+": "+line); err != nil {
				return nil, nil, err
			}
		}
		h := sha256.Sum256(dump)
		out = append(out, tableSum{Table: idx.name, Rows: int64(strings.Count(string(dump), "\n")), SHA256: hex.EncodeToString(h[:])})
	}
	return out, at, nil
}
