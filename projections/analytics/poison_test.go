package analytics_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/projections/analytics"
)

// simLog lays records out on simulated partitions of simTopics, as a
// producer bypassing the API would append them.
type simLog struct {
	reg  *events.Registry
	next map[string]int64
	recs []*kgo.Record
	n    int
}

func newSimLog() *simLog {
	return &simLog{reg: events.NewCatalogRegistry(), next: map[string]int64{}}
}

var simStart = time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)

// event appends a valid event on partition part of its topic.
func (l *simLog) event(t *testing.T, part int32, p events.Payload) *kgo.Record {
	t.Helper()
	value, headers, topic := l.encode(t, p)
	return l.raw(topic, part, value, headers)
}

// tampered appends the event p with its encoded payload changed by mutate
// (the envelope's data as generic JSON): what the registry's validation
// never lets a producer write.
func (l *simLog) tampered(t *testing.T, part int32, p events.Payload, mutate func(data map[string]any)) *kgo.Record {
	t.Helper()
	value, headers, topic := l.encode(t, p)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(value, &env))
	dec := json.NewDecoder(bytes.NewReader(env["data"]))
	dec.UseNumber()
	var data map[string]any
	require.NoError(t, dec.Decode(&data))
	mutate(data)
	raw, err := json.Marshal(data)
	require.NoError(t, err)
	env["data"] = raw
	value, err = json.Marshal(env)
	require.NoError(t, err)
	return l.raw(topic, part, value, headers)
}

// eventAt is event with the event time at.
func (l *simLog) eventAt(t *testing.T, part int32, p events.Payload, at time.Time) *kgo.Record {
	t.Helper()
	value, headers, topic := l.encodeAt(t, p, at)
	return l.raw(topic, part, value, headers)
}

func (l *simLog) encode(t *testing.T, p events.Payload) ([]byte, map[string]string, events.Topic) {
	t.Helper()
	return l.encodeAt(t, p, simStart.Add(time.Duration(l.n+1)*time.Minute))
}

func (l *simLog) encodeAt(t *testing.T, p events.Payload, at time.Time) ([]byte, map[string]string, events.Topic) {
	t.Helper()
	l.n++
	ev, err := l.reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint("poison-", l.n))).String(),
		Time: at})
	require.NoError(t, err)
	msg, err := l.reg.Encode(ev)
	require.NoError(t, err)
	return msg.Value, msg.Headers, msg.Topic
}

// raw appends value with headers as they are.
func (l *simLog) raw(topic events.Topic, part int32, value []byte, headers map[string]string) *kgo.Record {
	name := simTopics.Name(topic)
	k := fmt.Sprint(name, "/", part)
	rec := &kgo.Record{Topic: name, Partition: part, Offset: l.next[k], Value: value, Key: []byte(headers[events.HeaderSubject]),
		Timestamp: simStart.Add(time.Duration(len(l.recs)) * time.Second)}
	l.next[k]++
	for _, h := range slices.Sorted(func(yield func(string) bool) {
		for h := range headers {
			if !yield(h) {
				return
			}
		}
	}) {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h, Value: []byte(headers[h])})
	}
	l.recs = append(l.recs, rec)
	return rec
}

// batches cuts each partition's records into batches of at most size.
func (l *simLog) batches(size int) []kafka.Batch {
	byPart := map[string][]*kgo.Record{}
	var keys []string
	for _, r := range l.recs {
		k := fmt.Sprint(r.Topic, "/", r.Partition)
		if _, ok := byPart[k]; !ok {
			keys = append(keys, k)
		}
		byPart[k] = append(byPart[k], r)
	}
	var out []kafka.Batch
	for _, k := range keys {
		recs := byPart[k]
		for s := 0; s < len(recs); s += size {
			out = append(out, kafka.Batch{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: recs[s:min(s+size, len(recs))]})
		}
	}
	return out
}

// noise is n characters no compressor shrinks much (a handle the API
// would refuse).
func noise(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 99))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

func setPath(data map[string]any, value any, path ...string) {
	m := data
	for _, k := range path[:len(path)-1] {
		m = m[k].(map[string]any)
	}
	m[path[len(path)-1]] = value
}

// storedAuthor is a post_versions row's author as stored.
type storedAuthor struct{ UserID, Name string }

