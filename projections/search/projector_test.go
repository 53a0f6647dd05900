package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// TestAnyOrderGivesTheSameDocuments folds the corpus three ways into three
// indices: posts then investigations; investigations first (a rebuild may
// apply a completion before its version's registration); and one event
// per transaction in a shuffled order that keeps each topic's per-key
// order. The documents are the same, and a completion alone indexes nothing.
func TestAnyOrderGivesTheSameDocuments(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	c := corpus()

	// 1: posts first.
	idx1 := search.IndexName(pfx, 1)
	require.NoError(t, search.CreateIndex(ctx, es, idx1))
	a1 := search.NewApplierFor(es, idx1)
	p1 := state(t, dbURL, "search_one")
	apply(t, p1, a1, allPosts(c))
	apply(t, p1, a1, allInvestigations(c))

	// 2: investigations first: nothing is indexed until the versions come.
	idx2 := search.IndexName(pfx, 2)
	require.NoError(t, search.CreateIndex(ctx, es, idx2))
	a2 := search.NewApplierFor(es, idx2)
	p2 := state(t, dbURL, "search_two")
	apply(t, p2, a2, allInvestigations(c))
	docs, err := search.ReadAll(ctx, es, idx2)
	require.NoError(t, err)
	require.Empty(t, docs, "a completion without its version's registration has no document yet")
	apply(t, p2, a2, allPosts(c))

	// 3: one event at a time, the two topics randomly interleaved.
	idx3 := search.IndexName(pfx, 3)
	require.NoError(t, search.CreateIndex(ctx, es, idx3))
	a3 := search.NewApplierFor(es, idx3)
	p3 := state(t, dbURL, "search_three")
	posts, invs := allPosts(c), allInvestigations(c)
	rng := rand.New(rand.NewPCG(7, 11))
	for len(posts)+len(invs) > 0 {
		if len(invs) == 0 || (len(posts) > 0 && rng.IntN(2) == 0) {
			apply(t, p3, a3, posts[:1])
			posts = posts[1:]
		} else {
			apply(t, p3, a3, invs[:1])
			invs = invs[1:]
		}
	}

	d1, err := search.Dump(ctx, es, idx1)
	require.NoError(t, err)
	d2, err := search.Dump(ctx, es, idx2)
	require.NoError(t, err)
	d3, err := search.Dump(ctx, es, idx3)
	require.NoError(t, err)
	require.Equal(t, 7, countLines(d1), "the seven complete investigations")
	require.Equal(t, string(d1), string(d2))
	require.Equal(t, string(d1), string(d3))

	// Revisions count the events folded into each document, however they
	// were batched or interleaved.
	s1, err := search.ReadAll(ctx, es, idx1)
	require.NoError(t, err)
	s3, err := search.ReadAll(ctx, es, idx3)
	require.NoError(t, err)
	for i := range s1 {
		require.Equal(t, s1[i].Version, s3[i].Version, s1[i].ID)
	}
	eiffel := c[0]
	for _, d := range s1 {
		if d.ID == eiffel.investigationID {
			require.Equal(t, int64(len(eiffel.posts)+1), d.Version, "three registrations and the completion")
		}
	}
}

// TestRedeliveryIsIdempotent simulates a process that dies after
// Elasticsearch accepted a batch's documents but before the transaction
// committed: the batch is delivered again and folds to the same revisions
// and the same documents (Elasticsearch answers 409, which is success).
func TestRedeliveryIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	idx := search.IndexName(pfx, 1)
	require.NoError(t, search.CreateIndex(ctx, es, idx))
	pool := state(t, testenv.Postgres(t), search.StateSchema)
	a := search.NewApplierFor(es, idx)
	c := corpus()
	apply(t, pool, a, allPosts(c))

	batch := handled(a, allInvestigations(c))
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Apply(ctx, tx, batch))
	require.NoError(t, tx.Rollback(ctx), "the process dies before the commit")
	before, err := search.ReadAll(ctx, es, idx)
	require.NoError(t, err)
	require.Len(t, before, 7, "Elasticsearch has the documents already")

	apply(t, pool, a, batch) // redelivery
	after, err := search.ReadAll(ctx, es, idx)
	require.NoError(t, err)
	require.Equal(t, before, after, "same _source and same _version")

	// A later event moves the document to a newer revision.
	b := &builder{reg: events.NewCatalogRegistry(), n: 1000}
	again := *c[1].posts[0].Payload.(*events.PostVersionRegisteredV1)
	again.ReporterKey = hash("reporter:new")
	apply(t, pool, a, []events.Event{b.event(&again, start.Add(30*24*time.Hour))})
	later, err := search.ReadAll(ctx, es, idx)
	require.NoError(t, err)
	for i := range later {
		if later[i].ID == c[1].investigationID {
			require.Equal(t, after[i].Version+1, later[i].Version)
			require.Contains(t, string(later[i].Source), `"corroboration_count":2`)
		} else {
			require.Equal(t, after[i], later[i])
		}
	}
}

