package serving

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// registration is one post.version_registered event awaiting its statements.
type registration struct {
	t time.Time
	p *events.PostVersionRegisteredV1
}

// queueRegistrations queues the effects of consecutive registrations (log
// order) as set-based upserts: one statement per table and round instead
// of one per table and event, which is what catch-up and replay spend
// their time on (every statement costs the server a plan and an executor
// start; a batch of registrations costs a handful).
//
// The result is the one applying the events one at a time gives: each
// table's upsert reads and writes only its own rows (and checks foreign
// keys against tables written before it, in the order below); the rows of
// one key are merged in log order exactly as their upserts would combine
// (queueUpserts), or, for the platform metadata and for a group holding a
// value the server refuses, applied one per round (queueRounds), since an
// upsert may not touch a row twice. Every value the server could refuse
// still reaches it, so an event that fails on its own fails its statement
// here too, and parking isolates the same events whatever the batch.
func queueRegistrations(b *pgx.Batch, regs []registration) {
	type author struct {
		id, platform, userID, name string
		t, updated                 time.Time
	}
	type post struct {
		id, platform, externalID, url string
		authorID                      *string
		t, updated                    time.Time
	}
	type blob struct {
		hash, text string
		words      int
		t          time.Time
	}
	type occurrenceSet struct {
		hash string
		t    time.Time
	}
	type occurrence struct {
		hash          string
		index, offset int
		url           string
		caption       *string
	}
	type version struct {
		id, post, versionHash, contentHash, occurrencesHash string
		verifiedAt                                          *time.Time
		t, last                                             time.Time
		seen                                                int
	}
	type corroboration struct {
		version, reporter string
		t                 time.Time
	}
	var (
		authors        []author
		posts          []post
		contents       []blob
		htmls          []blob
		occurrenceSets []occurrenceSet
		occurrences    []occurrence
		versions       []version
		xs             []xMeta
		substacks      []substackMeta
		corroborations []corroboration
		otherMeta      []func()
	)
	for _, r := range regs {
		p, t := r.p, r.t
		var authorID *string
		if p.Author != nil {
			id := events.AuthorID(p.Platform, p.Author.PlatformUserID)
			authorID = &id
			authors = append(authors, author{id, p.Platform, p.Author.PlatformUserID, p.Author.DisplayName, t, t})
		}
		posts = append(posts, post{p.PostID, p.Platform, p.ExternalID, p.URL, authorID, t, t})
		contents = append(contents, blob{hash: p.ContentHash, text: p.ContentText, words: p.WordCount, t: t})
		var serverHTML, clientHTML *string
		for _, h := range []struct {
			html string
			dst  **string
		}{{p.ServerHTML, &serverHTML}, {p.ClientHTML, &clientHTML}} {
			if h.html == "" {
				continue
			}
			hash := sha256Hex(h.html)
			*h.dst = &hash
			htmls = append(htmls, blob{hash: hash, text: h.html, t: t})
		}
		occurrenceSets = append(occurrenceSets, occurrenceSet{p.OccurrencesHash, t})
		for _, o := range p.ImageOccurrences {
			occurrences = append(occurrences, occurrence{p.OccurrencesHash, o.OriginalIndex, o.NormalizedTextOffset, o.SourceURL, nilIfEmpty(o.CaptionText)})
		}
		var verifiedAt *time.Time
		if p.Provenance == events.ProvenanceServerVerified {
			verifiedAt = &t
		}
		versions = append(versions, version{p.PostVersionID, p.PostID, p.VersionHash, p.ContentHash, p.OccurrencesHash, verifiedAt, t, t, 1})
		switch {
		case p.X != nil:
			xs = append(xs, newXMeta(t, p))
		case p.Substack != nil:
			substacks = append(substacks, newSubstackMeta(t, p, serverHTML, clientHTML))
		default:
			otherMeta = append(otherMeta, func() { queueMeta(b, t, p, serverHTML, clientHTML) })
		}
		if p.ReporterKey != "" {
			corroborations = append(corroborations, corroboration{p.PostVersionID, p.ReporterKey, t})
		}
	}

	fold := !anyNUL(regs)
	queueUpserts(b, fold, authors, func(a author) string { return strings.ToLower(a.id) },
		func(acc *author, a author) {
			// As the server compares them: at microseconds.
			if a.updated.Truncate(time.Microsecond).Compare(acc.updated.Truncate(time.Microsecond)) >= 0 {
				acc.name = a.name
			}
			acc.t, acc.updated = minTime(acc.t, a.t), maxTime(acc.updated, a.updated)
		},
		`INSERT INTO authors (id, platform, platform_user_id, display_name, created_at, updated_at)
		SELECT id, platform, platform_user_id, display_name, t, updated
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])
			AS r(id, platform, platform_user_id, display_name, t, updated)
		ON CONFLICT (id) DO UPDATE SET
			display_name = CASE WHEN EXCLUDED.updated_at >= authors.updated_at THEN EXCLUDED.display_name ELSE authors.display_name END,
			created_at = LEAST(authors.created_at, EXCLUDED.created_at),
			updated_at = GREATEST(authors.updated_at, EXCLUDED.updated_at)`,
		func(rs []author) []any {
			return []any{column(rs, func(a author) string { return a.id }), column(rs, func(a author) string { return a.platform }),
				column(rs, func(a author) string { return a.userID }), column(rs, func(a author) string { return a.name }),
				column(rs, func(a author) time.Time { return a.t }), column(rs, func(a author) time.Time { return a.updated })}
		})
	queueUpserts(b, fold, posts, func(p post) string { return strings.ToLower(p.id) },
		func(acc *post, p post) {
			acc.url = p.url
			if p.authorID != nil {
				acc.authorID = p.authorID
			}
			acc.t, acc.updated = minTime(acc.t, p.t), maxTime(acc.updated, p.updated)
		},
		`INSERT INTO posts (id, platform, external_id, url, author_id, created_at, updated_at)
		SELECT id, platform, external_id, url, author_id, t, updated
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::timestamptz[], $7::timestamptz[])
			AS r(id, platform, external_id, url, author_id, t, updated)
		ON CONFLICT (id) DO UPDATE SET
			url = EXCLUDED.url,
			author_id = COALESCE(EXCLUDED.author_id, posts.author_id),
			created_at = LEAST(posts.created_at, EXCLUDED.created_at),
			updated_at = GREATEST(posts.updated_at, EXCLUDED.updated_at)`,
		func(rs []post) []any {
			return []any{column(rs, func(p post) string { return p.id }), column(rs, func(p post) string { return p.platform }),
				column(rs, func(p post) string { return p.externalID }), column(rs, func(p post) string { return p.url }),
				column(rs, func(p post) *string { return p.authorID }), column(rs, func(p post) time.Time { return p.t }),
				column(rs, func(p post) time.Time { return p.updated })}
		})
	queueUpserts(b, fold, contents, func(c blob) string { return c.hash },
		func(acc *blob, c blob) { acc.t = minTime(acc.t, c.t) },
		`INSERT INTO content_blobs (content_hash, content_text, word_count, created_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[])
		ON CONFLICT (content_hash) DO UPDATE SET created_at = LEAST(content_blobs.created_at, EXCLUDED.created_at)`,
		func(rs []blob) []any {
			return []any{column(rs, func(c blob) string { return c.hash }), column(rs, func(c blob) string { return c.text }),
				column(rs, func(c blob) int { return c.words }), column(rs, func(c blob) time.Time { return c.t })}
		})
	queueUpserts(b, fold, htmls, func(h blob) string { return h.hash },
		func(acc *blob, c blob) { acc.t = minTime(acc.t, c.t) },
		`INSERT INTO html_blobs (html_hash, html_content, created_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
		ON CONFLICT (html_hash) DO UPDATE SET created_at = LEAST(html_blobs.created_at, EXCLUDED.created_at)`,
		func(rs []blob) []any {
			return []any{column(rs, func(h blob) string { return h.hash }), column(rs, func(h blob) string { return h.text }),
				column(rs, func(h blob) time.Time { return h.t })}
		})
	queueUpserts(b, fold, occurrenceSets, func(s occurrenceSet) string { return s.hash },
		func(acc *occurrenceSet, s occurrenceSet) { acc.t = minTime(acc.t, s.t) },
		`INSERT INTO image_occurrence_sets (occurrences_hash, created_at)
		SELECT * FROM unnest($1::text[], $2::timestamptz[])
		ON CONFLICT (occurrences_hash) DO UPDATE SET created_at = LEAST(image_occurrence_sets.created_at, EXCLUDED.created_at)`,
		func(rs []occurrenceSet) []any {
			return []any{column(rs, func(s occurrenceSet) string { return s.hash }), column(rs, func(s occurrenceSet) time.Time { return s.t })}
		})
	queueUpserts(b, fold, occurrences, func(o occurrence) string { return o.hash + "\x00" + strconv.Itoa(o.index) },
		func(*occurrence, occurrence) {}, // DO NOTHING: the first row stays
		`INSERT INTO image_occurrences (occurrences_hash, original_index, normalized_text_offset, source_url, caption_text)
		SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[])
		ON CONFLICT DO NOTHING`,
		func(rs []occurrence) []any {
			return []any{column(rs, func(o occurrence) string { return o.hash }), column(rs, func(o occurrence) int { return o.index }),
				column(rs, func(o occurrence) int { return o.offset }), column(rs, func(o occurrence) string { return o.url }),
				column(rs, func(o occurrence) *string { return o.caption })}
		})
	queueUpserts(b, fold, versions, func(v version) string { return strings.ToLower(v.id) },
		func(acc *version, v version) {
			if v.verifiedAt != nil && (acc.verifiedAt == nil || v.verifiedAt.Before(*acc.verifiedAt)) {
				acc.verifiedAt = v.verifiedAt
			}
			acc.t, acc.last = minTime(acc.t, v.t), maxTime(acc.last, v.last)
			acc.seen += v.seen
		},
		`INSERT INTO post_versions (id, post_id, version_hash, content_hash, occurrences_hash,
			server_verified_at, first_seen_at, last_seen_at, seen_count)
		SELECT id, post_id, version_hash, content_hash, occurrences_hash, verified_at, t, last, seen
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[],
			$8::timestamptz[], $9::int[]) AS r(id, post_id, version_hash, content_hash, occurrences_hash, verified_at, t, last, seen)
		ON CONFLICT (id) DO UPDATE SET
			server_verified_at = LEAST(post_versions.server_verified_at, EXCLUDED.server_verified_at),
			first_seen_at = LEAST(post_versions.first_seen_at, EXCLUDED.first_seen_at),
			last_seen_at = GREATEST(post_versions.last_seen_at, EXCLUDED.last_seen_at),
			seen_count = post_versions.seen_count + EXCLUDED.seen_count`,
		func(rs []version) []any {
			return []any{column(rs, func(v version) string { return v.id }), column(rs, func(v version) string { return v.post }),
				column(rs, func(v version) string { return v.versionHash }), column(rs, func(v version) string { return v.contentHash }),
				column(rs, func(v version) string { return v.occurrencesHash }), column(rs, func(v version) *time.Time { return v.verifiedAt }),
				column(rs, func(v version) time.Time { return v.t }), column(rs, func(v version) time.Time { return v.last }),
				column(rs, func(v version) int { return v.seen })}
		})
	queueXMeta(b, xs)
	queueSubstackMeta(b, substacks)
	for _, q := range otherMeta {
		q()
	}
	queueUpserts(b, fold, corroborations, func(c corroboration) string { return strings.ToLower(c.version) + "\x00" + c.reporter },
		func(acc *corroboration, c corroboration) { acc.t = minTime(acc.t, c.t) },
		`INSERT INTO version_corroborations (post_version_id, reporter_key, first_at)
		SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[])
		ON CONFLICT (post_version_id, reporter_key) DO UPDATE SET first_at = LEAST(version_corroborations.first_at, EXCLUDED.first_at)`,
		func(rs []corroboration) []any {
			return []any{column(rs, func(c corroboration) string { return c.version }), column(rs, func(c corroboration) string { return c.reporter }),
				column(rs, func(c corroboration) time.Time { return c.t })}
		})
}

