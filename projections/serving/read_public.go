package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The public GraphQL API's reads. Only COMPLETE investigations are ever
// returned; everything else reads as not found. They are the history:
// every complete investigation of a version, visible or not (Visible says
// which one the extension shows), and claims with their retractions.

// PublicInvestigation is a complete investigation with its post, trust
// signals and the configuration it ran under.
type PublicInvestigation struct {
	ID                 string
	PostID             string
	PostVersionID      string
	ContentHash        string
	Platform           string
	ExternalID         string
	URL                string
	Provenance         string
	ServerVerifiedAt   *time.Time
	CorroborationCount int
	CheckedAt          time.Time
	PromptVersion      string
	Provider           string
	Model              string
	// ClaimCount counts the current claims (the retracted left out).
	ClaimCount int
	// ConfigurationName is "" while the configuration is not declared
	// (a rebuild that applied the investigation first).
	ConfigurationID     string
	ConfigurationName   string
	ConfigurationActive bool
	Supersedes          string
	SupersededBy        string
	ExperimentID        string
	ExperimentName      string
	Arm                 string
	// Visible: the extension shows this investigation for its version.
	Visible bool
}

// PublicPost is a post as the public API shows it.
type PublicPost struct {
	ID         string
	Platform   string
	ExternalID string
	URL        string
}

// PublicAuthor is one author identity.
type PublicAuthor struct {
	ID          string
	Platform    string
	DisplayName string
}

var publicInvestigationColumns = `i.id::text, i.post_id::text, i.post_version_id::text, pv.content_hash,
	p.platform, p.external_id, p.url, COALESCE(i.provenance, 'CLIENT_FALLBACK'), pv.server_verified_at,
	(SELECT count(*) FROM version_corroborations vc WHERE vc.post_version_id = pv.id),
	i.checked_at, COALESCE(i.prompt_version, ''), COALESCE(i.provider, ''), COALESCE(i.model, ''),
	(SELECT count(*) FROM claims c WHERE c.investigation_id = i.id AND c.retracted_at IS NULL),
	i.configuration_id, COALESCE(ac.name, ''),
	ac.promotion_rank IS NOT NULL AND ac.name IS NOT NULL AND ac.promotion_rank =
		(SELECT max(m.promotion_rank) FROM analysis_configurations m WHERE m.name IS NOT NULL),
	COALESCE(i.supersedes::text, ''),
	COALESCE((SELECT s.id::text FROM investigations s WHERE s.supersedes = i.id ORDER BY s.queued_at, s.id LIMIT 1), ''),
	COALESCE(i.experiment_id::text, ''), COALESCE((SELECT e.name FROM experiments e WHERE e.id = i.experiment_id), ''),
	COALESCE(i.arm, ''),
	i.id = (SELECT v.id FROM ` + visibleInvestigationSQL("i.post_version_id") + ` v) IS TRUE`

func scanPublicInvestigation(row pgx.Row) (PublicInvestigation, error) {
	var pi PublicInvestigation
	err := row.Scan(&pi.ID, &pi.PostID, &pi.PostVersionID, &pi.ContentHash, &pi.Platform, &pi.ExternalID, &pi.URL,
		&pi.Provenance, &pi.ServerVerifiedAt, &pi.CorroborationCount, &pi.CheckedAt, &pi.PromptVersion,
		&pi.Provider, &pi.Model, &pi.ClaimCount, &pi.ConfigurationID, &pi.ConfigurationName, &pi.ConfigurationActive,
		&pi.Supersedes, &pi.SupersededBy, &pi.ExperimentID, &pi.ExperimentName, &pi.Arm, &pi.Visible)
	return pi, err
}

