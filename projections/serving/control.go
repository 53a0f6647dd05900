package serving

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// Control events (configurations, promotions, experiments) share one Kafka
// key, so they apply in log order; appeals apply in any order relative to
// the claims they name (see the 0009 migration).

// isControlOrAppealType reports the control and appeal event types the
// serving model folds.
func isControlOrAppealType(t string) bool {
	switch t {
	case events.TypeConfigurationDeclaredV1, events.TypeConfigurationPromotedV1,
		events.TypeExperimentStartedV1, events.TypeExperimentStoppedV1,
		events.TypeAppealFiledV1, events.TypeAppealDecidedV1:
		return true
	}
	return false
}

// queueControlOrAppeal queues the statements of one control or appeal event.
func queueControlOrAppeal(b *pgx.Batch, ev events.Event) error {
	switch p := ev.Payload.(type) {
	case *events.ConfigurationDeclaredV1:
		return queueConfigurationDeclared(b, ev.Time, p)
	case *events.ConfigurationPromotedV1:
		queueConfigurationPromoted(b, ev, p)
	case *events.ExperimentStartedV1:
		queueExperimentStarted(b, ev.Time, p)
	case *events.ExperimentStoppedV1:
		queueExperimentStopped(b, ev.Time, p)
	case *events.AppealFiledV1:
		return queueAppealFiled(b, ev.Time, p)
	case *events.AppealDecidedV1:
		queueAppealDecided(b, ev.Time, p)
	default:
		return fmt.Errorf("serving: unexpected control payload %T", ev.Payload)
	}
	return nil
}

// queueConfigurationDeclared makes a configuration known. The first
// declaration of a name wins: a later one under the same name and another
// id changes nothing, and a repeated one changes nothing either. A row a
// promotion created first (no name yet) receives the declaration.
func queueConfigurationDeclared(b *pgx.Batch, t time.Time, p *events.ConfigurationDeclaredV1) error {
	spec, err := json.Marshal(p.Configuration)
	if err != nil {
		return fmt.Errorf("configuration spec: %w", err)
	}
	b.Queue(`INSERT INTO analysis_configurations (id, name, spec, operator, reason, declared_at)
		SELECT $1::text, $2::text, $3::jsonb, $4::text, $5::text, $6::timestamptz
		WHERE $1::text <> '' AND NOT EXISTS (SELECT 1 FROM analysis_configurations WHERE name = $2::text AND id <> $1::text)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, spec = EXCLUDED.spec, operator = EXCLUDED.operator,
			reason = EXCLUDED.reason, declared_at = EXCLUDED.declared_at
		WHERE analysis_configurations.name IS NULL`,
		p.ConfigurationID, p.Configuration.Name, spec, p.Operator, p.Reason, t)
	return nil
}

// queueConfigurationPromoted gives the configuration the next promotion
// rank (log order) and records the promotion. A promotion of a
// configuration not declared yet creates its row, which the declaration
// completes.
func queueConfigurationPromoted(b *pgx.Batch, ev events.Event, p *events.ConfigurationPromotedV1) {
	b.Queue(`WITH next AS (
			SELECT COALESCE(max(promotion_rank), 0) + 1 AS rank FROM analysis_configurations
			WHERE NOT EXISTS (SELECT 1 FROM configuration_promotions WHERE event_id = $1::uuid)
		), promoted AS (
			INSERT INTO analysis_configurations (id, promotion_rank) SELECT $2::text, rank FROM next
			ON CONFLICT (id) DO UPDATE SET promotion_rank = EXCLUDED.promotion_rank
			RETURNING promotion_rank
		)
		, visible AS (
			INSERT INTO configuration_visibility (configuration_id, experiment_id, rank)
			SELECT $2::text, NULL, promotion_rank FROM promoted
			ON CONFLICT (configuration_id, COALESCE(experiment_id, '00000000-0000-0000-0000-000000000000'::uuid))
			DO UPDATE SET rank = EXCLUDED.rank
		)
		INSERT INTO configuration_promotions (event_id, configuration_id, previous_configuration_id, rollback,
			operator, reason, promoted_at, rank)
		SELECT $1::uuid, $2::text, $3::text, $4::boolean, $5::text, $6::text, $7::timestamptz, promotion_rank FROM promoted`,
		ev.ID, p.ConfigurationID, p.PreviousConfigurationID, p.Rollback, p.Operator, p.Reason, ev.Time)
}

