package serving_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

type postRow struct {
	Platform, ExternalID, URL string
	AuthorID                  *string
	ViewCount                 int64
	UniqueViewScore           int64
	LastViewedAt              *string
	CreatedAt, UpdatedAt      string
}

type versionRow struct {
	ID, PostID, VersionHash, ContentHash, OccurrencesHash string
	ServerVerifiedAt                                      *string
	FirstSeenAt, LastSeenAt                               string
	SeenCount                                             int32
}

type authorRow struct {
	ID, Platform, PlatformUserID, DisplayName, CreatedAt, UpdatedAt string
}

type contentRow struct {
	ContentHash, ContentText string
	WordCount                int32
	CreatedAt                string
}

type htmlRow struct{ Hash, Content, CreatedAt string }

type occurrenceSetRow struct{ Hash, CreatedAt string }

type occurrenceRow struct {
	Hash                  string
	OriginalIndex, Offset int32
	SourceURL             string
	Caption               *string
}

type lessWrongRow struct {
	Slug                   string
	Title                  *string
	ServerHTML, ClientHTML *string
	ImageURLs              []string
	Karma                  *int32
	AuthorName, AuthorSlug *string
	Tags                   []string
	PublishedAt            *string
	CreatedAt              string
}

type xRow struct {
	TweetID, Text, AuthorHandle string
	AuthorDisplayName           *string
	MediaURLs                   []string
	LikeCount, RetweetCount     *int32
	PostedAt                    *string
	CreatedAt                   string
}

type substackRow struct {
	SubstackPostID, Subdomain, Slug, Title string
	Subtitle                               *string
	ServerHTML, ClientHTML                 *string
	ImageURLs                              []string
	AuthorName                             string
	AuthorHandle                           *string
	PublishedAt                            *string
	LikeCount, CommentCount                *int32
	CreatedAt                              string
}

type wikipediaRow struct {
	Language, Title, PageID, RevisionID string
	DisplayTitle                        *string
	ServerHTML, ClientHTML              *string
	ImageURLs                           []string
	LastModifiedAt                      *string
	CreatedAt                           string
}

// rowsOf runs sql and scans every row into a T by column position.
func rowsOf[T any](t testing.TB, p *projection, sql string, args ...any) []T {
	t.Helper()
	rows, err := p.pool.Query(context.Background(), sql, args...)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[T])
	require.NoError(t, err)
	if len(out) == 0 {
		return nil
	}
	return out
}

const (
	qPosts = `SELECT platform, external_id, url, author_id::text, view_count, unique_view_score,
		last_viewed_at::text, created_at::text, updated_at::text FROM posts ORDER BY id`
	qVersions = `SELECT id::text, post_id::text, version_hash, content_hash, occurrences_hash,
		server_verified_at::text, first_seen_at::text, last_seen_at::text, seen_count FROM post_versions ORDER BY id`
	qAuthors = `SELECT id::text, platform, platform_user_id, display_name, created_at::text, updated_at::text
		FROM authors ORDER BY id`
	qContent        = `SELECT content_hash, content_text, word_count, created_at::text FROM content_blobs ORDER BY content_hash`
	qHTML           = `SELECT html_hash, html_content, created_at::text FROM html_blobs ORDER BY html_content`
	qOccurrenceSets = `SELECT occurrences_hash, created_at::text FROM image_occurrence_sets ORDER BY occurrences_hash`
	qOccurrences    = `SELECT occurrences_hash, original_index, normalized_text_offset, source_url, caption_text
		FROM image_occurrences ORDER BY occurrences_hash, original_index`
	qLessWrong = `SELECT slug, title, server_html_hash, client_html_hash, image_urls, karma, author_name, author_slug,
		tags, published_at::text, created_at::text FROM lesswrong_version_meta`
	qX = `SELECT tweet_id, text, author_handle, author_display_name, media_urls, like_count, retweet_count,
		posted_at::text, created_at::text FROM x_version_meta`
	qSubstack = `SELECT substack_post_id, publication_subdomain, slug, title, subtitle, server_html_hash, client_html_hash,
		image_urls, author_name, author_substack_handle, published_at::text, like_count, comment_count, created_at::text
		FROM substack_version_meta`
	qWikipedia = `SELECT language, title, page_id, revision_id, display_title, server_html_hash, client_html_hash,
		image_urls, last_modified_at::text, created_at::text FROM wikipedia_version_meta`
)