func storedAuthors(t *testing.T, f fixture) map[string]storedAuthor {
	t.Helper()
	rows, err := f.conn.Query(context.Background(),
		"SELECT toString(event_id), author_platform_user_id, author_display_name FROM post_versions FINAL")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]storedAuthor{}
	for rows.Next() {
		var id string
		var a storedAuthor
		require.NoError(t, rows.Scan(&id, &a.UserID, &a.Name))
		out[id] = a
	}
	require.NoError(t, rows.Err())
	return out
}

// parkedRow is a _parked row.
type parkedRow struct {
	Topic     string
	Partition int32
	Offset    int64
	EventID   string
	EventType string
	Class     string
	Reason    string
}

func parkedRows(t *testing.T, f fixture) []parkedRow {
	t.Helper()
	rows, err := f.conn.Query(context.Background(),
		"SELECT topic, log_partition, log_offset, event_id, event_type, class, reason FROM _parked FINAL ORDER BY topic, log_partition, log_offset")
	require.NoError(t, err)
	defer rows.Close()
	var out []parkedRow
	for rows.Next() {
		var r parkedRow
		require.NoError(t, rows.Scan(&r.Topic, &r.Partition, &r.Offset, &r.EventID, &r.EventType, &r.Class, &r.Reason))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// byPosition orders records by logical topic, partition and offset.
func byPosition(a, b *kgo.Record) int {
	return cmp.Or(strings.Compare(string(metricsTopic(a.Topic)), string(metricsTopic(b.Topic))),
		cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
}

// requireParked checks that exactly want were parked with class: in
// _parked and on the dead-letter topic, once each.
func requireParked(t *testing.T, f fixture, class string, want ...*kgo.Record) {
	t.Helper()
	want = slices.Clone(want)
	slices.SortFunc(want, byPosition)
	got := parkedRows(t, f)
	require.Len(t, got, len(want), "parked: %+v", got)
	for i, rec := range want {
		require.Equal(t, string(metricsTopic(rec.Topic)), got[i].Topic)
		require.Equal(t, rec.Partition, got[i].Partition)
		require.Equal(t, rec.Offset, got[i].Offset)
		require.Equal(t, header(rec, events.HeaderID), got[i].EventID)
		require.Equal(t, header(rec, events.HeaderType), got[i].EventType)
		require.Equal(t, class, got[i].Class, got[i].Reason)
		require.NotEmpty(t, got[i].Reason)
	}
	require.Len(t, f.dl.recs, len(want))
	sent := make([]int, len(f.dl.recs))
	for i := range sent {
		sent[i] = i
	}
	slices.SortFunc(sent, func(a, b int) int { return byPosition(f.dl.recs[a], f.dl.recs[b]) })
	for i, rec := range want {
		j := sent[i]
		require.Same(t, rec, f.dl.recs[j])
		require.True(t, kafka.IsPermanent(f.dl.causes[j]))
		require.Equal(t, class, kafka.PermanentClass(f.dl.causes[j]))
		require.Equal(t, got[i].Reason, kafka.TruncateUTF8(f.dl.causes[j].Error(), kafka.MaxDLQErrorBytes))
	}
}

func metricsTopic(name string) events.Topic {
	return events.Topic(strings.TrimPrefix(name, simTopics.Prefix))
}

// TestPoisonPayloadsDoNotStopTheProjector feeds the payloads that stop
// a Postgres projection (NUL characters in every string field of a
// registration, a 4,000-character handle), invalid UTF-8 and payloads of
// a future schema version, between good events of the same partitions.
// ClickHouse's String stores any bytes, so every registration that decodes
// is applied with its exact bytes; what does not decode (a version this
// build does not know, a v1 envelope with an incompatible payload) is
// parked in _parked and on the dead-letter topic, and the rest of each
// batch is applied. A rebuild cut into other batches is identical.
func TestPoisonPayloadsDoNotStopTheProjector(t *testing.T) {
	l := newSimLog()
	const nul = "a\x00b"
	author := func(id, name string) *events.AuthorV1 { return &events.AuthorV1{PlatformUserID: id, DisplayName: name} }
	x := func(ext string) *events.PostVersionRegisteredV1 {
		return registration(events.PlatformX, ext, 1, author("someone", "Someone"), false)
	}
	good := []*kgo.Record{l.event(t, 0, x("100"))}
	decodable := map[*kgo.Record]storedAuthor{}
	tamperX := func(ext string, want storedAuthor, mutate func(map[string]any)) {
		rec := l.tampered(t, 0, x(ext), mutate)
		decodable[rec] = want
	}
	someone := storedAuthor{"someone", "Someone"}
	tamperX("101", someone, func(d map[string]any) { d["content_text"] = "Water " + nul })
	tamperX("102", someone, func(d map[string]any) { setPath(d, nul, "x", "text") })
	tamperX("103", storedAuthor{nul, "Someone"}, func(d map[string]any) {
		setPath(d, nul, "x", "author_handle")
		setPath(d, nul, "author", "platform_user_id")
	})
	tamperX("104", storedAuthor{"someone", nul}, func(d map[string]any) {
		setPath(d, nul, "x", "author_display_name")
		setPath(d, nul, "author", "display_name")
	})
	long := noise(4000, 1)
	tamperX("105", storedAuthor{long, "Someone"}, func(d map[string]any) {
		setPath(d, long, "x", "author_handle")
		setPath(d, long, "author", "platform_user_id")
	})
	tamperX("106", someone, func(d map[string]any) {
		d["image_occurrences"] = []any{map[string]any{"original_index": 0, "normalized_text_offset": 0,
			"source_url": "https://example.org/a.png", "caption_text": nul}}
		d["image_urls"] = []any{"https://example.org/a.png"}
	})
	lw := registration(events.PlatformLessWrong, "lw1", 1, author("lw-user", "LW User"), false)
	decodable[l.tampered(t, 0, lw, func(d map[string]any) {
		setPath(d, nul, "lesswrong", "title")
		setPath(d, nul, "lesswrong", "author_slug")
		setPath(d, []any{"ok", nul}, "lesswrong", "tags")
		d["client_html"] = "<p>" + nul + "</p>"
	})] = storedAuthor{"lw-user", "LW User"}
	sub := registration(events.PlatformSubstack, "sub1", 1, nil, false)
	decodable[l.tampered(t, 0, sub, func(d map[string]any) { setPath(d, nul, "substack", "subtitle") })] = storedAuthor{}
	wiki := registration(events.PlatformWikipedia, "w1", 1, nil, false)
	decodable[l.tampered(t, 0, wiki, func(d map[string]any) {
		setPath(d, nul, "wikipedia", "title")
		setPath(d, nul, "wikipedia", "display_title")
	})] = storedAuthor{}
	// Invalid UTF-8 cannot survive the envelope: JSON decoding turns the
	// bytes (and a lone surrogate) into U+FFFD, the same on every read.
	invalid := l.tampered(t, 0, x("107"), func(d map[string]any) {
		setPath(d, "bad\xffname", "author", "display_name")
	})
	invalid.Value = bytes.Replace(invalid.Value, []byte(`bad\ufffdname`), []byte("bad\xff\\ud800name"), 1)
	require.Contains(t, string(invalid.Value), "bad\xff\\ud800name")
	decodable[invalid] = storedAuthor{"someone", "bad\uFFFD\uFFFDname"}

	// A future schema version: a type this build does not know, and the
	// known type with a payload of another shape.
	futureValue, futureHeaders, _ := l.encode(t, x("108"))
	futureValue = bytes.Replace(futureValue, []byte(events.TypePostVersionRegisteredV1), []byte("post.version_registered.v9"), 1)
	futureHeaders[events.HeaderType] = "post.version_registered.v9"
	future := l.raw(events.TopicPosts, 0, futureValue, futureHeaders)
	reshaped := l.tampered(t, 0, x("109"), func(d map[string]any) {
		d["author"] = map[string]any{"id": "someone", "names": []any{"Someone"}, "schema": 9}
	})
	notJSON := l.raw(events.TopicPosts, 0, []byte("\x00\x01not an envelope\x1b[31m"),
		map[string]string{events.HeaderType: events.TypePostVersionRegisteredV1, events.HeaderID: "not-an-id"})
	// A header that names another type than the envelope: filtering
	// trusted the header, so the record is parked, not applied as what it
	// really is.
	mismatchValue, mismatchHeaders, _ := l.encode(t, x("111"))
	mismatchHeaders[events.HeaderType] = events.TypePostViewRecordedV2
	mismatch := l.raw(events.TopicPosts, 0, mismatchValue, mismatchHeaders)
	// A later view version is parked too; an event type the projection
	// never reads is skipped, whatever its version.
	laterView := l.raw(events.TopicPosts, 0, []byte(`{"later":true}`), map[string]string{events.HeaderType: "post.view_recorded.v3"})
	l.raw(events.TopicPosts, 0, []byte(`{"ignored":true}`), map[string]string{events.HeaderType: "post.integrity_anomaly_recorded.v7"})
	l.raw(events.TopicPosts, 0, []byte(`{"ignored":true}`), map[string]string{events.HeaderType: "post.version_registered.v01"})
	good = append(good, l.event(t, 0, x("110")), l.event(t, 0, view(x("110"), 1)))

	reg := events.NewCatalogRegistry()
	wantParked := []*kgo.Record{future, reshaped, notJSON, mismatch, laterView}
	for rec := range decodable {
		if _, err := reg.Decode(rec.Value); err != nil {
			// The registry validates stored strings: then every poison
			// registration is parked instead.
			t.Logf("registry refuses %s: %v", rec.Value[:min(len(rec.Value), 80)], err)
			delete(decodable, rec)
			wantParked = append(wantParked, rec)
		}
	}
	for _, rec := range []*kgo.Record{future, reshaped, notJSON, laterView} {
		_, err := reg.Decode(rec.Value)
		require.Error(t, err)
	}

	check := func(f fixture) {
		t.Helper()
		requireParked(t, f, kafka.ClassDecode, wantParked...)
		authors := storedAuthors(t, f)
		require.Len(t, authors, len(decodable)+2, "every decodable registration has its row")
		for rec, want := range decodable {
			got, ok := authors[header(rec, events.HeaderID)]
			require.True(t, ok, "registration %s applied", header(rec, events.HeaderID))
			require.Equal(t, want, got)
		}
		var views uint64
		require.NoError(t, f.conn.QueryRow(context.Background(), "SELECT count() FROM views FINAL").Scan(&views))
		require.EqualValues(t, 1, views)
		pos, err := f.proj.Positions(context.Background(), []string{simTopics.Name(events.TopicPosts)})
		require.NoError(t, err)
		require.Equal(t, int64(len(l.recs)), pos[simTopics.Name(events.TopicPosts)][0], "the position moved past everything")
	}
	live := newFixture(t, 0)
	live.feed(t, l.batches(5))
	check(live)
	t.Logf("%d poison records: %d applied, %d parked", len(l.recs)-len(good)-2, len(decodable), len(wantParked))

	// Redelivered: nothing changes (the dead-letter copies are sent again
	// and deduplicated by their readers).
	before := live.dump(t)
	live.feed(t, l.batches(len(l.recs)))
	require.Equal(t, string(before), string(live.dump(t)))
	require.Equal(t, len(parkedRows(t, live)), len(wantParked))

	rebuilt := newFixture(t, 2)
	rebuilt.feed(t, l.batches(1))
	check(rebuilt)
	require.Equal(t, string(before), string(rebuilt.dump(t)))
	require.Contains(t, string(before), fmt.Sprintf("# _parked (%s) %d rows", "topic, log_partition, log_offset, event_id, event_type, class", len(wantParked)))
}

// TestRefusedEventsAreIsolated makes ClickHouse refuse some events'
// rows for good (CHECK constraints an operator could add: a real
// VIOLATED_CONSTRAINT from the engine) and checks that the projector
// finds exactly those events in their batches, parks them (class
// deterministic), removes the rows an INSERT into another table had
// already stored for them, applies everything else, and that redelivery
// and a rebuild cut into other batches give the identical dump.
func TestRefusedEventsAreIsolated(t *testing.T) {
	l := newSimLog()
	author := func(name string) *events.AuthorV1 { return &events.AuthorV1{PlatformUserID: name, DisplayName: name} }
	var regs []*events.PostVersionRegisteredV1
	var refusedRecs []*kgo.Record
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("author-%d", i)
		if i%5 == 2 {
			name = "refuse-me " + name
		}
		v := registration(events.PlatformX, fmt.Sprint(200+i), 1, author(name), false)
		regs = append(regs, v)
		rec := l.event(t, int32(i%2), v)
		if i%5 == 2 {
			refusedRecs = append(refusedRecs, rec)
		}
		l.event(t, int32(i%2), view(v, i))
	}
	for i, v := range regs {
		part := int32(i % 2)
		l.event(t, part, request(v, events.RequestSourceSelector))
		c := completion(v, 2, "gpt-test")
		if i%4 == 1 {
			// Its investigations row goes in before its claims are refused.
			c.Claims[1].Text = "refuse-me: " + c.Claims[1].Text
		}
		rec := l.event(t, part, c)
		if i%4 == 1 {
			refusedRecs = append(refusedRecs, rec)
		}
	}
	require.Len(t, refusedRecs, 5)

	withConstraints := func(insertRows int) fixture {
		f := newFixture(t, insertRows)
		ctx := context.Background()
		require.NoError(t, f.conn.Exec(ctx, "ALTER TABLE post_versions ADD CONSTRAINT no_refuse CHECK position(author_display_name, 'refuse-me') = 0"))
		require.NoError(t, f.conn.Exec(ctx, "ALTER TABLE claims ADD CONSTRAINT no_refuse CHECK position(text, 'refuse-me') = 0"))
		return f
	}
	count := func(f fixture, query string) uint64 {
		var n uint64
		require.NoError(t, f.conn.QueryRow(context.Background(), query).Scan(&n))
		return n
	}
	check := func(f fixture) {
		t.Helper()
		requireParked(t, f, kafka.ClassDeterministic, refusedRecs...)
		for _, r := range parkedRows(t, f) {
			require.Contains(t, r.Reason, "VIOLATED_CONSTRAINT")
		}
		require.EqualValues(t, 12-2, count(f, "SELECT count() FROM post_versions FINAL"))
		require.EqualValues(t, 0, count(f, "SELECT count() FROM post_versions FINAL WHERE position(author_display_name, 'refuse-me') > 0"))
		require.EqualValues(t, 12, count(f, "SELECT count() FROM views FINAL"))
		require.EqualValues(t, 12+12-3, count(f, "SELECT count() FROM investigations FINAL"))
		require.EqualValues(t, 12, count(f, "SELECT count() FROM investigations FINAL WHERE status = 'REQUESTED'"))
		require.EqualValues(t, 2*(12-3), count(f, "SELECT count() FROM claims FINAL"))
		// No row of a parked event is left, in any table, merged or not.
		for _, table := range analytics.Tables {
			for _, rec := range refusedRecs {
				if analytics.TableTopics[table] != metricsTopic(rec.Topic) {
					continue
				}
				require.EqualValues(t, 0, count(f, fmt.Sprintf("SELECT count() FROM %s WHERE log_partition = %d AND log_offset = %d",
					table, rec.Partition, rec.Offset)), "%s keeps rows of parked %s", table, header(rec, events.HeaderID))
			}
		}
		reader := analytics.NewReader(f.conn)
		inc, err := reader.Incidence(context.Background(), analytics.Filter{})
		require.NoError(t, err)
		require.Equal(t, analytics.Incidence{TotalInvestigatedPosts: 9, InvestigatedPostsWithFlags: 9, FactCheckIncidence: 1}, inc)
	}
	live := withConstraints(0)
	live.feed(t, l.batches(7))
	check(live)
	before := live.dump(t)

	live.dl.recs, live.dl.causes = nil, nil
	live.feed(t, l.batches(100)) // redelivered in other batches
	require.Equal(t, string(before), string(live.dump(t)))
	require.Len(t, live.dl.recs, len(refusedRecs), "the copies are sent again; readers dedupe them")

	rebuilt := withConstraints(3)
	rebuilt.feed(t, l.batches(1))
	check(rebuilt)
	require.Equal(t, string(before), string(rebuilt.dump(t)))
}

// TestTimesClickHouseCannotStoreAreParked: ClickHouse would store an
// event time outside DateTime64's range (1900 to 2262-04-11 through the
// Go driver, which encodes via UnixNano), or a view's day
// outside Date's (1970 to 2149-06-06), as some other time without an
// error; such events are parked (class deterministic) instead of stored
// wrong, and times at the edges of the ranges are stored exactly.
func TestTimesClickHouseCannotStoreAreParked(t *testing.T) {
	l := newSimLog()
	v := registration(events.PlatformX, "400", 1, nil, false)
	edge := []*kgo.Record{
		l.eventAt(t, 0, v, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)),
		l.eventAt(t, 0, registration(events.PlatformX, "401", 1, nil, false), time.Date(2262, 4, 11, 23, 47, 16, 854_000_000, time.UTC)),
		l.eventAt(t, 0, view(v, 1), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)),
		l.eventAt(t, 0, view(v, 2), time.Date(2149, 6, 6, 12, 0, 0, 0, time.UTC)),
	}
	outside := []*kgo.Record{
		l.eventAt(t, 0, registration(events.PlatformX, "402", 1, nil, false), time.Date(1899, 12, 31, 23, 59, 59, 0, time.UTC)),
		l.eventAt(t, 0, registration(events.PlatformX, "403", 1, nil, false), time.Date(2262, 4, 11, 23, 47, 16, 855_000_000, time.UTC)),
		l.eventAt(t, 0, registration(events.PlatformX, "405", 1, nil, false), time.Date(2299, 12, 31, 0, 0, 0, 0, time.UTC)),
		l.eventAt(t, 0, registration(events.PlatformX, "404", 1, nil, false), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)),
		l.eventAt(t, 0, view(v, 3), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)),
		l.eventAt(t, 0, view(v, 4), time.Date(2149, 6, 7, 0, 0, 0, 0, time.UTC)),
	}
	f := newFixture(t, 0)
	f.feed(t, l.batches(4))
	requireParked(t, f, kafka.ClassDeterministic, outside...)
	rows, err := f.conn.Query(context.Background(), `SELECT toString(registered_at) FROM post_versions FINAL
		UNION ALL SELECT toString(viewed_at) || ' ' || toString(viewed_on) FROM views FINAL`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	slices.Sort(got)
	require.Len(t, edge, 4)
	require.Equal(t, []string{"1900-01-01 00:00:00.000", "1970-01-01 00:00:00.000 1970-01-01", "2149-06-06 12:00:00.000 2149-06-06",
		"2262-04-11 23:47:16.854"}, got)
}

