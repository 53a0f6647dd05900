package pgproj

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
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
	// other types are skipped without decoding. It must be safe for concurrent use
	// (large batches are decoded in parallel).
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

// DeadLetterer publishes a copy of a record the projector parks, with the
// cause (marked kafka.Permanent or kafka.Undecodable, whose class the copy
// carries) and the record's log time.
type DeadLetterer interface {
	Send(ctx context.Context, rec *kgo.Record, cause error, now time.Time) error
}

// Projector is an exactly-once Postgres projection: each batch's writes and
// the partition's next offset commit in one transaction, and a record below
// the stored offset is skipped. Redelivery, a rebalance, a zombie instance
// and a replay therefore all leave the same rows.
//
// An event the projection can never apply is parked, never retried and
// never allowed to stop the projection: a record that does not decode
// (kafka.ClassDecode: an invalid envelope or payload, or an unknown version
// of a type the applier handles), and an event whose application fails
// deterministically on its own (kafka.ClassDeterministic, see
// IsDeterministic: a NUL in a text column, a key too large for its index, a
// document the search store refuses). When a batch fails that way, it is
// applied again in halves under savepoints, down to single events, so
// exactly the events that fail alone are left out, in log order; the rest
// of the batch is applied. Each parked event gets a projection_parked row
// (in the transaction that moves the checkpoint past it) and a copy on the
// dead-letter topic. Whether an event fails depends only on the events
// applied before it, so a rebuild from offset 0 parks the same events and
// writes the same rows whatever its batches. Any other failure (a lost
// connection, a timeout) fails the batch: nothing is kept, and the runner
// retries it.
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

// item is a decoded event with the record it came from.
type item struct {
	ev  events.Event
	rec *kgo.Record
}

// parked is a record the projection leaves out, with its cause (marked
// kafka.Permanent or kafka.Undecodable).
type parked struct {
	rec   *kgo.Record
	ev    *events.Event
	cause error
}

// isolateError says a batch's first, whole application failed
// deterministically with cause: it is applied again, isolating the events
// that fail (the whole batch is not tried again).
type isolateError struct {
	cause error
	items int // how many items the failed batch applied
}

func (e isolateError) Error() string { return "isolate a deterministic failure: " + e.cause.Error() }

// Handle implements kafka.Handler.
func (p *Projector) Handle(ctx context.Context, b kafka.Batch) error {
	// Decoding is pure CPU: it is done before the transaction (holding no
	// connection), on every core for a large batch (see decodeAll).
	decoded := p.decodeAll(b.Records)
	// A batch is first applied whole, without a savepoint (two round trips
	// fewer: most batches apply). Only when that fails deterministically is
	// the transaction dropped and the batch applied again in halves under
	// savepoints (applyIsolating), with the same outcome as if it had been
	// from the start.
	err := p.handle(ctx, b, decoded, nil)
	var iso isolateError
	if errors.As(err, &iso) {
		err = p.handle(ctx, b, decoded, &iso)
	}
	return err
}

