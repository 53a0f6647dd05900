package pgproj_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
)

const topic = "test.posts"

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// The test projection stores every applied event once: a second
// application of the same event violates the primary key.
var appliedMigrations = fstest.MapFS{
	"0001_applied.sql": {Data: []byte(`CREATE TABLE applied (
		event_id text PRIMARY KEY,
		subject  text NOT NULL,
		at       timestamptz NOT NULL,
		seq      bigserial
	);`)},
}

// applier handles view events (only) by inserting them into applied.
type applier struct {
	mu    sync.Mutex
	fail  error
	calls int
}

func (a *applier) Handles(t string) bool { return t == events.TypePostViewRecordedV1 }

func (a *applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	a.mu.Lock()
	a.calls++
	fail := a.fail
	a.mu.Unlock()
	for _, ev := range evs {
		if _, err := tx.Exec(ctx, `INSERT INTO applied (event_id, subject, at) VALUES ($1, $2, $3)`, ev.ID, ev.Subject, ev.Time); err != nil {
			return err
		}
	}
	return fail
}

// sent is one record a dead letterer received.
type sent struct {
	offset int64
	cause  string
	now    time.Time
	class  string
}

// deadLetters records what the projector parks, or fails with err.
type deadLetters struct {
	mu   sync.Mutex
	err  error
	sent []sent
}

func (d *deadLetters) Send(_ context.Context, rec *kgo.Record, cause error, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.sent = append(d.sent, sent{rec.Offset, cause.Error(), now, kafka.PermanentClass(cause)})
	return nil
}

type fixture struct {
	pool    *pgxpool.Pool
	applier *applier
	dl      *deadLetters
	proj    *pgproj.Projector
}

func newFixture(t *testing.T, url, schema, name string) *fixture {
	t.Helper()
	pool := connect(t, url, schema)
	require.NoError(t, migrate(t, pool, schema, appliedMigrations))
	f := &fixture{pool: pool, applier: &applier{}, dl: &deadLetters{}}
	f.proj = pgproj.NewProjector(name, pool, events.NewCatalogRegistry(), f.applier, f.dl, logging.Discard())
	return f
}

func (f *fixture) handle(recs ...*kgo.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.proj.Handle(ctx, kafka.Batch{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: recs})
}

// applied lists the names of the applied events in application order.
func (f *fixture) applied(t *testing.T) []string {
	t.Helper()
	ids := texts(t, f.pool, `SELECT event_id FROM applied ORDER BY seq`)
	for i, id := range ids {
		if name, ok := eventNames.Load(id); ok {
			ids[i] = name.(string)
		}
	}
	return ids
}

// eventNames maps the UUIDs of test events back to readable names.
var eventNames sync.Map

// eventUUID is the (UUID) event id of a test event named name.
func eventUUID(name string) string {
	id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
	eventNames.Store(id, name)
	return id
}

// checkpoints lists "projector topic partition next_offset event_time".
func (f *fixture) checkpoints(t *testing.T) []string {
	t.Helper()
	return texts(t, f.pool, `SELECT projector || ' ' || topic || ' ' || partition || ' ' || next_offset || ' ' ||
		COALESCE(event_time::text, 'NULL') FROM projection_checkpoints ORDER BY projector, topic, partition`)
}

func hex64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// viewRecord is a valid view event at topic/partition/offset with id
// "view-<offset>" at t0 + offset minutes.
func viewRecord(t *testing.T, tp string, partition int32, offset int64) *kgo.Record {
	t.Helper()
	postID := events.PostID(events.PlatformX, "1")
	p := &events.PostViewRecordedV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, hex64("v")), Platform: events.PlatformX, ExternalID: "1",
		ViewerKey: hex64(fmt.Sprint("viewer", offset)), IPRangeKey: hex64("range"),
	}
	return encode(t, tp, partition, offset, p, fmt.Sprintf("view-%d", offset))
}

// registrationRecord is a valid registration, which the test applier does
// not handle.
func registrationRecord(t *testing.T, tp string, partition int32, offset int64) *kgo.Record {
	t.Helper()
	postID := events.PostID(events.PlatformX, "1")
	p := &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, hex64("v")), Platform: events.PlatformX, ExternalID: "1",
		URL: "https://x.com/a/status/1", VersionHash: hex64("v"), ContentHash: hex64("c"), OccurrencesHash: hex64("o"),
		ContentText: "text", WordCount: 1, Provenance: events.ProvenanceServerVerified,
		ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
		X: &events.XMetaV1{TweetID: "1", Text: "text", AuthorHandle: "a", MediaURLs: []string{}},
	}
	return encode(t, tp, partition, offset, p, fmt.Sprintf("reg-%d", offset))
}

