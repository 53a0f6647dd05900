package appeals

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the run state's migrations.
func Migrations() fs.FS {
	return migrate.Dir(migrations, "migrations")
}

// Run statuses only the worker sees.
const (
	StatusPending   = "PENDING"
	StatusRunning   = "RUNNING"
	StatusRetryWait = "RETRY_WAIT"
	StatusDecided   = "DECIDED"
	StatusFailed    = "FAILED"
)

// Applier folds the investigations topic into the appeals' run state
// (pgproj.Applier): the published claims and their policies, and every
// appeal's review.
type Applier struct{}

// Handles implements pgproj.Applier.
func (Applier) Handles(t string) bool {
	switch t {
	case events.TypeInvestigationCompletedV1, events.TypeInvestigationClaimAssessedV1,
		events.TypeAppealFiledV1, events.TypeAppealReviewStartedV1, events.TypeAppealEvidenceAssessedV1,
		events.TypeAppealReviewFailedV1, events.TypeAppealDecidedV1:
		return true
	}
	return false
}

// Apply implements pgproj.Applier. An appeal's events arrive in log order
// (one key, one partition). Every statement after the filing checks the
// attempt, so a late event of an abandoned attempt (a worker that lost its
// lease and kept going) changes nothing.
func (Applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	return runstate.ApplyEach(ctx, tx, evs, "appeals state", apply)
}

