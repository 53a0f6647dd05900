package pgproj

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrWatermarkTimeout is returned when a projection did not reach a position in time.
var ErrWatermarkTimeout = errors.New("projection did not catch up in time")

// Watermark answers read-your-writes waits: has projector applied the log up
// to a given position?
//
// A position already applied is answered by one query. The waits that must
// wait share one poller, which reads all of the projector's checkpoints at a
// short fixed interval while any wait is open and releases every wait whose
// position they pass: a wait learns of its commit within about one interval,
// whatever the number of waits, and Postgres sees one query per interval
// instead of one per wait (a wait used to poll on its own, backing off up to
// 50 ms, which cost read-your-writes several milliseconds of pure waiting).
type Watermark struct {
	pool      *pgxpool.Pool
	projector string
	interval  time.Duration

	mu      sync.Mutex
	waits   map[*wait]struct{}
	polling bool
}

// wait is one open WaitFor; done is closed once its position is applied
// or err is set.
type wait struct {
	topic     string
	partition int32
	offset    int64
	done      chan struct{}
	err       error
}

// NewWatermark returns a watermark over projector's checkpoints.
func NewWatermark(pool *pgxpool.Pool, projector string) *Watermark {
	return &Watermark{pool: pool, projector: projector, interval: time.Millisecond, waits: map[*wait]struct{}{}}
}

// WaitFor blocks until the record at (topic, partition, offset) is applied,
// ctx ends (its error), or timeout passes (ErrWatermarkTimeout).
func (w *Watermark) WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error {
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
	wt := &wait{topic: topic, partition: partition, offset: offset, done: make(chan struct{})}
	w.mu.Lock()
	w.waits[wt] = struct{}{}
	if !w.polling {
		w.polling = true
		go w.poll()
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waits, wt)
		w.mu.Unlock()
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-wt.done:
		return wt.err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return ErrWatermarkTimeout
	}
}

// poll reads the checkpoints while waits are open and releases those
// reached; it ends when none is left. A failed read ends the waits open
// at that moment with its error, as a wait's own read would.
func (w *Watermark) poll() {
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	for {
		w.mu.Lock()
		if len(w.waits) == 0 {
			w.polling = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		next, err := w.checkpoints()
		w.mu.Lock()
		for wt := range w.waits {
			switch {
			case err != nil:
				wt.err = err
			case next[partitionKey{wt.topic, wt.partition}] <= wt.offset:
				continue
			}
			delete(w.waits, wt)
			close(wt.done)
		}
		w.mu.Unlock()
		<-ticker.C
	}
}

type partitionKey struct {
	topic     string
	partition int32
}

// checkpoints reads the next offset of every partition the projector holds.
func (w *Watermark) checkpoints() (map[partitionKey]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := w.pool.Query(ctx, `SELECT topic, partition, next_offset FROM projection_checkpoints WHERE projector = $1`, w.projector)
	if err != nil {
		return nil, fmt.Errorf("read watermark: %w", err)
	}
	defer rows.Close()
	next := map[partitionKey]int64{}
	for rows.Next() {
		var k partitionKey
		var n int64
		if err := rows.Scan(&k.topic, &k.partition, &n); err != nil {
			return nil, fmt.Errorf("read watermark: %w", err)
		}
		next[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read watermark: %w", err)
	}
	return next, nil
}