var published = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// observation i (0, 1, 2) of the one version of a post on platform:
// client fallback, server verified, client fallback again. Metadata and
// author change between observations; the latest observation's values win.
func observation(platform string, i int) *events.PostVersionRegisteredV1 {
	var p *events.PostVersionRegisteredV1
	img := "https://img.example/" + platform + ".png"
	switch platform {
	case events.PlatformLessWrong:
		p = registration(platform, "lwpost1", "LessWrong post with two images and a caption.")
		p.URL = fmt.Sprintf("https://www.lesswrong.com/posts/lwpost1/title-v%d", i)
		p.ImageURLs = []string{img, "https://img.example/second.png"}
		p.ImageOccurrences = []events.ImageOccurrenceV1{
			{OriginalIndex: 0, NormalizedTextOffset: 4, SourceURL: img, CaptionText: "Figure 1"},
			{OriginalIndex: 1, NormalizedTextOffset: 20, SourceURL: "https://img.example/second.png"},
		}
		p.OccurrencesHash = hex64("occurrences:lw")
		p.Author = &events.AuthorV1{PlatformUserID: "lw-user", DisplayName: []string{"Alice", "Alice", "Alice B."}[i]}
		p.LessWrong = &events.LessWrongMetaV1{
			Slug: "title", Title: fmt.Sprintf("Title v%d", i), AuthorName: "Alice", AuthorSlug: "alice",
			Tags: [][]string{{"AI", "Rationality"}, {"AI", "Rationality"}, {"AI"}}[i], Karma: ptr(10 + i), PublishedAt: ptr(published),
		}
	case events.PlatformX:
		p = registration(platform, "1234567890", "A tweet with a photo.")
		p.ImageURLs = []string{img}
		p.ImageOccurrences = []events.ImageOccurrenceV1{{OriginalIndex: 0, NormalizedTextOffset: 21, SourceURL: img}}
		p.OccurrencesHash = hex64("occurrences:x")
		p.Author = &events.AuthorV1{PlatformUserID: "x-user", DisplayName: "Xavier"}
		p.X = &events.XMetaV1{
			TweetID: "1234567890", Text: "A tweet with a photo.", AuthorHandle: "xavier",
			AuthorDisplayName: []string{"Xavier", "Xavier", ""}[i], MediaURLs: []string{img},
			LikeCount: ptr(5 * i), RetweetCount: []*int{ptr(1), ptr(2), nil}[i], PostedAt: ptr(published),
		}
	case events.PlatformSubstack:
		p = registration(platform, "sub1", "A Substack essay without images.")
		p.Author = &events.AuthorV1{PlatformUserID: "sub-user", DisplayName: "Sam"}
		p.Substack = &events.SubstackMetaV1{
			SubstackPostID: "98765", PublicationSubdomain: "pub", Slug: "an-essay", Title: "An essay",
			Subtitle: []string{"Sub", "Sub", ""}[i], AuthorName: "Sam", AuthorSubstackHandle: "sam",
			PublishedAt: ptr(published), LikeCount: ptr(3 + i),
		}
	case events.PlatformWikipedia:
		p = registration(platform, "en:Water", "Water is an inorganic compound.")
		p.Wikipedia = &events.WikipediaMetaV1{
			Language: "en", Title: "Water", PageID: "33306", RevisionID: fmt.Sprintf("10%d", i),
			DisplayTitle: "Water", LastModifiedAt: ptr(published.Add(time.Duration(i) * time.Hour)),
		}
	}
	p.Provenance = []string{events.ProvenanceClientFallback, events.ProvenanceServerVerified, events.ProvenanceClientFallback}[i]
	if i != 1 {
		p.ServerFetchError = "fetch timed out"
	}
	if i == 1 && platform != events.PlatformX {
		p.ServerHTML = "<p>" + platform + " server</p>"
	}
	if i < 2 && (platform == events.PlatformLessWrong || platform == events.PlatformSubstack) {
		p.ClientHTML = fmt.Sprintf("<p>%s client %d</p>", platform, i)
	}
	return p
}

