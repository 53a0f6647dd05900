package pgproj_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// parkedRows lists "offset type class reason record_time event_time" of
// every parked row of projector name, in log order.
func parkedRows(t *testing.T, pool *pgxpool.Pool, name string) []string {
	t.Helper()
	return texts(t, pool, `SELECT log_offset || ' ' || COALESCE(event_type, 'NULL') || ' ' || class || ' ' ||
		record_time::text || ' ' || COALESCE(event_time::text, 'NULL') || ' ' || COALESCE(event_id, 'NULL') || ' | ' || reason
		FROM projection_parked WHERE projector = $1 ORDER BY topic, partition, log_offset`, name)
}

// parkedRow renders one parkedRows line.
func parkedRow(offset int64, typ, class string, eventTime *time.Time, eventID, reason string) string {
	et := "NULL"
	if eventTime != nil {
		et = pgTime(*eventTime)
	}
	return fmt.Sprintf("%d %s %s %s %s %s | %s", offset, typ, class,
		pgTime(t0.Add(time.Hour+time.Duration(offset)*time.Second)), et, eventID, reason)
}

// poisonApplier is the test applier with chosen events failing.
type poisonApplier struct {
	applier
	mu      sync.Mutex
	poison  map[string]error // event name -> error when the event is applied
	batches [][]string       // event names of every Apply call
}

func (a *poisonApplier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	var names []string
	for _, ev := range evs {
		name, _ := eventNames.Load(ev.ID)
		names = append(names, name.(string))
	}
	a.mu.Lock()
	a.batches = append(a.batches, names)
	a.mu.Unlock()
	if err := a.applier.Apply(ctx, tx, evs); err != nil {
		return err
	}
	for _, n := range names {
		if err := a.poison[n]; err != nil {
			return fmt.Errorf("apply %s: %w", n, err)
		}
	}
	return nil
}

func newPoisonFixture(t *testing.T, url, schema string, poison map[string]error) (*fixture, *poisonApplier) {
	t.Helper()
	f := newFixture(t, url, schema, "p1")
	a := &poisonApplier{poison: poison}
	f.proj = pgproj.NewProjector("p1", f.pool, events.NewCatalogRegistry(), a, f.dl, logging.Discard())
	return f, a
}

