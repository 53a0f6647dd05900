// Package runstate folds the investigations topic into the run state the
// investigator and validator workers act on: which investigations wait for
// an attempt (and since when), which attempt is current, the input snapshot,
// the claims submitted and what the validator decided. Each worker group
// keeps its own copy in its own schema, written with its Kafka position in
// one transaction (pgproj.Projector), so the state is exactly the log's.
//
// Workers never trust a possibly stale copy: before acting on a run they
// wait until the state has caught up with the end of the log (CatchUp),
// then re-read it. Leases keep two workers off the same unit of work.
//
// The run state is a projection in all but name: a read model rebuilt from
// the log by the same exactly-once machinery as those under projections/,
// read by nobody but the stage it belongs to. It lives here, beside the
// leases and the executor, because it is the stages' working memory, not a
// view the API or analysts query. `errata replay` does not rebuild it: an
// empty schema folds the log from offset 0 when its stage starts.
package runstate

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the run-state schema's migrations.
func Migrations() fs.FS {
	return migrate.Dir(migrations, "migrations")
}

// Run statuses only the worker sees. A run is otherwise
// events.StatusPending, StatusRunning, StatusComplete or StatusFailed.
const (
	// StatusRetryWait: an attempt failed retryably; the run is due again
	// at due_at (the public status is PENDING).
	StatusRetryWait = "RETRY_WAIT"
	// StatusFinishing: stage one finished; the validator is judging its
	// claims (the public status is PROCESSING).
	StatusFinishing = "FINISHING"
)

// Applier is the fold (pgproj.Applier).
type Applier struct{}

// Handles implements pgproj.Applier.
func (Applier) Handles(t string) bool {
	switch t {
	case events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1,
		events.TypeInvestigationInputSnapshottedV1, events.TypeInvestigationAttemptStartedV1,
		events.TypeInvestigationClaimSubmittedV1, events.TypeInvestigationClaimRetainedV1,
		events.TypeInvestigationClaimValidatedV1, events.TypeInvestigationClaimAssessedV1,
		events.TypeInvestigationExchangeRecordedV1, events.TypeInvestigationAttemptFailedV1,
		events.TypeInvestigationStageOneFinishedV1, events.TypeInvestigationCompletedV1,
		events.TypeInvestigationFailedV1:
		return true
	}
	return false
}

// Apply implements pgproj.Applier. Events of one investigation arrive in
// log order (one key, one partition); every statement checks that the event
// belongs to the current series and attempt, so a late or repeated event of
// an abandoned attempt changes nothing.
func (Applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	return ApplyEach(ctx, tx, evs, "runstate", apply)
}

// ApplyEach applies evs in order with apply, in the projector's
// transaction tx: the body of a run state's pgproj.Applier (this package's
// and the analyst's). The error names the fold (name), the event's type
// and id.
func ApplyEach(ctx context.Context, tx pgx.Tx, evs []events.Event, name string,
	apply func(ctx context.Context, tx pgx.Tx, ev events.Event) error) error {
	for _, ev := range evs {
		if err := apply(ctx, tx, ev); err != nil {
			return fmt.Errorf("%s %s %s: %w", name, ev.Payload.EventType(), ev.ID, err)
		}
	}
	return nil
}