// xMeta is one x_version_meta row.
type xMeta struct {
	version, tweetID, text, handle string
	displayName                    *string
	mediaURLs                      *string // a JSON array
	likes, retweets                *int
	postedAt                       *time.Time
	t                              time.Time
}

func newXMeta(t time.Time, p *events.PostVersionRegisteredV1) xMeta {
	m := p.X
	return xMeta{p.PostVersionID, m.TweetID, m.Text, m.AuthorHandle, nilIfEmpty(m.AuthorDisplayName),
		jsonArray(emptyIfNil(m.MediaURLs)), m.LikeCount, m.RetweetCount, m.PostedAt, t}
}

func queueXMeta(b *pgx.Batch, rows []xMeta) {
	queueRounds(b, rows, func(m xMeta) string { return strings.ToLower(m.version) },
		`INSERT INTO x_version_meta (post_version_id, tweet_id, text, author_handle, author_display_name,
				media_urls, like_count, retweet_count, posted_at, created_at)
		SELECT version, tweet_id, text, handle, display_name, `+textArray("media")+`, likes, retweets, posted_at, t
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
			$9::timestamptz[], $10::timestamptz[]) AS r(version, tweet_id, text, handle, display_name, media, likes, retweets, posted_at, t)
		ON CONFLICT (post_version_id) DO UPDATE SET
			tweet_id = EXCLUDED.tweet_id, text = EXCLUDED.text, author_handle = EXCLUDED.author_handle,
			author_display_name = EXCLUDED.author_display_name, media_urls = EXCLUDED.media_urls,
			like_count = EXCLUDED.like_count, retweet_count = EXCLUDED.retweet_count, posted_at = EXCLUDED.posted_at,
			created_at = LEAST(x_version_meta.created_at, EXCLUDED.created_at)`,
		func(rs []xMeta) []any {
			return []any{column(rs, func(m xMeta) string { return m.version }), column(rs, func(m xMeta) string { return m.tweetID }),
				column(rs, func(m xMeta) string { return m.text }), column(rs, func(m xMeta) string { return m.handle }),
				column(rs, func(m xMeta) *string { return m.displayName }), column(rs, func(m xMeta) *string { return m.mediaURLs }),
				column(rs, func(m xMeta) *int { return m.likes }), column(rs, func(m xMeta) *int { return m.retweets }),
				column(rs, func(m xMeta) *time.Time { return m.postedAt }), column(rs, func(m xMeta) time.Time { return m.t })}
		})
}