func encode(t *testing.T, tp string, partition int32, offset int64, p events.Payload, id string) *kgo.Record {
	t.Helper()
	reg := events.NewCatalogRegistry()
	ev, err := reg.New(p, events.Meta{ID: eventUUID(id), Time: eventTime(offset)})
	require.NoError(t, err)
	msg, err := reg.Encode(ev)
	require.NoError(t, err)
	r := &kgo.Record{Topic: tp, Partition: partition, Offset: offset, Key: []byte(msg.Key), Value: msg.Value,
		Timestamp: t0.Add(time.Hour + time.Duration(offset)*time.Second)} // the broker's time, not the event's
	for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
	}
	return r
}

func eventTime(offset int64) time.Time { return t0.Add(time.Duration(offset) * time.Minute) }

func pgTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999-07") }

// rawRecord is a record with a handled type header and an arbitrary value.
func rawRecord(partition int32, offset int64, typ, value string) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: partition, Offset: offset, Value: []byte(value),
		Timestamp: t0.Add(time.Hour + time.Duration(offset)*time.Second)}
	if typ != "" {
		r.Headers = []kgo.RecordHeader{{Key: events.HeaderType, Value: []byte(typ)}}
	}
	return r
}

func views(t *testing.T, partition int32, from, to int64) []*kgo.Record {
	var out []*kgo.Record
	for o := from; o <= to; o++ {
		out = append(out, viewRecord(t, topic, partition, o))
	}
	return out
}

func ids(from, to int64) []string {
	var out []string
	for o := from; o <= to; o++ {
		out = append(out, fmt.Sprintf("view-%d", o))
	}
	return out
}

func checkpoint(name string, partition int32, next int64, eventTime string) string {
	return fmt.Sprintf("%s %s %d %d %s", name, topic, partition, next, eventTime)
}

func TestProjectorCheckpointsAndRedelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Postgres(t), "proj", "p1")

	require.NoError(t, f.handle(views(t, 0, 0, 4)...))
	require.Equal(t, ids(0, 4), f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 5, pgTime(eventTime(4)))}, f.checkpoints(t))

	// The same batch again: nothing is applied, nothing moves.
	require.NoError(t, f.handle(views(t, 0, 0, 4)...))
	require.Equal(t, ids(0, 4), f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 5, pgTime(eventTime(4)))}, f.checkpoints(t))

	// Overlapping the checkpoint: only 5..7 are new.
	require.NoError(t, f.handle(views(t, 0, 3, 7)...))
	require.Equal(t, ids(0, 7), f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 8, pgTime(eventTime(7)))}, f.checkpoints(t))

	// A stale tail.
	require.NoError(t, f.handle(views(t, 0, 7, 7)...))
	require.Equal(t, ids(0, 7), f.applied(t))
	require.Equal(t, 2, f.applier.calls, "batches with nothing new do not reach the applier")

	// Another partition has its own checkpoint, starting wherever its log does.
	require.NoError(t, f.handle(views(t, 3, 100, 101)...))
	require.Equal(t, []string{
		checkpoint("p1", 0, 8, pgTime(eventTime(7))),
		checkpoint("p1", 3, 102, pgTime(eventTime(101))),
	}, f.checkpoints(t))
}

// TestProjectorSkipsUnhandledTypes: records of types the applier does not
// handle (and records without a type header) are not decoded, not
// dead-lettered, not applied; the checkpoint still moves past them and
// event_time stays that of the last applied event.
func TestProjectorSkipsUnhandledTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Postgres(t), "proj", "p1")

	require.NoError(t, f.handle(
		registrationRecord(t, topic, 0, 0),
		rawRecord(0, 1, "", "no type header"),
		rawRecord(0, 2, "post.retracted.v1", "{not json"),
	))
	require.Empty(t, f.applied(t))
	require.Equal(t, 0, f.applier.calls)
	require.Equal(t, []string{checkpoint("p1", 0, 3, "NULL")}, f.checkpoints(t))

	require.NoError(t, f.handle(viewRecord(t, topic, 0, 3), registrationRecord(t, topic, 0, 4)))
	require.Equal(t, []string{"view-3"}, f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 5, pgTime(eventTime(3)))}, f.checkpoints(t))

	require.NoError(t, f.handle(registrationRecord(t, topic, 0, 5)))
	require.Equal(t, []string{checkpoint("p1", 0, 6, pgTime(eventTime(3)))}, f.checkpoints(t))
	require.Empty(t, f.dl.sent)
}

