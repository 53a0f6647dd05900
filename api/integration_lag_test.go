package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// lagStack is two API processes (each with its own registration backlog)
// over real Kafka and Postgres, and a serving projector that starts only
// when the test says so.
type lagStack struct {
	*bundle
	servers  [2]*Server
	backlogs [2]*serving.Backlog
	start    func()
}

func setupLag(t *testing.T, ipRangeDailyCap int) *lagStack {
	t.Helper()
	dbURL := teststack.Database(t) // the serving schema migrated already
	brokers, topics := testenv.Kafka(t, testPartitions)
	log := testLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pool, err := postgres.Connect(ctx, dbURL, testSchema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgproj.Migrate(ctx, pool, testSchema, serving.Migrations(), log))
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	require.NoError(t, kafka.Ping(ctx, producer))
	adminClient, err := kafka.NewClient(brokers)
	require.NoError(t, err)
	t.Cleanup(adminClient.Close)
	registry := events.NewCatalogRegistry()
	appender := producers.NewAppender(producer, registry, topics, nil)

	s := &lagStack{bundle: &bundle{pool: pool, admin: kadm.NewClient(adminClient), topics: topics,
		postsTopic: topics.Name(events.TopicPosts), runnerDone: make(chan error, 1), appender: appender,
		watermark: pgproj.NewWatermark(pool, serving.ProjectorName), brokers: brokers}}
	runCtx, stop := context.WithCancel(context.Background())
	var stopped []chan struct{}
	t.Cleanup(func() {
		stop()
		for _, c := range stopped {
			<-c
		}
	})
	for i := range s.servers {
		b, err := serving.NewBacklog(serving.BacklogConfig{Brokers: brokers, Topic: s.postsTopic, Registry: registry,
			Pool: pool, Log: log.With("backlog", i)})
		require.NoError(t, err)
		done := make(chan struct{})
		stopped = append(stopped, done)
		go func() {
			defer close(done)
			defer b.Close()
			if err := b.Run(runCtx); err != nil {
				t.Errorf("backlog %d: %v", i, err)
			}
		}()
		srv, err := New(Config{
			MinExtensionVersion: "0.2.0", TrustedProxyHeader: "X-Forwarded-For",
			// The projector is stopped: registration waits this long, then
			// answers anyway (the event is durable).
			ReadYourWritesTimeout: 200 * time.Millisecond,
			OpenAIBaseURL:         unreachableOpenAI,
		}, ingest.NewService(appender), serving.NewReader(pool), s.watermark, ingest.NewHasher(testHashSecret), log,
			WithBacklog(b))
		require.NoError(t, err)
		s.servers[i], s.backlogs[i] = srv, b
	}
	s.server = s.servers[0]

	s.start = func() {
		group := topics.Prefix + "projector." + serving.ProjectorName
		dl := kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), group, log)
		proj := pgproj.NewProjector(serving.ProjectorName, pool, registry, serving.NewApplier(ipRangeDailyCap), dl, log)
		var topicNames []string
		for _, tp := range registry.Topics() {
			topicNames = append(topicNames, topics.Name(tp))
		}
		runner, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: group, Topics: topicNames, Positions: proj}, proj, log)
		require.NoError(t, err)
		done := make(chan struct{})
		stopped = append(stopped, done)
		go func() {
			defer close(done)
			err := runner.Run(runCtx)
			if err != nil && !errors.Is(err, context.Canceled) {
				s.runnerDone <- err
			}
		}()
	}
	return s
}

// viewStep is one recordViewAndGetStatus call from an address.
type viewStep struct {
	name string
	from string // X-Forwarded-For as the trusted proxy sets it
}

// viewSteps are several viewers, repeats, a shared /24 over the cap of 2
// and another range: 7 views, 3 unique-view credits.
var viewSteps = []viewStep{
	{"first view of viewer A", "1.2.3.4"},
	{"second view of viewer A the same day", "1.2.3.4"},
	{"viewer A behind a client-supplied hop", "203.0.113.9, 1.2.3.4"},
	{"viewer B in the same /24", "1.2.3.5"},
	{"viewer C in the same /24 is over the range cap", "1.2.3.6"},
	{"viewer D in another range", "5.6.7.8"},
	{"viewer D again", "5.6.7.8"},
}

func registerXPost(t *testing.T, s *Server, externalID, text string) string {
	t.Helper()
	r := post(t, s, "post.registerObservedVersion", mustRaw(t, map[string]any{
		"platform": "X", "externalId": externalID, "url": "https://x.com/v/status/" + externalID,
		"observedContentText": text,
		"metadata":            map[string]any{"authorHandle": "v", "text": text, "mediaUrls": []any{}},
	}))
	var out struct {
		PostVersionID string `json:"postVersionId"`
	}
	require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
	return out.PostVersionID
}

