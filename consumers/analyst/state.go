package analyst

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

// StatusRetryWait is the one run status only the worker sees: an attempt
// failed retryably and the analysis is due again at due_at (the public
// status is PENDING). A run is otherwise events.StatusPending,
// StatusRunning, StatusComplete or StatusFailed.
const StatusRetryWait = "RETRY_WAIT"

// Applier folds the analyses topic into the run state (pgproj.Applier).
type Applier struct{}

// Handles implements pgproj.Applier.
func (Applier) Handles(t string) bool {
	switch t {
	case events.TypeAnalysisRequestedV1, events.TypeAnalysisAttemptStartedV1, events.TypeAnalysisClaimTriagedV1,
		events.TypeAnalysisPostVerdictV1, events.TypeAnalysisCompletedV1, events.TypeAnalysisFailedV1:
		return true
	}
	return false
}

// Apply implements pgproj.Applier. Events of one analysis arrive in log
// order (one key, one partition). Every statement after the request checks
// the attempt, so a late or repeated event of an abandoned attempt (a
// worker that lost its lease and kept going) changes nothing: only the
// current attempt's verdict, completion or failure counts.
func (Applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	return runstate.ApplyEach(ctx, tx, evs, "analyst state", apply)
}

func apply(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	t := ev.Time
	var err error
	switch p := ev.Payload.(type) {
	case *events.AnalysisRequestedV1:
		// The first request of an id wins; the rest, however many raced,
		// change nothing.
		req, merr := json.Marshal(p)
		if merr != nil {
			return merr
		}
		_, err = tx.Exec(ctx, `INSERT INTO analyses (analysis_id, request_event_id, request, status, due_at, requested_at, updated_at)
			VALUES ($1, $2, $3, 'PENDING', $4, $4, $4) ON CONFLICT (analysis_id) DO NOTHING`,
			p.AnalysisID, ev.ID, string(req), t)
	case *events.AnalysisAttemptStartedV1:
		_, err = tx.Exec(ctx, `UPDATE analyses SET status = 'RUNNING', attempt = $2, post_verdict = false, updated_at = $3
			WHERE analysis_id = $1 AND attempt < $2 AND status IN ('PENDING', 'RETRY_WAIT', 'RUNNING')`,
			p.AnalysisID, p.Attempt, t)
	case *events.AnalysisClaimTriagedV1:
		_, err = tx.Exec(ctx, `INSERT INTO claims (claim_id, analysis_id, attempt, researched)
			SELECT $1, $2, $3, $4 FROM analyses WHERE analysis_id = $2 AND attempt = $3 AND status = 'RUNNING'
			ON CONFLICT (claim_id) DO NOTHING`, p.ClaimID, p.AnalysisID, p.Attempt, p.Researched)
	case *events.AnalysisPostVerdictV1:
		_, err = tx.Exec(ctx, `UPDATE analyses SET post_verdict = true, updated_at = $3
			WHERE analysis_id = $1 AND attempt = $2 AND status = 'RUNNING'`, p.AnalysisID, p.Attempt, t)
	case *events.AnalysisCompletedV1:
		_, err = tx.Exec(ctx, `UPDATE analyses SET status = 'COMPLETE', updated_at = $3
			WHERE analysis_id = $1 AND attempt = $2 AND status = 'RUNNING'`, p.AnalysisID, p.Attempt, t)
	case *events.AnalysisFailedV1:
		// A failure may precede its attempt's start (no credentials), so
		// it also advances the attempt number. A repeated retryable
		// failure of the attempt already waiting changes nothing.
		status, due := events.StatusFailed, t
		if p.Retryable {
			status = StatusRetryWait
			if p.RetryAt != "" {
				if due, err = time.Parse(time.RFC3339Nano, p.RetryAt); err != nil {
					return err
				}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE analyses SET status = $3, attempt = GREATEST(attempt, $2), due_at = $4,
				post_verdict = false, last_failure = $5, updated_at = $6
			WHERE analysis_id = $1 AND attempt <= $2 AND status NOT IN ('COMPLETE', 'FAILED')
				AND NOT (status = 'RETRY_WAIT' AND attempt = $2)`,
			p.AnalysisID, p.Attempt, status, due, events.Clean(p.Reason), t)
	default:
		return fmt.Errorf("unexpected payload %T", ev.Payload)
	}
	return err
}

// ErrNotFound means the run state has no such analysis.
var ErrNotFound = errors.New("analyst: analysis not found")

// Run is an analysis's run state.
type Run struct {
	AnalysisID     string
	Request        events.AnalysisRequestedV1
	RequestEventID string
	Status         string
	// Attempt is the last attempt started or failed (0: none yet).
	Attempt int
	DueAt   time.Time
	// PostVerdict says the current attempt appended its post verdict.
	PostVerdict bool
	LastFailure string
}

// Ref is the run's current attempt.
func (r Run) Ref() events.AnalysisRef {
	return events.AnalysisRef{AnalysisID: r.AnalysisID, Attempt: r.Attempt}
}

// Store reads the run state and coordinates workers through leases (those
// of runstate.Store, on this state's own leases table).
type Store struct {
	pool *pgxpool.Pool
	// Leases leases analyses and waits for the state to catch up with the
	// log (the executor's coordinator).
	Leases *runstate.Store
}

// Analysis reads one analysis.
func (s *Store) Analysis(ctx context.Context, id string) (Run, error) {
	var r Run
	var req string
	var failure *string
	err := s.pool.QueryRow(ctx, `SELECT analysis_id::text, request, request_event_id::text, status, attempt, due_at,
			post_verdict, last_failure
		FROM analyses WHERE analysis_id = $1`, id).Scan(&r.AnalysisID, &req, &r.RequestEventID, &r.Status, &r.Attempt,
		&r.DueAt, &r.PostVerdict, &failure)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("analysis %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(req), &r.Request); err != nil {
		return Run{}, fmt.Errorf("analysis %s request: %w", id, err)
	}
	if failure != nil {
		r.LastFailure = *failure
	}
	return r, nil
}

// Counts are the claims an attempt extracted and how many of them triage
// sent to research.
func (s *Store) Counts(ctx context.Context, ref events.AnalysisRef) (claims, researched int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE researched) FROM claims
		WHERE analysis_id = $1 AND attempt = $2`, ref.AnalysisID, ref.Attempt).Scan(&claims, &researched)
	if err != nil {
		return 0, 0, fmt.Errorf("claims of %s: %w", ref.AnalysisID, err)
	}
	return claims, researched, nil
}

// WorkKind is the kind of every unit of analyst work: one analysis, whose
// lease (runstate.Work.ID, "run:" and the id) covers all of it.
const WorkKind = "analysis"

// Work lists up to limit analyses that are due at now and not leased:
// those waiting for an attempt, and those RUNNING without a live lease
// (their worker stopped).
func (s *Store) Work(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return runstate.DueRuns(ctx, s.pool, "analyses", "analysis_id", WorkKind, now, limit)
}

// OpenState opens the analyst's run state: a runstate group (its schema
// migrated, its fold wired to a consumer group exactly once with the Kafka
// position, its leases and catch-up) on the analyses topic with this
// package's fold and schema. cfg names the group; its topic, applier and
// migrations are set here. Run the group's Runner; Close it when done.
func OpenState(ctx context.Context, cfg runstate.GroupConfig, log *slog.Logger) (*runstate.Group, *Store, error) {
	cfg.Topic, cfg.Applier, cfg.Migrations = events.TopicAnalyses, Applier{}, Migrations()
	g, err := runstate.OpenGroup(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	return g, &Store{pool: g.Pool, Leases: g.Store}, nil
}