// TestProjectorParksEventsThatFailAlone: events whose application fails
// deterministically are left out and parked, in log order, while every
// other event of the batch is applied in order and the checkpoint passes
// them all; the applier saw halves of the batch, not one call per event.
func TestProjectorParksEventsThatFailAlone(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	constraint := kafka.Permanent(errors.New("violates the projection's rule"))
	for _, tc := range []struct {
		name       string
		poisoned   []int64
		wantTime   string
		maxBatches int
	}{
		{"two in the middle", []int64{2, 7}, pgTime(eventTime(9)), 14},
		{"the first", []int64{0}, pgTime(eventTime(9)), 9},
		{"the last", []int64{9}, pgTime(eventTime(8)), 9},
		{"every one", seq(0, 9), "NULL", 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			poison := map[string]error{}
			for _, o := range tc.poisoned {
				poison[fmt.Sprintf("view-%d", o)] = constraint
			}
			f, a := newPoisonFixture(t, url, "park_"+strings.ReplaceAll(tc.name, " ", "_"), poison)
			require.NoError(t, f.handle(views(t, 0, 0, 9)...))

			var want []string
			for o := int64(0); o <= 9; o++ {
				if _, bad := poison[fmt.Sprintf("view-%d", o)]; !bad {
					want = append(want, fmt.Sprintf("view-%d", o))
				}
			}
			require.Equal(t, emptyIfNil(want), emptyIfNil(f.applied(t)))
			require.Equal(t, []string{checkpoint("p1", 0, 10, tc.wantTime)}, f.checkpoints(t))
			var wantRows []string
			var wantSent []sent
			for _, o := range tc.poisoned {
				at := eventTime(o)
				reason := fmt.Sprintf("apply view-%d: violates the projection's rule", o)
				wantRows = append(wantRows, parkedRow(o, events.TypePostViewRecordedV1, "deterministic", &at, eventUUID(fmt.Sprintf("view-%d", o)), reason))
				wantSent = append(wantSent, sent{o, reason, t0.Add(time.Hour + time.Duration(o)*time.Second), "deterministic"})
			}
			require.Equal(t, wantRows, parkedRows(t, f.pool, "p1"))
			require.Equal(t, wantSent, f.dl.sent)
			require.Equal(t, seq(0, 9), flatOffsets(a.batches[0]), "the whole batch is tried first")
			require.LessOrEqual(t, len(a.batches), tc.maxBatches, "halves, not one call per event")

			// Redelivery changes nothing and parks nothing again.
			before := len(a.batches)
			require.NoError(t, f.handle(views(t, 0, 0, 9)...))
			require.Len(t, a.batches, before)
			require.Equal(t, wantRows, parkedRows(t, f.pool, "p1"))
			require.Equal(t, wantSent, f.dl.sent)
		})
	}
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func flatOffsets(names []string) []int64 {
	var out []int64
	for _, n := range names {
		o, err := strconv.ParseInt(strings.TrimPrefix(n, "view-"), 10, 64)
		if err != nil {
			panic(n)
		}
		out = append(out, o)
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestProjectorTransientFailureParksNothing: when isolating the failing
// events meets a failure that is not deterministic, the whole batch fails
// (the runner retries it): nothing is applied, parked or dead-lettered,
// and the checkpoint stays.
func TestProjectorTransientFailureParksNothing(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	for _, tc := range []struct {
		name   string
		poison map[string]error
	}{
		{"transient only", map[string]error{"view-3": errors.New("connection reset by peer")}},
		{"deterministic and transient", map[string]error{
			"view-1": kafka.Permanent(errors.New("poison")),
			"view-3": errors.New("connection reset by peer"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, _ := newPoisonFixture(t, url, "transient_"+strings.ReplaceAll(tc.name, " ", "_"), tc.poison)
			err := f.handle(views(t, 0, 0, 5)...)
			require.ErrorContains(t, err, "apply test.posts/0@0..5: apply view-3: connection reset by peer")
			require.False(t, pgproj.IsDeterministic(err))
			require.Empty(t, f.applied(t))
			require.Empty(t, f.checkpoints(t))
			require.Empty(t, parkedRows(t, f.pool, "p1"))
			require.Empty(t, f.dl.sent)
		})
	}
}

// TestProjectorParksUndecodableAndFutureRecords: a record of a type the
// applier handles that does not decode, a record of an unknown version of
// a handled type (written by a newer release), and a record whose type
// header disagrees with its envelope are parked with class decode; an
// unknown type of another name is skipped like any unhandled type.
func TestProjectorParksUndecodableAndFutureRecords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Postgres(t), "proj", "p1")
	future := rawRecord(0, 1, "post.view_recorded.v9",
		`{"id":"0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70","type":"post.view_recorded.v9","subject":"s","time":"2026-11-22T10:00:00Z","data":{"new":"shape"}}`)
	future.Headers = append(future.Headers, kgo.RecordHeader{Key: events.HeaderID, Value: []byte("0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70")})
	mismatch := registrationRecord(t, topic, 0, 3)
	mismatch.Headers[1].Value = []byte(events.TypePostViewRecordedV1) // claims to be a view
	hostile := rawRecord(0, 5, events.TypePostViewRecordedV1, "{not json")
	hostile.Headers = append(hostile.Headers, kgo.RecordHeader{Key: events.HeaderID, Value: []byte("id-with-\x00-nul-and-\xff")})

	require.NoError(t, f.handle(
		viewRecord(t, topic, 0, 0),
		future,
		rawRecord(0, 2, "post.retracted.v1", `{"unknown":"name"}`),
		mismatch,
		viewRecord(t, topic, 0, 4),
		hostile,
	))
	require.Equal(t, []string{"view-0", "view-4"}, f.applied(t))
	require.Equal(t, []string{checkpoint("p1", 0, 6, pgTime(eventTime(4)))}, f.checkpoints(t))
	require.Equal(t, []string{
		parkedRow(1, "post.view_recorded.v9", "decode", nil, "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70",
			"unknown event type: post.view_recorded.v9 (another version of a type this projector applies; written by a newer release?)"),
		parkedRow(3, events.TypePostViewRecordedV1, "decode", nil, eventUUID("reg-3"),
			`header errata-type "post.view_recorded.v1" does not match the envelope's type (decodes to post.version_registered.v1)`),
		parkedRow(5, events.TypePostViewRecordedV1, "decode", nil, "id-with-\uFFFD-nul-and-\uFFFD",
			"decode envelope: invalid character 'n' looking for beginning of object key string"),
	}, parkedRows(t, f.pool, "p1"))
	require.Len(t, f.dl.sent, 3)
	for i, o := range []int64{1, 3, 5} {
		require.Equal(t, o, f.dl.sent[i].offset)
		require.Equal(t, "decode", f.dl.sent[i].class)
	}
}

// hex64chain is a string of n hex characters that does not compress (a
// chain of sha256 digests): Postgres cannot shrink it under the btree
// limit the way it would a run of one letter.
func hex64chain(n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("seed"))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}

