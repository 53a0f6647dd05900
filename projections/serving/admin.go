package serving

import (
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
	b.Queue(`INSERT INTO investigations (id, post_id, post_version_id, status, source, request_count, queued_at, updated_at)
		VALUES ($1, $2, $3, 'PENDING', $4, 1, $5, $5)
		ON CONFLICT (id) DO UPDATE SET
			request_count = investigations.request_count + 1,
			source = CASE WHEN EXCLUDED.queued_at < investigations.queued_at THEN EXCLUDED.source ELSE investigations.source END,
			queued_at = LEAST(investigations.queued_at, EXCLUDED.queued_at),
			updated_at = GREATEST(investigations.updated_at, EXCLUDED.updated_at)`,
		p.InvestigationID, p.PostID, p.PostVersionID, p.Source, t)
}