// substackMeta is one substack_version_meta row.
type substackMeta struct {
	version, postID, subdomain, slug, title string
	subtitle, serverHTML, clientHTML        *string
	imageURLs                               *string // a JSON array, nil for NULL
	author                                  string
	handle                                  *string
	publishedAt                             *time.Time
	likes, comments                         *int
	t                                       time.Time
}

func newSubstackMeta(t time.Time, p *events.PostVersionRegisteredV1, serverHTML, clientHTML *string) substackMeta {
	m := p.Substack
	return substackMeta{p.PostVersionID, m.SubstackPostID, m.PublicationSubdomain, m.Slug, m.Title, nilIfEmpty(m.Subtitle),
		serverHTML, clientHTML, jsonArray(p.ImageURLs), m.AuthorName, nilIfEmpty(m.AuthorSubstackHandle),
		m.PublishedAt, m.LikeCount, m.CommentCount, t}
}

func queueSubstackMeta(b *pgx.Batch, rows []substackMeta) {
	queueRounds(b, rows, func(m substackMeta) string { return strings.ToLower(m.version) },
		`INSERT INTO substack_version_meta (post_version_id, substack_post_id, publication_subdomain, slug, title,
				subtitle, server_html_hash, client_html_hash, image_urls, author_name, author_substack_handle,
				published_at, like_count, comment_count, created_at)
		SELECT version, post_id, subdomain, slug, title, subtitle, server_html, client_html, `+textArray("images")+`,
			author, handle, published_at, likes, comments, t
		FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::text[], $11::text[], $12::timestamptz[], $13::int[], $14::int[], $15::timestamptz[])
			AS r(version, post_id, subdomain, slug, title, subtitle, server_html, client_html, images,
				author, handle, published_at, likes, comments, t)
		ON CONFLICT (post_version_id) DO UPDATE SET
			substack_post_id = EXCLUDED.substack_post_id, publication_subdomain = EXCLUDED.publication_subdomain,
			slug = EXCLUDED.slug, title = EXCLUDED.title, subtitle = EXCLUDED.subtitle,
			server_html_hash = COALESCE(EXCLUDED.server_html_hash, substack_version_meta.server_html_hash),
			client_html_hash = COALESCE(EXCLUDED.client_html_hash, substack_version_meta.client_html_hash),
			image_urls = EXCLUDED.image_urls, author_name = EXCLUDED.author_name,
			author_substack_handle = EXCLUDED.author_substack_handle, published_at = EXCLUDED.published_at,
			like_count = EXCLUDED.like_count, comment_count = EXCLUDED.comment_count,
			created_at = LEAST(substack_version_meta.created_at, EXCLUDED.created_at)`,
		func(rs []substackMeta) []any {
			return []any{column(rs, func(m substackMeta) string { return m.version }), column(rs, func(m substackMeta) string { return m.postID }),
				column(rs, func(m substackMeta) string { return m.subdomain }), column(rs, func(m substackMeta) string { return m.slug }),
				column(rs, func(m substackMeta) string { return m.title }), column(rs, func(m substackMeta) *string { return m.subtitle }),
				column(rs, func(m substackMeta) *string { return m.serverHTML }), column(rs, func(m substackMeta) *string { return m.clientHTML }),
				column(rs, func(m substackMeta) *string { return m.imageURLs }), column(rs, func(m substackMeta) string { return m.author }),
				column(rs, func(m substackMeta) *string { return m.handle }), column(rs, func(m substackMeta) *time.Time { return m.publishedAt }),
				column(rs, func(m substackMeta) *int { return m.likes }), column(rs, func(m substackMeta) *int { return m.comments }),
				column(rs, func(m substackMeta) time.Time { return m.t })}
		})
}

