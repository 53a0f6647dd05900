package serving

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

func queueAPIKeyAdded(b *pgx.Batch, t time.Time, p *events.APIKeyAddedV1) {
	b.Queue(`INSERT INTO instance_api_keys (key_id, key_sha256, label, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key_id) DO UPDATE SET created_at = LEAST(instance_api_keys.created_at, EXCLUDED.created_at)`,
		p.KeyID, p.KeySHA256, p.Label, t)
}

// queueAPIKeyRevoked latches revocation: a revoked key never authenticates again.
func queueAPIKeyRevoked(b *pgx.Batch, t time.Time, p *events.APIKeyRevokedV1) {
	b.Queue(`UPDATE instance_api_keys SET
			revoke_reason = CASE WHEN revoked_at IS NULL OR $2 < revoked_at THEN $3 ELSE revoke_reason END,
			revoked_at = LEAST(revoked_at, $2)
		WHERE key_id = $1`, p.KeyID, t, nilIfEmpty(p.Reason))
}

func queueIntegrityAnomaly(b *pgx.Batch, ev events.Event, p *events.PostIntegrityAnomalyRecordedV1) {
	b.Queue(`INSERT INTO integrity_anomalies (event_id, post_id, post_version_id, kind, field, observed_value, server_value, recorded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (event_id) DO NOTHING`,
		ev.ID, p.PostID, p.PostVersionID, p.Kind, p.Field, p.ObservedValue, p.ServerValue, ev.Time)
}

// queueInvestigationRequested creates the version's investigation on the
// first request; later requests only count.
func queueInvestigationRequested(b *pgx.Batch, t time.Time, p *events.InvestigationRequestedV1) {
	b.Queue(`INSERT INTO investigations (id, post_id, post_version_id, status, source, request_count, queued_at, updated_at,
			configuration_id, supersedes, experiment_id, arm)
		VALUES ($1, $2, $3, 'PENDING', $4, 1, $5, $5, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET
			-- the first request (log order in the investigation's
			-- partition) decided what the investigation re-does and
			-- which experiment chose it; a completion or failure applied
			-- before it created the row without them
			supersedes = COALESCE(investigations.supersedes, EXCLUDED.supersedes),
			experiment_id = COALESCE(investigations.experiment_id, EXCLUDED.experiment_id),
			arm = COALESCE(investigations.arm, EXCLUDED.arm),
			-- An explicit investigateNow on a FAILED investigation starts a
			-- new attempt series; nothing else moves a status backwards.
			status = CASE WHEN investigations.status = 'FAILED' AND EXCLUDED.source = 'INVESTIGATE_NOW'
				THEN 'PENDING' ELSE investigations.status END,
			attempt_series = investigations.attempt_series +
				CASE WHEN investigations.status = 'FAILED' AND EXCLUDED.source = 'INVESTIGATE_NOW' THEN 1 ELSE 0 END,
			failure_reason = CASE WHEN investigations.status = 'FAILED' AND EXCLUDED.source = 'INVESTIGATE_NOW'
				THEN NULL ELSE investigations.failure_reason END,
			attempt = CASE WHEN investigations.status = 'FAILED' AND EXCLUDED.source = 'INVESTIGATE_NOW'
				THEN 0 ELSE investigations.attempt END,
			request_count = investigations.request_count + 1,
			source = CASE WHEN EXCLUDED.queued_at < investigations.queued_at THEN EXCLUDED.source ELSE investigations.source END,
			queued_at = LEAST(investigations.queued_at, EXCLUDED.queued_at),
			updated_at = GREATEST(investigations.updated_at, EXCLUDED.updated_at)`,
		p.InvestigationID, p.PostID, p.PostVersionID, p.Source, t,
		p.ConfigurationID, nilIfEmpty(p.Supersedes), nilIfEmpty(p.ExperimentID), nilIfEmpty(p.Arm))
}

