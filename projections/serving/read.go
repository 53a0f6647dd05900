package serving

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reader answers the API's queries from the serving model.
type Reader struct {
	pool *pgxpool.Pool
}

// NewReader returns a reader over a pool whose search_path is the serving schema.
func NewReader(pool *pgxpool.Pool) *Reader { return &Reader{pool: pool} }

// Version is what the API needs to know about a registered post version.
type Version struct {
	ID               string
	PostID           string
	Platform         string
	ExternalID       string
	VersionHash      string
	ContentHash      string
	WordCount        int
	ServerVerifiedAt *time.Time
}

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// VersionByID looks a post version up by its id.
func (r *Reader) VersionByID(ctx context.Context, id string) (Version, error) {
	var v Version
	err := r.pool.QueryRow(ctx, `SELECT pv.id::text, pv.post_id::text, p.platform, p.external_id,
			pv.version_hash, pv.content_hash, cb.word_count, pv.server_verified_at
		FROM post_versions pv
		JOIN posts p ON p.id = pv.post_id
		JOIN content_blobs cb ON cb.content_hash = pv.content_hash
		WHERE pv.id = $1`, id).Scan(&v.ID, &v.PostID, &v.Platform, &v.ExternalID,
		&v.VersionHash, &v.ContentHash, &v.WordCount, &v.ServerVerifiedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Version{}, ErrNotFound
	}
	if err != nil {
		return Version{}, fmt.Errorf("version %s: %w", id, err)
	}
	return v, nil
}

// PostStats are a post's view counters.
type PostStats struct {
	ViewCount       int64
	UniqueViewScore int64
	LastViewedAt    *time.Time
}

// PostStats returns the view counters of a post.
func (r *Reader) PostStats(ctx context.Context, postID string) (PostStats, error) {
	var s PostStats
	err := r.pool.QueryRow(ctx, `SELECT view_count, unique_view_score, last_viewed_at FROM posts WHERE id = $1`,
		postID).Scan(&s.ViewCount, &s.UniqueViewScore, &s.LastViewedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return PostStats{}, ErrNotFound
	}
	if err != nil {
		return PostStats{}, fmt.Errorf("post %s: %w", postID, err)
	}
	return s, nil
}
