package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/projections/analytics"
)

// recordingDeadLetter keeps what would go to the dead-letter topic.
type recordingDeadLetter struct {
	recs   []*kgo.Record
	causes []error
}

func (d *recordingDeadLetter) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.recs = append(d.recs, rec)
	d.causes = append(d.causes, cause)
	return nil
}

// fixture is a migrated metrics database and its projector.
type fixture struct {
	conn     driver.Conn
	database string
	url      string
	proj     *analytics.Projector
	dl       *recordingDeadLetter
}

// newFixture reads the simulated workload's topics (newWorkload).
func newFixture(t testing.TB, insertRows int) fixture {
	t.Helper()
	conn, db, url := clickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, analytics.Migrate(ctx, conn, logging.Discard()))
	dl := &recordingDeadLetter{}
	return fixture{conn: conn, database: db, url: url, dl: dl,
		proj: analytics.NewProjector(conn, events.NewCatalogRegistry(), simTopics, dl, insertRows, logging.Discard())}
}

func (f fixture) feed(t testing.TB, batches []kafka.Batch) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, b := range batches {
		require.NoError(t, f.proj.Handle(ctx, b))
	}
}

func (f fixture) dump(t testing.TB) []byte {
	t.Helper()
	d, err := analytics.Dump(context.Background(), f.conn, f.database)
	require.NoError(t, err)
	return d
}

func tp(t time.Time) *time.Time { return &t }

// windows are the windows every scenario checks, nil meaning open.
func windows() [][2]*time.Time {
	mid := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	return [][2]*time.Time{
		{nil, nil},
		{tp(workloadStart), tp(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))},
		{tp(workloadStart), tp(mid)},
		{tp(mid), nil},
		{nil, tp(mid.Add(36*time.Hour + 123*time.Millisecond))},
		{tp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), tp(time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC))}, // nothing
	}
}

// checkAgainstModel compares every reader answer with the model.
func checkAgainstModel(t *testing.T, r *analytics.Reader, m model) {
	t.Helper()
	ctx := context.Background()
	authors := map[string]bool{}
	for _, v := range m.versions {
		if v.authorID != "" {
			authors[v.authorID] = true
		}
	}
	require.GreaterOrEqual(t, len(authors), 10, "the workload needs several authors")
	checked, nonTrivial := 0, 0
	for _, w := range windows() {
		filters := []analytics.Filter{{}}
		for _, p := range events.Platforms {
			filters = append(filters, analytics.Filter{Platform: p})
		}
		for a := range authors {
			filters = append(filters, analytics.Filter{AuthorID: a})
		}
		filters = append(filters, analytics.Filter{Platform: events.PlatformX, AuthorID: events.AuthorID(events.PlatformX, "user-1")})
		for _, f := range filters {
			f.WindowStart, f.WindowEnd = w[0], w[1]
			want := m.incidence(f)
			got, err := r.Incidence(ctx, f)
			require.NoError(t, err)
			require.Equal(t, want, got, "filter %+v (window %v..%v)", f, w[0], w[1])
			checked++
			if want.InvestigatedPostsWithFlags > 0 && want.InvestigatedPostsWithFlags < want.TotalInvestigatedPosts {
				nonTrivial++
			}
		}
	}
	require.Greater(t, nonTrivial, checked/4, "most filters should see both flagged and unflagged posts")

	stats, err := r.AuthorStats(ctx, "", 0)
	require.NoError(t, err)
	require.Equal(t, m.authorStats(), stats)
	top, err := r.AuthorStats(ctx, events.PlatformSubstack, 2)
	require.NoError(t, err)
	var wantTop []analytics.AuthorStat
	for _, s := range m.authorStats() {
		if s.Platform == events.PlatformSubstack && len(wantTop) < 2 {
			wantTop = append(wantTop, s)
		}
	}
	require.Equal(t, wantTop, top)

	days, err := r.Daily(ctx, "", nil, nil)
	require.NoError(t, err)
	require.Equal(t, m.daily(), days)
}

