// Package serving is the Postgres read model behind the extension API: posts,
// authors, content versions and their blobs, platform metadata, views and
// unique-view scores. It is built only by Applier from the event log.
package serving

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/projections/pgproj"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the serving schema's migrations.
func Migrations() fs.FS {
	return migrate.Dir(migrationFiles, "migrations")
}

// ProjectorName is the serving projector's checkpoint identity.
const ProjectorName = "serving"

// Applier applies post events to the serving model.
type Applier struct {
	// ipRangeDailyCap is part of the projection's definition: changing it
	// changes scores, so it requires a rebuild from offset 0.
	ipRangeDailyCap int
}

// NewApplier returns the serving applier with the unique-view IP-range cap.
func NewApplier(ipRangeDailyCap int) *Applier {
	return &Applier{ipRangeDailyCap: ipRangeDailyCap}
}

// Handles implements pgproj.Applier.
func (a *Applier) Handles(t string) bool {
	switch t {
	// Stored v1 views decode (are upcast) to v2, so Apply only sees v2.
	case events.TypePostVersionRegisteredV1, events.TypePostViewRecordedV1, events.TypePostViewRecordedV2,
		events.TypePostIntegrityAnomalyRecordedV1, events.TypeAPIKeyAddedV1, events.TypeAPIKeyRevokedV1,
		events.TypeInvestigationRequestedV1, events.TypeInvestigationCompletedV1, events.TypeInvestigationFailedV1,
		events.TypeInvestigationAttemptStartedV1, events.TypeInvestigationAttemptFailedV1,
		events.TypeInvestigationInputSnapshottedV1, events.TypeInvestigationClaimSubmittedV1,
		events.TypeInvestigationClaimValidatedV1, events.TypeInvestigationClaimAssessedV1:
		return true
	}
	return isAnalysisType(t) || isControlOrAppealType(t)
}

var _ pgproj.PositionedApplier = (*Applier)(nil)

// ApplyPositioned implements pgproj.PositionedApplier: Apply, with the log
// positions the analyses' event stream records.
func (a *Applier) ApplyPositioned(ctx context.Context, tx pgx.Tx, evs []pgproj.Positioned) error {
	return a.apply(ctx, tx, evs)
}

// Apply implements pgproj.Applier. Registrations go to the server as one
// pipelined batch; the views of the whole batch are then folded in memory
// and written with two set-based statements. Moving a batch's views after
// its registrations changes nothing: a post's views always follow its
// registration, and registrations never read view state.
func (a *Applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	pos := make([]pgproj.Positioned, len(evs))
	for i, ev := range evs {
		pos[i] = pgproj.Positioned{Event: ev}
	}
	return a.apply(ctx, tx, pos)
}

func (a *Applier) apply(ctx context.Context, tx pgx.Tx, evs []pgproj.Positioned) error {
	b := &pgx.Batch{}
	var views []view
	// Consecutive registrations are queued together, set-based, before
	// the next statement of another event: the order of effects is the log's.
	var regs []registration
	// What the batch changes of the statuses the API caches
	// (statuscache.go): the posts of its registrations, or anything.
	var regPosts []string
	others := false
	flush := func() {
		if len(regs) > 0 {
			queueRegistrations(b, regs)
			regs = regs[:0]
		}
	}
	for _, pe := range evs {
		ev := pe.Event
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			regs = append(regs, registration{t: ev.Time, p: p})
			regPosts = append(regPosts, p.PostID)
			continue
		case *events.PostViewRecordedV2:
			views = append(views, view{at: ev.Time, p: p})
			continue
		}
		flush()
		others = true
		if isAnalysisType(ev.Type()) {
			if err := queueAnalysisEvent(b, pe); err != nil {
				return err
			}
			continue
		}
		if isControlOrAppealType(ev.Type()) {
			if err := queueControlOrAppeal(b, ev); err != nil {
				return err
			}
			continue
		}
		switch p := ev.Payload.(type) {
		case *events.PostIntegrityAnomalyRecordedV1:
			queueIntegrityAnomaly(b, ev, p)
		case *events.APIKeyAddedV1:
			queueAPIKeyAdded(b, ev.Time, p)
		case *events.APIKeyRevokedV1:
			queueAPIKeyRevoked(b, ev.Time, p)
		case *events.InvestigationRequestedV1:
			queueInvestigationRequested(b, ev.Time, p)
		case *events.InvestigationCompletedV1:
			if err := queueInvestigationCompleted(b, ev.Time, p); err != nil {
				return err
			}
		case *events.InvestigationFailedV1:
			queueInvestigationFailed(b, ev.Time, p)
		case *events.InvestigationAttemptStartedV1:
			queueAttemptStarted(b, ev.Time, p)
		case *events.InvestigationAttemptFailedV1:
			queueAttemptFailed(b, ev.Time, p)
		case *events.InvestigationInputSnapshottedV1:
			queueInputSnapshotted(b, p)
		case *events.InvestigationClaimSubmittedV1:
			if err := queueClaimSubmitted(b, ev.Time, p); err != nil {
				return err
			}
		case *events.InvestigationClaimValidatedV1:
			queueClaimValidated(b, p)
		case *events.InvestigationClaimAssessedV1:
			queueClaimAssessed(b, ev.Time, p)
		default:
			return fmt.Errorf("serving: unexpected payload %T", ev.Payload)
		}
	}
	flush()
	queueStatusInvalidation(b, statusInvalidation(regPosts, others))
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("serving statements: %w", err)
		}
	}
	if len(views) > 0 {
		if err := a.applyViews(ctx, tx, views); err != nil {
			return fmt.Errorf("serving views: %w", err)
		}
	}
	return nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// emptyIfNil maps a JSON null array (which the event schema accepts for tags