// xRegistration is a valid X registration of tweet ext.
func xRegistration(ext, text string, author *events.AuthorV1) *events.PostVersionRegisteredV1 {
	postID := events.PostID(events.PlatformX, ext)
	vh := hex64("version:" + ext + text)
	handle := "handle"
	if author != nil {
		handle = author.PlatformUserID
	}
	return &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, vh), Platform: events.PlatformX, ExternalID: ext,
		URL: "https://x.com/a/status/" + ext, VersionHash: vh, ContentHash: hex64(text), OccurrencesHash: hex64("o"),
		ContentText: text, WordCount: len(strings.Fields(text)), Provenance: events.ProvenanceClientFallback,
		ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{}, Author: author,
		X: &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: handle, MediaURLs: []string{}},
	}
}

// investigationRequest is a valid investigation request of the version of r.
func investigationRequest(r *events.PostVersionRegisteredV1) *events.InvestigationRequestedV1 {
	return &events.InvestigationRequestedV1{
		InvestigationID: events.InvestigationID(r.PostVersionID), PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceSelector,
	}
}

// poisonCase is one record of the poison log and what the projections must
// make of it.
type poisonCase struct {
	name string
	rec  func(t *testing.T, offset int64) *kgo.Record
	// poison: the record must be parked (by every projection that reads it).
	poison bool
}