// TestStoreAwayIsRetriedNotParked: failures that may clear (ClickHouse
// unreachable, a table missing) fail the batch, so the runner retries it;
// nothing is parked and the position stays. Once the store is back the
// same batch applies completely.
func TestStoreAwayIsRetriedNotParked(t *testing.T) {
	l := newSimLog()
	v := registration(events.PlatformX, "300", 1, nil, false)
	l.event(t, 0, v)
	for i := 0; i < 5; i++ {
		l.event(t, 0, view(v, i))
	}
	b := l.batches(len(l.recs))[0]
	ctx := context.Background()

	f := newFixture(t, 0)
	opts, err := analytics.Options("http://127.0.0.1:1", f.database) // nothing listens on port 1
	require.NoError(t, err)
	down, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer down.Close()
	dl := &recordingDeadLetter{}
	away := analytics.NewProjector(down, events.NewCatalogRegistry(), simTopics, dl, 0, logging.Discard())
	require.Error(t, away.Handle(ctx, b))
	require.Empty(t, dl.recs)

	require.NoError(t, f.conn.Exec(ctx, "RENAME TABLE views TO views_away"))
	err = f.proj.Handle(ctx, b)
	require.Error(t, err)
	var ex *clickhouse.Exception
	require.ErrorAs(t, err, &ex)
	require.EqualValues(t, 60, ex.Code, "UNKNOWN_TABLE: %v", err)
	require.Empty(t, f.dl.recs)
	require.Empty(t, parkedRows(t, f))
	pos, err := f.proj.Positions(ctx, []string{b.Topic})
	require.NoError(t, err)
	require.Empty(t, pos)

	require.NoError(t, f.conn.Exec(ctx, "RENAME TABLE views_away TO views"))
	require.NoError(t, f.proj.Handle(ctx, b))
	var views uint64
	require.NoError(t, f.conn.QueryRow(ctx, "SELECT count() FROM views FINAL").Scan(&views))
	require.EqualValues(t, 5, views)
	require.Empty(t, f.dl.recs)
	pos, err = f.proj.Positions(ctx, []string{b.Topic})
	require.NoError(t, err)
	require.Equal(t, int64(6), pos[b.Topic][0])
}