// TestRegistrationPerPlatform registers one version per platform three
// times (client fallback, server verified, client fallback) and checks
// every row of every table the registrations touch.
func TestRegistrationPerPlatform(t *testing.T) {
	t.Parallel()
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Hour) }
	h := func(platform, kind string, i int) string {
		if kind == "server" {
			return hex64("<p>" + platform + " server</p>")
		}
		return hex64(fmt.Sprintf("<p>%s client %d</p>", platform, i))
	}
	type occurrences struct {
		sets []occurrenceSetRow
		rows []occurrenceRow
	}
	for _, tc := range []struct {
		platform   string
		wantAuthor []authorRow
		wantHTML   []htmlRow
		wantOcc    occurrences
		meta       func(t *testing.T, p *projection) any
		wantMeta   any
	}{
		{
			platform: events.PlatformLessWrong,
			wantAuthor: []authorRow{{events.AuthorID(events.PlatformLessWrong, "lw-user"), events.PlatformLessWrong, "lw-user", "Alice B.",
				pgTime(at(0)), pgTime(at(2))}},
			wantHTML: []htmlRow{
				{h("LESSWRONG", "client", 0), "<p>LESSWRONG client 0</p>", pgTime(at(0))},
				{h("LESSWRONG", "client", 1), "<p>LESSWRONG client 1</p>", pgTime(at(1))},
				{h("LESSWRONG", "server", 0), "<p>LESSWRONG server</p>", pgTime(at(1))},
			},
			wantOcc: occurrences{
				sets: []occurrenceSetRow{{hex64("occurrences:lw"), pgTime(at(0))}},
				rows: []occurrenceRow{
					{hex64("occurrences:lw"), 0, 4, "https://img.example/LESSWRONG.png", ptr("Figure 1")},
					{hex64("occurrences:lw"), 1, 20, "https://img.example/second.png", nil},
				},
			},
			meta: func(t *testing.T, p *projection) any { return rowsOf[lessWrongRow](t, p, qLessWrong) },
			wantMeta: []lessWrongRow{{
				Slug: "title", Title: ptr("Title v2"),
				ServerHTML: ptr(h("LESSWRONG", "server", 0)), ClientHTML: ptr(h("LESSWRONG", "client", 1)),
				ImageURLs: []string{"https://img.example/LESSWRONG.png", "https://img.example/second.png"},
				Karma:     ptr(int32(12)), AuthorName: ptr("Alice"), AuthorSlug: ptr("alice"), Tags: []string{"AI"},
				PublishedAt: ptr("2026-01-02 03:04:05+00"), CreatedAt: pgTime(at(0)),
			}},
		},
		{
			platform: events.PlatformX,
			wantAuthor: []authorRow{{events.AuthorID(events.PlatformX, "x-user"), events.PlatformX, "x-user", "Xavier",
				pgTime(at(0)), pgTime(at(2))}},
			wantOcc: occurrences{
				sets: []occurrenceSetRow{{hex64("occurrences:x"), pgTime(at(0))}},
				rows: []occurrenceRow{{hex64("occurrences:x"), 0, 21, "https://img.example/X.png", nil}},
			},
			meta: func(t *testing.T, p *projection) any { return rowsOf[xRow](t, p, qX) },
			wantMeta: []xRow{{
				TweetID: "1234567890", Text: "A tweet with a photo.", AuthorHandle: "xavier", AuthorDisplayName: nil,
				MediaURLs: []string{"https://img.example/X.png"}, LikeCount: ptr(int32(10)), RetweetCount: nil,
				PostedAt: ptr("2026-01-02 03:04:05+00"), CreatedAt: pgTime(at(0)),
			}},
		},
		{
			platform: events.PlatformSubstack,
			wantAuthor: []authorRow{{events.AuthorID(events.PlatformSubstack, "sub-user"), events.PlatformSubstack, "sub-user", "Sam",
				pgTime(at(0)), pgTime(at(2))}},
			wantHTML: []htmlRow{
				{h("SUBSTACK", "client", 0), "<p>SUBSTACK client 0</p>", pgTime(at(0))},
				{h("SUBSTACK", "client", 1), "<p>SUBSTACK client 1</p>", pgTime(at(1))},
				{h("SUBSTACK", "server", 0), "<p>SUBSTACK server</p>", pgTime(at(1))},
			},
			wantOcc: occurrences{sets: []occurrenceSetRow{{hex64("occurrences:none"), pgTime(at(0))}}},
			meta:    func(t *testing.T, p *projection) any { return rowsOf[substackRow](t, p, qSubstack) },
			wantMeta: []substackRow{{
				SubstackPostID: "98765", Subdomain: "pub", Slug: "an-essay", Title: "An essay", Subtitle: nil,
				ServerHTML: ptr(h("SUBSTACK", "server", 0)), ClientHTML: ptr(h("SUBSTACK", "client", 1)),
				ImageURLs: []string{}, AuthorName: "Sam", AuthorHandle: ptr("sam"), PublishedAt: ptr("2026-01-02 03:04:05+00"),
				LikeCount: ptr(int32(5)), CommentCount: nil, CreatedAt: pgTime(at(0)),
			}},
		},
		{
			platform:   events.PlatformWikipedia,
			wantAuthor: nil,
			wantHTML:   []htmlRow{{h("WIKIPEDIA", "server", 0), "<p>WIKIPEDIA server</p>", pgTime(at(1))}},
			wantOcc:    occurrences{sets: []occurrenceSetRow{{hex64("occurrences:none"), pgTime(at(0))}}},
			meta:       func(t *testing.T, p *projection) any { return rowsOf[wikipediaRow](t, p, qWikipedia) },
			wantMeta: []wikipediaRow{{
				Language: "en", Title: "Water", PageID: "33306", RevisionID: "102", DisplayTitle: ptr("Water"),
				ServerHTML: ptr(h("WIKIPEDIA", "server", 0)), ClientHTML: nil, ImageURLs: []string{},
				LastModifiedAt: ptr("2026-01-02 05:04:05+00"), CreatedAt: pgTime(at(0)),
			}},
		},
	} {
		t.Run(tc.platform, func(t *testing.T) {
			t.Parallel()
			p := newServing(t, 2)
			regs := []*events.PostVersionRegisteredV1{observation(tc.platform, 0), observation(tc.platform, 1), observation(tc.platform, 2)}
			recs := records(t, 0, 0, timed{regs[0], at(0)}, timed{regs[1], at(1)}, timed{regs[2], at(2)})
			p.handle(t, recs[0])
			p.handle(t, recs[1:]...)

			r := regs[2]
			var authorID *string
			if len(tc.wantAuthor) > 0 {
				authorID = &tc.wantAuthor[0].ID
			}
			require.Equal(t, []postRow{{
				Platform: tc.platform, ExternalID: r.ExternalID, URL: r.URL, AuthorID: authorID,
				CreatedAt: pgTime(at(0)), UpdatedAt: pgTime(at(2)),
			}}, rowsOf[postRow](t, p, qPosts))
			require.Equal(t, []versionRow{{
				ID: r.PostVersionID, PostID: r.PostID, VersionHash: r.VersionHash, ContentHash: r.ContentHash,
				OccurrencesHash: r.OccurrencesHash, ServerVerifiedAt: ptr(pgTime(at(1))),
				FirstSeenAt: pgTime(at(0)), LastSeenAt: pgTime(at(2)), SeenCount: 3,
			}}, rowsOf[versionRow](t, p, qVersions))
			require.Equal(t, tc.wantAuthor, rowsOf[authorRow](t, p, qAuthors))
			require.Equal(t, []contentRow{{r.ContentHash, r.ContentText, int32(r.WordCount), pgTime(at(0))}},
				rowsOf[contentRow](t, p, qContent))
			require.Equal(t, tc.wantHTML, rowsOf[htmlRow](t, p, qHTML))
			require.Equal(t, tc.wantOcc.sets, rowsOf[occurrenceSetRow](t, p, qOccurrenceSets))
			require.Equal(t, tc.wantOcc.rows, rowsOf[occurrenceRow](t, p, qOccurrences))
			require.Equal(t, tc.wantMeta, tc.meta(t, p))
			// Only this platform's metadata table has a row.
			require.Equal(t, []string{"1"}, p.texts(t, `SELECT (
				(SELECT count(*) FROM lesswrong_version_meta) + (SELECT count(*) FROM x_version_meta) +
				(SELECT count(*) FROM substack_version_meta) + (SELECT count(*) FROM wikipedia_version_meta))::text`))
			require.Equal(t, []string{"0"}, p.texts(t, `SELECT count(*)::text FROM post_view_credits`))
		})
	}
}

