package serving_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// postsTopic is the (prefixed) topic name the test records claim to come from.
const postsTopic = "test.posts"

// base is the time every fixture's event times are derived from.
var base = time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)

func hex64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func ptr[T any](v T) *T { return &v }

// pgTime renders t as Postgres renders a timestamptz in a UTC session.
func pgTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.999999-07")
}

// registration builds a valid registration payload of platform/ext whose
// content is text; the platform metadata and author are minimal. Tests
// adjust the returned payload before wrapping it into an event.
func registration(platform, ext, text string) *events.PostVersionRegisteredV1 {
	postID := events.PostID(platform, ext)
	vh := hex64("version:" + text)
	p := &events.PostVersionRegisteredV1{
		PostID:           postID,
		PostVersionID:    events.PostVersionID(postID, vh),
		Platform:         platform,
		ExternalID:       ext,
		URL:              "https://example.com/" + strings.ToLower(platform) + "/" + ext,
		VersionHash:      vh,
		ContentHash:      hex64(text),
		OccurrencesHash:  hex64("occurrences:none"),
		ContentText:      text,
		WordCount:        len(strings.Fields(text)),
		Provenance:       events.ProvenanceServerVerified,
		ImageURLs:        []string{},
		ImageOccurrences: []events.ImageOccurrenceV1{},
	}
	switch platform {
	case events.PlatformLessWrong:
		p.LessWrong = &events.LessWrongMetaV1{Slug: "slug-" + ext, Tags: []string{}}
	case events.PlatformX:
		p.X = &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: "handle", MediaURLs: []string{}}
	case events.PlatformSubstack:
		p.Substack = &events.SubstackMetaV1{SubstackPostID: ext, PublicationSubdomain: "pub", Slug: "slug-" + ext, Title: "Title " + ext, AuthorName: "Author"}
	case events.PlatformWikipedia:
		p.Wikipedia = &events.WikipediaMetaV1{Language: "en", Title: "Title_" + ext, PageID: "1", RevisionID: "2"}
	}
	return p
}

// viewOf builds a view of the registered version by viewer from ipRange
// (both plain names, hashed here as the API would).
func viewOf(r *events.PostVersionRegisteredV1, viewer, ipRange string) *events.PostViewRecordedV1 {
	return &events.PostViewRecordedV1{
		PostID:        r.PostID,
		PostVersionID: r.PostVersionID,
		Platform:      r.Platform,
		ExternalID:    r.ExternalID,
		ViewerKey:     viewerKey(viewer),
		IPRangeKey:    rangeKey(ipRange),
	}
}

func viewerKey(viewer string) string { return hex64("viewer:" + viewer) }
func rangeKey(r string) string       { return hex64("range:" + r) }

// timed is a payload with its event time.
type timed struct {
	p  events.Payload
	at time.Time
}

// eventCounter makes event ids unique within the test binary.
var eventCounter struct {
	sync.Mutex
	n int
}

// newEvent wraps a payload into an event (validating it).
func newEvent(t testing.TB, p events.Payload, at time.Time) events.Event {
	t.Helper()
	eventCounter.Lock()
	eventCounter.n++
	id := fmt.Sprintf("00000000-0000-7000-8000-%012d", eventCounter.n)
	eventCounter.Unlock()
	ev, err := events.NewCatalogRegistry().New(p, events.Meta{ID: id, Time: at})
	require.NoError(t, err)
	return ev
}

// record encodes ev as the record at topic/partition/offset, as the
// appender writes it.
func record(t testing.TB, topic string, partition int32, offset int64, ev events.Event) *kgo.Record {
	t.Helper()
	msg, err := events.NewCatalogRegistry().Encode(ev)
	require.NoError(t, err)
	r := &kgo.Record{Topic: topic, Partition: partition, Offset: offset, Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
	for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
	}
	return r
}

// records encodes payloads as consecutive records from offset first.
func records(t testing.TB, partition int32, first int64, ps ...timed) []*kgo.Record {
	t.Helper()
	out := make([]*kgo.Record, len(ps))
	for i, p := range ps {
		out[i] = record(t, postsTopic, partition, first+int64(i), newEvent(t, p.p, p.at))
	}
	return out
}

// deadLetters records what the projector parks; the serving tests expect none.
type deadLetters struct {
	mu   sync.Mutex
	recs []*kgo.Record
}

func (d *deadLetters) Send(_ context.Context, rec *kgo.Record, _ error, _ time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recs = append(d.recs, rec)
	return nil
}

// projection is a migrated serving schema with its projector.
type projection struct {
	pool *pgxpool.Pool
	proj *pgproj.Projector
	dl   *deadLetters
}

// newProjection migrates the serving schema into schema of the database at
// url and returns a projector over it with the given IP-range cap.
func newProjection(t testing.TB, url, schema string, ipCap int) *projection {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Connect(ctx, url, schema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgproj.Migrate(ctx, pool, schema, serving.Migrations(), logging.Discard()))
	dl := &deadLetters{}
	proj := pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(), serving.NewApplier(ipCap), dl, logging.Discard())
	t.Cleanup(func() {
		dl.mu.Lock()
		defer dl.mu.Unlock()
		require.Empty(t, dl.recs, "unexpected dead letters")
	})
	return &projection{pool: pool, proj: proj, dl: dl}
}

// newServing is newProjection in a fresh database, schema "serving" (a
// copy of the migrated template: nothing left to migrate).
func newServing(t testing.TB, ipCap int) *projection {
	t.Helper()
	return newProjection(t, teststack.Database(t), "serving", ipCap)
}

// handle hands recs to the projector as one batch of their partition.
func (p *projection) handle(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	require.NotEmpty(t, recs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.proj.Handle(ctx, kafka.Batch{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: recs}))
}

// handleInBatches hands recs over in consecutive batches of the given sizes
// (cycled).
func (p *projection) handleInBatches(t testing.TB, recs []*kgo.Record, sizes ...int) {
	t.Helper()
	for i, n := 0, 0; i < len(recs); n++ {
		end := min(i+sizes[n%len(sizes)], len(recs))
		p.handle(t, recs[i:end]...)
		i = end
	}
}

// texts runs a query returning one text column per row.
func (p *projection) texts(t testing.TB, sql string, args ...any) []string {
	t.Helper()
	rows, err := p.pool.Query(context.Background(), sql, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s *string
		require.NoError(t, rows.Scan(&s))
		if s == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, *s)
		}
	}
	require.NoError(t, rows.Err())
	return out
}
