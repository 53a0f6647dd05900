package runstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/pgproj"
)

// ErrNotFound means there is no such run, input or submission.
var ErrNotFound = errors.New("runstate: not found")

// Store reads the run state of one worker group and coordinates its
// workers through leases.
type Store struct {
	pool      querier
	projector string
	topic     string
	admin     *kadm.Client
	watermark *pgproj.Watermark
}

// querier is what a Store reads and leases through: the group's pool, or
// a test's transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// NewStore returns a store over pool (search_path: the group's schema)
// whose state is written by the projector named projector from topic
// (the full topic name of events.TopicInvestigations). admin lists the
// topic's end offsets for CatchUp.
func NewStore(pool *pgxpool.Pool, projector, topic string, admin *kadm.Client) *Store {
	return &Store{pool: pool, projector: projector, topic: topic, admin: admin,
		watermark: pgproj.NewWatermark(pool, projector)}
}

// Run is an investigation's run state.
type Run struct {
	InvestigationID string
	PostID          string
	PostVersionID   string
	Status          string
	Series          int
	Attempt         int
	DueAt           time.Time
	InputEventID    string
	UserKey         bool
	LastFailure     string
	// Prompt (name@version), Provider and Model of the current attempt.
	Prompt, Provider, Model string
	// ConfigurationID is the analysis configuration the run's first request
	// named ("": the default, the worker's own settings); Configuration its
	// spec (nil for the default).
	ConfigurationID string
	Configuration   *events.AnalysisConfigurationV1
	// Supersedes is the investigation this one re-does; ExperimentID and
	// Arm the experiment arm that chose the configuration ("" when none).
	Supersedes, ExperimentID, Arm string
}

// Ref is the run's current attempt.
func (r Run) Ref() events.AttemptRef {
	return events.AttemptRef{InvestigationID: r.InvestigationID, Series: r.Series, Attempt: r.Attempt}
}

// Run reads one run.
func (s *Store) Run(ctx context.Context, investigationID string) (Run, error) {
	var r Run
	var input, failure *string
	var spec []byte
	err := s.pool.QueryRow(ctx, `SELECT investigation_id::text, post_id::text, post_version_id::text, status, series,
			attempt, due_at, input_event_id::text, user_key, last_failure, COALESCE(prompt, ''), COALESCE(provider, ''), COALESCE(model, ''),
			configuration_id, configuration, COALESCE(supersedes::text, ''), COALESCE(experiment_id::text, ''), COALESCE(arm, '')
		FROM runs WHERE investigation_id = $1`, investigationID).Scan(&r.InvestigationID, &r.PostID, &r.PostVersionID,
		&r.Status, &r.Series, &r.Attempt, &r.DueAt, &input, &r.UserKey, &failure, &r.Prompt, &r.Provider, &r.Model,
		&r.ConfigurationID, &spec, &r.Supersedes, &r.ExperimentID, &r.Arm)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", investigationID, err)
	}
	if input != nil {
		r.InputEventID = *input
	}
	if failure != nil {
		r.LastFailure = *failure
	}
	if spec != nil {
		r.Configuration = &events.AnalysisConfigurationV1{}
		if err := json.Unmarshal(spec, r.Configuration); err != nil {
			return Run{}, fmt.Errorf("run %s configuration: %w", investigationID, err)
		}
	}
	return r, nil
}

// Input reads the input snapshot of an investigation and its event id.
func (s *Store) Input(ctx context.Context, investigationID string) (events.InvestigationInputSnapshottedV1, string, error) {
	var payload []byte
	var eventID string
	err := s.pool.QueryRow(ctx, `SELECT event_id::text, payload FROM inputs WHERE investigation_id = $1`,
		investigationID).Scan(&eventID, &payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return events.InvestigationInputSnapshottedV1{}, "", ErrNotFound
	}
	if err != nil {
		return events.InvestigationInputSnapshottedV1{}, "", fmt.Errorf("input %s: %w", investigationID, err)
	}
	var in events.InvestigationInputSnapshottedV1
	if err := json.Unmarshal(payload, &in); err != nil {
		return in, "", fmt.Errorf("input %s: %w", investigationID, err)
	}
	return in, eventID, nil
}

// Submission is an accepted claim submission.
type Submission struct {
	ID         string
	Ref        events.AttemptRef
	Seq        int
	Correction events.CorrectionV1
	// Outcome is empty until the validator decided.
	Outcome string
	Reason  string
	// Assessed says the evidence engine judged the submission (the first
	// claim_assessed event); Published and AssessReason are its decision.
	Assessed     bool
	Published    bool
	AssessReason string
	// FetchesBefore counts the attempt's fetch_url results folded before
	// the submission: the ones its assessment reads (Fetches).
	FetchesBefore int
	// ValidatorCitations are the sources the validator's answer cited.
	ValidatorCitations []events.SourceV1
	// AssessFailures counts the assessor's failed provider exchanges.
	AssessFailures int
}

