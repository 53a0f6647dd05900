// Package selector picks the posts most worth investigating and appends
// investigation requests for them (spec 2.10, 3.6): the latest version of
// each post, at most the word limit, with no investigation yet, highest
// unique-view score first, within a daily budget, on the platforms whose
// pages show inline corrections (InlinePlatforms).
//
// A version with any investigation is not picked again (its visible one,
// or a re-processing that superseded it, answers readers). Each request
// runs under the assignment the serving projection decides (the running
// experiment's arm, else the active configuration), recorded in the event.
//
// Requests are events with a deterministic investigation id, so a repeated
// or concurrent run can never create a second investigation for a version;
// an advisory lock and the read-your-writes wait keep runs from spending the
// budget twice. PENDING investigations need no re-enqueueing: their request
// is in the log until a worker consumes it.
package selector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/serving"
)

// Config bounds a selector run.
type Config struct {
	// DailyBudget is the most selector requests per UTC day.
	DailyBudget int
	// MaxWords excludes longer posts (spec: 10,000).
	MaxWords int
	// WaitTimeout bounds the wait for the serving projection to include
	// the requests just appended.
	WaitTimeout time.Duration
}

// Watermark waits until the serving projection has applied a log position.
type Watermark interface {
	WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error
}

// Selector appends investigation requests.
type Selector struct {
	cfg       Config
	pool      *pgxpool.Pool
	appender  *producers.Appender
	watermark Watermark
	assigner  investigations.Assigner
	now       func() time.Time
	log       *slog.Logger
}

// New returns a selector reading the serving projection through pool. Each
// request runs under the configuration assign decides (the running
// experiment's arm, else the active configuration); a nil assign requests
// every investigation under the default configuration.
func New(cfg Config, pool *pgxpool.Pool, a *producers.Appender, wm Watermark, assign investigations.Assigner,
	now func() time.Time, log *slog.Logger) *Selector {
	if now == nil {
		now = time.Now
	}
	return &Selector{cfg: cfg, pool: pool, appender: a, watermark: wm, assigner: assign, now: now,
		log: log.With("component", "selector")}
}

// Candidate is a post version chosen for investigation.
type Candidate struct {
	PostVersionID   string
	PostID          string
	Platform        string
	ExternalID      string
	VersionHash     string
	UniqueViewScore int64
	// ConfigurationID and Arm are the assignment the request recorded.
	ConfigurationID string
	Arm             string
}

// Result reports one run.
type Result struct {
	// Skipped is true when another selector held the lock.
	Skipped   bool
	Remaining int // daily budget left before this run
	Requested []Candidate
}

// ErrProjectionLagging means requests were appended but the serving
// projection did not show them in time; the next run will.
var ErrProjectionLagging = errors.New("serving projection did not catch up")

const lockKey = "errata-selector"

// InlinePlatforms are the platforms whose posts the selector investigates:
// those where the extension highlights corrected claims inline. Bluesky and
// Threads posts get a verdict for the whole post when someone asks (the
// Fact-check button); an inline investigation there would spend the budget
// on highlights no page shows, so the selector never picks them (an
// explicit investigateNow still may).
var InlinePlatforms = []string{events.PlatformLessWrong, events.PlatformX, events.PlatformSubstack, events.PlatformWikipedia}

