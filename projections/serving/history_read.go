package serving

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// InvestigationHistoryEntry is one investigation of a post version, visible
// or not, with what it re-does and what re-did it.
type InvestigationHistoryEntry struct {
	ID                string
	ConfigurationID   string
	ConfigurationName string // "" when the configuration is not declared (yet)
	Status            string
	Source            string
	Supersedes        string
	SupersededBy      string
	ExperimentID      string
	Arm               string
	Visible           bool
	QueuedAt          time.Time
	UpdatedAt         time.Time
}

// InvestigationHistory lists every investigation of a post version, oldest
// request first; an id that is not a UUID has none.
func (r *Reader) InvestigationHistory(ctx context.Context, postVersionID string) ([]InvestigationHistoryEntry, error) {
	if !isUUID(postVersionID) {
		return []InvestigationHistoryEntry{}, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT i.id::text, i.configuration_id, COALESCE(c.name, ''), i.status, i.source,
			COALESCE(i.supersedes::text, ''),
			COALESCE((SELECT s.id::text FROM investigations s WHERE s.supersedes = i.id ORDER BY s.queued_at, s.id LIMIT 1), ''),
			COALESCE(i.experiment_id::text, ''), COALESCE(i.arm, ''), i.id = v.id IS TRUE, i.queued_at, i.updated_at
		FROM investigations i
		LEFT JOIN analysis_configurations c ON c.id = i.configuration_id
		LEFT JOIN LATERAL `+visibleInvestigationSQL("$1::uuid")+` v ON true
		WHERE i.post_version_id = $1
		ORDER BY i.queued_at, i.id`, postVersionID)
	if err != nil {
		return nil, fmt.Errorf("investigation history of %s: %w", postVersionID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (InvestigationHistoryEntry, error) {
		var e InvestigationHistoryEntry
		err := row.Scan(&e.ID, &e.ConfigurationID, &e.ConfigurationName, &e.Status, &e.Source, &e.Supersedes,
			&e.SupersededBy, &e.ExperimentID, &e.Arm, &e.Visible, &e.QueuedAt, &e.UpdatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("investigation history of %s: %w", postVersionID, err)
	}
	return out, nil
}

// ReprocessFilter selects the post versions to investigate again. Empty
// lists and zero times do not filter.
type ReprocessFilter struct {
	Platforms []string
	// Since and Until bound the visible investigation's queued_at
	// (Since inclusive, Until exclusive).
	Since, Until time.Time
	// PromptVersions match the visible investigation's result's prompt
	// version or its configuration's investigator prompt.
	PromptVersions []string
	// PolicyVersions match the policy of any assessment of the visible
	// investigation's claims.
	PolicyVersions []string
	AuthorIDs      []string
	PostVersionIDs []string
	// Target is the configuration the versions would be re-investigated
	// under: versions with an investigation under it are left out.
	Target string
}

// ReprocessCandidate is a version to re-investigate and the visible
// investigation the new one supersedes.
type ReprocessCandidate struct {
	PostVersionID string
	PostID        string
	Platform      string
	ExternalID    string
	VersionHash   string
	Supersedes    string
}

// ErrInvalidFilter is returned for a filter naming ids that are not UUIDs.
var ErrInvalidFilter = errors.New("invalid filter")

// ReprocessCandidates pages through the versions whose visible
// investigation has ended (COMPLETE or FAILED) and matches f, ordered by
// post version id, after afterPostVersionID ("" from the start), at most
// limit (1..1000) per page.
func (r *Reader) ReprocessCandidates(ctx context.Context, f ReprocessFilter, afterPostVersionID string, limit int) ([]ReprocessCandidate, error) {
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("%w: limit %d is outside 1..1000", ErrInvalidFilter, limit)
	}
	for _, ids := range [][]string{f.AuthorIDs, f.PostVersionIDs, {afterPostVersionID}} {
		for _, id := range ids {
			if id != "" && !isUUID(id) {
				return nil, fmt.Errorf("%w: %q is not a UUID", ErrInvalidFilter, id)
			}
		}
	}
	after := "00000000-0000-0000-0000-000000000000"
	if afterPostVersionID != "" {
		after = strings.ToLower(afterPostVersionID)
	}
	var since, until *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	if !f.Until.IsZero() {
		until = &f.Until
	}
	rows, err := r.pool.Query(ctx, `SELECT pv.id::text, p.id::text, p.platform, p.external_id, pv.version_hash, i.id::text
		FROM post_versions pv
		JOIN posts p ON p.id = pv.post_id
		CROSS JOIN LATERAL `+visibleInvestigationSQL("pv.id")+` i
		LEFT JOIN analysis_configurations vc ON vc.id = i.configuration_id
		WHERE pv.id > $1::uuid AND i.status IN ('COMPLETE', 'FAILED')
			AND (cardinality($2::text[]) = 0 OR p.platform = ANY($2))
			AND ($3::timestamptz IS NULL OR i.queued_at >= $3)
			AND ($4::timestamptz IS NULL OR i.queued_at < $4)
			AND (cardinality($5::text[]) = 0 OR i.prompt_version = ANY($5) OR vc.spec->>'investigator_prompt' = ANY($5))
			AND (cardinality($6::text[]) = 0 OR EXISTS (SELECT 1 FROM claim_assessments a
				WHERE a.investigation_id = i.id AND a.policy_version = ANY($6)))
			AND (cardinality($7::uuid[]) = 0 OR p.author_id = ANY($7))
			AND (cardinality($8::uuid[]) = 0 OR pv.id = ANY($8))
			AND NOT EXISTS (SELECT 1 FROM investigations t WHERE t.post_version_id = pv.id AND t.configuration_id = $9)
		ORDER BY pv.id
		LIMIT $10`, after, emptyIfNil(f.Platforms), since, until, emptyIfNil(f.PromptVersions),
		emptyIfNil(f.PolicyVersions), emptyIfNil(f.AuthorIDs), emptyIfNil(f.PostVersionIDs), f.Target, limit)
	if err != nil {
		return nil, fmt.Errorf("reprocess candidates: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ReprocessCandidate, error) {
		var c ReprocessCandidate
		err := row.Scan(&c.PostVersionID, &c.PostID, &c.Platform, &c.ExternalID, &c.VersionHash, &c.Supersedes)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reprocess candidates: %w", err)
	}
	return out, nil
}