// poisonLog is a log of good registrations, views and requests mixed with
// records no projection can apply: NUL characters in the X text and in an
// author's display name, a 4,000-character author handle (beyond the
// btree limit of the authors' unique index), a payload of a future schema
// version and a known type whose payload does not decode. Every record is
// built directly, bypassing the API's validation.
func poisonLog(t *testing.T) ([]*kgo.Record, map[int64]string) {
	t.Helper()
	good := xRegistration("100", "Water boils at 100 degrees at sea level.", &events.AuthorV1{PlatformUserID: "alice", DisplayName: "Alice"})
	later := xRegistration("101", "The Eiffel Tower was completed in 1889.", nil)
	nulText := xRegistration("102", "Null\x00byte in the tweet text.", nil)
	nulName := xRegistration("103", "An author with a NUL in the name.", &events.AuthorV1{PlatformUserID: "bob", DisplayName: "Bo\x00b"})
	longHandle := xRegistration("104", "An author with a very long handle.", &events.AuthorV1{PlatformUserID: hex64chain(4000), DisplayName: "Long"})
	view := func(r *events.PostVersionRegisteredV1, viewer string) *events.PostViewRecordedV1 {
		return &events.PostViewRecordedV1{PostID: r.PostID, PostVersionID: r.PostVersionID, Platform: r.Platform,
			ExternalID: r.ExternalID, ViewerKey: hex64(viewer), IPRangeKey: hex64("range")}
	}
	payload := func(p events.Payload) func(t *testing.T, o int64) *kgo.Record {
		return func(t *testing.T, o int64) *kgo.Record {
			return encode(t, topic, 0, o, p, fmt.Sprintf("poison-log-%d", o))
		}
	}
	cases := []poisonCase{
		{"registration", payload(good), false},
		{"NUL in the X text", payload(nulText), true},
		{"view", payload(view(good, "v1")), false},
		{"NUL in the author's display name", payload(nulName), true},
		{"request", payload(investigationRequest(good)), false},
		{"4,000-character author handle", payload(longHandle), true},
		{"future schema version", func(t *testing.T, o int64) *kgo.Record {
			r := rawRecord(0, o, "post.version_registered.v2", `{"id":"0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f71",`+
				`"type":"post.version_registered.v2","subject":"s","time":"2026-11-22T10:00:00Z","data":{"post":{"id":"p"}}}`)
			r.Key = []byte("future")
			return r
		}, true},
		{"undecodable payload of a known type", func(t *testing.T, o int64) *kgo.Record {
			r := encode(t, topic, 0, o, later, fmt.Sprintf("poison-log-%d", o))
			r.Value = []byte(strings.Replace(string(r.Value), `"content_text":`, `"content_text":42,"was":`, 1))
			return r
		}, true},
		{"another registration", payload(later), false},
		{"view of a parked registration", payload(view(nulText, "v2")), false},
		{"view of the other registration", payload(view(later, "v3")), false},
	}
	var recs []*kgo.Record
	names := map[int64]string{}
	for i, c := range cases {
		r := c.rec(t, int64(i))
		recs = append(recs, r)
		if c.poison {
			names[int64(i)] = c.name
		}
	}
	return recs, names
}

// captured is a DeadLetterer recording what it is sent.
type captured struct {
	mu   sync.Mutex
	recs []sent
}

func (c *captured) Send(_ context.Context, rec *kgo.Record, cause error, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, sent{rec.Offset, cause.Error(), now, kafka.PermanentClass(cause)})
	return nil
}