// TestServerVerifiedLatch checks that server_verified_at is the time of the
// first SERVER_VERIFIED observation and is never cleared, whether the
// observations arrive in one batch or one per batch.
func TestServerVerifiedLatch(t *testing.T) {
	t.Parallel()
	const F, V = events.ProvenanceClientFallback, events.ProvenanceServerVerified
	p := newServing(t, 2)
	for i, tc := range []struct {
		name       string
		provenance []string
		want       *int // index of the observation whose time is latched
	}{
		{"fallback only", []string{F, F}, nil},
		{"verified first", []string{V, F}, ptr(0)},
		{"fallback then verified then fallback", []string{F, V, F}, ptr(1)},
		{"verified twice keeps the first", []string{F, V, F, V}, ptr(1)},
	} {
		for _, perEvent := range []bool{false, true} {
			part := int32(2*i + map[bool]int{false: 0, true: 1}[perEvent])
			ext := fmt.Sprintf("latch-%d", part)
			var ps []timed
			for j, prov := range tc.provenance {
				r := registration(events.PlatformX, ext, "Latch test "+ext)
				r.Provenance = prov
				ps = append(ps, timed{r, base.Add(time.Duration(j) * time.Minute)})
			}
			recs := records(t, part, 0, ps...)
			if perEvent {
				p.handleInBatches(t, recs, 1)
			} else {
				p.handle(t, recs...)
			}
			var want *string
			if tc.want != nil {
				want = ptr(pgTime(base.Add(time.Duration(*tc.want) * time.Minute)))
			}
			got := p.texts(t, `SELECT server_verified_at::text FROM post_versions WHERE post_id = $1`, events.PostID(events.PlatformX, ext))
			wantText := "NULL"
			if want != nil {
				wantText = *want
			}
			require.Equal(t, []string{wantText}, got, "%s (one event per batch: %v)", tc.name, perEvent)
		}
	}
}

// TestRegistrationWithNullArrays: the event schema accepts null tags and
// media_urls (only image_urls and image_occurrences must be arrays); the
// projection must still apply such events, storing empty arrays, or the
// projector would stop at them forever.
func TestRegistrationWithNullArrays(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	lw := registration(events.PlatformLessWrong, "nulltags", "Tags are null.")
	lw.LessWrong.Tags = nil
	x := registration(events.PlatformX, "nullmedia", "Media URLs are null.")
	x.X.MediaURLs = nil
	p.handle(t, records(t, 0, 0, timed{lw, base}, timed{x, base})...)
	require.Equal(t, []string{"{}"}, p.texts(t, `SELECT tags::text FROM lesswrong_version_meta`))
	require.Equal(t, []string{"{}"}, p.texts(t, `SELECT media_urls::text FROM x_version_meta`))
}
