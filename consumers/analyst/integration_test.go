package analyst

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/pgproj"
)

// stack is the analyst on the real local Kafka and Postgres: private
// topics, a fresh database, the run state's fold running, the production
// event log, and (from setup) the scripted fake OpenAI API and search
// stand-in.
type stack struct {
	*bundle
	t        *testing.T
	brokers  []string
	topics   events.Topics
	dbURL    string
	reg      *events.Registry
	app      *producers.Appender
	eventLog *investigator.EventLog
	group    *runstate.Group
	store    *Store
}

func newStack(t *testing.T) *stack {
	t.Helper()
	brokers, topics := testenv.Kafka(t, 2)
	dbURL := testenv.Postgres(t)
	s := &stack{bundle: setup(t), t: t, brokers: brokers, topics: topics, dbURL: dbURL, reg: events.NewCatalogRegistry()}
	cl, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	s.app = producers.NewAppender(cl, s.reg, topics, nil)
	s.eventLog = investigator.NewEventLog(s.app)
	s.group, s.store = s.openState(ProjectorName)
	s.deps.Now = time.Now // real time: the fold and the leases compare with it
	s.cfg.RetryBase = 50 * time.Millisecond
	return s
}

// openState opens a run state named name and runs its fold until the test
// ends.
func (s *stack) openState(name string) (*runstate.Group, *Store) {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g, store, err := OpenState(ctx, runstate.GroupConfig{Name: name, DatabaseURL: s.dbURL, Brokers: s.brokers,
		Topics: s.topics, Registry: s.reg}, logging.Discard())
	require.NoError(s.t, err)
	done := make(chan error, 1)
	go func() { done <- g.Runner.Run(ctx) }()
	s.t.Cleanup(func() { cancel(); <-done; g.Close() })
	return g, store
}