// handle applies b in one transaction: whole, when failed is nil (a
// deterministic failure gives isolateError), else isolating the events
// that fail, knowing how the whole batch failed (unless another instance
// applied part of it meanwhile: then the rest is tried whole first).
func (p *Projector) handle(ctx context.Context, b kafka.Batch, decoded []decodedRecord, failed *isolateError) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit; a failed rollback closes the connection, which ends the transaction

	// Lock the checkpoint row, made on first use, in one statement (the
	// conflict's no-op update takes the row lock and returns the latest
	// committed offset): a second instance working on the same partition
	// (a zombie after a rebalance) waits here, then skips.
	var next int64
	if err := tx.QueryRow(ctx, `INSERT INTO projection_checkpoints (projector, topic, partition, next_offset)
		VALUES ($1, $2, $3, 0)
		ON CONFLICT (projector, topic, partition) DO UPDATE SET next_offset = projection_checkpoints.next_offset
		RETURNING next_offset`, p.name, b.Topic, b.Partition).Scan(&next); err != nil {
		return fmt.Errorf("lock checkpoint: %w", err)
	}

	var items []item
	var park []parked
	var last *kgo.Record
	for i, rec := range b.Records {
		if rec.Offset < next {
			continue // already applied
		}
		last = rec
		switch d := decoded[i]; {
		case d.skip:
		case d.err != nil:
			park = append(park, parked{rec: rec, cause: d.err})
		default:
			items = append(items, item{ev: d.ev, rec: rec})
		}
	}
	if last == nil {
		return nil // the whole batch was applied before
	}
	var isolated []parked
	switch {
	case len(items) == 0:
	case failed != nil && failed.items == len(items):
		isolated, err = p.isolate(ctx, tx, b, items, failed.cause)
	case failed != nil:
		isolated, err = p.applyIsolating(ctx, tx, b, items)
	default:
		err = p.apply(ctx, tx, b, items)
		if err != nil && IsDeterministic(err) && ctx.Err() == nil {
			return isolateError{cause: err, items: len(items)}
		}
	}
	if err != nil {
		return fmt.Errorf("apply %s/%d@%d..%d: %w", b.Topic, b.Partition, b.Records[0].Offset, last.Offset, err)
	}
	park = append(park, isolated...)
	slices.SortFunc(park, func(x, y parked) int { return cmp.Compare(x.rec.Offset, y.rec.Offset) })

	// The checkpoint's event time is that of the last event applied.
	var lastTime *time.Time
	for i := len(items) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(isolated, func(f parked) bool { return f.rec == items[i].rec }) {
			t := items[i].ev.Time
			lastTime = &t
			break
		}
	}
	// The rows go in before the dead letters: a copy is only sent once its
	// row is certain to be written with this commit. A crash between the
	// sends and the commit sends the copies again on redelivery; readers of
	// the dead-letter topic dedupe by source (see kafka.HeaderDLQGroup).
	for _, pk := range park {
		if err := p.insertParked(ctx, tx, b, pk); err != nil {
			return err
		}
	}
	for _, pk := range park {
		if err := p.deadLetter.Send(ctx, pk.rec, pk.cause, pk.rec.Timestamp); err != nil {
			return err
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

// decodedRecord is one record's decoding: an event, a record the applier
// does not handle (skip), or the Undecodable cause it is parked with.
type decodedRecord struct {
	ev   events.Event
	skip bool
	err  error
}

// parallelDecodeMin is the batch size from which decodeAll spreads the work
// over the cores: below it (a live tail) goroutines cost more than they save.
const parallelDecodeMin = 256

// decodeAll decodes recs, in parallel chunks for a large batch (catch-up
// and replay, where decoding JSON and validating payloads is most of the
// projector's CPU). Results are by index, so the order is the log's.
func (p *Projector) decodeAll(recs []*kgo.Record) []decodedRecord {
	out := make([]decodedRecord, len(recs))
	workers := min(runtime.GOMAXPROCS(0), len(recs)/parallelDecodeMin)
	if workers <= 1 {
		for i, rec := range recs {
			out[i] = p.decode(rec)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(recs) + workers - 1) / workers
	for start := 0; start < len(recs); start += chunk {
		wg.Go(func() {
			for i := start; i < min(start+chunk, len(recs)); i++ {
				out[i] = p.decode(recs[i])
			}
		})
	}
	wg.Wait()
	return out
}

// decode decodes one record. It reads only the registry and the applier's
// Handles, both safe for concurrent use.
func (p *Projector) decode(rec *kgo.Record) decodedRecord {
	typ := header(rec, events.HeaderType)
	if !p.applier.Handles(typ) {
		if p.unknownVersionOfHandled(typ) {
			return decodedRecord{err: kafka.Undecodable(fmt.Errorf(
				"%w: %s (another version of a type this projector applies; written by a newer release?)", events.ErrUnknownType, typ))}
		}
		return decodedRecord{skip: true}
	}
	ev, err := p.registry.Decode(rec.Value)
	if err == nil && ev.Payload.EventType() != p.registry.CurrentType(typ) {
		err = fmt.Errorf("header %s %q does not match the envelope's type (decodes to %s)", events.HeaderType, typ, ev.Payload.EventType())
	}
	if err != nil {
		return decodedRecord{err: kafka.Undecodable(err)}
	}
	return decodedRecord{ev: ev}
}

// applyIsolating applies items in tx under a savepoint. When that fails
// deterministically it rolls back to the savepoint and applies each half
// the same way, so that in the end every event that fails on its own is
// returned (parked, in log order) and all others are applied, in log
// order. Any other failure is returned as is (the whole batch is retried).
func (p *Projector) applyIsolating(ctx context.Context, tx pgx.Tx, b kafka.Batch, items []item) ([]parked, error) {
	if len(items) == 0 {
		return nil, nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	err = p.apply(ctx, sp, b, items)
	if err == nil {
		if err := sp.Commit(ctx); err != nil {
			return nil, fmt.Errorf("release savepoint: %w", err)
		}
		return nil, nil
	}
	if rbErr := sp.Rollback(ctx); rbErr != nil {
		return nil, errors.Join(err, fmt.Errorf("rollback to savepoint: %w", rbErr))
	}
	if !IsDeterministic(err) || ctx.Err() != nil {
		return nil, err
	}
	return p.isolate(ctx, tx, b, items, err)
}

// isolate applies items, whose application as a whole failed
// deterministically with err: one item is parked with err, more are
// applied in halves (applyIsolating).
func (p *Projector) isolate(ctx context.Context, tx pgx.Tx, b kafka.Batch, items []item, err error) ([]parked, error) {
	if len(items) == 1 {
		it := items[0]
		cause := err
		if !kafka.IsPermanent(cause) {
			cause = kafka.Permanent(cause)
		}
		return []parked{{rec: it.rec, ev: &it.ev, cause: cause}}, nil
	}
	half := len(items) / 2
	left, err := p.applyIsolating(ctx, tx, b, items[:half])
	if err != nil {
		return nil, err
	}
	right, err := p.applyIsolating(ctx, tx, b, items[half:])
	if err != nil {
		return nil, err
	}
	return append(left, right...), nil
}

// apply hands items to the applier.
func (p *Projector) apply(ctx context.Context, tx pgx.Tx, b kafka.Batch, items []item) error {
	if pa, ok := p.applier.(PositionedApplier); ok {
		pos := make([]Positioned, len(items))
		for i, it := range items {
			pos[i] = Positioned{Event: it.ev, Topic: b.Topic, Partition: b.Partition, Offset: it.rec.Offset}
		}
		return pa.ApplyPositioned(ctx, tx, pos)
	}
	evs := make([]events.Event, len(items))
	for i, it := range items {
		evs[i] = it.ev
	}
	return p.applier.Apply(ctx, tx, evs)
}

// unknownVersionOfHandled reports whether typ is a type the registry does
// not know that names another version of a type the applier handles (a
// payload of a future schema version). Unknown types of other names are
// skipped like any type the applier does not handle.
func (p *Projector) unknownVersionOfHandled(typ string) bool {
	if typ == "" {
		return false
	}
	if _, ok := p.registry.Lookup(typ); ok {
		return false
	}
	name, ok := typeName(typ)
	if !ok {
		return false
	}
	for _, t := range p.registry.Types() {
		if n, _ := typeName(t); n == name && p.applier.Handles(t) {
			return true
		}
	}
	return false
}

// typeName is a type string without its version: "post.viewed" of
// "post.viewed.v3".
func typeName(typ string) (string, bool) {
	i := strings.LastIndex(typ, ".v")
	if i <= 0 || i+2 == len(typ) {
		return "", false
	}
	for _, c := range typ[i+2:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return typ[:i], true
}

// Bounds of the text columns of projection_parked.
const (
	maxParkedReason = 4096
	maxParkedField  = 256
)

// insertParked writes pk's row. Every value comes from the record (or its
// event), never the clock, and text that Postgres refuses (a NUL, invalid
// UTF-8 from a hostile header or an echoed value) is replaced, so the row
// itself can always be written.
func (p *Projector) insertParked(ctx context.Context, tx pgx.Tx, b kafka.Batch, pk parked) error {
	var eventID, eventType *string
	var eventTime *time.Time
	if pk.ev != nil {
		id := storable(pk.ev.ID, maxParkedField)
		eventID = &id
		t := pk.ev.Time
		eventTime = &t
	} else if v := header(pk.rec, events.HeaderID); v != "" {
		id := storable(v, maxParkedField)
		eventID = &id
	}
	if v := header(pk.rec, events.HeaderType); v != "" {
		typ := storable(v, maxParkedField)
		eventType = &typ
	}
	class := kafka.PermanentClass(pk.cause)
	if _, err := tx.Exec(ctx, `INSERT INTO projection_parked (projector, topic, partition, log_offset,
			event_id, event_type, class, reason, record_time, event_time)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT DO NOTHING`,
		p.name, b.Topic, b.Partition, pk.rec.Offset, eventID, eventType, class,
		storable(pk.cause.Error(), maxParkedReason), pk.rec.Timestamp, eventTime); err != nil {
		return fmt.Errorf("park %s/%d@%d: %w", b.Topic, b.Partition, pk.rec.Offset, err)
	}
	p.log.Warn("event parked", "topic", b.Topic, "partition", b.Partition, "offset", pk.rec.Offset,
		"class", class, "err", pk.cause)
	return nil
}

// storable makes s safe for a Postgres text column and at most n bytes.
func storable(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	return kafka.TruncateUTF8(s, n)
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