// queueExperimentStarted starts an experiment unless one runs already (or
// this one ran before: an experiment's id derives from its name, and a
// name is used once).
func queueExperimentStarted(b *pgx.Batch, t time.Time, p *events.ExperimentStartedV1) {
	b.Queue(`WITH started AS (
			INSERT INTO experiments (id, name, control_configuration_id, candidate_configuration_id, candidate_share_bp,
				operator, reason, started_at)
			SELECT $1::uuid, $2::text, $3::text, $4::text, $5::int, $6::text, $7::text, $8::timestamptz
			WHERE NOT EXISTS (SELECT 1 FROM experiments WHERE stopped_at IS NULL)
			ON CONFLICT (id) DO NOTHING
			RETURNING id, control_configuration_id, candidate_configuration_id
		)
		INSERT INTO configuration_visibility (configuration_id, experiment_id, rank)
		SELECT arm.configuration_id, started.id, $9::bigint
		FROM started CROSS JOIN LATERAL (VALUES (started.control_configuration_id), (started.candidate_configuration_id)) AS arm(configuration_id)
		ON CONFLICT DO NOTHING`,
		p.ExperimentID, p.Name, p.ControlConfigurationID, p.CandidateConfigurationID, p.CandidateShareBP,
		p.Operator, p.Reason, t, int64(experimentArmRank))
}

// queueExperimentStopped stops a running experiment; a stop of an unknown
// or stopped experiment changes nothing.
func queueExperimentStopped(b *pgx.Batch, t time.Time, p *events.ExperimentStoppedV1) {
	b.Queue(`WITH stopped AS (
			UPDATE experiments SET stopped_at = $2, stop_operator = $3, stop_reason = $4
			WHERE id = $1 AND stopped_at IS NULL
			RETURNING id
		)
		DELETE FROM configuration_visibility WHERE experiment_id IN (SELECT id FROM stopped)`,
		p.ExperimentID, t, p.Operator, p.Reason)
}

// queueAppealFiled records an appeal. A repeat (the same appeal id: the
// same requester, claim, reason and URLs) changes nothing; a decision
// applied before the filing keeps its status.
func queueAppealFiled(b *pgx.Batch, t time.Time, p *events.AppealFiledV1) error {
	urls, err := json.Marshal(emptyIfNil(p.URLs))
	if err != nil {
		return fmt.Errorf("appeal urls: %w", err)
	}
	b.Queue(`INSERT INTO appeals (id, claim_id, investigation_id, post_version_id, role, reason, urls, requester_key,
			filed_at, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'OPEN')
		ON CONFLICT (id) DO UPDATE SET post_version_id = EXCLUDED.post_version_id, role = EXCLUDED.role,
			reason = EXCLUDED.reason, urls = EXCLUDED.urls, requester_key = EXCLUDED.requester_key,
			filed_at = LEAST(appeals.filed_at, EXCLUDED.filed_at)`,
		p.AppealID, p.ClaimID, p.InvestigationID, p.PostVersionID, p.Role, p.Reason, urls, p.RequesterKey, t)
	return nil
}

// queueAppealDecided records the first decision of an appeal (its events
// share a key, so the first in the log) and, when it retracts, marks the
// claim retracted unless an earlier decision (time, then appeal id)
// retracted it already. A claim applied later takes the retraction from
// the appeals (queueInvestigationCompleted), so any order ends the same.
func queueAppealDecided(b *pgx.Batch, t time.Time, p *events.AppealDecidedV1) {
	b.Queue(`INSERT INTO appeals (id, claim_id, investigation_id, status, decided_at, decision_reason, policy_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, decided_at = EXCLUDED.decided_at,
			decision_reason = EXCLUDED.decision_reason, policy_version = EXCLUDED.policy_version
		WHERE appeals.decided_at IS NULL`,
		p.AppealID, p.ClaimID, p.InvestigationID, p.Outcome, t, p.Reason, p.PolicyVersion)
	if p.Outcome != events.AppealRetracted {
		return
	}
	b.Queue(`UPDATE claims c SET retracted_at = a.decided_at, retracted_by_appeal = a.id, retraction_reason = a.decision_reason
		FROM appeals a
		WHERE a.id = $1 AND a.status = 'RETRACTED' AND c.id = a.claim_id
			AND (c.retracted_at IS NULL OR (c.retracted_at, c.retracted_by_appeal) > (a.decided_at, a.id))`, p.AppealID)
}