// startWorker runs an analyst executor named owner on appender (nil: the
// event log) and store's leases, over the analyses list lists (nil: all),
// until the returned stop is called or the test ends.
func (s *stack) startWorker(owner string, appender Appender, leases *runstate.Store, only string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg, deps := s.cfg, s.deps
	cfg.Worker = owner
	deps.Store = s.store
	deps.Appender = s.eventLog
	if appender != nil {
		deps.Appender = appender
	}
	if leases == nil {
		leases = s.group.Store
	}
	w := New(cfg, deps)
	list := w.List
	if only != "" {
		list = func(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
			all, err := w.List(ctx, now, 1000)
			var out []runstate.Work
			for _, wk := range all {
				if wk.InvestigationID == only {
					out = append(out, wk)
				}
			}
			return out, err
		}
	}
	ex := runstate.NewExecutor(runstate.ExecutorConfig{Owner: owner, Poll: 20 * time.Millisecond, LeaseTTL: time.Second},
		leases, list, w.Do, logging.Discard(), nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = ex.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	s.t.Cleanup(stop)
	return stop
}

// request appends an analysis request of text (as the API does: a new
// event id each time) and returns its analysis id.
func (s *stack) request(text string) string {
	s.t.Helper()
	req := request(text)
	ev, err := s.app.NewEvent(&req, "test", "")
	require.NoError(s.t, err)
	_, err = s.app.Append(context.Background(), ev)
	require.NoError(s.t, err)
	return req.AnalysisID
}

// waitStatus waits until the run state shows the analysis in status.
func (s *stack) waitStatus(id, status string) Run {
	s.t.Helper()
	var r Run
	testenv.Eventually(s.t, 60*time.Second, func() (bool, string) {
		var err error
		r, err = s.store.Analysis(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		return r.Status == status, fmt.Sprintf("status %s (attempt %d, %s)", r.Status, r.Attempt, r.LastFailure)
	})
	return r
}

// trail reads every event of an analysis from the log, in order.
func (s *stack) trail(id string) []events.Event {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := s.topics.Name(events.TopicAnalyses)
	cl, err := kafka.NewClient(s.brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(s.t, err)
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	require.NoError(s.t, err)
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	seen := map[int32]int64{}
	var out []events.Event
	for {
		done := true
		for p, end := range ends {
			if seen[p] < end {
				done = false
			}
		}
		if done {
			return out
		}
		fs := cl.PollFetches(ctx)
		require.NoError(s.t, ctx.Err(), "reading the log")
		fs.EachRecord(func(r *kgo.Record) {
			seen[r.Partition] = r.Offset + 1
			if string(r.Key) != id {
				return
			}
			ev, err := s.reg.Decode(r.Value)
			require.NoError(s.t, err)
			out = append(out, ev)
		})
	}
}

// count counts the events of a type in a trail.
func count(trail []events.Event, eventType string) int {
	n := 0
	for _, ev := range trail {
		if ev.Payload.EventType() == eventType {
			n++
		}
	}
	return n
}

// A false post end to end on Kafka and Postgres: every step's event in
// order, the verdict False with its caps recorded; an opinion-only text:
// Opinion without a single query; then a rebuild of the run state from
// offset 0 is identical to the live one.
func TestIntegrationVerdicts(t *testing.T) {
	s := newStack(t)
	s.startWorker("worker-a", nil, nil, "")
	falseID, opinionID := s.request(terwilligerPost), s.request(opinionPost)
	// A NUL (which Postgres refuses in text and jsonb) and a lone
	// surrogate's replacement in the text: the run state keeps the request,
	// and the model reads the text without the NUL.
	hostileID := s.request("Honestly, pineapple belongs on pizza.\x00 Anyone who disagrees has no taste. \uFFFD")
	s.waitStatus(falseID, events.StatusComplete)
	s.waitStatus(opinionID, events.StatusComplete)
	r := s.waitStatus(hostileID, events.StatusComplete)
	require.Contains(t, r.Request.Text, "\x00", "the run state keeps the request as appended")
	require.Equal(t, events.LabelOpinion, payloadsOf[*events.AnalysisPostVerdictV1](s.trail(hostileID))[0].Label)

	trail := s.trail(falseID)
	require.Equal(t, []string{"requested", "attempt_started", "exchange_recorded", "claim_extracted", "claim_triaged",
		"query_issued", "query_issued", "exchange_recorded", "source_assessed", "source_assessed", "claim_verdict",
		"exchange_recorded", "post_verdict", "completed"}, typesOf(trail))
	v := payloadsOf[*events.AnalysisClaimVerdictV1](trail)[0]
	require.Equal(t, events.LabelFalse, v.Label)
	require.Equal(t, []string{"stale_sources_current_events"}, capRules(v.Caps))
	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Contains(t, []string{events.LabelFalse, events.LabelMisleading}, post.Label)
	require.Contains(t, capRules(post.Caps), "stale_sources_current_events")
	require.Equal(t, "worker-a", payloadsOf[*events.AnalysisAttemptStartedV1](trail)[0].Worker)

	opinion := s.trail(opinionID)
	require.Zero(t, count(opinion, events.TypeAnalysisQueryIssuedV1))
	require.Equal(t, events.LabelOpinion, payloadsOf[*events.AnalysisPostVerdictV1](opinion)[0].Label)
	claims, researched, err := s.store.Counts(context.Background(), events.AnalysisRef{AnalysisID: opinionID, Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, []int{2, 0}, []int{claims, researched})

	s.requireReplayIdentical()
}

// requireReplayIdentical rebuilds the run state from offset 0 into a
// schema of its own and compares it with the live one, table by table
// (leases, runtime coordination, left out).
func (s *stack) requireReplayIdentical() {
	s.t.Helper()
	replay, _ := s.openState("analyst_replay")
	require.NoError(s.t, replay.Store.CatchUp(context.Background(), 30*time.Second))
	require.NoError(s.t, s.group.Store.CatchUp(context.Background(), 30*time.Second))
	dump := func(schema string) string {
		pool, err := pgxpool.NewWithConfig(context.Background(), mustPoolConfig(s.t, s.dbURL, schema))
		require.NoError(s.t, err)
		defer pool.Close()
		var b bytes.Buffer
		_, err = pgproj.Dump(context.Background(), pool, schema, &b, pgproj.DumpOptions{SkipUnlogged: true,
			Skip: []string{"projection_checkpoints"}})
		require.NoError(s.t, err)
		return b.String()
	}
	live, rebuilt := dump(ProjectorName), dump("analyst_replay")
	require.NotEmpty(s.t, live)
	require.Equal(s.t, live, rebuilt)
}

func mustPoolConfig(t *testing.T, dbURL, schema string) *pgxpool.Config {
	t.Helper()
	c, err := postgres.PoolConfig(dbURL, schema)
	require.NoError(t, err)
	return c
}

// Twenty concurrent requests of one text, two workers: one analysis, one
// attempt, one completion; the later requests change nothing.
func TestIntegrationConcurrentDuplicates(t *testing.T) {
	s := newStack(t)
	s.startWorker("worker-a", nil, nil, "")
	s.startWorker("worker-b", nil, nil, "")
	var wg sync.WaitGroup
	ids := make([]string, 20)
	for i := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = s.request(falsePost) }()
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
	s.waitStatus(ids[0], events.StatusComplete)
	// A late duplicate after completion starts nothing either.
	s.request(falsePost)
	require.NoError(t, s.group.Store.CatchUp(context.Background(), 30*time.Second))
	r, err := s.store.Analysis(context.Background(), ids[0])
	require.NoError(t, err)
	require.Equal(t, []any{events.StatusComplete, 1}, []any{r.Status, r.Attempt})

	trail := s.trail(ids[0])
	require.Equal(t, 21, count(trail, events.TypeAnalysisRequestedV1))
	require.Equal(t, 1, count(trail, events.TypeAnalysisAttemptStartedV1))
	require.Equal(t, 1, count(trail, events.TypeAnalysisCompletedV1))
	require.Zero(t, count(trail, events.TypeAnalysisFailedV1))
	require.Equal(t, 3, len(s.fake.RequestsTo("/v1/responses")), "extract, stance, summary: once")
	var steps []string
	for _, ev := range trail {
		if ev.Payload.EventType() != events.TypeAnalysisRequestedV1 {
			steps = append(steps, typesOf([]events.Event{ev})[0])
		}
	}
	require.Equal(t, []string{"attempt_started", "exchange_recorded", "claim_extracted", "claim_triaged",
		"claim_extracted", "claim_triaged", "claim_verdict", "query_issued", "query_issued", "exchange_recorded",
		"source_assessed", "source_assessed", "source_assessed", "claim_verdict", "exchange_recorded", "post_verdict",
		"completed"}, steps)
	s.requireReplayIdentical()
}

// dyingLog is a worker killed (kill -9) after its first `left` events:
// the event that would go over is never appended (a batch may be cut in
// the middle, as a produce request can be), its lease is neither renewed
// nor released (kill closes the pool its lease store uses), and it never
// appends again.
type dyingLog struct {
	inner Appender
	mu    sync.Mutex
	left  int
	kill  func()
	// dead closes at the kill; buried when the test ends.
	dead, buried chan struct{}
}

func (d *dyingLog) AppendEvents(ctx context.Context, key string, payloads ...events.Payload) ([]events.Event, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.dead:
		return nil, errKilled // a dead process appends nothing, ever
	default:
	}
	n := min(d.left, len(payloads))
	d.left -= n
	var out []events.Event
	if n > 0 {
		evs, err := d.inner.AppendEvents(ctx, key, payloads[:n]...)
		if err != nil {
			return nil, err
		}
		out = evs
	}
	if n == len(payloads) && d.left > 0 {
		return out, nil
	}
	close(d.dead)
	d.kill()
	// Killed mid-call: the call returns only when the test ends, so the
	// goroutine (and its executor) can be stopped, and appends nothing.
	<-d.buried
	return nil, errKilled
}

var errKilled = errors.New("killed")

// A worker killed after each possible number of its events: the next
// worker takes the analysis over once the lease lapses, and every analysis
// completes exactly once. Killed before its post verdict, the attempt is
// recorded as lost (failed, retryable) and a second attempt runs from the
// request; killed between the post verdict and completed, the next worker
// appends completed alone.
func TestIntegrationKilledBetweenEvents(t *testing.T) {
	s := newStack(t)
	const steps = 17 // the events of one attempt of the false post
	ids := make([]string, steps)
	for k := 1; k < steps; k++ {
		text := fmt.Sprintf("%s (copy %d)", falsePost, k)
		ids[k] = s.request(text)
		pool, err := pgxpool.NewWithConfig(context.Background(), mustPoolConfig(t, s.dbURL, ProjectorName))
		require.NoError(t, err)
		leases := runstate.NewStore(pool, ProjectorName, s.topics.Name(events.TopicAnalyses), kadm.NewClient(mustClient(t, s.brokers)))
		log := &dyingLog{inner: s.eventLog, left: k, kill: pool.Close, dead: make(chan struct{}), buried: make(chan struct{})}
		s.startWorker(fmt.Sprintf("doomed-%d", k), log, leases, ids[k])
		t.Cleanup(func() { close(log.buried) }) // runs before the worker's stop
		select {
		case <-log.dead:
		case <-time.After(60 * time.Second):
			t.Fatalf("worker %d never reached its %d-th event", k, k)
		}
	}
	s.startWorker("survivor", nil, nil, "")
	for k := 1; k < steps; k++ {
		s.waitStatus(ids[k], events.StatusComplete)
		trail := s.trail(ids[k])
		require.Equal(t, 1, count(trail, events.TypeAnalysisCompletedV1), "killed after %d events", k)
		postVerdictAt := steps - 1 // post_verdict is the attempt's second last event
		if k >= postVerdictAt {
			require.Equal(t, 1, count(trail, events.TypeAnalysisAttemptStartedV1), "killed after %d events", k)
			require.Zero(t, count(trail, events.TypeAnalysisFailedV1))
			done := trail[len(trail)-1].Payload.(*events.AnalysisCompletedV1)
			require.Equal(t, events.AnalysisCompletedV1{AnalysisRef: events.AnalysisRef{AnalysisID: ids[k], Attempt: 1}, Claims: 2, Researched: 1}, *done)
			continue
		}
		require.Equal(t, 2, count(trail, events.TypeAnalysisAttemptStartedV1), "killed after %d events", k)
		failed := payloadsOf[*events.AnalysisFailedV1](trail)
		require.Len(t, failed, 1)
		require.Equal(t, 1, failed[0].Attempt)
		require.True(t, failed[0].Retryable)
		require.True(t, strings.HasPrefix(failed[0].Reason, "worker_lost: "), failed[0].Reason)
		// The first attempt's events, then its failure, then the whole
		// second attempt.
		types := typesOf(trail)
		require.Equal(t, "failed", types[1+k])
		second := trail[1+k+1:]
		require.Equal(t, 2, second[0].Payload.(*events.AnalysisAttemptStartedV1).Attempt)
		require.Equal(t, steps, len(second))
		done := trail[len(trail)-1].Payload.(*events.AnalysisCompletedV1)
		require.Equal(t, events.AnalysisCompletedV1{AnalysisRef: events.AnalysisRef{AnalysisID: ids[k], Attempt: 2}, Claims: 2, Researched: 1}, *done)
	}
	s.requireReplayIdentical()
}

func mustClient(t *testing.T, brokers []string) *kgo.Client {
	t.Helper()
	cl, err := kafka.NewClient(brokers)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}