// and media_urls) to the empty array the NOT NULL columns require.
func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// queueMeta upserts a registration's platform metadata row (the platforms
// queueRegistrations does not write set-based). Every upsert of a
// registration is order-independent where it can be (LEAST/GREATEST of
// event times, counters), and last-writer-wins only for fields of one
// post, whose events are totally ordered in their partition.
func queueMeta(b *pgx.Batch, t time.Time, p *events.PostVersionRegisteredV1, serverHTML, clientHTML *string) {
	imageURLs := p.ImageURLs
	switch {
	case p.LessWrong != nil:
		m := p.LessWrong
		b.Queue(`INSERT INTO lesswrong_version_meta (post_version_id, slug, title, server_html_hash, client_html_hash,
				image_urls, karma, author_name, author_slug, tags, published_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (post_version_id) DO UPDATE SET
				slug = EXCLUDED.slug, title = EXCLUDED.title,
				server_html_hash = COALESCE(EXCLUDED.server_html_hash, lesswrong_version_meta.server_html_hash),
				client_html_hash = COALESCE(EXCLUDED.client_html_hash, lesswrong_version_meta.client_html_hash),
				image_urls = EXCLUDED.image_urls, karma = EXCLUDED.karma, author_name = EXCLUDED.author_name,
				author_slug = EXCLUDED.author_slug, tags = EXCLUDED.tags, published_at = EXCLUDED.published_at,
				created_at = LEAST(lesswrong_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.Slug, nilIfEmpty(m.Title), serverHTML, clientHTML, imageURLs, m.Karma,
			nilIfEmpty(m.AuthorName), nilIfEmpty(m.AuthorSlug), emptyIfNil(m.Tags), m.PublishedAt, t)
	case p.X != nil:
		m := p.X
		b.Queue(`INSERT INTO x_version_meta (post_version_id, tweet_id, text, author_handle, author_display_name,
				media_urls, like_count, retweet_count, posted_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (post_version_id) DO UPDATE SET
				tweet_id = EXCLUDED.tweet_id, text = EXCLUDED.text, author_handle = EXCLUDED.author_handle,
				author_display_name = EXCLUDED.author_display_name, media_urls = EXCLUDED.media_urls,
				like_count = EXCLUDED.like_count, retweet_count = EXCLUDED.retweet_count, posted_at = EXCLUDED.posted_at,
				created_at = LEAST(x_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.TweetID, m.Text, m.AuthorHandle, nilIfEmpty(m.AuthorDisplayName),
			emptyIfNil(m.MediaURLs), m.LikeCount, m.RetweetCount, m.PostedAt, t)
	case p.Substack != nil:
		m := p.Substack
		b.Queue(`INSERT INTO substack_version_meta (post_version_id, substack_post_id, publication_subdomain, slug, title,
				subtitle, server_html_hash, client_html_hash, image_urls, author_name, author_substack_handle,
				published_at, like_count, comment_count, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT (post_version_id) DO UPDATE SET
				substack_post_id = EXCLUDED.substack_post_id, publication_subdomain = EXCLUDED.publication_subdomain,
				slug = EXCLUDED.slug, title = EXCLUDED.title, subtitle = EXCLUDED.subtitle,
				server_html_hash = COALESCE(EXCLUDED.server_html_hash, substack_version_meta.server_html_hash),
				client_html_hash = COALESCE(EXCLUDED.client_html_hash, substack_version_meta.client_html_hash),
				image_urls = EXCLUDED.image_urls, author_name = EXCLUDED.author_name,
				author_substack_handle = EXCLUDED.author_substack_handle, published_at = EXCLUDED.published_at,
				like_count = EXCLUDED.like_count, comment_count = EXCLUDED.comment_count,
				created_at = LEAST(substack_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.SubstackPostID, m.PublicationSubdomain, m.Slug, m.Title, nilIfEmpty(m.Subtitle),
			serverHTML, clientHTML, imageURLs, m.AuthorName, nilIfEmpty(m.AuthorSubstackHandle),
			m.PublishedAt, m.LikeCount, m.CommentCount, t)
	case p.Wikipedia != nil:
		m := p.Wikipedia
		b.Queue(`INSERT INTO wikipedia_version_meta (post_version_id, language, title, page_id, revision_id,
				display_title, server_html_hash, client_html_hash, image_urls, last_modified_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (post_version_id) DO UPDATE SET
				language = EXCLUDED.language, title = EXCLUDED.title, page_id = EXCLUDED.page_id,
				revision_id = EXCLUDED.revision_id, display_title = EXCLUDED.display_title,
				server_html_hash = COALESCE(EXCLUDED.server_html_hash, wikipedia_version_meta.server_html_hash),
				client_html_hash = COALESCE(EXCLUDED.client_html_hash, wikipedia_version_meta.client_html_hash),
				image_urls = EXCLUDED.image_urls, last_modified_at = EXCLUDED.last_modified_at,
				created_at = LEAST(wikipedia_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.Language, m.Title, m.PageID, m.RevisionID, nilIfEmpty(m.DisplayTitle),
			serverHTML, clientHTML, imageURLs, m.LastModifiedAt, t)
	case p.Bluesky != nil:
		m := p.Bluesky
		b.Queue(`INSERT INTO bluesky_version_meta (post_version_id, did, rkey, handle, display_name, cid, image_urls,
				like_count, repost_count, reply_count, posted_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (post_version_id) DO UPDATE SET
				did = EXCLUDED.did, rkey = EXCLUDED.rkey, handle = EXCLUDED.handle, display_name = EXCLUDED.display_name,
				cid = COALESCE(EXCLUDED.cid, bluesky_version_meta.cid), image_urls = EXCLUDED.image_urls,
				like_count = EXCLUDED.like_count, repost_count = EXCLUDED.repost_count, reply_count = EXCLUDED.reply_count,
				posted_at = EXCLUDED.posted_at,
				created_at = LEAST(bluesky_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.DID, m.RKey, m.Handle, nilIfEmpty(m.DisplayName), nilIfEmpty(m.CID), emptyIfNil(imageURLs),
			m.LikeCount, m.RepostCount, m.ReplyCount, m.CreatedAt, t)
	case p.Threads != nil:
		m := p.Threads
		b.Queue(`INSERT INTO threads_version_meta (post_version_id, code, username, display_name, image_urls,
				like_count, reply_count, repost_count, posted_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (post_version_id) DO UPDATE SET
				code = EXCLUDED.code, username = EXCLUDED.username, display_name = EXCLUDED.display_name,
				image_urls = EXCLUDED.image_urls, like_count = EXCLUDED.like_count, reply_count = EXCLUDED.reply_count,
				repost_count = EXCLUDED.repost_count, posted_at = EXCLUDED.posted_at,
				created_at = LEAST(threads_version_meta.created_at, EXCLUDED.created_at)`,
			p.PostVersionID, m.Code, m.Username, nilIfEmpty(m.DisplayName), emptyIfNil(imageURLs),
			m.LikeCount, m.ReplyCount, m.RepostCount, m.PostedAt, t)
	}
}

type view struct {
	at time.Time
	p  *events.PostViewRecordedV2
}

type creditKey struct {
	post, who string
	day       time.Time
}

// applyViews counts views and grants unique-view credits (spec 2.10): at
// most one per viewer, post and UTC day, and at most ipRangeDailyCap per IP
// range, post and day, first come first served in log order. The credits
// already stored for the (post, day) pairs in the batch are loaded once; the
// decisions are made here in event order; the results are written in bulk.
func (a *Applier) applyViews(ctx context.Context, tx pgx.Tx, views []view) error {
	views, err := registeredViews(ctx, tx, views)
	if err != nil || len(views) == 0 {
		return err
	}
	var qPosts []string
	var qDays []time.Time
	seenPair := map[creditKey]bool{}
	for _, v := range views {
		k := creditKey{post: v.p.PostID, day: utcDay(v.at)}
		if !seenPair[k] {
			seenPair[k] = true
			qPosts = append(qPosts, k.post)
			qDays = append(qDays, k.day)
		}
	}
	credited := map[creditKey]bool{}
	rangeCredits := map[creditKey]int{}
	rows, err := tx.Query(ctx, `SELECT c.post_id::text, c.viewer_key, c.ip_range_key, c.bucket_day
		FROM post_view_credits c
		JOIN unnest($1::uuid[], $2::date[]) AS q(post_id, bucket_day)
		  ON c.post_id = q.post_id AND c.bucket_day = q.bucket_day`, qPosts, qDays)
	if err != nil {
		return fmt.Errorf("load credits: %w", err)
	}
	for rows.Next() {
		var post, viewer, ipRange string
		var day time.Time
		if err := rows.Scan(&post, &viewer, &ipRange, &day); err != nil {
			rows.Close()
			return err
		}
		day = utcDay(day)
		credited[creditKey{post, viewer, day}] = true
		rangeCredits[creditKey{post, ipRange, day}]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load credits: %w", err)
	}

	type postDelta struct {
		views, credits int64
		last           time.Time
	}
	deltas := map[string]*postDelta{}
	var order []string
	var cPost, cViewer, cRange []string
	var cDay, cAt []time.Time
	for _, v := range views {
		d := deltas[v.p.PostID]
		if d == nil {
			d = &postDelta{}
			deltas[v.p.PostID] = d
			order = append(order, v.p.PostID)
		}
		d.views++
		if v.at.After(d.last) {
			d.last = v.at
		}
		day := utcDay(v.at)
		vk := creditKey{v.p.PostID, v.p.ViewerKey, day}
		rk := creditKey{v.p.PostID, v.p.IPRangeKey, day}
		if credited[vk] || rangeCredits[rk] >= a.ipRangeDailyCap {
			continue
		}
		credited[vk] = true
		rangeCredits[rk]++
		d.credits++
		cPost, cViewer, cRange = append(cPost, v.p.PostID), append(cViewer, v.p.ViewerKey), append(cRange, v.p.IPRangeKey)
		cDay, cAt = append(cDay, day), append(cAt, v.at)
	}
	// The credits are new by construction (those stored were loaded above),
	// so they are copied: COPY is the cheapest way into the table.
	if len(cPost) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"post_view_credits"},
			[]string{"post_id", "viewer_key", "ip_range_key", "bucket_day", "created_at"},
			pgx.CopyFromSlice(len(cPost), func(i int) ([]any, error) {
				return []any{cPost[i], cViewer[i], cRange[i], cDay[i], cAt[i]}, nil
			})); err != nil {
			return fmt.Errorf("insert credits: %w", err)
		}
	}
	ids := make([]string, len(order))
	nViews := make([]int64, len(order))
	nCredits := make([]int64, len(order))
	lasts := make([]time.Time, len(order))
	for i, id := range order {
		d := deltas[id]
		ids[i], nViews[i], nCredits[i], lasts[i] = id, d.views, d.credits, d.last
	}
	tag, err := tx.Exec(ctx, `UPDATE posts p SET
			view_count = p.view_count + d.views,
			unique_view_score = p.unique_view_score + d.credits,
			last_viewed_at = GREATEST(p.last_viewed_at, d.last),
			updated_at = GREATEST(p.updated_at, d.last)
		FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::timestamptz[]) AS d(id, views, credits, last)
		WHERE p.id = d.id`, ids, nViews, nCredits, lasts)
	if err != nil {
		return fmt.Errorf("count views: %w", err)
	}
	if int(tag.RowsAffected()) != len(ids) {
		return fmt.Errorf("count views: %d of %d posts exist; a view preceded its post's registration", tag.RowsAffected(), len(ids))
	}
	return nil
}

// registeredViews keeps the views of versions registered for the view's
// post. The API appends a view only of a version it found registered (in
// the projection or on the log), keyed by its post, so the registration is
// applied first; a view of any other version (one whose registration was
// parked, a hand-made event) counts nothing, the same way on every replay.
func registeredViews(ctx context.Context, tx pgx.Tx, views []view) ([]view, error) {
	ids := make([]string, 0, len(views))
	seen := map[string]bool{}
	for _, v := range views {
		if id := strings.ToLower(v.p.PostVersionID); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	rows, err := tx.Query(ctx, `SELECT id::text, post_id::text FROM post_versions WHERE id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, fmt.Errorf("load versions: %w", err)
	}
	postOf := map[string]string{}
	for rows.Next() {
		var id, post string
		if err := rows.Scan(&id, &post); err != nil {
			rows.Close()
			return nil, err
		}
		postOf[id] = post
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load versions: %w", err)
	}
	out := make([]view, 0, len(views))
	for _, v := range views {
		if post, ok := postOf[strings.ToLower(v.p.PostVersionID)]; ok && post == strings.ToLower(v.p.PostID) {
			out = append(out, v)
		}
	}
	return out, nil
}

// utcDay is the UTC calendar day of t, the credit bucket.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