// TestProjectorDeadLettersPoison: a record of a handled type whose value
// cannot be decoded goes to the dead letterer (with the record's broker
// timestamp), the rest of the batch is applied, and the checkpoint moves
// past it.
func TestProjectorDeadLettersPoison(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Postgres(t), "proj", "p1")
	view := events.TypePostViewRecordedV1
	valid := viewRecord(t, topic, 0, 2)
	unknownField := viewRecord(t, topic, 0, 4)
	unknownField.Value = []byte(string(unknownField.Value[:len(unknownField.Value)-1]) + `,"x":1}`)

	require.NoError(t, f.handle(
		viewRecord(t, topic, 0, 0),
		rawRecord(0, 1, view, "{not json"),
		valid,
		rawRecord(0, 3, view, `{"id":"0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70","type":"post.view_recorded.v1","subject":"s","time":"2026-11-22T10:00:00Z","data":{}}`),
		unknownField,
	))
	require.Equal(t, []string{"view-0", "view-2"}, f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 5, pgTime(eventTime(2)))}, f.checkpoints(t),
		"the checkpoint passes the poison; event_time is the last applied event's")

	require.Len(t, f.dl.sent, 3)
	for i, want := range []struct {
		offset int64
		cause  string
	}{
		{1, "decode envelope: invalid character 'n' looking for beginning of object key string"},
		{3, "post.view_recorded.v1: platform \"\" is unknown"},
		{4, "decode envelope: json: unknown field \"x\""},
	} {
		got := f.dl.sent[i]
		require.Equal(t, want.offset, got.offset)
		require.Contains(t, got.cause, want.cause)
		require.Equal(t, "decode", got.class)
		require.True(t, t0.Add(time.Hour+time.Duration(want.offset)*time.Second).Equal(got.now), "dead-letter time is the record's timestamp")
	}
	// Each is parked in the projection too, with the same reason.
	rows := parkedRows(t, f.pool, "p1")
	require.Len(t, rows, 3)
	for i, s := range f.dl.sent {
		id := "NULL" // from the errata-id header, which only the encoded record has
		if s.offset == 4 {
			id = eventUUID("view-4")
		}
		require.Equal(t, parkedRow(s.offset, view, "decode", nil, id, s.cause), rows[i])
	}

	// Redelivery does not dead-letter or park the poison again.
	require.NoError(t, f.handle(rawRecord(0, 1, view, "{not json"), valid))
	require.Len(t, f.dl.sent, 3)
	require.Equal(t, rows, parkedRows(t, f.pool, "p1"))
}

// TestProjectorFailuresRollBack: when dead-lettering or applying fails,
// Handle fails and nothing of the batch is kept, checkpoint included.
func TestProjectorFailuresRollBack(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	for _, tc := range []struct {
		name    string
		setup   func(f *fixture)
		batch   func(t *testing.T) []*kgo.Record
		wantErr string
	}{
		{
			name:  "dead letter fails",
			setup: func(f *fixture) { f.dl.err = errors.New("kafka down") },
			batch: func(t *testing.T) []*kgo.Record {
				return []*kgo.Record{viewRecord(t, topic, 0, 5), rawRecord(0, 6, events.TypePostViewRecordedV1, "garbage")}
			},
			wantErr: "kafka down",
		},
		{
			name:  "apply fails",
			setup: func(f *fixture) { f.applier.fail = errors.New("constraint violated") },
			batch: func(t *testing.T) []*kgo.Record {
				return views(t, 0, 5, 6)
			},
			wantErr: "apply test.posts/{p}@5..6: constraint violated",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, url, "fail_"+map[string]string{"dead letter fails": "dl", "apply fails": "apply"}[tc.name], "p1")
			require.NoError(t, f.handle(views(t, 0, 0, 4)...))
			before := f.checkpoints(t)

			tc.setup(f)
			err := f.handle(tc.batch(t)...)
			require.ErrorContains(t, err, strings.ReplaceAll(tc.wantErr, "{p}", "0"))
			require.Equal(t, ids(0, 4), f.applied(t))
			require.Equal(t, before, f.checkpoints(t))

			// A partition seen for the first time leaves no checkpoint row either.
			err = f.handle(func() []*kgo.Record {
				b := tc.batch(t)
				for _, r := range b {
					r.Partition = 9
				}
				return b
			}()...)
			require.ErrorContains(t, err, strings.ReplaceAll(tc.wantErr, "{p}", "9"))
			require.Equal(t, before, f.checkpoints(t))
		})
	}
}