// Submission reads one submission.
func (s *Store) Submission(ctx context.Context, id string) (Submission, error) {
	rows, err := s.pool.Query(ctx, submissionSelect+` WHERE submission_id = $1`, id)
	if err != nil {
		return Submission{}, err
	}
	subs, err := scanSubmissions(rows)
	if err != nil {
		return Submission{}, err
	}
	if len(subs) == 0 {
		return Submission{}, ErrNotFound
	}
	return subs[0], nil
}

// Submissions lists the accepted submissions of an attempt in order.
func (s *Store) Submissions(ctx context.Context, ref events.AttemptRef) ([]Submission, error) {
	rows, err := s.pool.Query(ctx, submissionSelect+` WHERE investigation_id = $1 AND series = $2 AND attempt = $3 ORDER BY seq`,
		ref.InvestigationID, ref.Series, ref.Attempt)
	if err != nil {
		return nil, err
	}
	return scanSubmissions(rows)
}

const submissionSelect = `SELECT submission_id::text, investigation_id::text, series, attempt, seq, correction,
	COALESCE(outcome, ''), COALESCE(reason, ''), assessed, COALESCE(published, false), COALESCE(assess_reason, ''),
	fetches_before, validator_citations, assess_failures FROM submissions`

func scanSubmissions(rows pgx.Rows) ([]Submission, error) {
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var sub Submission
		var correction, cited []byte
		if err := rows.Scan(&sub.ID, &sub.Ref.InvestigationID, &sub.Ref.Series, &sub.Ref.Attempt, &sub.Seq,
			&correction, &sub.Outcome, &sub.Reason, &sub.Assessed, &sub.Published, &sub.AssessReason,
			&sub.FetchesBefore, &cited, &sub.AssessFailures); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(correction, &sub.Correction); err != nil {
			return nil, fmt.Errorf("submission %s: %w", sub.ID, err)
		}
		if err := json.Unmarshal(cited, &sub.ValidatorCitations); err != nil {
			return nil, fmt.Errorf("submission %s citations: %w", sub.ID, err)
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// Retained lists the prior claim ids an attempt retained, in order.
func (s *Store) Retained(ctx context.Context, ref events.AttemptRef) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT prior_claim_id::text FROM retains
		WHERE investigation_id = $1 AND series = $2 AND attempt = $3 ORDER BY ord`,
		ref.InvestigationID, ref.Series, ref.Attempt)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Fetches lists the first n fetch_url results (the tool outputs) of an
// attempt, in the order they were recorded.
func (s *Store) Fetches(ctx context.Context, ref events.AttemptRef, n int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT output FROM fetches
		WHERE investigation_id = $1 AND series = $2 AND attempt = $3 AND ord < $4 ORDER BY ord`,
		ref.InvestigationID, ref.Series, ref.Attempt, n)
	if err != nil {
		return nil, fmt.Errorf("fetches of %s: %w", ref.InvestigationID, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Work kinds.
const (
	WorkAttempt  = "attempt"  // start (or replace an abandoned) stage-1 attempt
	WorkFinish   = "finish"   // publish the result of a finished attempt
	WorkValidate = "validate" // validate one submission
	WorkAssess   = "assess"   // assess the evidence of one approved submission
)

// Work is one unit of work a worker may take.
type Work struct {
	Kind            string
	InvestigationID string
	// SubmissionID is set for WorkValidate and WorkAssess.
	SubmissionID string
}

// ID is the lease identity of the work. A submission's validation and its
// assessment share one, so they never run at once.
func (w Work) ID() string {
	if w.Kind == WorkValidate || w.Kind == WorkAssess {
		return WorkValidate + ":" + w.SubmissionID
	}
	return "run:" + w.InvestigationID
}

// InvestigatorWork lists up to limit units of stage-1 and finishing work
// that are due at now and not leased: runs waiting for an attempt, runs
// whose attempt lost its worker (RUNNING without a live lease), and
// finished attempts whose submissions are all validated and whose approved
// submissions are all assessed.
func (s *Store) InvestigatorWork(ctx context.Context, now time.Time, limit int) ([]Work, error) {
	rows, err := s.pool.Query(ctx, `SELECT CASE WHEN r.status = 'FINISHING' THEN 'finish' ELSE 'attempt' END, r.investigation_id::text
		FROM runs r
		WHERE (
			(r.status IN ('PENDING', 'RETRY_WAIT') AND r.due_at <= $1)
			OR r.status = 'RUNNING'
			OR (r.status = 'FINISHING' AND NOT EXISTS (SELECT 1 FROM submissions s
				WHERE s.investigation_id = r.investigation_id AND s.series = r.series AND s.attempt = r.attempt
				AND (s.outcome IS NULL OR (s.outcome = 'APPROVED' AND NOT s.assessed))))
		)
		AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.work_id = 'run:' || r.investigation_id::text AND l.until > $1)
		ORDER BY r.due_at, r.investigation_id LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("investigator work: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Work, error) {
		var w Work
		return w, row.Scan(&w.Kind, &w.InvestigationID)
	})
}

// ValidatorWork lists up to limit submissions of current attempts that
// wait for a verdict, or were approved and wait for their assessment,
// skipping investigations that already have perRun units under a live
// lease. An assessment whose provider failed waits before its next try:
// retryBase·2^(n-1) after its n-th failed exchange, at most maxWait.
func (s *Store) ValidatorWork(ctx context.Context, now time.Time, perRun, limit int, retryBase, maxWait time.Duration) ([]Work, error) {
	rows, err := s.pool.Query(ctx, `SELECT CASE WHEN s.outcome IS NULL THEN 'validate' ELSE 'assess' END,
			s.investigation_id::text, s.submission_id::text
		FROM submissions s
		JOIN runs r ON r.investigation_id = s.investigation_id AND r.series = s.series AND r.attempt = s.attempt
		WHERE (s.outcome IS NULL OR (s.outcome = 'APPROVED' AND NOT s.assessed AND (s.assess_failures = 0
			OR s.assess_failed_at + make_interval(secs => LEAST($4::float8 * power(2, LEAST(s.assess_failures, 30) - 1), $5::float8)) <= $1)))
		AND r.status IN ('RUNNING', 'FINISHING')
		AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.work_id = 'validate:' || s.submission_id::text AND l.until > $1)
		AND (SELECT count(*) FROM leases l WHERE l.investigation_id = s.investigation_id AND l.until > $1) < $2
		ORDER BY s.submitted_at, s.seq LIMIT $3`, now, perRun, limit, retryBase.Seconds(), maxWait.Seconds())
	if err != nil {
		return nil, fmt.Errorf("validator work: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Work, error) {
		var w Work
		return w, row.Scan(&w.Kind, &w.InvestigationID, &w.SubmissionID)
	})
}

// Lease takes (or renews, for the same owner) the lease on w until now+ttl.
// It reports false when another owner holds a live lease.
func (s *Store) Lease(ctx context.Context, w Work, owner string, now time.Time, ttl time.Duration) (bool, error) {
	var got string
	err := s.pool.QueryRow(ctx, `INSERT INTO leases (work_id, investigation_id, owner, until) VALUES ($1, $2, $3, $4)
		ON CONFLICT (work_id) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
			WHERE leases.until <= $5 OR leases.owner = EXCLUDED.owner
		RETURNING owner`, w.ID(), w.InvestigationID, owner, now.Add(ttl), now).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", w.ID(), err)
	}
	return got == owner, nil
}

// Release gives a lease up.
func (s *Store) Release(ctx context.Context, w Work, owner string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE work_id = $1 AND owner = $2`, w.ID(), owner)
	return err
}

// CatchUp waits until the state has applied every event of the topic
// appended before the call (the end offsets at the time of the call).
func (s *Store) CatchUp(ctx context.Context, timeout time.Duration) error {
	ends, err := s.admin.ListEndOffsets(ctx, s.topic)
	if err != nil {
		return fmt.Errorf("end offsets of %s: %w", s.topic, err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("end offsets of %s: %w", s.topic, err)
	}
	var waitErr error
	ends.Each(func(o kadm.ListedOffset) {
		if waitErr != nil || o.Offset <= 0 {
			return
		}
		waitErr = s.watermark.WaitFor(ctx, o.Topic, o.Partition, o.Offset-1, timeout)
	})
	if waitErr != nil {
		return fmt.Errorf("run state catch-up: %w", waitErr)
	}
	return nil
}

// DueRuns lists up to limit whole runs of kind (one row each in table,
// identified by idColumn, with the run status and due_at columns every
// stage's fold keeps) that are due at now and not leased: those waiting for
// an attempt (PENDING, RETRY_WAIT), and those RUNNING without a live lease
// (their worker stopped). Stages whose lease covers a whole run (the
// analyst, the appeal reviews) list their work with it.
func DueRuns(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, table, idColumn, kind string, now time.Time, limit int) ([]Work, error) {
	rows, err := q.Query(ctx, `SELECT a.`+idColumn+`::text FROM `+table+` a
		WHERE ((a.status IN ('PENDING', 'RETRY_WAIT') AND a.due_at <= $1) OR a.status = 'RUNNING')
		AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.work_id = 'run:' || a.`+idColumn+`::text AND l.until > $1)
		ORDER BY a.due_at, a.`+idColumn+` LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("%s work: %w", kind, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Work, error) {
		w := Work{Kind: kind}
		return w, row.Scan(&w.InvestigationID)
	})
}
