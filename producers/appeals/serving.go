package appeals

import (
	"context"
	"errors"
	"time"

	"github.com/errata-dev/errata/projections/serving"
)

// ServingReader reads claims and appeals from the serving projection: the
// Reader filing needs and the reads of appeal.get and appeal.ofClaim.
type ServingReader struct{ R *serving.Reader }

// PublishedClaim implements Reader.
func (s ServingReader) PublishedClaim(ctx context.Context, claimID string) (Claim, error) {
	c, err := s.R.PublishedClaim(ctx, claimID)
	if errors.Is(err, serving.ErrNotFound) {
		return Claim{}, ErrNotFound
	}
	if err != nil {
		return Claim{}, err
	}
	return Claim{ClaimID: c.ClaimID, InvestigationID: c.InvestigationID, PostID: c.PostID, PostVersionID: c.PostVersionID,
		Retracted: c.Retracted, Visible: c.Visible}, nil
}

// Appeal implements Reader.
func (s ServingReader) Appeal(ctx context.Context, id string) (Appeal, error) {
	a, err := s.R.Appeal(ctx, id)
	if errors.Is(err, serving.ErrNotFound) {
		return Appeal{}, ErrNotFound
	}
	if err != nil {
		return Appeal{}, err
	}
	return appealOf(a), nil
}

// AppealsOfClaim lists a claim's appeals.
func (s ServingReader) AppealsOfClaim(ctx context.Context, claimID string) ([]Appeal, error) {
	as, err := s.R.AppealsOfClaim(ctx, claimID)
	if err != nil {
		return nil, err
	}
	out := make([]Appeal, len(as))
	for i, a := range as {
		out[i] = appealOf(a)
	}
	return out, nil
}

// AppealCounts implements Reader.
func (s ServingReader) AppealCounts(ctx context.Context, claimID, requesterKey string, since time.Time) (int, int, error) {
	return s.R.AppealCounts(ctx, claimID, requesterKey, since)
}

func appealOf(a serving.Appeal) Appeal {
	return Appeal{ID: a.ID, ClaimID: a.ClaimID, InvestigationID: a.InvestigationID, PostVersionID: a.PostVersionID,
		Role: a.Role, Reason: a.Reason, URLs: a.URLs, Status: a.Status, FiledAt: a.FiledAt, DecidedAt: a.DecidedAt,
		DecisionReason: a.DecisionReason, PolicyVersion: a.PolicyVersion}
}