// TestProjectorConcurrentDuplicates hands the same batch to several
// projector instances at once (a zombie after a rebalance): the checkpoint
// lock lets exactly one apply it.
func TestProjectorConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := newFixture(t, url, "proj", "p1")
	// Both cases: the checkpoint row is new, and it exists.
	for _, batch := range [][]*kgo.Record{views(t, 0, 0, 4), views(t, 0, 5, 9)} {
		concurrently(t, f, batch)
	}
	require.Equal(t, ids(0, 9), f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 10, pgTime(eventTime(9)))}, f.checkpoints(t))
	require.Equal(t, 2, f.applier.calls)
}

func concurrently(t *testing.T, f *fixture, batch []*kgo.Record) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate projectors over the same pool, as separate processes.
			p := pgproj.NewProjector("p1", f.pool, events.NewCatalogRegistry(), f.applier, f.dl, logging.Discard())
			errs[i] = p.Handle(context.Background(), kafka.Batch{Topic: topic, Partition: 0, Records: batch})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

func TestProjectorPositions(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := newFixture(t, url, "proj", "p1")
	other := pgproj.NewProjector("p2", f.pool, events.NewCatalogRegistry(), f.applier, f.dl, logging.Discard())
	require.Equal(t, "p1", f.proj.Name())
	ctx := context.Background()

	empty, err := f.proj.Positions(ctx, []string{topic})
	require.NoError(t, err)
	require.Equal(t, map[string]map[int32]int64{}, empty)

	require.NoError(t, f.handle(views(t, 0, 0, 2)...))
	require.NoError(t, f.handle(views(t, 1, 10, 14)...))
	require.NoError(t, f.handle(viewRecord(t, "test.other", 0, 40)))
	require.NoError(t, other.Handle(ctx, kafka.Batch{Topic: topic, Partition: 0, Records: []*kgo.Record{rawRecord(0, 99, "", "")}}))

	for _, tc := range []struct {
		name   string
		proj   *pgproj.Projector
		topics []string
		want   map[string]map[int32]int64
	}{
		{"one topic", f.proj, []string{topic}, map[string]map[int32]int64{topic: {0: 3, 1: 15}}},
		{"two topics", f.proj, []string{topic, "test.other"}, map[string]map[int32]int64{topic: {0: 3, 1: 15}, "test.other": {0: 41}}},
		{"unknown topic", f.proj, []string{"test.none"}, map[string]map[int32]int64{}},
		{"no topics", f.proj, nil, map[string]map[int32]int64{}},
		{"another projector", other, []string{topic, "test.other"}, map[string]map[int32]int64{topic: {0: 100}}},
	} {
		got, err := tc.proj.Positions(ctx, tc.topics)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}

	var _ kafka.PositionStore = f.proj
	var _ kafka.Handler = f.proj
}

func TestWatermark(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Postgres(t), "proj", "p1")
	require.NoError(t, f.handle(views(t, 0, 0, 4)...))
	wm := pgproj.NewWatermark(f.pool, "p1")
	ctx := context.Background()
	const short = 30 * time.Millisecond

	for _, tc := range []struct {
		name      string
		wm        *pgproj.Watermark
		topic     string
		partition int32
		offset    int64
		want      error
	}{
		{"last applied offset", wm, topic, 0, 4, nil},
		{"first offset", wm, topic, 0, 0, nil},
		{"next offset is not applied yet", wm, topic, 0, 5, pgproj.ErrWatermarkTimeout},
		{"another partition", wm, topic, 1, 0, pgproj.ErrWatermarkTimeout},
		{"another topic", wm, "test.other", 0, 0, pgproj.ErrWatermarkTimeout},
		{"another projector", pgproj.NewWatermark(f.pool, "p2"), topic, 0, 0, pgproj.ErrWatermarkTimeout},
	} {
		err := tc.wm.WaitFor(ctx, tc.topic, tc.partition, tc.offset, short)
		if tc.want == nil {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorIs(t, err, tc.want, tc.name)
		}
	}

	// Waiting for a position applied while waiting.
	done := make(chan error, 1)
	go func() { done <- wm.WaitFor(ctx, topic, 0, 7, time.Minute) }()
	require.NoError(t, f.handle(views(t, 0, 5, 6)...))
	require.NoError(t, f.handle(views(t, 0, 7, 7)...))
	require.NoError(t, <-done)

	// A cancelled wait returns the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, wm.WaitFor(cctx, topic, 0, 100, time.Minute), context.Canceled)
}