func recordView(t *testing.T, s *Server, postVersionID, from string) response {
	t.Helper()
	return do(t, s, request{path: "/trpc/post.recordViewAndGetStatus",
		body:    mustRaw(t, map[string]any{"postVersionId": postVersionID}),
		headers: map[string]string{"X-Forwarded-For": from, "User-Agent": "Mozilla/5.0 test"}})
}

type creditPair struct{ Viewer, Range string }

func (b *bundle) creditPairs(t *testing.T, postID string) []creditPair {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT viewer_key, ip_range_key FROM post_view_credits WHERE post_id = $1 ORDER BY created_at`, postID)
	require.NoError(t, err)
	pairs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[creditPair])
	require.NoError(t, err)
	return pairs
}

// TestIntegrationViewsWhileProjectionIsStopped: with the serving projector
// stopped, a version is registered through one API process and viewed
// through both (the second never saw the registration: it reads it from the
// log). Every view is answered NOT_INVESTIGATED and appended; once the
// projector starts, the counts and credits are exactly those of the same
// views of a post registered while it runs. Views of ids never registered
// append nothing and leave the backlog as it was.
func TestIntegrationViewsWhileProjectionIsStopped(t *testing.T) {
	t.Parallel()
	s := setupLag(t, 2)
	ctx := context.Background()

	lagged := registerXPost(t, s.servers[0], "1790000000000000101", "A post viewed while nothing is projected.")
	laggedPost := events.PostID("X", "1790000000000000101")
	_, known := s.counters(t, laggedPost)
	require.False(t, known, "the projector is stopped")
	for i, step := range viewSteps {
		r := recordView(t, s.servers[i%2], lagged, step.from)
		require.Equal(t, notInvestigatedBody, string(r.body), step.name)
	}

	// Ids nobody registered: answered like today, nothing appended, and the
	// backlogs keep only the one registration.
	before := s.eventCount(t)
	began := time.Now()
	for range 20 {
		start := time.Now()
		r := recordView(t, s.servers[1], uuid.NewString(), "9.9.9.9")
		require.Equal(t, notInvestigatedBody, string(r.body))
		require.Less(t, time.Since(start), 2*time.Second, "a lookup of an unknown id waits only for the log's end")
	}
	t.Logf("a view of an unknown id took %v on average", time.Since(began)/20)
	require.Equal(t, before, s.eventCount(t), "views of unknown versions append nothing")
	for i, b := range s.backlogs {
		require.Equal(t, 1, b.Len(), "backlog %d", i)
	}
	_, known = s.counters(t, laggedPost)
	require.False(t, known, "still nothing projected")

	s.start()
	got := s.waitViews(t, laggedPost, int64(len(viewSteps)))

	// The same views of a post registered while the projector runs.
	caughtUp := registerXPost(t, s.servers[0], "1790000000000000102", "A post viewed while everything is projected.")
	caughtUpPost := events.PostID("X", "1790000000000000102")
	for i, step := range viewSteps {
		r := recordView(t, s.servers[i%2], caughtUp, step.from)
		require.Equal(t, notInvestigatedBody, string(r.body), step.name)
		s.waitViews(t, caughtUpPost, int64(i+1))
	}
	want, _ := s.counters(t, caughtUpPost)
	require.Equal(t, postCounters{ViewCount: 7, UniqueViewScore: 3}, want)
	require.Equal(t, want, got)
	require.Equal(t, s.creditPairs(t, caughtUpPost), s.creditPairs(t, laggedPost))
	require.Len(t, s.creditPairs(t, laggedPost), 3)

	// Exactly once: no view was appended twice, and nothing else changed.
	var views int64
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT sum(view_count) FROM posts`).Scan(&views))
	require.Equal(t, int64(2*len(viewSteps)), views)
	var versions int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM post_versions`).Scan(&versions))
	require.Equal(t, 2, versions)

	// The backlogs drop what the projection has applied.
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		n0, n1 := s.backlogs[0].Len(), s.backlogs[1].Len()
		return n0 == 0 && n1 == 0, fmt.Sprintf("backlogs hold %d and %d versions", n0, n1)
	})
	// And a view now goes through the projection.
	r := recordView(t, s.servers[1], lagged, "7.7.7.7")
	require.Equal(t, notInvestigatedBody, string(r.body))
	require.Equal(t, postCounters{ViewCount: 8, UniqueViewScore: 4}, s.waitViews(t, laggedPost, 8))
}