// queueUpserts queues an upsert of rows. With fold, the rows of one key
// are first merged in log order into the one row whose upsert has the
// effect of theirs one after another (merge mirrors the statement's ON
// CONFLICT clause), so a hot key (an author of many posts, the empty image
// set of every post without images) costs one row, not one statement per
// occurrence. Folded rows go in key order: two partitions' transactions
// (a replay applies two at once, live workers several) then lock the
// shared rows of a table (authors, the empty image set) in the same order
// and wait for each other instead of deadlocking. Without fold, the rows
// go in rounds (queueRounds).
func queueUpserts[R any](b *pgx.Batch, fold bool, rows []R, key func(R) string, merge func(acc *R, next R), sql string, args func([]R) []any) {
	if fold && len(rows) > 1 {
		at := make(map[string]int, len(rows))
		folded := rows[:0:0]
		for _, r := range rows {
			k := key(r)
			if i, ok := at[k]; ok {
				merge(&folded[i], r)
				continue
			}
			at[k] = len(folded)
			folded = append(folded, r)
		}
		slices.SortFunc(folded, func(x, y R) int { return strings.Compare(key(x), key(y)) })
		rows = folded
	}
	queueRounds(b, rows, key, sql, args)
}

// anyNUL reports whether a value of regs that a folded statement writes
// holds a NUL, which Postgres refuses in text. Such a value must reach
// the server even where a later row of its key would supersede it, so
// that its event fails (and is parked) exactly as it would on its own:
// its group is then applied in rounds, unfolded. Decoded JSON strings
// are valid UTF-8, so a NUL is the only text value Postgres refuses.
func anyNUL(regs []registration) bool {
	for _, r := range regs {
		p := r.p
		vals := []string{p.PostID, p.PostVersionID, p.Platform, p.ExternalID, p.URL, p.VersionHash, p.ContentHash,
			p.OccurrencesHash, p.ContentText, p.ServerHTML, p.ClientHTML, p.ReporterKey}
		if p.Author != nil {
			vals = append(vals, p.Author.PlatformUserID, p.Author.DisplayName)
		}
		for _, o := range p.ImageOccurrences {
			vals = append(vals, o.SourceURL, o.CaptionText)
		}
		for _, v := range vals {
			if strings.IndexByte(v, 0) >= 0 {
				return true
			}
		}
	}
	return false
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// queueRounds queues sql once per round of rows: a row goes to the round
// after the last one holding its key, so no statement touches a row twice
// and each key's rows are applied in their order. args builds the
// statement's column arrays from a round's rows.
func queueRounds[R any](b *pgx.Batch, rows []R, key func(R) string, sql string, args func([]R) []any) {
	if len(rows) == 0 {
		return
	}
	seen := make(map[string]int, len(rows))
	var rounds [][]R
	for _, r := range rows {
		k := key(r)
		n := seen[k]
		seen[k] = n + 1
		if n == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[n] = append(rounds[n], r)
	}
	for _, rs := range rounds {
		b.Queue(sql, args(rs)...)
	}
}

// column is one field of rows, as the array a statement unnests.
func column[R, V any](rows []R, f func(R) V) []V {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// jsonArray encodes a per-row list for a statement that unnests rows (a
// text[] of text[] cannot be unnested row by row); nil stays NULL.
func jsonArray(s []string) *string {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err) // a []string always encodes
	}
	v := string(raw)
	return &v
}

// textArray is the SQL turning a jsonArray column back into text[].
func textArray(col string) string {
	return `CASE WHEN r.` + col + ` IS NULL THEN NULL ELSE ARRAY(SELECT e FROM jsonb_array_elements_text(r.` + col + `::jsonb) WITH ORDINALITY AS a(e, i) ORDER BY i) END`
}