// Run selects candidates and appends one request each.
func (s *Selector) Run(ctx context.Context) (Result, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("acquire: %w", err)
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, lockKey).Scan(&locked); err != nil {
		return Result{}, fmt.Errorf("selector lock: %w", err)
	}
	if !locked {
		s.log.Info("another selector run holds the lock; skipping")
		return Result{Skipped: true}, nil
	}
	defer func() {
		// The lock belongs to the session, which outlives the run in the
		// pool: when the unlock fails, close the connection so the pool
		// drops it and the lock ends with it.
		uctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey); err != nil {
			s.log.Warn("selector unlock failed; closing its connection", "err", err)
			_ = conn.Conn().Close(uctx)
		}
	}()

	now := s.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var usedToday int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM investigations WHERE source = $1 AND queued_at >= $2`,
		events.RequestSourceSelector, day).Scan(&usedToday); err != nil {
		return Result{}, fmt.Errorf("budget used today: %w", err)
	}
	res := Result{Remaining: max(0, s.cfg.DailyBudget-usedToday)}
	if res.Remaining == 0 {
		s.log.Info("daily budget spent", "budget", s.cfg.DailyBudget)
		return res, nil
	}

	rows, err := conn.Query(ctx, `WITH latest AS (
			SELECT DISTINCT ON (pv.post_id) pv.id, pv.post_id, pv.version_hash, pv.content_hash
			FROM post_versions pv
			ORDER BY pv.post_id, pv.last_seen_at DESC, pv.id DESC
		)
		SELECT l.id::text, l.post_id::text, p.platform, p.external_id, l.version_hash, p.unique_view_score
		FROM latest l
		JOIN posts p ON p.id = l.post_id
		JOIN content_blobs cb ON cb.content_hash = l.content_hash
		LEFT JOIN LATERAL `+serving.VisibleInvestigationSQL("l.id")+` vi ON true
		WHERE cb.word_count <= $1 AND vi.id IS NULL AND p.platform = ANY($3)
		ORDER BY p.unique_view_score DESC, p.id
		LIMIT $2`, s.cfg.MaxWords, res.Remaining, InlinePlatforms)
	if err != nil {
		return Result{}, fmt.Errorf("select candidates: %w", err)
	}
	var picked []Candidate
	for rows.Next() {
		var c Candidate
		if err := rows.Scan(&c.PostVersionID, &c.PostID, &c.Platform, &c.ExternalID, &c.VersionHash, &c.UniqueViewScore); err != nil {
			rows.Close()
			return Result{}, err
		}
		picked = append(picked, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Result{}, fmt.Errorf("select candidates: %w", err)
	}
	if len(picked) == 0 {
		return res, nil
	}

	evs := make([]events.Event, 0, len(picked))
	correlation := fmt.Sprintf("selector-%d", now.UnixNano())
	for i, c := range picked {
		var a investigations.Assignment
		if s.assigner != nil {
			if a, err = s.assigner.Assign(ctx, c.PostVersionID); err != nil {
				return Result{}, fmt.Errorf("assign %s: %w", c.PostVersionID, err)
			}
		}
		picked[i].ConfigurationID, picked[i].Arm = a.ConfigurationID, a.Arm
		ev, err := s.appender.NewEventAt(&events.InvestigationRequestedV1{
			InvestigationID: events.InvestigationIDFor(c.PostVersionID, a.ConfigurationID),
			PostID:          c.PostID, PostVersionID: c.PostVersionID, Platform: c.Platform,
			ExternalID: c.ExternalID, VersionHash: c.VersionHash,
			Source: events.RequestSourceSelector, UniqueViewScore: c.UniqueViewScore,
			ConfigurationID: a.ConfigurationID, Configuration: a.Configuration,
			ExperimentID: a.ExperimentID, Arm: a.Arm,
		}, now, correlation, "")
		if err != nil {
			return Result{}, err
		}
		evs = append(evs, ev)
	}
	positions, err := s.appender.Append(ctx, evs...)
	if err != nil {
		return Result{}, err
	}
	res.Requested = picked
	for _, c := range picked {
		s.log.Info("investigation requested", "post_version_id", c.PostVersionID, "platform", c.Platform,
			"external_id", c.ExternalID, "unique_view_score", c.UniqueViewScore,
			"configuration_id", c.ConfigurationID, "arm", c.Arm)
	}
	// Hold the lock until the projection shows these requests, so the next
	// run neither picks them again nor miscounts the budget.
	for _, p := range positions {
		if err := s.watermark.WaitFor(ctx, p.Topic, p.Partition, p.Offset, s.cfg.WaitTimeout); err != nil {
			return res, fmt.Errorf("%w: %w", ErrProjectionLagging, err)
		}
	}
	return res, nil
}
