package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
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
	// CorroborationCount is the number of distinct authenticated reporters
	// who registered this exact version.
	CorroborationCount int
}

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// VersionByID looks a post version up by its id.
func (r *Reader) VersionByID(ctx context.Context, id string) (Version, error) {
	var v Version
	err := r.pool.QueryRow(ctx, `SELECT pv.id::text, pv.post_id::text, p.platform, p.external_id,
			pv.version_hash, pv.content_hash, cb.word_count, pv.server_verified_at,
			(SELECT count(*) FROM version_corroborations vc WHERE vc.post_version_id = pv.id)
		FROM post_versions pv
		JOIN posts p ON p.id = pv.post_id
		JOIN content_blobs cb ON cb.content_hash = pv.content_hash
		WHERE pv.id = $1`, id).Scan(&v.ID, &v.PostID, &v.Platform, &v.ExternalID,
		&v.VersionHash, &v.ContentHash, &v.WordCount, &v.ServerVerifiedAt, &v.CorroborationCount)
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

// VersionStatus is a registered version with the state of its own visible
// investigation (never another version's: strict version rule; see
// visible.go).
type VersionStatus struct {
	Version
	// InvestigationID and InvestigationStatus are empty when the version
	// has no investigation.
	InvestigationID     string
	InvestigationStatus string
	// InvestigationProvenance is the provenance of the content the
	// investigation read; empty until it has run.
	InvestigationProvenance string
	// InvestigationConfigurationID is the configuration of the
	// investigation ("": the default).
	InvestigationConfigurationID string
	// Claims are the published claims, less the retracted ones, when the
	// status is COMPLETE.
	Claims []Claim
	// PendingClaims (submitted, not yet validated) and ConfirmedClaims
	// (approved by the validator) of the running attempt, while PENDING or
	// PROCESSING.
	PendingClaims, ConfirmedClaims []Claim
	// CheckedAt is when the investigation completed or failed.
	CheckedAt *time.Time
	// Prior is the latest complete SERVER_VERIFIED visible investigation
	// of another version of the same post, offered as interim context
	// (spec 2.8); nil when there is none.
	Prior *Prior
}

// Claim is a published incorrect claim.
type Claim struct {
	ID        string
	Text      string
	Context   string
	Summary   string
	Reasoning string
	Sources   []events.SourceV1
	// Retraction is set on a retracted claim, which only the history
	// (ClaimsOfInvestigations) returns.
	Retraction *Retraction
}

// Retraction is the appeal decision that withdrew a claim.
type Retraction struct {
	AppealID string
	Reason   string
	At       time.Time
}

// Prior is another version's verified result.
type Prior struct {
	InvestigationID string
	// ConfigurationID is the prior investigation's configuration ("": the
	// default).
	ConfigurationID string
	Claims          []Claim
}

// claimsOf loads an investigation's current claims (the retracted ones
// left out) in their published order.
func (r *Reader) claimsOf(ctx context.Context, investigationID string) ([]Claim, error) {
	rows, err := r.pool.Query(ctx, `SELECT id::text, text, context, summary, reasoning, sources
		FROM claims WHERE investigation_id = $1 AND retracted_at IS NULL ORDER BY ord`, investigationID)
	if err != nil {
		return nil, fmt.Errorf("claims of %s: %w", investigationID, err)
	}
	defer rows.Close()
	out := []Claim{}
	for rows.Next() {
		var c Claim
		var sources []byte
		if err := rows.Scan(&c.ID, &c.Text, &c.Context, &c.Summary, &c.Reasoning, &sources); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(sources, &c.Sources); err != nil {
			return nil, fmt.Errorf("claim %s sources: %w", c.ID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// priorOf finds the interim result for a version: the latest complete
// SERVER_VERIFIED visible investigation of another version of the post.
// A CLIENT_FALLBACK result is never reused.
func (r *Reader) priorOf(ctx context.Context, postID, versionID string) (*Prior, error) {
	var id, configurationID string
	err := r.pool.QueryRow(ctx, `SELECT prior.id, prior.configuration_id FROM `+
		priorInvestigationSQL("$1::uuid", "$2::uuid", "$3")+` prior`,
		postID, versionID, events.ProvenanceServerVerified).Scan(&id, &configurationID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prior investigation: %w", err)
	}
	claims, err := r.claimsOf(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Prior{InvestigationID: id, ConfigurationID: configurationID, Claims: claims}, nil
}

// VersionKnown reports whether the projection holds a version, with its
// post and content (applied in one transaction, so all three or none).
func (r *Reader) VersionKnown(ctx context.Context, id string) (bool, error) {
	var known bool
	if err := r.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM post_versions WHERE id = $1)`, id).Scan(&known); err != nil {
		return false, fmt.Errorf("version %s known: %w", id, err)
	}
	return known, nil
}

// VersionStatusByID looks a post version and its investigation up by the
// version id, in one query.
func (r *Reader) VersionStatusByID(ctx context.Context, id string) (VersionStatus, error) {
	var v VersionStatus
	var invID, invStatus, invProvenance *string
	var series, attempt *int
	// The prior result's id (priorOf's query) comes in the same round trip:
	// the view path reads a status per request.
	var priorID, invConfiguration, priorConfiguration *string
	err := r.pool.QueryRow(ctx, `SELECT pv.id::text, pv.post_id::text, p.platform, p.external_id,
			pv.version_hash, pv.content_hash, cb.word_count, pv.server_verified_at, i.id::text, i.status, i.provenance,
			i.checked_at, i.attempt_series, i.attempt, i.configuration_id, prior.id, prior.configuration_id
		FROM post_versions pv
		JOIN posts p ON p.id = pv.post_id
		JOIN content_blobs cb ON cb.content_hash = pv.content_hash
		LEFT JOIN LATERAL `+visibleInvestigationSQL("pv.id")+` i ON true
		LEFT JOIN LATERAL `+priorInvestigationSQL("pv.post_id", "pv.id", "$2")+` prior ON true
		WHERE pv.id = $1`, id, events.ProvenanceServerVerified).Scan(&v.ID, &v.PostID, &v.Platform, &v.ExternalID,
		&v.VersionHash, &v.ContentHash, &v.WordCount, &v.ServerVerifiedAt, &invID, &invStatus, &invProvenance,
		&v.CheckedAt, &series, &attempt, &invConfiguration, &priorID, &priorConfiguration)
	if errors.Is(err, pgx.ErrNoRows) {
		return VersionStatus{}, ErrNotFound
	}
	if err != nil {
		return VersionStatus{}, fmt.Errorf("version status %s: %w", id, err)
	}
	if invID != nil && invStatus != nil {
		v.InvestigationID, v.InvestigationStatus = *invID, *invStatus
	}
	if invProvenance != nil {
		v.InvestigationProvenance = *invProvenance
	}
	if invConfiguration != nil {
		v.InvestigationConfigurationID = *invConfiguration
	}
	if v.InvestigationStatus == events.StatusComplete {
		if v.Claims, err = r.claimsOf(ctx, v.InvestigationID); err != nil {
			return VersionStatus{}, err
		}
		return v, nil
	}
	if v.InvestigationStatus == events.StatusPending || v.InvestigationStatus == events.StatusProcessing {
		if v.PendingClaims, v.ConfirmedClaims, err = r.progressOf(ctx, v.InvestigationID, *series, *attempt); err != nil {
			return VersionStatus{}, err
		}
	}
	if priorID != nil {
		claims, err := r.claimsOf(ctx, *priorID)
		if err != nil {
			return VersionStatus{}, err
		}
		v.Prior = &Prior{InvestigationID: *priorID, ConfigurationID: *priorConfiguration, Claims: claims}
	}
	return v, nil
}

// progressOf lists the running attempt's submitted claims in submission
// order: confirmed are those the validator approved AND whose evidence
// assessment publishes them; pending are those still being validated or
// assessed. A claim the assessment withholds is in neither list, so a
// reader never sees a claim that the finished investigation will not show.
func (r *Reader) progressOf(ctx context.Context, investigationID string, series, attempt int) (pending, confirmed []Claim, err error) {
	pending, confirmed = []Claim{}, []Claim{}
	rows, err := r.pool.Query(ctx, `SELECT p.submission_id::text, p.text, p.context, p.summary, p.reasoning, p.sources,
			COALESCE(p.outcome, '') = 'APPROVED' AND COALESCE(a.published, false)
		FROM investigation_progress_claims p
		LEFT JOIN claim_assessments a ON a.submission_id = p.submission_id
		WHERE p.investigation_id = $1 AND p.series = $2 AND p.attempt = $3
			AND (p.outcome IS NULL OR (p.outcome = 'APPROVED' AND a.published IS NOT FALSE))
		ORDER BY p.seq`, investigationID, series, attempt)
	if err != nil {
		return nil, nil, fmt.Errorf("progress of %s: %w", investigationID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Claim
		var sources []byte
		var published bool
		if err := rows.Scan(&c.ID, &c.Text, &c.Context, &c.Summary, &c.Reasoning, &sources, &published); err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(sources, &c.Sources); err != nil {
			return nil, nil, fmt.Errorf("progress claim %s sources: %w", c.ID, err)
		}
		if published {
			confirmed = append(confirmed, c)
		} else {
			pending = append(pending, c)
		}
	}
	return pending, confirmed, rows.Err()
}

// VersionIDOfInvestigation returns the version an investigation belongs to.
func (r *Reader) VersionIDOfInvestigation(ctx context.Context, investigationID string) (string, error) {
	var id string
	err := r.pool.QueryRow(ctx, `SELECT post_version_id::text FROM investigations WHERE id = $1`, investigationID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("investigation %s: %w", investigationID, err)
	}
	return id, nil
}

// BatchKey names one version by its composite key.
type BatchKey struct {
	Platform    string
	ExternalID  string
	VersionHash string
}

// BatchStatus is the investigation state of one BatchKey.
type BatchStatus struct {
	// Investigated: that exact version's visible investigation is COMPLETE.
	Investigated bool
	// IncorrectClaimCount counts its flagged claims, less the retracted.
	IncorrectClaimCount int
}

// BatchStatuses answers keys in order with one query (no per-key round
// trips). A version is investigated only when the version itself (post by
// platform and external id, version by hash) has a COMPLETE visible
// investigation.
func (r *Reader) BatchStatuses(ctx context.Context, keys []BatchKey) ([]BatchStatus, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	platforms := make([]string, len(keys))
	externalIDs := make([]string, len(keys))
	hashes := make([]string, len(keys))
	for i, k := range keys {
		platforms[i], externalIDs[i], hashes[i] = k.Platform, k.ExternalID, k.VersionHash
	}
	rows, err := r.pool.Query(ctx, `SELECT q.ord::int, COALESCE(i.status = 'COMPLETE', false) AS investigated,
			(SELECT count(*) FROM claims c WHERE c.investigation_id = i.id AND i.status = 'COMPLETE'
				AND c.retracted_at IS NULL)::int AS incorrect_claims
		FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS q(platform, external_id, version_hash, ord)
		LEFT JOIN posts p ON p.platform = q.platform AND p.external_id = q.external_id
		LEFT JOIN post_versions pv ON pv.post_id = p.id AND pv.version_hash = q.version_hash
		LEFT JOIN LATERAL `+visibleInvestigationSQL("pv.id")+` i ON true
		ORDER BY q.ord`, platforms, externalIDs, hashes)
	if err != nil {
		return nil, fmt.Errorf("batch status: %w", err)
	}
	defer rows.Close()
	out := make([]BatchStatus, len(keys))
	n := 0
	for rows.Next() {
		var ord, count int
		var investigated bool
		if err := rows.Scan(&ord, &investigated, &count); err != nil {
			return nil, fmt.Errorf("batch status: %w", err)
		}
		if ord < 1 || ord > len(keys) {
			return nil, fmt.Errorf("batch status: row %d out of range", ord)
		}
		out[ord-1] = BatchStatus{Investigated: investigated, IncorrectClaimCount: count}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("batch status: %w", err)
	}
	if n != len(keys) {
		return nil, fmt.Errorf("batch status: %d rows for %d keys", n, len(keys))
	}
	return out, nil
}

// APIKey is an instance API key as operators see it: never any key material.
type APIKey struct {
	ID           string
	Label        string
	CreatedAt    time.Time
	RevokedAt    *time.Time
	RevokeReason string
}

// ActiveAPIKey reports whether a key with this sha256 exists and is not
// revoked. Errors never name the hash.
func (r *Reader) ActiveAPIKey(ctx context.Context, keySHA256 string) (bool, error) {
	var ok bool
	err := r.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM instance_api_keys
		WHERE key_sha256 = $1 AND revoked_at IS NULL)`, keySHA256).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look up api key: %w", err)
	}
	return ok, nil
}

const apiKeyColumns = `key_id::text, label, created_at, revoked_at, COALESCE(revoke_reason, '')` //nolint:gosec // G101: column names, no credential (a key is stored only as its sha256)

func scanAPIKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.Label, &k.CreatedAt, &k.RevokedAt, &k.RevokeReason)
	return k, err
}

// APIKeyByID returns one key by its id.
func (r *Reader) APIKeyByID(ctx context.Context, id string) (APIKey, error) {
	k, err := scanAPIKey(r.pool.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM instance_api_keys WHERE key_id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return APIKey{}, ErrNotFound
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("api key %s: %w", id, err)
	}
	return k, nil
}

// APIKeys lists every key, oldest first.
func (r *Reader) APIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := r.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM instance_api_keys ORDER BY created_at, key_id`)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (APIKey, error) { return scanAPIKey(row) })
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}