func TestAnalystScenario(t *testing.T) {
	w := newWorkload(1, 160, 3)
	f := newFixture(t, 97) // small inserts: many INSERTs per batch
	f.feed(t, w.batches(250, 1))
	require.Empty(t, f.dl.recs)
	checkAgainstModel(t, analytics.NewReader(f.conn), buildModel(w.events))

	// Positions: the next offset of every simulated partition.
	want := map[string]map[int32]int64{}
	for _, r := range w.records {
		if want[r.Topic] == nil {
			want[r.Topic] = map[int32]int64{}
		}
		want[r.Topic][r.Partition] = max(want[r.Topic][r.Partition], r.Offset+1)
	}
	var topics []string
	for tpc := range want {
		topics = append(topics, tpc)
	}
	got, err := f.proj.Positions(context.Background(), append(topics, "sim.other"))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestRedeliveryAndReplay(t *testing.T) {
	// 140 posts: enough per platform (six of them) that most filters see
	// both flagged and unflagged posts.
	w := newWorkload(2, 140, 3)
	m := buildModel(w.events)

	first := newFixture(t, 0)
	first.feed(t, w.batches(120, 1))
	once := first.dump(t)
	require.Contains(t, string(once), "# claims (")

	// The same batches again, cut and ordered differently: every row is a
	// duplicate by event id and collapses.
	first.feed(t, w.batches(37, 2))
	require.Equal(t, string(once), string(first.dump(t)))
	checkAgainstModel(t, analytics.NewReader(first.conn), m)
	var raw, final uint64
	require.NoError(t, first.conn.QueryRow(context.Background(), "SELECT count() FROM views").Scan(&raw))
	require.NoError(t, first.conn.QueryRow(context.Background(), "SELECT count() FROM views FINAL").Scan(&final))
	require.Greater(t, raw, final, "the duplicates are there until merged")

	// Merged or not, the dump is the same.
	for _, table := range analytics.Tables {
		require.NoError(t, first.conn.Exec(context.Background(), "OPTIMIZE TABLE "+table+" FINAL"))
	}
	require.Equal(t, string(once), string(first.dump(t)))

	// A replay into a fresh database gives the identical dump.
	replay := newFixture(t, 500)
	replay.feed(t, w.batches(1000, 3))
	require.Equal(t, string(once), string(replay.dump(t)))
	sumA, err := analytics.Checksum(context.Background(), first.conn, first.database)
	require.NoError(t, err)
	sumB, err := analytics.Checksum(context.Background(), replay.conn, replay.database)
	require.NoError(t, err)
	require.Equal(t, sumA, sumB)
	checkAgainstModel(t, analytics.NewReader(replay.conn), m)
}

func TestMigrateIsIdempotent(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	require.NoError(t, analytics.Migrate(ctx, f.conn, logging.Discard()))
	var n uint64
	require.NoError(t, f.conn.QueryRow(ctx, "SELECT count() FROM _migrations FINAL").Scan(&n))
	require.EqualValues(t, 6, n)
	var views uint64
	require.NoError(t, f.conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND engine = 'View'").Scan(&views))
	require.EqualValues(t, 26, views)
}

func TestReaderRejectsBadFilters(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	r := analytics.NewReader(nil) // never queried: validation comes first
	for _, c := range []struct {
		name string
		f    analytics.Filter
	}{
		{"unknown platform", analytics.Filter{Platform: "MYSPACE"}},
		{"lowercase platform", analytics.Filter{Platform: "x"}},
		{"author not a uuid", analytics.Filter{AuthorID: "user-1"}},
		{"uppercase author", analytics.Filter{AuthorID: "6F0C1F4E-6B7E-4B0A-9A53-4C1D2F7E0A11"}},
		{"empty window", analytics.Filter{WindowStart: tp(start), WindowEnd: tp(start)}},
		{"reversed window", analytics.Filter{WindowStart: tp(start), WindowEnd: tp(start.Add(-time.Hour))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.Incidence(context.Background(), c.f)
			require.ErrorIs(t, err, analytics.ErrInvalidFilter)
		})
	}
	_, err := r.Daily(context.Background(), "", tp(start), tp(start))
	require.ErrorIs(t, err, analytics.ErrInvalidFilter)
	_, err = r.AuthorStats(context.Background(), "nope", 1)
	require.ErrorIs(t, err, analytics.ErrInvalidFilter)
}

// TestPoisonRecordIsDeadLettered: a record of a handled type that does not
// decode goes to the dead-letter topic, the rest of its batch is applied and
// the position moves past it; records of other types are skipped.
func TestPoisonRecordIsDeadLettered(t *testing.T) {
	w := newWorkload(6, 8, 1)
	f := newFixture(t, 0)
	var recs []*kgo.Record
	for _, r := range w.records {
		if r.Topic == w.topics.Name(events.TopicPosts) {
			recs = append(recs, r)
		}
	}
	require.Greater(t, len(recs), 4)
	poison := *recs[2]
	poison.Value = []byte(`{"id":"not json`)
	other := *recs[3]
	other.Headers = []kgo.RecordHeader{{Key: events.HeaderType, Value: []byte(events.TypeAPIKeyAddedV1)}}
	other.Value = []byte(`ignored`)
	batch := append([]*kgo.Record{}, recs...)
	batch[2], batch[3] = &poison, &other
	f.feed(t, []kafka.Batch{{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: batch}})
	require.Len(t, f.dl.recs, 1)
	require.Equal(t, poison.Offset, f.dl.recs[0].Offset)

	var rows uint64
	require.NoError(t, f.conn.QueryRow(context.Background(),
		"SELECT (SELECT count() FROM post_versions FINAL) + (SELECT count() FROM views FINAL)").Scan(&rows))
	require.EqualValues(t, len(recs)-2, rows)
	pos, err := f.proj.Positions(context.Background(), []string{recs[0].Topic})
	require.NoError(t, err)
	require.Equal(t, recs[len(recs)-1].Offset+1, pos[recs[0].Topic][recs[0].Partition])
}

// DumpBelow(positions) is the state at exactly those positions: a copy fed
// the whole log, dumped below the positions a partly fed copy recorded,
// equals that copy's dump, and rows beyond them are left out.
func TestDumpBelowPositions(t *testing.T) {
	w := newWorkload(5, 60, 3)
	all := newFixture(t, 0)
	batches := w.batches(25, 4)
	all.feed(t, batches)
	part := newFixture(t, 0)
	part.feed(t, batches[:len(batches)/2]) // a prefix of every partition

	ctx := context.Background()
	topics := []string{w.topics.Name(events.TopicPosts), w.topics.Name(events.TopicInvestigations)}
	at, err := part.proj.Positions(ctx, topics)
	require.NoError(t, err)
	below := map[events.Topic]map[int32]int64{
		events.TopicPosts:          at[w.topics.Name(events.TopicPosts)],
		events.TopicInvestigations: at[w.topics.Name(events.TopicInvestigations)],
	}
	got, err := analytics.DumpBelow(ctx, all.conn, all.database, below)
	require.NoError(t, err)
	require.Equal(t, string(part.dump(t)), string(got))
	require.NotEqual(t, string(all.dump(t)), string(got), "the later rows are left out")

	full, err := all.proj.Positions(ctx, topics)
	require.NoError(t, err)
	got, err = analytics.DumpBelow(ctx, all.conn, all.database, map[events.Topic]map[int32]int64{
		events.TopicPosts:          full[w.topics.Name(events.TopicPosts)],
		events.TopicInvestigations: full[w.topics.Name(events.TopicInvestigations)],
	})
	require.NoError(t, err)
	require.Equal(t, string(all.dump(t)), string(got), "below its own positions: everything")
}
