package serving_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// scenarioEvent is one event of the replay scenario and the post it belongs to.
type scenarioEvent struct {
	post string
	timed
}

// scenario is a log of four posts whose events interleave: two LessWrong
// posts sharing an author (renamed in between), content text, HTML and image
// occurrences; an X post viewed over two UTC days; a Wikipedia post
// registered twice. Every event has its own time, one minute apart, in log
// order, so last-writer-wins rows across posts have no ties.
func scenario() []scenarioEvent {
	const sharedText = "Two posts share this text."
	lw := func(ext, display string, prov string) *events.PostVersionRegisteredV1 {
		r := registration(events.PlatformLessWrong, ext, sharedText)
		r.Provenance = prov
		r.Author = &events.AuthorV1{PlatformUserID: "shared-user", DisplayName: display}
		r.ClientHTML = "<p>" + sharedText + "</p>"
		r.ImageURLs = []string{"https://img.example/shared.png"}
		r.ImageOccurrences = []events.ImageOccurrenceV1{{OriginalIndex: 0, NormalizedTextOffset: 3, SourceURL: "https://img.example/shared.png"}}
		r.OccurrencesHash = hex64("occurrences:shared")
		r.LessWrong.Tags = []string{"shared"}
		return r
	}
	a1 := lw("lwA", "Shared One", events.ProvenanceClientFallback)
	a2 := lw("lwA", "Shared Three", events.ProvenanceServerVerified)
	b1 := lw("lwB", "Shared Two", events.ProvenanceServerVerified)
	x := registration(events.PlatformX, "x1", "A tweet viewed over two days.")
	x.Author = &events.AuthorV1{PlatformUserID: "x-user", DisplayName: "X User"}
	w1 := registration(events.PlatformWikipedia, "en:Salt", "Salt is a mineral.")
	w1.Wikipedia.RevisionID = "1"
	w2 := registration(events.PlatformWikipedia, "en:Salt", "Salt is a mineral.")
	w2.Wikipedia.RevisionID = "2"
	w2.Provenance = events.ProvenanceClientFallback

	type e struct {
		post string
		p    events.Payload
		day  int // extra days added to the event's time
	}
	log := []e{
		{"A", a1, 0}, {"X", x, 0}, {"A", viewOf(a1, "u1", "r1"), 0}, {"W", w1, 0},
		{"A", viewOf(a1, "u2", "r1"), 0}, {"X", viewOf(x, "u1", "r1"), 0}, {"B", b1, 0},
		{"A", viewOf(a1, "u3", "r1"), 0}, {"B", viewOf(b1, "u1", "r1"), 0}, {"A", a2, 0},
		{"W", viewOf(w1, "u9", "r9"), 0}, {"X", viewOf(x, "u1", "r1"), 0}, {"B", viewOf(b1, "u2", "r2"), 0},
		{"A", viewOf(a2, "u4", "r2"), 0}, {"W", w2, 0}, {"X", viewOf(x, "u2", "r1"), 1},
		{"X", viewOf(x, "u1", "r1"), 1}, {"B", viewOf(b1, "u1", "r1"), 1}, {"W", viewOf(w2, "u9", "r9"), 1},
		{"A", viewOf(a2, "u1", "r1"), 1}, {"X", viewOf(x, "u3", "r1"), 1}, {"X", viewOf(x, "u4", "r1"), 1},
	}
	out := make([]scenarioEvent, len(log))
	for i, ev := range log {
		at := base.Add(time.Duration(i)*time.Minute).AddDate(0, 0, ev.day)
		out[i] = scenarioEvent{post: ev.post, timed: timed{ev.p, at}}
	}
	return out
}

func payloads(evs []scenarioEvent) []timed {
	out := make([]timed, len(evs))
	for i, e := range evs {
		out[i] = e.timed
	}
	return out
}

// ofPosts keeps the events of the given posts, in the order the posts are
// listed (all of the first post, then all of the second...), each post's
// own events in log order.
func ofPosts(evs []scenarioEvent, posts ...string) []scenarioEvent {
	var out []scenarioEvent
	for _, p := range posts {
		for _, e := range evs {
			if e.post == p {
				out = append(out, e)
			}
		}
	}
	return out
}

func lastOf(evs []scenarioEvent) scenarioEvent { return evs[len(evs)-1] }