// PublicInvestigation reads a COMPLETE investigation; ErrNotFound when it
// does not exist, is not complete, or id is not a UUID.
func (r *Reader) PublicInvestigation(ctx context.Context, id string) (PublicInvestigation, error) {
	if !isUUID(id) {
		return PublicInvestigation{}, ErrNotFound
	}
	pi, err := scanPublicInvestigation(r.pool.QueryRow(ctx, `SELECT `+publicInvestigationColumns+`
		FROM investigations i
		JOIN post_versions pv ON pv.id = i.post_version_id
		JOIN posts p ON p.id = i.post_id
		LEFT JOIN analysis_configurations ac ON ac.id = i.configuration_id
		WHERE i.id = $1 AND i.status = 'COMPLETE'`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return PublicInvestigation{}, ErrNotFound
	}
	if err != nil {
		return PublicInvestigation{}, fmt.Errorf("public investigation %s: %w", id, err)
	}
	return pi, nil
}

// PublicPostInvestigations reads a post by its platform identity and its
// COMPLETE investigations, newest first; ErrNotFound when no such post.
func (r *Reader) PublicPostInvestigations(ctx context.Context, platform, externalID string) (PublicPost, []PublicInvestigation, error) {
	var p PublicPost
	err := r.pool.QueryRow(ctx, `SELECT id::text, platform, external_id, url FROM posts
		WHERE platform = $1 AND external_id = $2`, platform, externalID).Scan(&p.ID, &p.Platform, &p.ExternalID, &p.URL)
	if errors.Is(err, pgx.ErrNoRows) {
		return PublicPost{}, nil, ErrNotFound
	}
	if err != nil {
		return PublicPost{}, nil, fmt.Errorf("public post %s/%s: %w", platform, externalID, err)
	}
	rows, err := r.pool.Query(ctx, `SELECT `+publicInvestigationColumns+`
		FROM investigations i
		JOIN post_versions pv ON pv.id = i.post_version_id
		JOIN posts p ON p.id = i.post_id
		LEFT JOIN analysis_configurations ac ON ac.id = i.configuration_id
		WHERE i.post_id = $1 AND i.status = 'COMPLETE'
		ORDER BY i.checked_at DESC, i.id`, p.ID)
	if err != nil {
		return PublicPost{}, nil, fmt.Errorf("investigations of post %s: %w", p.ID, err)
	}
	defer rows.Close()
	out := []PublicInvestigation{}
	for rows.Next() {
		pi, err := scanPublicInvestigation(rows)
		if err != nil {
			return PublicPost{}, nil, err
		}
		out = append(out, pi)
	}
	return p, out, rows.Err()
}

// ClaimsOfInvestigations loads the published claims of many investigations
// in one query, each list in published order, the retracted ones included
// with their Retraction (the history; callers showing current claims
// leave them out). Investigations that are not COMPLETE (or have no
// claims) map to an empty list.
func (r *Reader) ClaimsOfInvestigations(ctx context.Context, ids []string) (map[string][]Claim, error) {
	out := make(map[string][]Claim, len(ids))
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		out[id] = []Claim{}
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT c.investigation_id::text, c.id::text, c.text, c.context, c.summary, c.reasoning, c.sources,
			c.retracted_at, COALESCE(c.retracted_by_appeal::text, ''), COALESCE(c.retraction_reason, '')
		FROM claims c JOIN investigations i ON i.id = c.investigation_id
		WHERE c.investigation_id = ANY($1::uuid[]) AND i.status = 'COMPLETE'
		ORDER BY c.investigation_id, c.ord`, valid)
	if err != nil {
		return nil, fmt.Errorf("claims of %d investigations: %w", len(valid), err)
	}
	defer rows.Close()
	for rows.Next() {
		var inv, appealID, reason string
		var c Claim
		var sources []byte
		var retractedAt *time.Time
		if err := rows.Scan(&inv, &c.ID, &c.Text, &c.Context, &c.Summary, &c.Reasoning, &sources,
			&retractedAt, &appealID, &reason); err != nil {
			return nil, err
		}
		if retractedAt != nil {
			c.Retraction = &Retraction{AppealID: appealID, Reason: reason, At: *retractedAt}
		}
		if err := json.Unmarshal(sources, &c.Sources); err != nil {
			return nil, fmt.Errorf("claim %s sources: %w", c.ID, err)
		}
		out[inv] = append(out[inv], c)
	}
	return out, rows.Err()
}

// AuthorsOfPosts loads the authors of many posts in one query; posts
// without a known author are absent from the map.
func (r *Reader) AuthorsOfPosts(ctx context.Context, postIDs []string) (map[string]PublicAuthor, error) {
	out := make(map[string]PublicAuthor, len(postIDs))
	valid := make([]string, 0, len(postIDs))
	for _, id := range postIDs {
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT p.id::text, a.id::text, a.platform, a.display_name
		FROM posts p JOIN authors a ON a.id = p.author_id
		WHERE p.id = ANY($1::uuid[])`, valid)
	if err != nil {
		return nil, fmt.Errorf("authors of %d posts: %w", len(valid), err)
	}
	defer rows.Close()
	for rows.Next() {
		var post string
		var a PublicAuthor
		if err := rows.Scan(&post, &a.ID, &a.Platform, &a.DisplayName); err != nil {
			return nil, err
		}
		out[post] = a
	}
	return out, rows.Err()
}

// isUUID reports whether s has the canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