func apply(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	t := ev.Time
	var err error
	switch p := ev.Payload.(type) {
	case *events.InvestigationRequestedV1:
		// The first request creates the run with its configuration; a later
		// one names the same configuration (the id derives from it) and
		// only starts a new series after a failure.
		var spec []byte
		if p.Configuration != nil {
			if spec, err = json.Marshal(p.Configuration); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO runs (investigation_id, post_id, post_version_id, status, series, due_at, updated_at,
				configuration_id, configuration, supersedes, experiment_id, arm)
			VALUES ($1, $2, $3, 'PENDING', 1, $4, $4, $6, $7, NULLIF($8, '')::uuid, NULLIF($9, '')::uuid, NULLIF($10, ''))
			ON CONFLICT (investigation_id) DO UPDATE SET
				status = 'PENDING', series = runs.series + 1, attempt = 0, due_at = $4,
				user_key = false, last_failure = NULL, updated_at = $4
			WHERE runs.status = 'FAILED' AND $5 = 'INVESTIGATE_NOW'`,
			p.InvestigationID, p.PostID, p.PostVersionID, t, p.Source,
			p.ConfigurationID, spec, p.Supersedes, p.ExperimentID, p.Arm)
	case *events.InvestigationKeyAttachedV1:
		_, err = tx.Exec(ctx, `UPDATE runs SET user_key = true, updated_at = $2
			WHERE investigation_id = $1 AND status = 'PENDING'`, p.InvestigationID, t)
	case *events.InvestigationInputSnapshottedV1:
		payload, merr := json.Marshal(p)
		if merr != nil {
			return merr
		}
		if _, err = tx.Exec(ctx, `INSERT INTO inputs (investigation_id, event_id, payload) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, p.InvestigationID, ev.ID, payload); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET input_event_id = (SELECT event_id FROM inputs WHERE investigation_id = $1)
			WHERE investigation_id = $1`, p.InvestigationID)
	case *events.InvestigationAttemptStartedV1:
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'RUNNING', attempt = $3, prompt = $5, provider = $6, model = $7, updated_at = $4
			WHERE investigation_id = $1 AND series = $2 AND attempt < $3 AND status IN ('PENDING', 'RETRY_WAIT', 'RUNNING')`,
			p.InvestigationID, p.Series, p.Attempt, t, p.Prompt.Name+"@"+p.Prompt.Version, p.Provider, p.Model)
	case *events.InvestigationClaimSubmittedV1:
		if p.Disposition != events.DispositionAccepted {
			return nil
		}
		correction, merr := json.Marshal(p.Correction)
		if merr != nil {
			return merr
		}
		_, err = tx.Exec(ctx, `INSERT INTO submissions (submission_id, investigation_id, series, attempt, seq, correction, submitted_at, fetches_before)
			SELECT $1, $2, $3, $4, $5, $6, $7,
				(SELECT count(*) FROM fetches WHERE investigation_id = $2 AND series = $3 AND attempt = $4)
			FROM runs
			WHERE investigation_id = $2 AND series = $3 AND attempt = $4 AND status = 'RUNNING'
			ON CONFLICT DO NOTHING`, p.SubmissionID, p.InvestigationID, p.Series, p.Attempt, p.Seq, correction, t)
	case *events.InvestigationClaimRetainedV1:
		if p.Disposition != events.DispositionAccepted {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO retains (investigation_id, series, attempt, prior_claim_id, retained_at, ord)
			SELECT $1, $2, $3, $4, $5,
				(SELECT count(*) FROM retains WHERE investigation_id = $1 AND series = $2 AND attempt = $3)
			FROM runs WHERE investigation_id = $1 AND series = $2 AND attempt = $3 AND status = 'RUNNING'
			ON CONFLICT DO NOTHING`, p.InvestigationID, p.Series, p.Attempt, p.PriorClaimID, t)
	case *events.InvestigationClaimValidatedV1:
		_, err = tx.Exec(ctx, `UPDATE submissions SET outcome = $2, reason = $3
			WHERE submission_id = $1 AND outcome IS NULL`, p.SubmissionID, p.Outcome, p.Reason)
	case *events.InvestigationClaimAssessedV1:
		// The first assessment wins: one that a retried assessor appended
		// after a crash changes nothing.
		_, err = tx.Exec(ctx, `UPDATE submissions SET assessed = true, published = $2, assess_reason = $3
			WHERE submission_id = $1 AND NOT assessed`, p.SubmissionID, p.Published, p.Reason)
	case *events.InvestigationExchangeRecordedV1:
		err = applyExchange(ctx, tx, p, t)
	case *events.InvestigationStageOneFinishedV1:
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'FINISHING', updated_at = $4
			WHERE investigation_id = $1 AND series = $2 AND attempt = $3 AND status = 'RUNNING'`,
			p.InvestigationID, p.Series, p.Attempt, t)
	case *events.InvestigationAttemptFailedV1:
		// An attempt can fail before it started (no credentials, no
		// input), so the failure also advances the attempt number.
		if p.RetryAt == "" {
			_, err = tx.Exec(ctx, `UPDATE runs SET attempt = GREATEST(attempt, $3), last_failure = $4, updated_at = $5
				WHERE investigation_id = $1 AND series = $2 AND attempt <= $3 AND status NOT IN ('COMPLETE', 'FAILED')`,
				p.InvestigationID, p.Series, p.Attempt, p.Kind+": "+p.Message, t)
			return err
		}
		retryAt, perr := time.Parse(time.RFC3339Nano, p.RetryAt)
		if perr != nil {
			return perr
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'RETRY_WAIT', attempt = GREATEST(attempt, $3), due_at = $4,
				last_failure = $5, updated_at = $6
			WHERE investigation_id = $1 AND series = $2 AND attempt <= $3 AND status NOT IN ('COMPLETE', 'FAILED')
				AND NOT (status = 'RETRY_WAIT' AND attempt = $3)`,
			p.InvestigationID, p.Series, p.Attempt, retryAt, p.Kind+": "+p.Message, t)
	case *events.InvestigationCompletedV1:
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'COMPLETE', updated_at = $2 WHERE investigation_id = $1`,
			p.InvestigationID, t)
	case *events.InvestigationFailedV1:
		_, err = tx.Exec(ctx, `UPDATE runs SET status = 'FAILED', last_failure = $3, updated_at = $2
			WHERE investigation_id = $1 AND status <> 'COMPLETE' AND ($4 = 0 OR series = $4)`,
			p.InvestigationID, t, p.Reason, p.Series)
	default:
		return fmt.Errorf("unexpected payload %T", ev.Payload)
	}
	return err
}
