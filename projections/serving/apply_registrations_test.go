package serving_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestRegistrationsSetBasedEqualOneByOne applies registrations whose keys
// repeat within a batch (one author behind many posts and renamed among
// them, the shared empty image set, versions registered again with times
// out of log order, ties at the microsecond, verification arriving late,
// corroborations, X and Substack metadata changing) in one batch, where
// they are merged per key and upserted set-based, and one event per batch:
// the rows are identical.
func TestRegistrationsSetBasedEqualOneByOne(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	at := base
	var log []timed
	add := func(p events.Payload, d time.Duration) {
		at = at.Add(d)
		log = append(log, timed{p, at})
	}
	author := func(r *events.PostVersionRegisteredV1, name string) *events.PostVersionRegisteredV1 {
		r.Author = &events.AuthorV1{PlatformUserID: "hot-author", DisplayName: name}
		return r
	}
	x1 := author(registration(events.PlatformX, "x1", "First tweet."), "Name A")
	x2 := author(registration(events.PlatformX, "x2", "Second tweet."), "Name B")
	x1again := *x1
	x1again.Provenance = events.ProvenanceClientFallback
	x1again.X = &events.XMetaV1{TweetID: "x1", Text: "First tweet.", AuthorHandle: "renamed", MediaURLs: []string{"https://img.example/b.png", "https://img.example/a.png"}, LikeCount: ptr(3)}
	x1again.ReporterKey = hex64("reporter:1")
	x1late := x1again
	x1late.Provenance = events.ProvenanceServerVerified
	x1late.Author = nil
	x1late.ReporterKey = hex64("reporter:2")
	s1 := registration(events.PlatformSubstack, "s1", "A Substack post.")
	s1.ClientHTML = "<p>A Substack post.</p>"
	s1.ImageURLs = []string{"https://img.example/s.png"}
	s1.ImageOccurrences = []events.ImageOccurrenceV1{{OriginalIndex: 0, NormalizedTextOffset: 2, SourceURL: "https://img.example/s.png", CaptionText: "cap"}}
	s1.OccurrencesHash = hex64("occurrences:s1")
	s1again := *s1
	s1again.ClientHTML = ""
	s1again.ServerHTML = "<p>A Substack post, fetched.</p>"
	s1again.Substack = &events.SubstackMetaV1{SubstackPostID: "s1", PublicationSubdomain: "pub", Slug: "slug-s1", Title: "Retitled", AuthorName: "Author", LikeCount: ptr(7)}
	s1again.ReporterKey = hex64("reporter:1")
	w := author(registration(events.PlatformWikipedia, "en:Hot", "A page."), "Name C")

	add(x1, time.Minute)
	add(x2, time.Minute)
	add(s1, time.Minute)
	add(&x1again, -3*time.Minute) // earlier than the first: LEAST/GREATEST and the rename rule
	add(w, 5*time.Minute)
	add(author(registration(events.PlatformX, "x3", "Third tweet."), "Name D"), 500) // the same microsecond: a tie renames
	add(&s1again, time.Minute)
	add(&x1late, time.Minute)
	add(&x1again, time.Second)
	add(author(registration(events.PlatformX, "x4", "Fourth tweet."), "Name E"), -time.Hour)
	add(&s1again, -time.Second)
	add(x2, 2*time.Hour)
	// At the microsecond the server compares times at, the last two tie:
	// the later event renames.
	add(author(registration(events.PlatformX, "x5", "Fifth tweet."), "Name F"), 400)
	add(author(registration(events.PlatformX, "x6", "Sixth tweet."), "Name G"), -300)

	recs := records(t, 0, 0, log...)
	one := newProjection(t, url, "reg_one_batch", 2)
	one.handle(t, recs...)
	single := newProjection(t, url, "reg_one_by_one", 2)
	single.handleInBatches(t, recs, 1)
	halves := newProjection(t, url, "reg_in_threes", 2)
	halves.handleInBatches(t, recs, 3)

	want := dumpSchema(t, single.pool)
	require.Equal(t, want, dumpSchema(t, one.pool), "one batch vs one event per batch")
	require.Equal(t, want, dumpSchema(t, halves.pool), "batches of three vs one event per batch")
	// Sanity of what the comparison covers.
	require.Equal(t, []string{"Name G"}, one.texts(t, `SELECT display_name FROM authors WHERE platform = 'X'`))
	require.Equal(t, []string{"4", "3", "2", "1", "1", "1", "1", "1"}, one.texts(t, `SELECT seen_count::text FROM post_versions ORDER BY seen_count DESC, id`))
	require.Equal(t, []string{"{https://img.example/b.png,https://img.example/a.png}"},
		one.texts(t, `SELECT media_urls::text FROM x_version_meta WHERE author_handle = 'renamed'`))
	require.Equal(t, []string{"Retitled 7"}, one.texts(t, `SELECT title || ' ' || like_count FROM substack_version_meta`))
}