// TestServingAndAuditParkPoisonEvents runs the poison log through the real
// serving and audit appliers (the audit one positioned) with the real
// dead-letter publisher: the good events are applied, exactly the poison
// records are parked and on the dead-letter topic (with their class and
// reason), and the checkpoint passes them. A rebuild of the same log into
// fresh schemas, one record per batch and in uneven batches, gives a
// canonical dump identical to the live one, parked rows included.
func TestServingAndAuditParkPoisonEvents(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	brokers, topics := testenv.Kafka(t, 1)
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	recs, poison := poisonLog(t)
	reg := events.NewCatalogRegistry()
	// Why each poison record is parked: Postgres refuses a NUL (22021) and
	// an index row beyond the btree limit (54000); the rest do not decode.
	nul := `serving statements: ERROR: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)`
	reasons := map[string]string{
		"NUL in the X text":                nul,
		"NUL in the author's display name": nul,
		"4,000-character author handle": `serving statements: ERROR: index row size 4016 exceeds btree version 4 maximum 2704 ` +
			`for index "authors_platform_platform_user_id_key" (SQLSTATE 54000)`,
		"future schema version": "unknown event type: post.version_registered.v2 " +
			"(another version of a type this projector applies; written by a newer release?)",
		"undecodable payload of a known type": "decode post.version_registered.v1: json: cannot unmarshal number " +
			"into Go struct field PostVersionRegisteredV1.content_text of type string",
	}

	for _, pc := range []struct {
		name       string
		applier    func() pgproj.Applier
		migrations fs.FS
		// wantRows: rows of some tables after the live run
		wantRows map[string]int
		// spared: poison cases this projection can apply (it stores no
		// text column that refuses them)
		spared []string
	}{
		{name: serving.ProjectorName, applier: func() pgproj.Applier { return serving.NewApplier(10) }, migrations: serving.Migrations(),
			wantRows: map[string]int{"posts": 2, "authors": 1, "post_versions": 2, "content_blobs": 2, "x_version_meta": 2}},
		// The audit keeps hashes and identities of registrations, not
		// their texts or authors: only what does not decode is poison.
		{name: audit.ProjectorName, applier: func() pgproj.Applier { return audit.NewApplier(reg) }, migrations: audit.Migrations(),
			wantRows: map[string]int{"audit_post_versions": 5, "audit_events": 1},
			spared:   []string{"NUL in the X text", "NUL in the author's display name", "4,000-character author handle"}},
	} {
		t.Run(pc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			open := func(schema string, dl pgproj.DeadLetterer) (*pgxpool.Pool, *pgproj.Projector) {
				pool := connect(t, url, schema)
				require.NoError(t, migrate(t, pool, schema, pc.migrations))
				return pool, pgproj.NewProjector(pc.name, pool, reg, pc.applier(), dl, logging.Discard())
			}
			handle := func(p *pgproj.Projector, batch []*kgo.Record) {
				require.NoError(t, p.Handle(ctx, kafka.Batch{Topic: topic, Partition: 0, Records: batch}))
			}

			// The live run: one batch, the real dead-letter topic.
			group := topics.Prefix + "projector." + pc.name
			dlq := topics.Name(events.TopicDeadLetter)
			livePool, live := open(pc.name+"_live", kafka.NewDeadLetter(producer, dlq, group, logging.Discard()))
			handle(live, recs)

			// Rows of the good events only.
			for table, n := range pc.wantRows {
				var got int
				require.NoError(t, livePool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&got))
				require.Equal(t, n, got, table)
			}
			var nul int
			require.NoError(t, livePool.QueryRow(ctx, `SELECT count(*) FROM projection_checkpoints
				WHERE projector = $1 AND topic = $2 AND partition = 0 AND next_offset = $3`, pc.name, topic, len(recs)).Scan(&nul))
			require.Equal(t, 1, nul, "the checkpoint passes the whole log")

			// Exactly the poison records are parked, in log order, and on
			// the dead-letter topic with the same reason and class.
			var wantOffsets []int64
			for o := range int64(len(recs)) {
				if name, ok := poison[o]; ok && !slices.Contains(pc.spared, name) {
					wantOffsets = append(wantOffsets, o)
				}
			}
			require.Len(t, wantOffsets, len(poison)-len(pc.spared))
			rows := texts(t, livePool, `SELECT log_offset || ' ' || class || ' ' || reason FROM projection_parked
				WHERE projector = $1 ORDER BY log_offset`, pc.name)
			require.Len(t, rows, len(wantOffsets), "%v", rows)
			dead := readDeadLetters(t, brokers, dlq, group)
			require.Len(t, dead, len(wantOffsets), "exactly the poison records are dead-lettered")
			for i, o := range wantOffsets {
				src := recs[o]
				wantClass := "decode"
				if _, err := reg.Decode(src.Value); err == nil {
					wantClass = "deterministic"
				}
				d := dead[i]
				require.Equal(t, strconv.FormatInt(o, 10), hdr(d, kafka.HeaderDLQOffset), poison[o])
				require.Equal(t, topic, hdr(d, kafka.HeaderDLQTopic))
				require.Equal(t, "0", hdr(d, kafka.HeaderDLQPartition))
				require.Equal(t, group, hdr(d, kafka.HeaderDLQGroup))
				require.Equal(t, wantClass, hdr(d, kafka.HeaderDLQClass), poison[o])
				require.Equal(t, src.Value, d.Value)
				require.Equal(t, fmt.Sprintf("%d %s %s", o, wantClass, hdr(d, kafka.HeaderDLQError)), rows[i], poison[o])
				require.Equal(t, reasons[poison[o]], hdr(d, kafka.HeaderDLQError), poison[o])
			}

			// Redelivery of the whole log changes nothing and sends nothing.
			dumpLive := dump(t, livePool, pc.name+"_live")
			handle(live, recs)
			require.Equal(t, dumpLive, dump(t, livePool, pc.name+"_live"))
			require.Len(t, readDeadLetters(t, brokers, dlq, group), len(wantOffsets))

			// Rebuilds in other batchings give the same dump.
			for _, sizes := range [][]int{{1}, {3, 2, 5}} {
				dl := &captured{}
				pool, p := open(fmt.Sprintf("%s_rebuild_%d", pc.name, len(sizes)), dl)
				for i, n := 0, 0; i < len(recs); n++ {
					end := min(i+sizes[n%len(sizes)], len(recs))
					handle(p, recs[i:end])
					i = end
				}
				require.Equal(t, strings.ReplaceAll(dumpLive, pc.name+"_live", "X"),
					strings.ReplaceAll(dump(t, pool, fmt.Sprintf("%s_rebuild_%d", pc.name, len(sizes))), fmt.Sprintf("%s_rebuild_%d", pc.name, len(sizes)), "X"),
					"batches %v", sizes)
				var got []int64
				for _, s := range dl.recs {
					got = append(got, s.offset)
				}
				require.Equal(t, wantOffsets, got)
			}
		})
	}
}

