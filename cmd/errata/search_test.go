package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/search"
)

// TestSearchWiring runs what `errata migrate` and `errata worker
// --projectors search` run, on a private topic prefix, database and index
// prefix: the projector folds a mixed workload, the GraphQL searcher finds
// exactly its complete investigations through the alias; then the
// rebuild hooks build generation 2 from offset 0, its checksum equals the
// live one's, the switch moves the alias and generation 1 can be dropped.
func TestSearchWiring(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	brokers, topics := testenv.Kafka(t, 3)
	cfg := testenv.Config(t)
	cfg.KafkaBrokers, cfg.TopicPrefix = brokers, topics.Prefix
	cfg.DatabaseURL = testenv.Postgres(t)
	cfg.SearchIndexPrefix = "errata-test-" + testenv.Suffix() + "-"
	e := newEnv(cfg, logging.Discard())
	es, err := e.elasticsearch()
	require.NoError(t, err)
	t.Cleanup(func() {
		infos, err := search.Indices(context.Background(), es, cfg.SearchIndexPrefix)
		if err != nil {
			return
		}
		for _, in := range infos {
			if res, err := es.Indices.Delete([]string{in.Name}); err == nil {
				res.Body.Close()
			}
		}
	})

	require.NoError(t, migrateSearch(ctx, e))
	require.NoError(t, migrateSearch(ctx, e), "migrate is idempotent")

	evs := mixedWorkload(t)
	complete := map[string]bool{}
	for _, ev := range evs {
		if c, ok := ev.Payload.(*events.InvestigationCompletedV1); ok {
			complete[c.InvestigationID] = true
		}
	}
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()
	positions, err := producers.NewAppender(producer, e.registry, topics, nil).Append(ctx, evs...)
	require.NoError(t, err)

	p, err := searchProjection(e)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	r, release, err := p.start(runCtx, 1)
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(runCtx) }()
	rb, err := e.searchStore()
	require.NoError(t, err)
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, rb.StateSchema(1))
	require.NoError(t, err)
	defer pool.Close()
	wm := pgproj.NewWatermark(pool, search.ProjectorName)
	for _, p := range positions {
		require.NoError(t, wm.WaitFor(ctx, p.Topic, p.Partition, p.Offset, time.Minute))
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		require.NoError(t, err)
	}
	release()

	s, err := e.searcher(ctx)
	require.NoError(t, err)
	require.NoError(t, search.Refresh(ctx, es, search.AliasName(cfg.SearchIndexPrefix)))
	res, err := s.Search(ctx, search.Query{Limit: 100})
	require.NoError(t, err)
	require.Equal(t, int64(len(complete)), res.Total)
	for _, h := range res.Hits {
		require.True(t, complete[h.InvestigationID], h.InvestigationID)
	}
	res, err = s.Search(ctx, search.Query{Limit: 100, Text: "record says otherwise", MinClaimCount: 2})
	require.NoError(t, err)
	require.NotZero(t, res.Total)
	for _, h := range res.Hits {
		require.Equal(t, 2, h.ClaimCount)
	}

	// The rebuild hooks `errata replay` and `verify` use.
	var live bytes.Buffer
	liveSums, at, err := rb.Checksum(ctx, 1, &live)
	require.NoError(t, err)
	require.NotEmpty(t, at)
	require.Equal(t, "elasticsearch investigations", liveSums[len(liveSums)-1].Table)
	require.Equal(t, int64(len(complete)), liveSums[len(liveSums)-1].Rows)
	proj, closeGen, err := rb.Open(ctx, 2)
	require.NoError(t, err)
	_, err = replay.CatchUp(ctx, replay.Config{Brokers: brokers, Until: at, Handler: proj, Positions: proj}, logging.Discard())
	require.NoError(t, err)
	closeGen()
	var rebuilt bytes.Buffer
	rebuiltSums, _, err := rb.Checksum(ctx, 2, &rebuilt)
	require.NoError(t, err)
	require.Equal(t, live.String(), rebuilt.String())
	require.Equal(t, liveSums, rebuiltSums)

	gens, err := rb.Generations(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{1, 2}, gens)
	require.Error(t, rb.Drop(ctx, 1), "the alias still points at generation 1")
	require.NoError(t, rb.Activate(ctx, 2))
	targets, err := search.AliasTargets(ctx, es, search.AliasName(cfg.SearchIndexPrefix))
	require.NoError(t, err)
	require.Equal(t, []string{search.IndexName(cfg.SearchIndexPrefix, 2)}, targets)
	require.NoError(t, rb.Drop(ctx, 1))
	gens, err = rb.Generations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, gens)
	res, err = s.Search(ctx, search.Query{Limit: 1})
	require.NoError(t, err)
	require.Equal(t, int64(len(complete)), res.Total, "the searcher follows the alias to generation 2")
}
