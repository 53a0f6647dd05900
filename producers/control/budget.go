package control

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
)

// ServingBudget counts re-processing requests in the serving projection's
// investigations table and serializes re-processing runs with an advisory
// lock, so two runs on one day share one budget.
type ServingBudget struct{ pool *pgxpool.Pool }

// NewServingBudget reads the serving schema through pool.
func NewServingBudget(pool *pgxpool.Pool) *ServingBudget { return &ServingBudget{pool: pool} }

var _ BudgetCounter = (*ServingBudget)(nil)

// ReprocessRequestsSince implements BudgetCounter: the investigations
// requested by re-processing under the configuration whose request time
// (the event's, which the run sets to its clock) is at or after since.
// Each investigation counts once however often it was requested.
func (b *ServingBudget) ReprocessRequestsSince(ctx context.Context, configurationID string, since time.Time) (int, error) {
	var n int
	err := b.pool.QueryRow(ctx, `SELECT count(*) FROM investigations
		WHERE source = $1 AND configuration_id = $2 AND queued_at >= $3`,
		events.RequestSourceReprocess, configurationID, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("re-processing requests since %s: %w", since.Format(time.RFC3339), err)
	}
	return n, nil
}

const reprocessLockKey = "errata-reinvestigate"

// Lock takes the re-processing lock for the caller's session; locked is
// false when another run holds it. unlock releases it (and the connection).
func (b *ServingBudget) Lock(ctx context.Context) (unlock func(), locked bool, err error) {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquire: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, reprocessLockKey).Scan(&locked); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("re-processing lock: %w", err)
	}
	if !locked {
		conn.Release()
		return nil, false, nil
	}
	return func() {
		uctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, reprocessLockKey); err != nil {
			// The lock belongs to the session: end it so the lock ends too.
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}, true, nil
}