// TestReplayFromTheLogIsIdentical appends the corpus to real Kafka, runs
// the search projector (pgproj exactly-once machinery, consumer-group
// runner) into a state schema and index, then replays the topics from
// offset 0 with another group into a fresh schema and index: the dumps are
// identical.
func TestReplayFromTheLogIsIdentical(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	brokers, topics := testenv.Kafka(t, 3)
	dbURL := testenv.Postgres(t)
	reg := events.NewCatalogRegistry()
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()
	c := corpus()
	// Investigations first: the projector may see completions before the
	// registrations they need.
	positions, err := producers.NewAppender(producer, reg, topics, nil).Append(ctx, append(allInvestigations(c), allPosts(c)...)...)
	require.NoError(t, err)

	run := func(gen int64, schema string) []byte {
		t.Helper()
		idx := search.IndexName(pfx, gen)
		require.NoError(t, search.Ensure(ctx, es, pfx, gen))
		pool := state(t, dbURL, schema)
		group := topics.Prefix + "projector.search." + schema
		dl := kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), group, logging.Discard())
		proj := pgproj.NewProjector(search.ProjectorName, pool, reg, search.NewApplierFor(es, idx), dl, logging.Discard())
		var all []string
		for _, tp := range reg.Topics() {
			all = append(all, topics.Name(tp))
		}
		r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: group, Topics: all, Positions: proj}, proj, logging.Discard())
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		go func() { ran <- r.Run(runCtx) }()
		wm := pgproj.NewWatermark(pool, search.ProjectorName)
		for _, p := range positions {
			require.NoError(t, wm.WaitFor(ctx, p.Topic, p.Partition, p.Offset, time.Minute))
		}
		stop()
		if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
			require.NoError(t, err)
		}
		dump, err := search.Dump(ctx, es, idx)
		require.NoError(t, err)
		return dump
	}
	live := run(1, "search_state")
	replayed := run(2, "search_state_g2")
	require.Equal(t, 7, countLines(live))
	require.Equal(t, string(live), string(replayed))

	// The alias still points at generation 1 (Ensure never moves it); a
	// switch moves it atomically, and the old index can then be dropped.
	alias := search.AliasName(pfx)
	targets, err := search.AliasTargets(ctx, es, alias)
	require.NoError(t, err)
	require.Equal(t, []string{search.IndexName(pfx, 1)}, targets)
	require.ErrorContains(t, search.DropIndex(ctx, es, pfx, search.IndexName(pfx, 1)), "points at it")
	require.NoError(t, search.PointAlias(ctx, es, alias, search.IndexName(pfx, 2)))
	targets, err = search.AliasTargets(ctx, es, alias)
	require.NoError(t, err)
	require.Equal(t, []string{search.IndexName(pfx, 2)}, targets)
	infos, err := search.Indices(ctx, es, pfx)
	require.NoError(t, err)
	// Ensure made each generation's analyses index too; the analyses alias
	// stayed on generation 1.
	require.Equal(t, []search.IndexInfo{
		{Name: search.IndexName(pfx, 1), Generation: 1},
		{Name: search.AnalysisIndexName(pfx, 1), Generation: 1, Analyses: true, Aliased: true},
		{Name: search.IndexName(pfx, 2), Generation: 2, Aliased: true},
		{Name: search.AnalysisIndexName(pfx, 2), Generation: 2, Analyses: true},
	}, infos)
	require.NoError(t, search.DropIndex(ctx, es, pfx, search.IndexName(pfx, 1)))
	require.ErrorContains(t, search.DropIndex(ctx, es, pfx, search.AnalysisIndexName(pfx, 1)), "points at it")
	require.NoError(t, search.PointGeneration(ctx, es, pfx, 2))
	require.NoError(t, search.DropIndex(ctx, es, pfx, search.AnalysisIndexName(pfx, 1)))
	infos, err = search.Indices(ctx, es, pfx)
	require.NoError(t, err)
	require.Equal(t, []search.IndexInfo{
		{Name: search.IndexName(pfx, 2), Generation: 2, Aliased: true},
		{Name: search.AnalysisIndexName(pfx, 2), Generation: 2, Analyses: true, Aliased: true},
	}, infos)
	res, err := search.NewSearcher(es, alias).Search(ctx, search.Query{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, int64(7), res.Total, "readers follow the alias")
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// TestElasticsearchFailureRollsBack: when Elasticsearch refuses a batch's
// documents, Apply fails, so the transaction (fold, revisions, checkpoint)
// rolls back and the runner retries the batch from the same state.
func TestElasticsearchFailureRollsBack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fake := &fakeBulk{script: func(int, []string) (int, []int) { return http.StatusServiceUnavailable, nil }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	broken, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{srv.URL}, DisableRetry: true})
	require.NoError(t, err)
	pool := state(t, testenv.Postgres(t), search.StateSchema)
	c := corpus()
	good := search.NewApplierFor(esClient(t), "unused-no-documents-yet")
	apply(t, pool, good, allPosts(c)) // no document is complete yet: nothing is indexed

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	err = search.NewApplierFor(broken, "idx").Apply(ctx, tx, handled(good, allInvestigations(c)))
	require.ErrorContains(t, err, "HTTP 503")
	require.NoError(t, tx.Rollback(ctx))
	require.Len(t, fake.calls, 1)
	require.Len(t, fake.calls[0], 7, "the seven complete investigations were sent")

	var investigations, revisions int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM investigations), (SELECT coalesce(sum(revision), 0) FROM documents)`).
		Scan(&investigations, &revisions))
	require.Zero(t, investigations, "the failed batch left nothing")
	require.Equal(t, int64(len(allPosts(c))), revisions, "only the committed registrations count")
}

// TestConcurrentPartitionsConverge applies the posts and the
// investigations of the corpus in two concurrent transactions (two
// partitions handled by two workers): the document row lock makes the
// later one wait and build on what the first committed, so the index ends
// with the complete documents whichever commits first.
func TestConcurrentPartitionsConverge(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	c := corpus()

	want := search.IndexName(pfx, 1)
	require.NoError(t, search.CreateIndex(ctx, es, want))
	a := search.NewApplierFor(es, want)
	p := state(t, dbURL, "search_seq")
	apply(t, p, a, allPosts(c))
	apply(t, p, a, allInvestigations(c))
	wantDump, err := search.Dump(ctx, es, want)
	require.NoError(t, err)

	for round := 2; round <= 4; round++ {
		idx := search.IndexName(pfx, int64(round))
		require.NoError(t, search.CreateIndex(ctx, es, idx))
		a := search.NewApplierFor(es, idx)
		pool := state(t, dbURL, fmt.Sprintf("search_conc_%d", round))
		errs := make(chan error, 2)
		for _, batch := range [][]events.Event{allPosts(c), allInvestigations(c)} {
			go func() {
				tx, err := pool.Begin(ctx)
				if err != nil {
					errs <- err
					return
				}
				defer tx.Rollback(ctx)
				if err := a.Apply(ctx, tx, handled(a, batch)); err != nil {
					errs <- err
					return
				}
				errs <- tx.Commit(ctx)
			}()
		}
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		got, err := search.Dump(ctx, es, idx)
		require.NoError(t, err)
		require.Equal(t, string(wantDump), string(got), "round %d", round)
	}
}

// TestBestRegistrationDescribesTheVersion registers one version three
// times with different URLs and authors (client, client, then server
// verified) and folds them in every order: the document always shows the
// verified registration's URL and author and the earliest verification.
func TestBestRegistrationDescribesTheVersion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	c := build(postSpec{name: "best", platform: events.PlatformX, author: "client-view", outcome: "complete",
		text: "The Great Pyramid was built by slaves.", claims: []claimSpec{{text: "built by slaves",
			summary: "Paid workers built it.", reasoning: "Workers' tombs and payroll records were found at Giza.", sourceTitle: "Giza"}}})[0]
	b := &builder{reg: events.NewCatalogRegistry(), n: 2000}
	first := c.posts[0].Payload.(*events.PostVersionRegisteredV1)
	other := *first
	other.URL = "https://x.com/other/status/best"
	verified := *first
	verified.Provenance, verified.ServerFetchError = events.ProvenanceServerVerified, ""
	verified.URL = "https://x.com/canonical/status/best"
	verified.Author = &events.AuthorV1{PlatformUserID: "canonical", DisplayName: "Canonical Name"}
	verified2 := verified
	verified2.URL = "https://x.com/later/status/best"
	regs := []events.Event{
		c.posts[0],
		b.event(&other, start.Add(-time.Hour)), // earlier, but client-observed
		b.event(&verified, start.Add(time.Hour)),
		b.event(&verified2, start.Add(2*time.Hour)), // verified, but later
	}
	orders := [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}}
	var dumps []string
	for i, order := range orders {
		idx := search.IndexName(pfx, int64(i+1))
		require.NoError(t, search.CreateIndex(ctx, es, idx))
		a := search.NewApplierFor(es, idx)
		pool := state(t, dbURL, fmt.Sprintf("search_best_%d", i))
		apply(t, pool, a, c.investigation)
		for _, k := range order {
			apply(t, pool, a, regs[k:k+1])
		}
		docs, err := search.ReadAll(ctx, es, idx)
		require.NoError(t, err)
		require.Len(t, docs, 1)
		var s search.Source
		require.NoError(t, json.Unmarshal(docs[0].Source, &s))
		require.Equal(t, "https://x.com/canonical/status/best", s.URL, "order %v", order)
		require.Equal(t, events.AuthorID(events.PlatformX, "canonical"), *s.AuthorID)
		require.Equal(t, "Canonical Name", *s.AuthorDisplayName)
		require.Equal(t, "2026-11-01T10:00:00.000000Z", *s.ServerVerifiedAt)
		require.Equal(t, int64(5), docs[0].Version, "four registrations and the completion")
		d, err := search.Dump(ctx, es, idx)
		require.NoError(t, err)
		dumps = append(dumps, string(d))
	}
	for _, d := range dumps[1:] {
		require.Equal(t, dumps[0], d)
	}
}
