package pgproj

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// Applier writes the effects of events into a read model.
type Applier interface {
	// Handles reports whether the applier consumes an event type; records of
	// other types are skipped without decoding.
	Handles(eventType string) bool
	// Apply writes the effects of events (one partition, offset order) in tx.
	// It must derive every value from the events, never from the clock.
	Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error
}

// Positioned is an event with the log position it was read from.
type Positioned struct {
	Event     events.Event
	Topic     string
	Partition int32
	Offset    int64
}

// PositionedApplier is an Applier whose read model records where each
// event sits on the log (an audit of envelopes); the projector calls
// ApplyPositioned instead of Apply, with the same events in the same order.
type PositionedApplier interface {
	Applier
	ApplyPositioned(ctx context.Context, tx pgx.Tx, evs []Positioned) error
}

// DeadLetterer parks a record that cannot be decoded.
type DeadLetterer interface {
	Send(ctx context.Context, rec *kgo.Record, cause error, now time.Time) error
}

// Projector is an exactly-once Postgres projection: each batch's writes and
// the partition's next offset commit in one transaction, and a record below
// the stored offset is skipped. Redelivery, a rebalance, a zombie instance
// and a replay therefore all leave the same rows.
type Projector struct {
	name       string
	pool       *pgxpool.Pool
	registry   *events.Registry
	applier    Applier
	deadLetter DeadLetterer
	log        *slog.Logger
}

// NewProjector returns a projector named name (its checkpoint identity).
func NewProjector(name string, pool *pgxpool.Pool, reg *events.Registry, a Applier, dl DeadLetterer, log *slog.Logger) *Projector {
	return &Projector{name: name, pool: pool, registry: reg, applier: a, deadLetter: dl, log: log.With("projector", name)}
}

// Name is the projector's checkpoint identity.
func (p *Projector) Name() string { return p.name }

// Positions implements kafka.PositionStore.
func (p *Projector) Positions(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
	rows, err := p.pool.Query(ctx,
		`SELECT topic, partition, next_offset FROM projection_checkpoints WHERE projector = $1 AND topic = ANY($2)`,
		p.name, topics)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	out := map[string]map[int32]int64{}
	for rows.Next() {
		var topic string
		var part int32
		var next int64
		if err := rows.Scan(&topic, &part, &next); err != nil {
			return nil, err
		}
		if out[topic] == nil {
			out[topic] = map[int32]int64{}
		}
		out[topic][part] = next
	}
	return out, rows.Err()
}

// Handle implements kafka.Handler.
func (p *Projector) Handle(ctx context.Context, b kafka.Batch) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit

	// Lock the checkpoint row: a second instance working on the same
	// partition (a zombie after a rebalance) waits here, then skips.
	if _, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (projector, topic, partition, next_offset)
		VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING`, p.name, b.Topic, b.Partition); err != nil {
		return fmt.Errorf("init checkpoint: %w", err)
	}
	var next int64
	if err := tx.QueryRow(ctx, `SELECT next_offset FROM projection_checkpoints
		WHERE projector = $1 AND topic = $2 AND partition = $3 FOR UPDATE`, p.name, b.Topic, b.Partition).Scan(&next); err != nil {
		return fmt.Errorf("lock checkpoint: %w", err)
	}

	evs := make([]events.Event, 0, len(b.Records))
	var offsets []int64
	var last *kgo.Record
	var lastTime *time.Time
	for _, rec := range b.Records {
		if rec.Offset < next {
			continue // already applied
		}
		last = rec
		if !p.applier.Handles(header(rec, events.HeaderType)) {
			continue
		}
		ev, err := p.registry.Decode(rec.Value)
		if err != nil {
			if dlErr := p.deadLetter.Send(ctx, rec, err, rec.Timestamp); dlErr != nil {
				return dlErr
			}
			continue
		}
		evs = append(evs, ev)
		offsets = append(offsets, rec.Offset)
		t := ev.Time
		lastTime = &t
	}
	if last == nil {
		return nil // the whole batch was applied before
	}
	if len(evs) > 0 {
		var err error
		if pa, ok := p.applier.(PositionedApplier); ok {
			pos := make([]Positioned, len(evs))
			for i, ev := range evs {
				pos[i] = Positioned{Event: ev, Topic: b.Topic, Partition: b.Partition, Offset: offsets[i]}
			}
			err = pa.ApplyPositioned(ctx, tx, pos)
		} else {
			err = p.applier.Apply(ctx, tx, evs)
		}
		if err != nil {
			return fmt.Errorf("apply %s/%d@%d..%d: %w", b.Topic, b.Partition, b.Records[0].Offset, last.Offset, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE projection_checkpoints
		SET next_offset = $4, event_time = COALESCE($5, event_time)
		WHERE projector = $1 AND topic = $2 AND partition = $3`,
		p.name, b.Topic, b.Partition, last.Offset+1, lastTime); err != nil {
		return fmt.Errorf("advance checkpoint: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// ErrWatermarkTimeout is returned when a projection did not reach a position in time.
var ErrWatermarkTimeout = errors.New("projection did not catch up in time")

// Watermark answers read-your-writes waits: has projector applied the log up
// to a given position?
type Watermark struct {
	pool      *pgxpool.Pool
	projector string
	interval  time.Duration
}

// NewWatermark returns a watermark over projector's checkpoints.
func NewWatermark(pool *pgxpool.Pool, projector string) *Watermark {
	return &Watermark{pool: pool, projector: projector, interval: 2 * time.Millisecond}
}

// WaitFor blocks until the record at (topic, partition, offset) is applied,
// ctx ends (its error), or timeout passes (ErrWatermarkTimeout).
func (w *Watermark) WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	interval := w.interval
	for {
		var applied bool
		err := w.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_checkpoints
			WHERE projector = $1 AND topic = $2 AND partition = $3 AND next_offset > $4)`,
			w.projector, topic, partition, offset).Scan(&applied)
		if err != nil {
			return fmt.Errorf("read watermark: %w", err)
		}
		if applied {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrWatermarkTimeout
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
		if interval < 50*time.Millisecond {
			interval += interval / 2
		}
	}
}