// queueInvestigationCompleted publishes the result and its claims. The
// request precedes it on the same partition, so the row exists; the upsert
// only guards against a log that lost the request.
func queueInvestigationCompleted(b *pgx.Batch, t time.Time, p *events.InvestigationCompletedV1) error {
	b.Queue(`INSERT INTO investigations (id, post_id, post_version_id, status, source, request_count, queued_at, updated_at,
			provenance, checked_at, prompt_version, provider, model, configuration_id)
		VALUES ($1, $2, $3, 'COMPLETE', 'UNKNOWN', 0, $4, $4, $5, $4, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET status = 'COMPLETE', provenance = EXCLUDED.provenance,
			checked_at = EXCLUDED.checked_at, prompt_version = EXCLUDED.prompt_version,
			provider = EXCLUDED.provider, model = EXCLUDED.model, failure_reason = NULL,
			updated_at = GREATEST(investigations.updated_at, EXCLUDED.updated_at)`,
		p.InvestigationID, p.PostID, p.PostVersionID, t, p.Provenance, p.PromptVersion, p.Provider, p.Model, p.ConfigurationID)
	b.Queue(`DELETE FROM claims WHERE investigation_id = $1`, p.InvestigationID)
	for i, c := range p.Claims {
		sources, err := json.Marshal(c.Sources)
		if err != nil {
			return fmt.Errorf("claim sources: %w", err)
		}
		// A retraction decided before this claim was applied (another
		// partition during a rebuild) is recorded as queueAppealDecided
		// would have: the earliest retracting decision.
		b.Queue(`INSERT INTO claims (id, investigation_id, ord, text, context, summary, reasoning, sources, created_at, submission_id,
				retracted_at, retracted_by_appeal, retraction_reason)
			SELECT $1::uuid, $2::uuid, $3::int, $4::text, $5::text, $6::text, $7::text, $8::jsonb, $9::timestamptz, $10::uuid,
				r.decided_at, r.id, r.decision_reason
			FROM (SELECT 1) one
			LEFT JOIN LATERAL (SELECT a.decided_at, a.id, a.decision_reason FROM appeals a
				WHERE a.claim_id = $1 AND a.status = 'RETRACTED'
				ORDER BY a.decided_at, a.id LIMIT 1) r ON true`,
			c.ID, p.InvestigationID, i, c.Text, c.Context, c.Summary, c.Reasoning, sources, t, nilIfEmpty(c.SubmissionID))
	}
	return nil
}

// queueInvestigationFailed ends the current attempt series; a COMPLETE
// investigation is never failed afterwards.
func queueInvestigationFailed(b *pgx.Batch, t time.Time, p *events.InvestigationFailedV1) {
	b.Queue(`INSERT INTO investigations (id, post_id, post_version_id, status, source, request_count, queued_at, updated_at,
			provenance, checked_at, failure_reason, configuration_id)
		VALUES ($1, $2, $3, 'FAILED', 'UNKNOWN', 0, $4, $4, $5, $4, $6, $8)
		ON CONFLICT (id) DO UPDATE SET
			status = CASE WHEN investigations.status = 'COMPLETE' THEN 'COMPLETE' ELSE 'FAILED' END,
			provenance = COALESCE(investigations.provenance, EXCLUDED.provenance),
			checked_at = CASE WHEN investigations.status = 'COMPLETE' THEN investigations.checked_at ELSE EXCLUDED.checked_at END,
			failure_reason = CASE WHEN investigations.status = 'COMPLETE' THEN NULL ELSE EXCLUDED.failure_reason END,
			updated_at = GREATEST(investigations.updated_at, EXCLUDED.updated_at)
		-- a failure of an earlier attempt series changes nothing
		WHERE $7 = 0 OR investigations.attempt_series <= $7`,
		p.InvestigationID, p.PostID, p.PostVersionID, t, p.Provenance, p.Reason, p.Series, p.ConfigurationID)
}