func apply(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	t := ev.Time
	var err error
	switch p := ev.Payload.(type) {
	case *events.InvestigationCompletedV1:
		for _, c := range p.Claims {
			if _, err = tx.Exec(ctx, `INSERT INTO claims (claim_id, investigation_id, text, context, submission_id)
				VALUES ($1, $2, $3, $4, NULLIF($5, '')::uuid) ON CONFLICT (claim_id) DO NOTHING`,
				c.ID, p.InvestigationID, events.Clean(c.Text), events.Clean(c.Context), c.SubmissionID); err != nil {
				return err
			}
		}
	case *events.InvestigationClaimAssessedV1:
		srcs, merr := json.Marshal(p.Sources)
		if merr != nil {
			return merr
		}
		_, err = tx.Exec(ctx, `INSERT INTO assessments (submission_id, policy_version, sources) VALUES ($1, $2, $3)
			ON CONFLICT (submission_id) DO NOTHING`, p.SubmissionID, events.Clean(p.PolicyVersion), events.Clean(string(srcs)))
	case *events.AppealFiledV1:
		// The first filing of an id wins; a repeat changes nothing.
		filed, merr := json.Marshal(p)
		if merr != nil {
			return merr
		}
		_, err = tx.Exec(ctx, `INSERT INTO appeals (appeal_id, claim_id, filed, status, due_at, filed_at, updated_at)
			VALUES ($1, $2, $3, 'PENDING', $4, $4, $4) ON CONFLICT (appeal_id) DO NOTHING`,
			p.AppealID, p.ClaimID, events.Clean(string(filed)), t)
	case *events.AppealReviewStartedV1:
		_, err = tx.Exec(ctx, `UPDATE appeals SET status = 'RUNNING', attempt = $2, assessed = NULL, updated_at = $3
			WHERE appeal_id = $1 AND attempt < $2 AND status IN ('PENDING', 'RETRY_WAIT', 'RUNNING')`,
			p.AppealID, p.Attempt, t)
	case *events.AppealEvidenceAssessedV1:
		as, merr := json.Marshal(p)
		if merr != nil {
			return merr
		}
		_, err = tx.Exec(ctx, `UPDATE appeals SET assessed = $3, updated_at = $4
			WHERE appeal_id = $1 AND attempt = $2 AND status = 'RUNNING'`, p.AppealID, p.Attempt, events.Clean(string(as)), t)
	case *events.AppealReviewFailedV1:
		status, due := StatusFailed, t
		if p.Retryable {
			status = StatusRetryWait
			if p.RetryAt != "" {
				if due, err = time.Parse(time.RFC3339Nano, p.RetryAt); err != nil {
					return err
				}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE appeals SET status = $3, attempt = GREATEST(attempt, $2), due_at = $4,
				assessed = NULL, last_failure = $5, updated_at = $6
			WHERE appeal_id = $1 AND attempt <= $2 AND status NOT IN ('DECIDED', 'FAILED')
				AND NOT (status = 'RETRY_WAIT' AND attempt = $2)`,
			p.AppealID, p.Attempt, status, due, events.Clean(p.Reason), t)
	case *events.AppealDecidedV1:
		// The first decision is the appeal's; nothing runs after it.
		_, err = tx.Exec(ctx, `UPDATE appeals SET status = 'DECIDED', updated_at = $2 WHERE appeal_id = $1`, p.AppealID, t)
	default:
		return fmt.Errorf("unexpected payload %T", ev.Payload)
	}
	return err
}

// ErrNotFound means the run state has no such appeal or claim.
var ErrNotFound = errors.New("appeals: not found")

// Run is an appeal's run state.
type Run struct {
	AppealID string
	Filed    events.AppealFiledV1
	Status   string
	// Attempt is the last attempt started or failed (0: none yet).
	Attempt int
	DueAt   time.Time
	// Assessed is the current attempt's assessment, once it is in the log.
	Assessed    *events.AppealEvidenceAssessedV1
	LastFailure string
}

// Ref is the run's current attempt.
func (r Run) Ref() events.AppealRef {
	return events.AppealRef{AppealID: r.AppealID, Attempt: r.Attempt}
}

// Claim is a published claim as a review reads it.
type Claim struct {
	ID, InvestigationID, Text, Context string
	// PolicyVersion is the policy its assessment recorded ("" when none:
	// a claim published before assessments, or retained from a prior
	// investigation).
	PolicyVersion string
	// Sources are the sources that assessment read.
	Sources []events.AssessedSourceV1
}

// Store reads the run state and coordinates workers through leases.
type Store struct {
	pool   *pgxpool.Pool
	Leases *runstate.Store
}

// Appeal reads one appeal.
func (s *Store) Appeal(ctx context.Context, id string) (Run, error) {
	var r Run
	var filed string
	var assessed, failure *string
	err := s.pool.QueryRow(ctx, `SELECT appeal_id::text, filed, status, attempt, due_at, assessed, last_failure
		FROM appeals WHERE appeal_id = $1`, id).Scan(&r.AppealID, &filed, &r.Status, &r.Attempt, &r.DueAt, &assessed, &failure)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("appeal %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(filed), &r.Filed); err != nil {
		return Run{}, fmt.Errorf("appeal %s filing: %w", id, err)
	}
	if assessed != nil {
		r.Assessed = &events.AppealEvidenceAssessedV1{}
		if err := json.Unmarshal([]byte(*assessed), r.Assessed); err != nil {
			return Run{}, fmt.Errorf("appeal %s assessment: %w", id, err)
		}
	}
	if failure != nil {
		r.LastFailure = *failure
	}
	return r, nil
}

// Claim reads a published claim and the policy it was assessed by.
func (s *Store) Claim(ctx context.Context, id string) (Claim, error) {
	var c Claim
	var policy, sources *string
	err := s.pool.QueryRow(ctx, `SELECT c.claim_id::text, c.investigation_id::text, c.text, c.context, a.policy_version,
			a.sources
		FROM claims c LEFT JOIN assessments a ON a.submission_id = c.submission_id WHERE c.claim_id = $1`, id).
		Scan(&c.ID, &c.InvestigationID, &c.Text, &c.Context, &policy, &sources)
	if errors.Is(err, pgx.ErrNoRows) {
		return Claim{}, ErrNotFound
	}
	if err != nil {
		return Claim{}, fmt.Errorf("claim %s: %w", id, err)
	}
	if policy != nil {
		c.PolicyVersion = *policy
	}
	if sources != nil {
		if err := json.Unmarshal([]byte(*sources), &c.Sources); err != nil {
			return Claim{}, fmt.Errorf("claim %s sources: %w", id, err)
		}
	}
	return c, nil
}

// WorkKind is the kind of every unit of appeal work: one appeal, whose
// lease covers all of its review.
const WorkKind = "appeal"

// Work lists up to limit appeals that are due at now and not leased: those
// waiting for an attempt, and those RUNNING without a live lease.
func (s *Store) Work(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return runstate.DueRuns(ctx, s.pool, "appeals", "appeal_id", WorkKind, now, limit)
}

// OpenState opens the appeals' run state: a runstate group on the
// investigations topic with this package's fold and schema. cfg names the
// group. Run the group's Runner; Close it when done.
func OpenState(ctx context.Context, cfg runstate.GroupConfig, log *slog.Logger) (*runstate.Group, *Store, error) {
	cfg.Topic, cfg.Applier, cfg.Migrations = events.TopicInvestigations, Applier{}, Migrations()
	g, err := runstate.OpenGroup(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	return g, &Store{pool: g.Pool, Leases: g.Store}, nil
}