// TestReplayIsDeterministic applies the same log (a) as one batch, (b) in
// many small batches, and (c) split over two partitions by post, with the
// posts of each partition in a different order and the partitions'
// batches interleaved; all three give identical rows.
func TestReplayIsDeterministic(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	log := scenario()
	recs := records(t, 0, 0, payloads(log)...)

	a := newProjection(t, url, "det_one_batch", 2)
	a.handle(t, recs...)

	b := newProjection(t, url, "det_small_batches", 2)
	b.handleInBatches(t, recs, 1, 2, 3, 5)

	c := newProjection(t, url, "det_two_partitions", 2)
	// Partition 0 holds A's events before X's, partition 1 W's before B's,
	// and partition 0 goes first in every round: the author shared by A and
	// B is renamed by B's registration (log position 6) before A's second
	// one (9), but here B's is applied after it.
	p0 := records(t, 0, 0, payloads(ofPosts(log, "A", "X"))...)
	p1 := records(t, 1, 0, payloads(ofPosts(log, "W", "B"))...)
	sizes := []int{2, 3, 1}
	for i, j, n := 0, 0, 0; i < len(p0) || j < len(p1); n++ {
		size := sizes[n%len(sizes)]
		if i < len(p0) {
			end := min(i+size, len(p0))
			c.handle(t, p0[i:end]...)
			i = end
		}
		if j < len(p1) {
			end := min(j+size, len(p1))
			c.handle(t, p1[j:end]...)
			j = end
		}
	}

	full := dumpSchema(t, a.pool)
	require.Equal(t, full, dumpSchema(t, b.pool), "(a) one batch vs (b) small batches")
	require.Equal(t, dumpSchema(t, a.pool, "projection_checkpoints"), dumpSchema(t, c.pool, "projection_checkpoints"),
		"(a) one partition vs (c) two partitions, interleaved")

	// Sanity of the shared rows and counters the comparison relies on.
	require.Equal(t, []string{
		"LESSWRONG lwA 5 4", "LESSWRONG lwB 3 3", "WIKIPEDIA en:Salt 2 2", "X x1 6 3",
	}, a.texts(t, `SELECT platform || ' ' || external_id || ' ' || view_count || ' ' || unique_view_score FROM posts ORDER BY 1`))
	require.Equal(t, []string{"Shared Three"}, a.texts(t, `SELECT display_name FROM authors WHERE platform = 'LESSWRONG'`))
	require.Equal(t, []string{pgTime(log[0].at)}, a.texts(t, `SELECT created_at::text FROM content_blobs WHERE content_hash = $1`,
		hex64("Two posts share this text.")))
	require.Equal(t, []string{fmt.Sprint(len(log)) + " " + pgTime(log[len(log)-1].at)},
		a.texts(t, `SELECT next_offset || ' ' || event_time::text FROM projection_checkpoints`))
	require.Equal(t, []string{
		fmt.Sprintf("0 %d %s", len(p0), pgTime(lastOf(ofPosts(log, "X")).at)),
		fmt.Sprintf("1 %d %s", len(p1), pgTime(lastOf(ofPosts(log, "B")).at)),
	}, c.texts(t, `SELECT partition || ' ' || next_offset || ' ' || event_time::text FROM projection_checkpoints ORDER BY partition`))
}

// TestRedeliveryIsIdempotent hands over batches again, whole and
// overlapping the checkpoint: only records at or after the checkpoint are
// applied, and the rows end up exactly as after one delivery.
func TestRedeliveryIsIdempotent(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	log := scenario()
	recs := records(t, 0, 0, payloads(log)...)
	n := len(recs)
	lastTime := pgTime(log[n-1].at)

	once := newProjection(t, url, "once", 2)
	once.handle(t, recs...)
	want := dumpSchema(t, once.pool)
	require.Equal(t, []string{fmt.Sprintf("serving test.posts 0 %d %s", n, lastTime)},
		once.texts(t, `SELECT projector || ' ' || topic || ' ' || partition || ' ' || next_offset || ' ' || event_time::text
			FROM projection_checkpoints`))

	t.Run("the same batch twice", func(t *testing.T) {
		once.handle(t, recs...)
		require.Equal(t, want, dumpSchema(t, once.pool))
	})

	t.Run("overlapping and stale batches", func(t *testing.T) {
		p := newProjection(t, url, "overlap", 2)
		p.handle(t, recs[:10]...)
		require.Equal(t, []string{"10 " + pgTime(log[9].at)},
			p.texts(t, `SELECT next_offset || ' ' || event_time::text FROM projection_checkpoints`))
		views := func() string {
			return p.texts(t, `SELECT COALESCE(sum(view_count), 0)::text FROM posts`)[0]
		}
		require.Equal(t, "5", views())

		p.handle(t, recs[6:15]...) // 6..9 applied before: only 10..14 are new
		require.Equal(t, "9", views())
		require.Equal(t, []string{"15 " + pgTime(log[14].at)},
			p.texts(t, `SELECT next_offset || ' ' || event_time::text FROM projection_checkpoints`))

		p.handle(t, recs[2:5]...) // entirely before the checkpoint: nothing happens
		require.Equal(t, "9", views())

		p.handle(t, recs...) // everything again: only 15.. are new
		require.Equal(t, want, dumpSchema(t, p.pool))

		p.handle(t, recs[n-1]) // the last record alone
		require.Equal(t, want, dumpSchema(t, p.pool))
	})

	t.Run("a batch with records of other types only advances the checkpoint", func(t *testing.T) {
		p := newProjection(t, url, "skipped", 2)
		p.handle(t, recs...)
		other := &kgo.Record{
			Topic: postsTopic, Partition: 0, Offset: int64(n), Value: []byte("not even JSON"),
			Headers: []kgo.RecordHeader{{Key: events.HeaderType, Value: []byte("post.retracted.v1")}},
		}
		noType := &kgo.Record{Topic: postsTopic, Partition: 0, Offset: int64(n + 1), Value: []byte("{}")}
		p.handle(t, other, noType)
		require.Equal(t, dumpSchema(t, once.pool, "projection_checkpoints"), dumpSchema(t, p.pool, "projection_checkpoints"))
		require.Equal(t, []string{fmt.Sprintf("%d %s", n+2, lastTime)},
			p.texts(t, `SELECT next_offset || ' ' || event_time::text FROM projection_checkpoints`),
			"event_time stays the last applied event's")
	})
}
