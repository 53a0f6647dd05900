package serving

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuthorContextLimits bound what AuthorContext reads: at most MaxPosts
// other posts (default 10) and MaxClaims claims over all of them (default
// 20).
type AuthorContextLimits struct {
	MaxPosts  int
	MaxClaims int
}

func (l *AuthorContextLimits) defaults() {
	if l.MaxPosts <= 0 {
		l.MaxPosts = 10
	}
	if l.MaxClaims <= 0 {
		l.MaxClaims = 20
	}
}

// AuthorContext is what Errata published about the other posts of a post
// version's author: the author-context tool's answer.
type AuthorContext struct {
	// AuthorID is empty when the post has no known author (then Posts is
	// empty).
	AuthorID string
	// Posts are the author's other posts whose visible investigation is
	// complete, newest check first (each post once, at its newest checked
	// version).
	Posts []AuthorPost
	// MorePosts and MoreClaims say the limits left some out.
	MorePosts, MoreClaims bool
}

// AuthorPost is one other post of the author and its published claims.
type AuthorPost struct {
	PostID, PostVersionID, InvestigationID string
	Platform, URL                          string
	CheckedAt                              time.Time
	// Claims are the visible investigation's published claims that no
	// appeal retracted, in their published order.
	Claims []AuthorClaim
}

// AuthorClaim is one published claim: the quoted text and the correction.
type AuthorClaim struct {
	Text, Summary string
}

// AuthorContext reads the author context of a post version: the author's
// other posts (same author id, another post) whose visible investigation
// (the one the extension shows: design rule 2, eligible configurations and
// the running experiment) is COMPLETE, with their published, non-retracted
// claims. ErrNotFound when the version is unknown.
func (r *Reader) AuthorContext(ctx context.Context, postVersionID string, lim AuthorContextLimits) (AuthorContext, error) {
	lim.defaults()
	var out AuthorContext
	var authorID *string
	var postID string
	err := r.pool.QueryRow(ctx, `SELECT p.id::text, p.author_id::text FROM post_versions pv JOIN posts p ON p.id = pv.post_id
		WHERE pv.id::text = $1`, postVersionID).Scan(&postID, &authorID)
	if errors.Is(err, pgx.ErrNoRows) {
		return out, ErrNotFound
	}
	if err != nil {
		return out, fmt.Errorf("author of %s: %w", postVersionID, err)
	}
	out.Posts = []AuthorPost{}
	if authorID == nil {
		return out, nil
	}
	out.AuthorID = *authorID
	// Per post, the newest version whose visible investigation (the one
	// the extension shows) is complete; newest first, one more than the
	// limit to know whether some were left out.
	rows, err := r.pool.Query(ctx, `SELECT id, post_id, post_version_id, platform, url, checked_at FROM (
			SELECT DISTINCT ON (pv.post_id) vi.id::text AS id, pv.post_id::text AS post_id, pv.id::text AS post_version_id,
				p.platform, p.url, vi.checked_at
			FROM posts p
			JOIN post_versions pv ON pv.post_id = p.id
			CROSS JOIN LATERAL `+visibleInvestigationSQL("pv.id")+` vi
			WHERE p.author_id = $1 AND p.id <> $2 AND vi.status = 'COMPLETE' AND vi.checked_at IS NOT NULL
			ORDER BY pv.post_id, vi.checked_at DESC, pv.id DESC) newest
		ORDER BY checked_at DESC, post_version_id DESC LIMIT $3`, *authorID, postID, lim.MaxPosts+1)
	if err != nil {
		return out, fmt.Errorf("author context of %s: %w", postVersionID, err)
	}
	posts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AuthorPost, error) {
		var p AuthorPost
		err := row.Scan(&p.InvestigationID, &p.PostID, &p.PostVersionID, &p.Platform, &p.URL, &p.CheckedAt)
		p.CheckedAt = p.CheckedAt.UTC()
		p.Claims = []AuthorClaim{}
		return p, err
	})
	if err != nil {
		return out, fmt.Errorf("author context of %s: %w", postVersionID, err)
	}
	if len(posts) > lim.MaxPosts {
		posts, out.MorePosts = posts[:lim.MaxPosts], true
	}
	budget := lim.MaxClaims
	for i := range posts {
		claims, more, err := r.authorClaims(ctx, posts[i].InvestigationID, budget)
		if err != nil {
			return out, err
		}
		posts[i].Claims = claims
		budget -= len(claims)
		out.MoreClaims = out.MoreClaims || more
	}
	out.Posts = posts
	return out, nil
}

// authorClaims reads up to n published, non-retracted claims of an
// investigation in order, and whether it has more.
func (r *Reader) authorClaims(ctx context.Context, investigationID string, n int) ([]AuthorClaim, bool, error) {
	rows, err := r.pool.Query(ctx, `SELECT text, summary FROM claims
		WHERE investigation_id = $1 AND retracted_at IS NULL ORDER BY ord LIMIT $2`, investigationID, n+1)
	if err != nil {
		return nil, false, fmt.Errorf("claims of %s: %w", investigationID, err)
	}
	claims, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AuthorClaim, error) {
		var c AuthorClaim
		return c, row.Scan(&c.Text, &c.Summary)
	})
	if err != nil {
		return nil, false, fmt.Errorf("claims of %s: %w", investigationID, err)
	}
	if len(claims) > n {
		return claims[:n], true, nil
	}
	return claims, false, nil
}
