package serving

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// Source is what an investigation of a version reads: the version's text,
// its HTML (the server's fetch preferred), its images, and the prior
// investigation of the post an update run builds on.
type Source struct {
	Version
	URL string
	// Text is the normalized text.
	Text string
	// ServerHTML and ClientHTML are empty when the version has none.
	ServerHTML  string
	ClientHTML  string
	ImageURLs   []string
	Occurrences []events.ImageOccurrenceV1
	// Prior is the latest complete SERVER_VERIFIED investigation of another
	// version of the post, with that version's text; nil when none.
	Prior     *Prior
	PriorText string
	// PriorPostVersionID is the version the prior investigation read.
	PriorPostVersionID string
}

// Provenance is SERVER_VERIFIED when the server fetched this version itself.
func (s Source) Provenance() string {
	if s.ServerVerifiedAt != nil {
		return events.ProvenanceServerVerified
	}
	return events.ProvenanceClientFallback
}

// Source reads the investigation source of a version.
func (r *Reader) Source(ctx context.Context, versionID string) (Source, error) {
	v, err := r.VersionByID(ctx, versionID)
	if err != nil {
		return Source{}, err
	}
	s := Source{Version: v}
	var serverHTML, clientHTML *string
	err = r.pool.QueryRow(ctx, `SELECT p.url, cb.content_text,
			COALESCE(lw.image_urls, ss.image_urls, wp.image_urls, xm.media_urls, bs.image_urls, th.image_urls, '{}'),
			(SELECT html_content FROM html_blobs WHERE html_hash = COALESCE(lw.server_html_hash, ss.server_html_hash, wp.server_html_hash)),
			(SELECT html_content FROM html_blobs WHERE html_hash = COALESCE(lw.client_html_hash, ss.client_html_hash, wp.client_html_hash))
		FROM post_versions pv
		JOIN posts p ON p.id = pv.post_id
		JOIN content_blobs cb ON cb.content_hash = pv.content_hash
		LEFT JOIN lesswrong_version_meta lw ON lw.post_version_id = pv.id
		LEFT JOIN substack_version_meta ss ON ss.post_version_id = pv.id
		LEFT JOIN wikipedia_version_meta wp ON wp.post_version_id = pv.id
		LEFT JOIN x_version_meta xm ON xm.post_version_id = pv.id
		LEFT JOIN bluesky_version_meta bs ON bs.post_version_id = pv.id
		LEFT JOIN threads_version_meta th ON th.post_version_id = pv.id
		WHERE pv.id = $1`, versionID).Scan(&s.URL, &s.Text, &s.ImageURLs, &serverHTML, &clientHTML)
	if errors.Is(err, pgx.ErrNoRows) {
		return Source{}, ErrNotFound
	}
	if err != nil {
		return Source{}, fmt.Errorf("source of %s: %w", versionID, err)
	}
	if serverHTML != nil {
		s.ServerHTML = *serverHTML
	}
	if clientHTML != nil {
		s.ClientHTML = *clientHTML
	}
	rows, err := r.pool.Query(ctx, `SELECT io.original_index, io.normalized_text_offset, io.source_url, COALESCE(io.caption_text, '')
		FROM post_versions pv JOIN image_occurrences io ON io.occurrences_hash = pv.occurrences_hash
		WHERE pv.id = $1 ORDER BY io.original_index`, versionID)
	if err != nil {
		return Source{}, fmt.Errorf("occurrences of %s: %w", versionID, err)
	}
	s.Occurrences, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.ImageOccurrenceV1, error) {
		var o events.ImageOccurrenceV1
		return o, row.Scan(&o.OriginalIndex, &o.NormalizedTextOffset, &o.SourceURL, &o.CaptionText)
	})
	if err != nil {
		return Source{}, fmt.Errorf("occurrences of %s: %w", versionID, err)
	}
	if s.Prior, err = r.priorOf(ctx, v.PostID, v.ID); err != nil || s.Prior == nil {
		return s, err
	}
	err = r.pool.QueryRow(ctx, `SELECT i.post_version_id::text, cb.content_text FROM investigations i
		JOIN post_versions pv ON pv.id = i.post_version_id
		JOIN content_blobs cb ON cb.content_hash = pv.content_hash
		WHERE i.id = $1`, s.Prior.InvestigationID).Scan(&s.PriorPostVersionID, &s.PriorText)
	if errors.Is(err, pgx.ErrNoRows) {
		// The prior's version is not in this projection (cannot happen
		// for a log that registered it): run a fresh investigation.
		s.Prior = nil
		return s, nil
	}
	if err != nil {
		return Source{}, fmt.Errorf("prior text of %s: %w", versionID, err)
	}
	return s, nil
}
