package serving

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// queueAttemptStarted moves the current series' investigation to PROCESSING.
func queueAttemptStarted(b *pgx.Batch, t time.Time, p *events.InvestigationAttemptStartedV1) {
	b.Queue(`UPDATE investigations SET status = 'PROCESSING', attempt = $3, updated_at = GREATEST(updated_at, $4)
		WHERE id = $1 AND attempt_series = $2 AND attempt < $3 AND status IN ('PENDING', 'PROCESSING')`,
		p.InvestigationID, p.Series, p.Attempt, t)
}

// queueAttemptFailed reclaims an investigation to PENDING while it waits
// for its next attempt; a failure without retry is followed by the
// investigation's failed event.
func queueAttemptFailed(b *pgx.Batch, t time.Time, p *events.InvestigationAttemptFailedV1) {
	if p.RetryAt == "" {
		return
	}
	b.Queue(`UPDATE investigations SET status = 'PENDING', attempt = GREATEST(attempt, $3), updated_at = GREATEST(updated_at, $4)
		WHERE id = $1 AND attempt_series = $2 AND status IN ('PENDING', 'PROCESSING')`,
		p.InvestigationID, p.Series, p.Attempt, t)
}

// queueInputSnapshotted records the provenance of what the investigation reads.
func queueInputSnapshotted(b *pgx.Batch, p *events.InvestigationInputSnapshottedV1) {
	b.Queue(`UPDATE investigations SET provenance = COALESCE(provenance, $2) WHERE id = $1`, p.InvestigationID, p.Provenance)
}

// queueClaimSubmitted adds an accepted submission to the live progress.
func queueClaimSubmitted(b *pgx.Batch, t time.Time, p *events.InvestigationClaimSubmittedV1) error {
	if p.Disposition != events.DispositionAccepted {
		return nil
	}
	sources, err := json.Marshal(p.Correction.Sources)
	if err != nil {
		return fmt.Errorf("submission sources: %w", err)
	}
	c := p.Correction
	b.Queue(`INSERT INTO investigation_progress_claims (submission_id, investigation_id, series, attempt, seq, text, context,
			summary, reasoning, sources, submitted_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 WHERE EXISTS (SELECT 1 FROM investigations WHERE id = $2)
		ON CONFLICT (submission_id) DO NOTHING`,
		p.SubmissionID, p.InvestigationID, p.Series, p.Attempt, p.Seq, c.Text, c.Context, c.Summary, c.Reasoning, sources, t)
	return nil
}

// queueClaimValidated records the validator's decision on a submission.
func queueClaimValidated(b *pgx.Batch, p *events.InvestigationClaimValidatedV1) {
	b.Queue(`UPDATE investigation_progress_claims SET outcome = $2 WHERE submission_id = $1 AND outcome IS NULL`,
		p.SubmissionID, p.Outcome)
}
