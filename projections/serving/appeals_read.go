package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Appeal is an appeal as anyone may see it: never the requester's key.
type Appeal struct {
	ID              string
	ClaimID         string
	InvestigationID string
	PostVersionID   string
	Role            string
	Reason          string
	URLs            []string
	Status          string // OPEN, UPHELD, RETRACTED
	FiledAt         time.Time
	DecidedAt       *time.Time
	DecisionReason  string
	PolicyVersion   string
}

// ClaimRef is a published claim: where it is and whether it still stands.
type ClaimRef struct {
	ClaimID         string
	InvestigationID string
	PostID          string
	PostVersionID   string
	Retracted       bool
	// Visible: the claim's investigation is its version's visible one.
	Visible bool
}

// Only filed appeals are read (a decision applied before its filing, during
// a rebuild, is not an appeal anyone can see yet).
const appealColumns = `a.id::text, a.claim_id::text, a.investigation_id::text, a.post_version_id::text, a.role, a.reason,
	a.urls, a.status, a.filed_at, a.decided_at, COALESCE(a.decision_reason, ''), COALESCE(a.policy_version, '')`

func scanAppeal(row pgx.Row) (Appeal, error) {
	var a Appeal
	var urls []byte
	if err := row.Scan(&a.ID, &a.ClaimID, &a.InvestigationID, &a.PostVersionID, &a.Role, &a.Reason, &urls, &a.Status,
		&a.FiledAt, &a.DecidedAt, &a.DecisionReason, &a.PolicyVersion); err != nil {
		return Appeal{}, err
	}
	if err := json.Unmarshal(urls, &a.URLs); err != nil {
		return Appeal{}, fmt.Errorf("appeal %s urls: %w", a.ID, err)
	}
	return a, nil
}

// Appeal reads one filed appeal; ErrNotFound when there is none or id is
// not a UUID.
func (r *Reader) Appeal(ctx context.Context, id string) (Appeal, error) {
	if !isUUID(id) {
		return Appeal{}, ErrNotFound
	}
	a, err := scanAppeal(r.pool.QueryRow(ctx, `SELECT `+appealColumns+` FROM appeals a
		WHERE a.id = $1 AND a.filed_at IS NOT NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Appeal{}, ErrNotFound
	}
	if err != nil {
		return Appeal{}, fmt.Errorf("appeal %s: %w", id, err)
	}
	return a, nil
}

// AppealsOfClaim lists the filed appeals of a claim, oldest first; none
// for an id that is not a UUID.
func (r *Reader) AppealsOfClaim(ctx context.Context, claimID string) ([]Appeal, error) {
	m, err := r.AppealsOfClaims(ctx, []string{claimID})
	if err != nil {
		return nil, err
	}
	return m[claimID], nil
}

// AppealsOfClaims lists the filed appeals of many claims in one query,
// each list oldest first; every id maps to a list (empty when none).
func (r *Reader) AppealsOfClaims(ctx context.Context, claimIDs []string) (map[string][]Appeal, error) {
	out := make(map[string][]Appeal, len(claimIDs))
	valid := make([]string, 0, len(claimIDs))
	for _, id := range claimIDs {
		out[id] = []Appeal{}
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT `+appealColumns+` FROM appeals a
		WHERE a.claim_id = ANY($1::uuid[]) AND a.filed_at IS NOT NULL
		ORDER BY a.claim_id, a.filed_at, a.id`, valid)
	if err != nil {
		return nil, fmt.Errorf("appeals of %d claims: %w", len(valid), err)
	}
	defer rows.Close()
	// The map is keyed by the ids as asked; the database answers in
	// lower case.
	asked := make(map[string][]string, len(valid))
	for _, id := range valid {
		asked[lower(id)] = append(asked[lower(id)], id)
	}
	for rows.Next() {
		a, err := scanAppeal(rows)
		if err != nil {
			return nil, err
		}
		for _, id := range asked[a.ClaimID] {
			out[id] = append(out[id], a)
		}
	}
	return out, rows.Err()
}

// AppealCounts counts the OPEN appeals of a claim and the appeals the
// requester filed since a time (any claim), for the appeal limits.
func (r *Reader) AppealCounts(ctx context.Context, claimID, requesterKey string, since time.Time) (ofClaimOpen, ofRequesterSince int, err error) {
	if !isUUID(claimID) {
		claimID = "00000000-0000-0000-0000-000000000000"
	}
	if !isSHA256Hex(requesterKey) {
		requesterKey = "" // no appeal has it: the count is 0
	}
	err = r.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM appeals WHERE claim_id = $1::uuid AND status = 'OPEN' AND filed_at IS NOT NULL)::int,
			(SELECT count(*) FROM appeals WHERE requester_key = $2 AND filed_at >= $3)::int`,
		claimID, requesterKey, since).Scan(&ofClaimOpen, &ofRequesterSince)
	if err != nil {
		return 0, 0, fmt.Errorf("appeal counts: %w", err)
	}
	return ofClaimOpen, ofRequesterSince, nil
}

// PublishedClaim finds a claim of a COMPLETE investigation; ErrNotFound
// when there is none or id is not a UUID.
func (r *Reader) PublishedClaim(ctx context.Context, claimID string) (ClaimRef, error) {
	if !isUUID(claimID) {
		return ClaimRef{}, ErrNotFound
	}
	var c ClaimRef
	err := r.pool.QueryRow(ctx, `SELECT c.id::text, i.id::text, i.post_id::text, i.post_version_id::text,
			c.retracted_at IS NOT NULL, i.id = v.id IS TRUE
		FROM claims c
		JOIN investigations i ON i.id = c.investigation_id AND i.status = 'COMPLETE'
		LEFT JOIN LATERAL `+visibleInvestigationSQL("i.post_version_id")+` v ON true
		WHERE c.id = $1`, claimID).Scan(&c.ClaimID, &c.InvestigationID, &c.PostID, &c.PostVersionID, &c.Retracted, &c.Visible)
	if errors.Is(err, pgx.ErrNoRows) {
		return ClaimRef{}, ErrNotFound
	}
	if err != nil {
		return ClaimRef{}, fmt.Errorf("published claim %s: %w", claimID, err)
	}
	return c, nil
}

// lower maps an ASCII UUID to lower case, as the database renders it.
func lower(s string) string { return strings.ToLower(s) }

// isSHA256Hex reports whether s is a lower-case sha256 hex digest (how
// requester keys are stored).
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