// dump is the canonical dump of schema, as `errata verify` compares it.
func dump(t *testing.T, pool *pgxpool.Pool, schema string) string {
	t.Helper()
	var b strings.Builder
	_, err := pgproj.Dump(context.Background(), pool, schema, &b, pgproj.DumpOptions{})
	require.NoError(t, err)
	require.Contains(t, b.String(), "projection_parked: (")
	return b.String()
}

func hdr(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// readDeadLetters reads every record of the dead-letter topic sent by
// group (up to its end offsets now).
func readDeadLetters(t *testing.T, brokers []string, topic, group string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.NewClient(brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var out []*kgo.Record
	for n := int64(0); n < want; {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		require.NoError(t, fs.Err())
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if hdr(r, kafka.HeaderDLQGroup) == group {
				out = append(out, r)
			}
		})
	}
	return out
}

// TestIsDeterministic classifies real Postgres errors and others.
func TestIsDeterministic(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.Postgres(t), "classify")
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE SCHEMA classify`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `CREATE TABLE t (k text UNIQUE, v varchar(3), n int CHECK (n > 0), j jsonb)`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO t (k, n) VALUES ('taken', 1)`)
	require.NoError(t, err)
	pgErr := func(sql string, args ...any) error {
		_, err := pool.Exec(ctx, sql, args...)
		require.Error(t, err, sql)
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, sql)
		return fmt.Errorf("wrapped: %w", err)
	}
	timeout := func() error {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, `SET LOCAL statement_timeout = 1`)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, `SELECT pg_sleep(1)`)
		require.Error(t, err)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		code string
		want bool
	}{
		{"NUL in text", pgErr(`INSERT INTO t (k, n) VALUES ($1, 1)`, "a\x00b"), "22021", true},
		{"NUL escape in jsonb", pgErr(`INSERT INTO t (k, n, j) VALUES ('j', 1, $1::jsonb)`, `{"a":"\u0000"}`), "22P05", true},
		{"string too long", pgErr(`INSERT INTO t (k, v, n) VALUES ('v', 'abcd', 1)`), "22001", true},
		{"unique violation", pgErr(`INSERT INTO t (k, n) VALUES ('taken', 1)`), "23505", true},
		{"check violation", pgErr(`INSERT INTO t (k, n) VALUES ('c', 0)`), "23514", true},
		{"index row too large", pgErr(`INSERT INTO t (k, n) VALUES ($1, 1)`, hex64chain(4000)), "54000", true},
		{"undefined table", pgErr(`INSERT INTO missing VALUES (1)`), "42P01", false},
		{"statement timeout", timeout(), "57014", false},
		{"permanent mark", kafka.Permanent(errors.New("refused document")), "", true},
		{"undecodable mark", kafka.Undecodable(errors.New("bad json")), "", true},
		{"connection refused", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), "", false},
		{"deadline", context.DeadlineExceeded, "", false},
		{"nil", nil, "", false},
	} {
		if tc.code != "" {
			var pe *pgconn.PgError
			require.ErrorAs(t, tc.err, &pe)
			require.Equal(t, tc.code, pe.Code, tc.name)
		}
		require.Equal(t, tc.want, pgproj.IsDeterministic(tc.err), tc.name)
	}
}
